"""Properties of the ``%[.][size]type[suffix]`` machinery shared by squeue and sinfo.

Slurm's ``_print_str``: a left-justified field is always cut to its width and
padded; a right-justified one is padded on the left and cut only when the
field cuts (NODELIST and NODELIST(REASON) do not); width 0 prints the value whole.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from minislurm.cli.format.fields import (
    FieldSpec,
    mem_unit,
    pad,
    parse_long_format,
    parse_percent_format,
    print_secs,
    tres_string,
)
from minislurm.cli.format.squeue import format_squeue
from minislurm.job import JobRecord
from minislurm.states import JobState, Reason

values = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), max_size=40)
widths = st.integers(min_value=0, max_value=30)


@given(values, widths)
def test_left_justified_fields_are_cut_and_padded_to_the_width(value: str, width: int) -> None:
    out = pad(value, width, right=False)
    if width == 0:
        assert out == value
    else:
        assert len(out) == width
        assert out == value[:width] + " " * (width - len(value[:width]))


@given(values, widths)
def test_right_justified_cut_fields_keep_the_first_width_characters(value: str, width: int) -> None:
    out = pad(value, width, right=True, cut=True)
    if width == 0:
        assert out == value
    elif len(value) <= width:
        assert out == " " * (width - len(value)) + value
    else:
        assert out == value[:width]


@given(values, widths)
def test_right_justified_uncut_fields_never_lose_characters(value: str, width: int) -> None:
    out = pad(value, width, right=True, cut=False)
    assert out.endswith(value)
    assert len(out) == max(width, len(value))
    assert set(out[: len(out) - len(value)]) <= {" "}


letters = st.sampled_from("aAbBcCdDeEfFgGhHiIjJkKlLmMnNoOpPqQrRsStTuUvVwWxXyYzZ")
suffixes = st.text(alphabet=" |:=[]()-_,abc", max_size=4)
field_specs = st.builds(
    lambda key, width, right, suffix: FieldSpec(
        key=key, width=width, right=right and width > 0, suffix=suffix
    ),
    letters,
    widths,
    st.booleans(),
    suffixes,
)


def _render(spec: FieldSpec) -> str:
    size = str(spec.width) if spec.width else ""
    return "%" + ("." if spec.right else "") + size + spec.key + spec.suffix


@given(st.text(alphabet="ABC =[", max_size=5), st.lists(field_specs, max_size=6))
def test_percent_formats_parse_back_to_their_fields(prefix: str, specs: list[FieldSpec]) -> None:
    fmt = prefix + "".join(_render(s) for s in specs)
    parsed = parse_percent_format(fmt)
    assert parsed.prefix == prefix
    assert [(f.key, f.width, f.right, f.suffix) for f in parsed.fields] == [
        (s.key, s.width, s.right, s.suffix) for s in specs
    ]


names = st.sampled_from(["JobID", "Name", "State", "Reason", "TimeLimit", "NodeList"])


@given(
    st.lists(st.tuples(names, st.one_of(st.none(), widths), st.booleans()), min_size=1, max_size=6)
)
def test_long_formats_default_to_width_20(items: list[tuple[str, int | None, bool]]) -> None:
    text = ",".join(
        name if width is None else f"{name}:{'.' if right else ''}{width}"
        for name, width, right in items
    )
    parsed = parse_long_format(text)
    for field, (name, width, right) in zip(parsed.fields, items, strict=True):
        assert field.key == name
        assert field.width == (20 if width is None else width)
        assert field.right == (width is not None and right)


def _parse_secs(text: str) -> int:
    days = 0
    if "-" in text:
        d, text = text.split("-")
        days = int(d)
    parts = [int(p) for p in text.split(":")]
    while len(parts) < 3:
        parts.insert(0, 0)
    h, m, s = parts
    return ((days * 24 + h) * 60 + m) * 60 + s


@given(st.integers(min_value=0, max_value=365 * 24 * 3600))
def test_squeue_times_are_exact_and_minimal(seconds: int) -> None:
    text = print_secs(seconds)
    assert _parse_secs(text) == seconds
    if seconds < 3600:
        assert len(text.split(":")) == 2
    if seconds >= 86400:
        assert "-" in text


@given(st.integers(min_value=-(10**6), max_value=-1))
def test_negative_times_are_invalid(seconds: int) -> None:
    assert print_secs(seconds) == "INVALID"


@given(st.text(alphabet="abcdefghij", min_size=1, max_size=25), st.integers(1, 15), st.booleans())
def test_squeue_name_column_follows_the_rules(name: str, width: int, right: bool) -> None:
    job = JobRecord(
        job_id=1,
        name=name,
        user="u",
        uid=1,
        group="g",
        gid=1,
        account="a",
        partition="p",
        qos="normal",
        state=JobState.PENDING,
        reason=Reason.PRIORITY,
        submit_time=0,
    )
    fmt = f"%{'.' if right else ''}{width}j|"
    out = format_squeue([job], fmt=fmt, noheader=True, now=0)
    assert out == pad(name, width, right) + "|\n"
    assert len(out) == width + 2


@given(st.integers(min_value=1, max_value=10**7))
def test_memory_units_are_exact(mb: int) -> None:
    text = mem_unit(mb)
    factor = {"M": 1, "G": 1024, "T": 1024**2, "P": 1024**3}[text[-1]]
    assert int(text[:-1]) * factor == mb


def test_tres_strings_in_controller_and_sacct_order() -> None:
    tres = {"gres/gpu": 2, "billing": 4, "node": 1, "mem": 4096, "cpu": 4}
    assert tres_string(tres) == "cpu=4,mem=4G,node=1,billing=4,gres/gpu=2"
    assert tres_string(tres, sort_by_name=True) == "billing=4,cpu=4,gres/gpu=2,mem=4G,node=1"
