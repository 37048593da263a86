"""Lesson 2's sweep (job array with a throttle) and pipeline (dependencies) on minislurm."""

from __future__ import annotations

import pytest

from course.lessons.pipelines import (
    PIPELINE_SACCT,
    PIPELINE_SQUEUE,
    SWEEP_SQUEUE,
    submit_pipeline,
    submit_sweep,
    watch,
)
from minislurm.sim import Cluster


def _running(squeue: str) -> list[str]:
    """Job ids of the R lines of a squeue listing."""
    return [line.split()[0] for line in squeue.splitlines()[1:] if line.split()[2] == "R"]


def test_throttle_runs_at_most_two_tasks_and_the_rest_wait_for_the_limit() -> None:
    cluster = Cluster()
    job = submit_sweep(cluster, tasks=8, throttle=2, minutes=20)
    first, second = watch(cluster, [1, 21], [SWEEP_SQUEUE])
    assert _running(first.output) == [f"{job}_0", f"{job}_1"]
    assert f"{job}_[2-7%2]" in first.output and "(JobArrayTaskLimit)" in first.output
    # 20 minutes later the first two ended and the next two run: still two at a time
    assert _running(second.output) == [f"{job}_2", f"{job}_3"]
    assert f"{job}_[4-7%2]" in second.output


def test_pipeline_runs_in_order_and_the_failure_notifier_never_starts() -> None:
    cluster = Cluster()
    pipe = submit_pipeline(cluster)
    at1, at11, at21 = watch(cluster, [1, 11, 21], [PIPELINE_SQUEUE])
    assert _running(at1.output) == [str(pipe.prep)]
    assert f"afterok:{pipe.prep}(unfulfilled) (Dependency)" in at1.output
    assert _running(at11.output) == [str(pipe.train)]
    assert _running(at21.output) == [str(pipe.evaluate)]
    assert f"afternotok:{pipe.train}(failed) (DependencyNeverSatisfied)" in at21.output


def test_failed_prep_leaves_train_never_satisfied() -> None:
    cluster = Cluster()
    pipe = submit_pipeline(cluster, prep_exit=3)
    squeue, sacct = watch(cluster, [2], [PIPELINE_SQUEUE, PIPELINE_SACCT])
    assert f"afterok:{pipe.prep}(failed) (DependencyNeverSatisfied)" in squeue.output
    lines = sacct.output.splitlines()
    prep_line = next(line for line in lines if line.split()[0] == str(pipe.prep))
    assert prep_line.split()[2:4] == ["FAILED", "3:0"]


def test_watch_refuses_going_back_in_time() -> None:
    with pytest.raises(ValueError, match="minutes must increase"):
        watch(Cluster(), [5, 2], ["squeue"])


def test_bad_sweep_sizes_are_refused() -> None:
    with pytest.raises(ValueError):
        submit_sweep(Cluster(), tasks=0)
