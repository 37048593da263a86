"""A simulation does not walk a backfill pass that cannot start a job (issue 21).

``run_backfill`` skips the pass when no usable node has free one task's CPUs of the
least demanding pending job (and a GPU, when every pending job asks for GPUs):
``loops.room_for_a_start``.  In a simulation nobody reads what such a pass refreshes
besides its starts, so the schedule must be the same.  Here every pass is walked all
the same, and each one the check called empty must have started no job; and the
schedules with and without the skip are the same, record by record.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from test_schedule_digests import schedule_digest

import minislurm.ctld.loops as loops
from minislurm.conf import load_config
from minislurm.sim.simulate import SimulationResult, simulate
from minislurm.sim.workload.generator import WorkloadSpec, generate


def _ai_mix() -> SimulationResult:
    """Lesson 6's what-if: 300 generated AI jobs, bf_window 60 min, Slurm's backfill."""
    base = load_config(None)
    cfg = replace(base, scheduler=replace(base.scheduler, bf_window=60, bf_resolution=60))
    jobs = list(generate(WorkloadSpec(seed=1, days=7)))[:300]
    return simulate(jobs, cfg, scheduler="slurm")


def _procs(policy: str) -> Callable[[], SimulationResult]:
    def run() -> SimulationResult:
        jobs = [replace(j, nodes=max(1, j.nodes * j.gpus_per_node // 2), array_size=None)
                for j in generate(WorkloadSpec(seed=3, days=2))][:150]
        return simulate(jobs, procs=32, scheduler=policy)

    return run


CASES = {"ai-mix": _ai_mix, "procs-easy": _procs("easy"), "procs-slurm": _procs("slurm")}


@pytest.mark.parametrize("case", list(CASES))
def test_a_pass_with_no_room_starts_no_job_and_skipping_it_keeps_the_schedule(
        case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    skipped = CASES[case]()
    room = loops.room_for_a_start
    real_pass = loops.backfill_pass
    said_empty: list[bool] = []
    walked = {"empty": 0, "all": 0}

    def every_pass(state: Any) -> bool:
        said_empty.append(not room(state))
        return True  # walk it all the same

    def checked_pass(*args: Any, **kwargs: Any) -> int:
        started = real_pass(*args, **kwargs)
        walked["all"] += 1
        if said_empty.pop():
            walked["empty"] += 1
            assert started == 0, "room_for_a_start said no job could start"
        return started

    monkeypatch.setattr(loops, "room_for_a_start", every_pass)
    monkeypatch.setattr(loops, "backfill_pass", checked_pass)
    walked_all = CASES[case]()
    assert not said_empty
    assert walked["empty"] > 0.1 * walked["all"] > 0, walked  # the check has work to do
    assert schedule_digest(skipped.jobs) == schedule_digest(walked_all.jobs)
