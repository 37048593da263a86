"""``-o/-e`` filename patterns (capture f4_output_patterns)."""

from __future__ import annotations

import pytest
from captures import REF

from minislurm.common.filenames import default_output_pattern, expand_pattern


def test_every_symbol_of_capture_f4_01() -> None:
    """``-J pat -o 'o-%j-%x-%u-%N-%n-%t-%s-%%.out'`` gave ``o-122-pat-root-vm-0-0-batch-%.out``."""
    name = expand_pattern("o-%j-%x-%u-%N-%n-%t-%s-%%.out", job_id=122, job_name="pat",
                          user="root", node="vm")
    assert name == "o-122-pat-root-vm-0-0-batch-%.out"
    listing = REF / "f4_output_patterns" / "01_patterns.out"
    if listing.exists():
        assert name in listing.read_text().split()


def test_non_array_jobs() -> None:
    """Capture f4 03: ``na-%A-%a.out`` -> ``na-124-4294967294.out``."""
    assert expand_pattern("na-%A-%a.out", job_id=124) == "na-124-4294967294.out"


def test_array_tasks() -> None:
    """Capture f3: ``slurm-%A_%a.out``; the task's own job id is %j."""
    assert expand_pattern("slurm-%A_%a.out", job_id=111, array_job_id=108,
                          array_task_id=2) == "slurm-108_2.out"
    # 22.05.8 has no %b (array task id modulo 10): it stays as written
    assert expand_pattern("%j-%b", job_id=111, array_job_id=108, array_task_id=13) == "111-%b"


def test_zero_padding() -> None:
    assert expand_pattern("%4A-%3a-%5j", job_id=9, array_job_id=7, array_task_id=2) == (
        "0007-002-00009")
    assert expand_pattern("t%2t.%3n", job_id=1, task_id=3, node_index=1) == "t03.001"
    # fname.c MAX_WIDTH: measured on 22.05.8, o-%12345j -> o-0000104545
    assert expand_pattern("o-%12345j", job_id=104545) == "o-0000104545"


def test_steps_and_jobstep() -> None:
    assert expand_pattern("%J.out", job_id=5, step_id=0) == "5.0.out"
    # the batch step's %J is the bare job id (22.05.8: sbatch -o o-%J -> o-<jobid>)
    assert expand_pattern("o-%J", job_id=5) == "o-5"
    assert expand_pattern("%s", job_id=5, step_id=2) == "2"


def test_literal_percent_unknown_symbols_and_backslash() -> None:
    assert expand_pattern("100%%-%j", job_id=3) == "100%-3"
    assert expand_pattern("%%j", job_id=3) == "%j"
    assert expand_pattern("%q%Z", job_id=3) == "%q%Z"
    assert expand_pattern("out\\-%j", job_id=3) == "out-%j"


@pytest.mark.parametrize(("is_array", "pattern"), [(False, "slurm-%j.out"),
                                                   (True, "slurm-%A_%a.out")])
def test_defaults(is_array: bool, pattern: str) -> None:
    assert default_output_pattern(is_array) == pattern
