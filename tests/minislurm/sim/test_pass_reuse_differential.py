"""Differential: what the backfill passes reuse from the pass before changes no schedule.

A pass that follows another with the same running jobs and free resources takes a copy
of the releases-only node-space map built before (``node_space._BuiltMap``) instead
of summing the releases again.  Here every trace is simulated twice, once with that
reuse refused (every map built from scratch, as before it existed), and every
accounting record of the two runs must be equal, field by field (times, node lists,
allocations, reasons).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from minislurm.conf import load_config
from minislurm.sched import node_space
from minislurm.sim.simulate import simulate
from minislurm.sim.workload.lublin import LublinSpec, lublin_workload


def _both(monkeypatch: pytest.MonkeyPatch, run: object) -> None:
    assert callable(run)
    hits = []
    real = node_space._BuiltMap.matches

    def counting(self: node_space._BuiltMap, *args: object) -> bool:
        hit = real(self, *args)  # type: ignore[arg-type]
        hits.append(hit)
        return hit

    monkeypatch.setattr(node_space._BuiltMap, "matches", counting)
    reused = run()
    assert any(hits), "the trace never reused a map: it tests nothing"
    monkeypatch.setattr(node_space._BuiltMap, "matches", lambda self, *a: False)
    fresh = run()
    assert len(reused.jobs) == len(fresh.jobs)
    for a, b in zip(reused.jobs, fresh.jobs, strict=True):
        assert a == b


@pytest.mark.parametrize("scheduler", ["easy", "conservative", "slurm"])
@pytest.mark.parametrize(("seed", "jobs", "procs"), [(1, 500, 64), (2, 400, 32), (3, 300, 256)])
def test_procs_traces_schedule_the_same_with_and_without_reuse(
    monkeypatch: pytest.MonkeyPatch, seed: int, jobs: int, procs: int, scheduler: str
) -> None:
    trace = lublin_workload(LublinSpec(jobs=jobs, procs=procs, seed=seed))
    _both(monkeypatch, lambda: simulate(trace, procs=procs, scheduler=scheduler))


def test_lesson6_whatif_on_the_gpu_cluster_schedules_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from course.lessons.backfill_compare import whatif_jobs

    base = load_config(None)
    cfg = replace(base, scheduler=replace(base.scheduler, bf_window=1440, bf_resolution=60))
    jobs = whatif_jobs(500)
    _both(monkeypatch, lambda: simulate(jobs, cfg, scheduler="slurm"))
