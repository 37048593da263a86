"""The backfill agent (`loops.BackfillAgent`) runs its loop in callbacks: the same
events, scheduled at the same instants in the same order, as the SimPy process it was.

The reference below is that process and the ``kick`` that woke it (an ``Event`` the
process waits for, succeeded by ``kick``), as they were before the agent.  Every event
SimPy is asked to schedule is logged (the clock, the priority, the delay, in the order
asked: SimPy orders the events of an instant by priority, then by that order), and the
logs must be equal, as must the schedules: lesson 7's runs (node failures, a requeued
job, a submission before the clock first runs), a trace simulation with Slurm's
backfill and the textbook EASY of ``--procs`` mode (``bf_at_event``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import pytest
import simpy
from simpy.events import NORMAL, EventPriority

import minislurm.ctld.loops as loops
from course.lessons.goodput import NODES, REPAIR, SPARES, FailureModel, _scale_params
from course.lessons.scaling import simulate_run
from minislurm.conf import load_config
from minislurm.ctld.sched_view import SchedView
from minislurm.ctld.state import CtldState
from minislurm.sim.simulate import simulate
from minislurm.sim.workload.generator import WorkloadSpec, generate


def _process_loop(state: CtldState, view: SchedView) -> Iterator[simpy.Event]:
    """The agent as the SimPy process it was (the reference)."""
    env = state.env
    while True:
        if not state.bf_dirty:
            wake = env.event()
            state.old_wake = wake  # type: ignore[attr-defined]
            yield wake
            state.old_wake = None  # type: ignore[attr-defined]
        yield env.timeout(0 if state.bf_at_event else max(state.bf.bf_interval, 1))
        state.bf_dirty = False
        loops.run_backfill(state, view)


def _old_kick(self: CtldState) -> None:
    """``CtldState.kick`` as it woke the process (the reference)."""
    self.events += 1
    self.bf_dirty = True
    self.wake_priority()
    wake = getattr(self, "old_wake", None)
    if wake is not None and not wake.triggered:
        wake.succeed()
    if not self.main_scheduled:
        self.main_scheduled = True
        self.env.timeout(0).callbacks.append(self._main)


Logged = list[tuple[float, Any, float]]


def _logged(run: Callable[[], object], monkeypatch: pytest.MonkeyPatch, *,
            process: bool) -> tuple[object, Logged]:
    """What ``run`` returns, and every event it scheduled: (clock, priority, delay)."""
    log: Logged = []
    schedule = simpy.Environment.schedule

    def logging(env: simpy.Environment, event: simpy.Event,
                priority: EventPriority = NORMAL, delay: Any = 0) -> None:
        log.append((env.now, priority, delay))
        schedule(env, event, priority, delay)

    with monkeypatch.context() as m:
        m.setattr(simpy.Environment, "schedule", logging)
        if process:
            m.setattr(loops, "BackfillAgent",
                      lambda state, view: state.env.process(_process_loop(state, view)))
            m.setattr(CtldState, "kick", _old_kick)
        return run(), log


def _lesson7(seed: int, tau: float) -> Callable[[], object]:
    model = FailureModel(mtbf=3.0, checkpoint=5 / 60)

    def run() -> object:
        r = simulate_run(_scale_params(model, tau, NODES), 40 * model.mtbf, seed=seed,
                         spares=SPARES, repair=REPAIR)
        return r.breakdown, r.node_failures

    return run


def _trace(policy: str, procs: int | None) -> Callable[[], object]:
    def run() -> object:
        jobs = list(generate(WorkloadSpec(seed=4, days=1)))[:120]
        if procs is not None:
            jobs = [replace(j, nodes=max(1, j.nodes * j.gpus_per_node // 2), array_size=None)
                    for j in jobs]
            r = simulate(jobs, procs=procs, scheduler=policy)
        else:
            base = load_config(None)
            cfg = replace(base, scheduler=replace(base.scheduler, bf_window=60))
            r = simulate(jobs, cfg, scheduler=policy)
        return [(j.job_id, j.state, j.start_time, j.end_time, j.nodelist) for j in r.jobs]

    return run


CASES = {"lesson7-short": _lesson7(1, 0.4), "lesson7-long": _lesson7(2, 3.0),
         "trace-slurm": _trace("slurm", None), "procs-easy": _trace("easy", 32)}


@pytest.mark.parametrize("case", list(CASES))
def test_the_agent_schedules_what_the_process_did(case: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    old, old_log = _logged(CASES[case], monkeypatch, process=True)
    new, new_log = _logged(CASES[case], monkeypatch, process=False)
    assert len(new_log) > 500
    assert new_log == old_log
    assert new == old
