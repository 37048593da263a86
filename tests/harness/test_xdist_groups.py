"""tests/conftest.py's ``test_group``: the unit ``--dist loadgroup`` hands to one worker."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location(
    "tests_conftest", Path(__file__).resolve().parents[1] / "conftest.py")
assert _spec is not None and _spec.loader is not None
conftest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(conftest)


@dataclass
class _Item:
    """What ``test_group`` reads of a pytest item: its id and marks."""

    nodeid: str
    marks: dict[str, pytest.Mark] = field(default_factory=dict)

    def get_closest_marker(self, name: str) -> pytest.Mark | None:
        return self.marks.get(name)


def _mark(name: str, *args: object) -> pytest.Mark:
    mark: pytest.Mark = getattr(pytest.mark, name)(*args).mark
    return mark


def test_a_files_tests_are_one_group_unless_marked() -> None:
    f = "tests/browser/test_x.py"
    assert conftest.test_group(_Item(f"{f}::test_a")) == f
    assert conftest.test_group(_Item(f"{f}::test_a", {"spread": _mark("spread")})) \
        == f"{f}::test_a"
    assert conftest.test_group(_Item(f"{f}::test_a[en-01]",
                                     {"ddp_ports": _mark("ddp_ports")})) == "ddp-ports"
