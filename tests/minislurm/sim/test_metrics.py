"""Scheduling metrics over JobRecord lists, checked on hand-computed schedules."""

from __future__ import annotations

import pytest

from minislurm.job import JobRecord
from minislurm.sim.metrics import (
    TAU,
    bounded_slowdown,
    format_summary,
    goodput,
    gpu_hours,
    gpu_hours_lost,
    mean_bounded_slowdown,
    summarize,
    utilization,
    wait_times,
)
from minislurm.states import JobState, Reason

T0 = 1767600000


def rec(job_id: int, submit: int, start: int | None, end: int | None, gpus: int = 0,
        nodes: int = 1, state: JobState = JobState.COMPLETED) -> JobRecord:  # fmt: skip
    return JobRecord(
        job_id=job_id, name="j", user="u", uid=1000, group="g", gid=1000, account="a",
        partition="gpu", qos="normal", state=state, reason=Reason.NONE,
        submit_time=T0 + submit, start_time=None if start is None else T0 + start,
        end_time=None if end is None else T0 + end, num_nodes=nodes,
        tres_alloc={"gres/gpu": gpus, "node": nodes} if start is not None else {},
    )  # fmt: skip


# A 2-node x 8-GPU cluster for one hour:
# job 1: 16 GPUs, 2 nodes, 0..1800 s; job 2: 8 GPUs, waits 1800 s, runs 1800..3600 s
# job 3: 8 GPUs, node failure after 900 s; job 4: never started (cancelled while pending)
JOBS = [
    rec(1, 0, 0, 1800, gpus=16, nodes=2),
    rec(2, 0, 1800, 3600, gpus=8),
    rec(3, 600, 1800, 2700, gpus=8, state=JobState.NODE_FAIL),
    rec(4, 100, None, None, state=JobState.CANCELLED),
]


def test_utilisation_is_allocated_over_capacity() -> None:
    u = utilization(JOBS, total_gpus=16, total_nodes=2)
    # GPU-seconds: 16*1800 + 8*1800 + 8*900 = 50400 of 16*3600 = 57600
    assert (u.start, u.end) == (T0, T0 + 3600)
    assert u.gpu == pytest.approx(50400 / 57600)
    assert u.node == pytest.approx((2 * 1800 + 1800 + 900) / (2 * 3600))


def test_utilisation_inside_a_window_clips_jobs() -> None:
    u = utilization(JOBS, total_gpus=16, total_nodes=2, start=T0 + 900, end=T0 + 2700)
    # 16*900 (job 1) + 8*900 (job 2) + 8*900 (job 3) over 16*1800
    assert u.gpu == pytest.approx((16 * 900 + 8 * 900 + 8 * 900) / (16 * 1800))
    assert utilization([], total_gpus=16, total_nodes=2).gpu == 0.0


def test_wait_times_of_started_jobs() -> None:
    assert wait_times(JOBS) == [0, 1800, 1200]


def test_bounded_slowdown() -> None:
    assert bounded_slowdown(JOBS[0]) == 1.0
    assert bounded_slowdown(JOBS[1]) == pytest.approx((1800 + 1800) / 1800)
    tiny = rec(9, 0, 100, 102)  # 2 s job that waited 100 s: bounded by tau = 10 s
    assert TAU == 10
    assert bounded_slowdown(tiny) == pytest.approx((100 + 2) / 10)
    assert bounded_slowdown(tiny, tau=1) == pytest.approx(102 / 2)
    assert mean_bounded_slowdown(JOBS) == pytest.approx((1 + 2 + (1200 + 900) / 900) / 3)
    with pytest.raises(ValueError, match="did not run"):
        bounded_slowdown(JOBS[3])


def test_gpu_hours_lost_and_goodput() -> None:
    assert gpu_hours(JOBS) == pytest.approx(50400 / 3600)
    assert gpu_hours_lost(JOBS) == pytest.approx(8 * 900 / 3600)  # the NODE_FAIL attempt
    assert goodput(JOBS) == pytest.approx((16 * 1800 + 8 * 1800) / 50400)
    assert goodput([]) == 1.0


def test_summary_and_its_text() -> None:
    s = summarize(JOBS, total_gpus=16, total_nodes=2)
    assert (s.jobs, s.started, s.max_wait) == (4, 3, 1800)
    assert s.mean_wait == pytest.approx(1000)
    text = format_summary(s)
    assert "GPU utilisation             87.5%" in text
    assert "GPU-hours lost to failures  2.0" in text
    assert text.splitlines()[0] == "jobs                        4 (3 started)"
