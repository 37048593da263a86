"""``parse_swf`` reads a plain row (short integer literals, finite floats) in one
conversion per field; every row gives the record `_number` gives field by field, and
a row that is not plain still names its bad field."""

from __future__ import annotations

import math

import pytest

from minislurm.sim.workload.swf import (
    _FLOAT_FIELDS,
    SWF_FIELDS,
    SWFFormatError,
    SWFRecord,
    _number,
    parse_swf,
)

BASE = ["1", "0", "-1", "50", "1", "-1", "-1", "1", "60", "-1", "1", "3", "2", "-1", "0",
        "-1", "-1", "-1"]


def _field_by_field(parts: list[str]) -> SWFRecord:
    return SWFRecord(**{name: _number(p, name, "<t>", name in _FLOAT_FIELDS)
                        for p, name in zip(parts, SWF_FIELDS, strict=True)})


@pytest.mark.parametrize("at, text", [
    (1, "123456789012345"),  # 15 digits: below 2**53
    (1, "12345678901234567891"),  # float(text) rounds: int(float(text)) is not int(text)
    (1, "9007199254740993"),  # 2**53 + 1
    (3, "-0"), (3, "+7"), (3, "1_000"), (3, "1e3"), (3, "7.0"), (3, "0x10"),
    (5, "-0"), (5, "12.5"), (5, "1e3"), (5, "inf"), (5, "nan"), (6, "3"),
    (9, "-1.25"), (9, "1_0.5"),
])
def test_a_row_gives_the_record_of_its_fields(at: int, text: str) -> None:
    parts = [*BASE]
    parts[at] = text
    try:
        expected: object = _field_by_field(parts)
    except SWFFormatError as err:
        expected = str(err).replace("<t>", "<swf>:1")
    try:
        got: object = parse_swf(" ".join(parts) + "\n").records[0]
    except SWFFormatError as err:
        got = str(err)
    assert got == expected
    if isinstance(got, SWFRecord) and isinstance(expected, SWFRecord):
        for name in SWF_FIELDS:  # same types and signs (-0.0), not only equal values
            a, b = getattr(got, name), getattr(expected, name)
            assert type(a) is type(b)
            if isinstance(a, float):
                assert math.copysign(1, a) == math.copysign(1, b)
