"""sched/backfill: the big job keeps its reservation while short jobs fill the hole.

Cluster: 4 nodes x 8 GPUs.  A 3-node job runs for an hour (limit 1 h); a job
wanting all 4 nodes waits (it is reserved at the end of that hour); short jobs
that end before then start at once on the free node; long ones do not.
"""

from __future__ import annotations

from ctld_helpers import gpu_cluster, sub
from hypothesis import given, settings
from hypothesis import strategies as st

from minislurm.states import JobState, Reason


def test_classic_hole_filling() -> None:
    ctl = gpu_cluster()
    t0 = ctl.now
    sub(ctl, 3600, nodes_min=3, exclusive="exclusive", time_limit=60)
    big = sub(ctl, 600, nodes_min=4, exclusive="exclusive", time_limit=60)
    short = sub(ctl, 600, gres="gpu:8", time_limit=30)
    long_ = sub(ctl, 7000, gres="gpu:8", time_limit=120)
    ctl.run_for(120)
    assert ctl.job(big).reason is Reason.RESOURCES
    assert ctl.job(big).start_time == t0 + 3600  # squeue --start: its reservation
    assert ctl.job(short).state is JobState.RUNNING  # backfilled: ends before 1 h
    assert ctl.job(long_).state is JobState.PENDING  # would delay the big job
    ctl.run()
    assert ctl.job(big).start_time == t0 + 3600
    assert (ctl.job(long_).start_time or 0) >= (ctl.job(big).end_time or 0)


def test_fifo_does_not_backfill() -> None:
    ctl = gpu_cluster(policy="fifo")
    sub(ctl, 3600, nodes_min=3, exclusive="exclusive", time_limit=60)
    sub(ctl, 600, nodes_min=4, exclusive="exclusive", time_limit=60)
    short = sub(ctl, 600, gres="gpu:8", time_limit=30)
    ctl.run_for(120)
    assert ctl.job(short).state is JobState.PENDING
    assert ctl.job(short).reason is Reason.PRIORITY


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 8), st.integers(1, 120), st.integers(1, 3)),
                min_size=1, max_size=15))
def test_easy_backfill_never_delays_the_top_job(jobs: list[tuple[int, int, int]]) -> None:
    """EASY: the reserved start of the blocked head job is never pushed back."""
    ctl = gpu_cluster(policy="easy")
    sub(ctl, 3600, nodes_min=3, exclusive="exclusive", time_limit=60)
    head = sub(ctl, 600, nodes_min=4, exclusive="exclusive", time_limit=60)
    for gpus, minutes, frac in jobs:
        limit = minutes
        sub(ctl, limit * 60 * frac // 3, gres=f"gpu:{gpus}", time_limit=limit)
    ctl.run_for(5)
    reserved = ctl.job(head).start_time
    assert reserved is not None
    ctl.run()
    assert ctl.job(head).start_time is not None
    assert ctl.job(head).start_time <= reserved
    ctl.table.check()


def _schedule(seed: int, policy: str) -> list[tuple[int, int | None]]:
    import random

    rng = random.Random(seed)
    ctl = gpu_cluster(policy=policy)
    for _ in range(40):
        sub(ctl, rng.randint(60, 4000), gres=f"gpu:{rng.randint(1, 8)}",
            nodes_min=rng.choice([1, 1, 1, 2]), time_limit=rng.randint(70, 200))
    ctl.run()
    return [(j.job_id, j.start_time) for j in ctl.jobs()]


def test_same_seed_same_schedule() -> None:
    for policy in ("slurm", "easy", "conservative", "fifo"):
        assert _schedule(7, policy) == _schedule(7, policy)


def test_policies_differ_on_the_same_workload() -> None:
    def mean_wait(policy: str) -> float:
        sched = _schedule(3, policy)
        return sum(s or 0 for _, s in sched) / len(sched)

    assert mean_wait("fifo") > mean_wait("slurm")
