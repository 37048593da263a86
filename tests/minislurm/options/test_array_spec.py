"""``--array`` specifications (capture f3_array)."""

from __future__ import annotations

import pytest
from captures import REF

from minislurm.common.jobarray import ArraySpec, format_indices, format_pending, parse_array
from minislurm.errors import SubmitError
from minislurm.options import sbatch_directives


@pytest.mark.parametrize(("text", "indices", "throttle"), [
    ("0-7%2", tuple(range(8)), 2),
    ("1,3,5", (1, 3, 5), None),
    ("0-10:3", (0, 3, 6, 9), None),
    ("1-3,7", (1, 2, 3, 7), None),
    ("5", (5,), None),
    ("3,1,3", (1, 3), None),
    ("999", (999,), None),
])
def test_array_syntaxes(text: str, indices: tuple[int, ...], throttle: int | None) -> None:
    assert parse_array(text, 1001) == ArraySpec(indices, throttle, text)


@pytest.mark.parametrize(("text", "indices", "throttle"), [
    ("1,,2", (1, 2), None),           # strtok skips the empty item
    ("0-7%", tuple(range(8)), None),  # atoi("") = 0: no throttle
    ("0-7%x", tuple(range(8)), None),
    ("%3", (0,), 3),                  # strtol of nothing is 0
    ("1,2%1,3", (1, 2, 3), 1),        # a "%" ends an item; the throttle is atoi after the first
    (" 1-3", (1, 2, 3), None),
    ("[1-3]:2", (1, 3), None),
])
def test_what_slurmctld_lets_through(text: str, indices: tuple[int, ...],
                                     throttle: int | None) -> None:
    """Measured on 22.05.8 (ArrayTaskId of ``sbatch -H --array=TEXT``); more in
    tests/minislurm/options/test_option_values.py."""
    assert parse_array(text, 1001) == ArraySpec(indices, throttle, text)


@pytest.mark.parametrize("text", ["abc", "1-", "-3", "3-1", "1-5:0", "1-3 ", "0-10:1001",
                                  "1000-1001", "1001", "1.5"])
def test_invalid_arrays(text: str) -> None:
    """MaxArraySize=1001: ``--array=1000-1001`` is rejected (capture f3 09)."""
    with pytest.raises(SubmitError) as e:
        parse_array(text, 1001)
    assert (e.value.message, e.value.exit_code) == ("Invalid job array specification", 1)


def test_array_environment_values() -> None:
    """SLURM_ARRAY_TASK_COUNT/MIN/MAX/STEP of capture f3 (0-7%2: 8, 0, 7, 1)."""
    spec = parse_array("0-7%2")
    assert (spec.task_count, spec.task_min, spec.task_max, spec.task_step) == (8, 0, 7, 1)
    assert parse_array("0-10:3").task_step == 3
    assert parse_array("1-3,7").task_step == 1


def test_formatting_what_is_left_pending() -> None:
    """squeue shows the pending rest of 0-7%2 as ``108_[2-7%2]`` (capture f3)."""
    assert format_pending([2, 3, 4, 5, 6, 7], 2) == "2-7%2"
    assert format_indices([0, 3, 6, 9]) == "0,3,6,9"
    assert format_indices([1, 2, 3, 7]) == "1-3,7"


def test_the_capture_script_directive() -> None:
    path = REF / "f3_array" / "array.sh"
    if not path.exists():
        pytest.skip(f"capture not found at {path}")
    words = sbatch_directives(path.read_text())
    assert words[0] == "--array=0-7%2"
    assert parse_array(words[0].partition("=")[2]).max_running == 2
