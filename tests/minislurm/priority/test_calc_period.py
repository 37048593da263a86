"""``PriorityCalcPeriod``: kept in seconds, priorities recomputed every period, and trace
simulations skip the passes nobody reads.

``simulate`` marks its controller ``unobserved``: no squeue/sprio reads it between its
own events.  A pass followed by the next pass before any other event (no submission, job
end, scheduler pass or end of the run in between) is overwritten unread, so it only
decays the fair-share usage, and every number stays the same to the last bit.  The tests
run the same workloads once with the skip and once with every pass made in full.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

import pytest
from ctld_helpers import ref_controller, sub

from course.lessons.backfill_compare import whatif_jobs
from minislurm.common.accounts import load_associations
from minislurm.conf import load_config
from minislurm.ctld.controller import Controller
from minislurm.priority.multifactor import MultifactorPriority
from minislurm.sim.simulate import SimulationResult, simulate


def _records(r: SimulationResult) -> list[tuple[object, ...]]:
    return sorted((j.job_id, j.restart_count, j.start_time, j.end_time, str(j.state),
                   j.priority, j.reason) for j in r.jobs)  # fmt: skip


def _both(monkeypatch: pytest.MonkeyPatch, run: Callable[[], SimulationResult]
          ) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]], int, bool]:
    """(records with the skip, records with every pass, passes skipped, whether any
    fair-share usage was charged).

    Also checks the fair-share usage each computed pass read: the same floats at the
    same instants (the decay of a skipped pass is applied as the pass would have)."""
    skipped = [0]
    decay, priorities = MultifactorPriority.decay_only, MultifactorPriority.priorities

    def counted(self: MultifactorPriority, now: int) -> None:
        skipped[0] += 1
        decay(self, now)

    def usage_read(into: dict[int, object]
                   ) -> Callable[[MultifactorPriority, Iterable[Any], int], list[int]]:
        def wrapped(self: MultifactorPriority, jobs: Iterable[Any], now: int) -> list[int]:
            out = priorities(self, jobs, now)
            into[now] = sorted(self.usage.own_usage().items())
            return out
        return wrapped

    lazy_usage: dict[int, object] = {}
    full_usage: dict[int, object] = {}
    with monkeypatch.context() as m:
        m.setattr(MultifactorPriority, "decay_only", counted)
        m.setattr(MultifactorPriority, "priorities", usage_read(lazy_usage))
        lazy = _records(run())
    with monkeypatch.context() as m:
        m.setattr(Controller, "decay_priorities", Controller.recalc_priorities)
        m.setattr(MultifactorPriority, "priorities", usage_read(full_usage))
        full = _records(run())
    assert lazy_usage == {t: full_usage[t] for t in lazy_usage}
    charged = any(usage for usage in lazy_usage.values())
    return lazy, full, skipped[0], charged


@pytest.mark.parametrize("policy", ["slurm", "easy", "fifo"])
def test_skipped_passes_change_nothing(monkeypatch: pytest.MonkeyPatch, policy: str) -> None:
    """Lesson 6's what-if (no associations: no usage is charged; jobs left pending at
    the end under FIFO): the same starts, ends, states and final priorities."""
    jobs = whatif_jobs(500)
    cfg = load_config(None)
    lazy, full, skipped, _ = _both(monkeypatch, lambda: simulate(jobs, cfg, scheduler=policy))
    assert skipped > 100
    assert lazy == full


def test_skipped_passes_keep_the_fair_share_decay(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the embedded cluster's associations the users accrue usage, which decays at
    every pass: the usage the computed passes read is the same float either way."""
    jobs, cfg, assocs = whatif_jobs(300), load_config(None), load_associations()
    lazy, full, skipped, charged = _both(
        monkeypatch, lambda: simulate(jobs, cfg, associations=assocs))
    assert charged and skipped > 100
    assert lazy == full


def test_incr_only_makes_every_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """``PriorityFlags=INCR_ONLY`` keeps each job's highest number so far: a pass's
    result depends on the passes before it, so none is skipped."""
    jobs = whatif_jobs(120)
    base = load_config(None)
    cfg = replace(base, priority=replace(base.priority, flags=("INCR_ONLY",)))
    lazy, full, skipped, charged = _both(
        monkeypatch, lambda: simulate(jobs, cfg, associations=load_associations()))
    assert charged and skipped == 0
    assert lazy == full


def test_a_controller_people_read_makes_every_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """The embedded cluster and the daemon (``unobserved`` False): sprio between two
    events shows the pass made at the last PriorityCalcPeriod."""
    calls: list[int] = []
    monkeypatch.setattr(Controller, "decay_priorities", lambda self: calls.append(self.now))
    ctl = ref_controller("PriorityType=priority/multifactor\nPriorityWeightAge=10000\n"
                         "PriorityMaxAge=1:00:00\n"
                         "AccountingStorageType=accounting_storage/slurmdbd\n")
    sub(ctl, None, name="full", ntasks=16, time_limit=60)
    wait = sub(ctl, None, name="wait", ntasks=4, time_limit=10)
    ctl.run_for(2)
    seen = [ctl.job(wait).priority]
    for _ in range(3):  # three passes, no event between them: each one read here
        ctl.run_for(300)
        seen.append(ctl.job(wait).priority)
    assert not calls
    assert seen[0] < seen[1] < seen[2] < seen[3]


MULTIFACTOR = (
    "PriorityType=priority/multifactor\nPriorityWeightAge=1000\n"
    "AccountingStorageType=accounting_storage/slurmdbd\n"
)


def test_priority_calc_period_is_in_seconds() -> None:
    ctl = ref_controller(MULTIFACTOR + "PriorityCalcPeriod=2\n")  # 2 minutes
    assert ctl._prio_period == 120
    assert ref_controller(MULTIFACTOR)._prio_period == 300  # Slurm's default: 5 minutes


def test_priorities_are_recomputed_every_calc_period() -> None:
    ctl = ref_controller(
        MULTIFACTOR + "PriorityCalcPeriod=1\nPriorityMaxAge=1:00:00\nPriorityFlags=ACCRUE_ALWAYS\n")
    sub(ctl, 600, nodes_min=4, exclusive="exclusive")
    waiting = sub(ctl, 10)
    ctl.run_for(0)
    before = ctl.job(waiting).priority
    ctl.run_for(59)
    assert ctl.job(waiting).priority == before  # not yet recomputed
    ctl.run_for(2)
    assert ctl.job(waiting).priority > before  # recomputed at 60 s: it aged a minute
