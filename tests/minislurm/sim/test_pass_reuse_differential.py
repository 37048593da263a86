"""Differential: what a scheduler pass reuses from the passes before changes no schedule.

* A backfill pass derives its releases-only node-space map from the last pass's
  (``node_space._BuiltMap``, ``NodeSpaceMap._derive``: a copy when the same jobs run
  with the same free resources, else updated where jobs started or ended) instead of
  summing every release again.
* The main scheduler answers a job whose select failed before with the same reason
  while nothing select reads changed (``builtin.SelectMemo``).
* A backfill pass asks of a job that gets no reservation only whether it can start
  now (``NodeSpaceMap.starts_now``), not when it could start later
  (``backfill._only_now``).
* An EASY pass whose expected starts nobody reads asks an ``EasySpace`` (the answers
  of its map from the node table and each node's first fit, without the grids; the
  map itself for any question outside that pattern): ``backfill.space_for``.

Every trace is simulated twice, once with all four refused (every map built from
scratch, every select made, every earliest start searched, every pass with the map
itself, as before they existed), and every accounting record of the two runs must be
equal, field by field (times, node lists, allocations, reasons).  Only EASY has jobs
without a reservation, and only EASY asks an ``EasySpace`` (so its passes keep no map).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest

from minislurm.conf import load_config
from minislurm.sched import backfill, node_space
from minislurm.sched.builtin import SelectMemo
from minislurm.sim.simulate import SimulationResult, simulate
from minislurm.sim.workload.lublin import LublinSpec, lublin_workload

#: What is reused or cut short: (owner, function answering from the past or deciding
#: the short cut, its "nothing to reuse" / "no short cut" answer).
REUSE = {
    "map": (node_space._BuiltMap, "matches", False),
    "select": (SelectMemo, "failed", None),
    "start now only": (backfill, "_only_now", False),
    "easy space": (backfill, "space_for", node_space.NodeSpaceMap),
}


def _both(monkeypatch: pytest.MonkeyPatch, run: Callable[[], SimulationResult],
          expect: frozenset[str] = frozenset(REUSE)) -> None:  # fmt: skip
    hits: dict[str, int] = dict.fromkeys(REUSE, 0)
    for what, (owner, name, _none) in REUSE.items():
        real = getattr(owner, name)

        def counting(*args: object, _real: object = real, _what: str = what) -> object:
            assert callable(_real)
            got = _real(*args)
            hits[_what] += bool(got is not None and got is not False
                                and got is not REUSE[_what][2])  # fmt: skip
            return got

        monkeypatch.setattr(owner, name, counting)
    reused = run()
    assert all(hits[k] for k in expect), f"the trace tests nothing of one of them: {hits}"
    for owner, name, none in REUSE.values():
        monkeypatch.setattr(owner, name, lambda *a, _none=none: _none)
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
    expect = (frozenset({"select", "start now only", "easy space"}) if scheduler == "easy"
              else frozenset({"map", "select"}))  # fmt: skip
    _both(monkeypatch, lambda: simulate(trace, procs=procs, scheduler=scheduler), expect)


def test_lesson6_whatif_on_the_gpu_cluster_schedules_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from course.lessons.backfill_compare import whatif_jobs

    base = load_config(None)
    cfg = replace(base, scheduler=replace(base.scheduler, bf_window=1440, bf_resolution=60))
    jobs = whatif_jobs(500)
    _both(monkeypatch, lambda: simulate(jobs, cfg, scheduler="slurm"),
          frozenset({"map", "select"}))


def test_lesson6_whatif_with_easy_on_the_gpu_cluster_schedules_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """EASY on a GPU cluster: shares of nodes, GPUs, jobs spread unevenly (whose search
    the ``EasySpace`` leaves to the map itself)."""
    from course.lessons.backfill_compare import whatif_jobs

    jobs = whatif_jobs(500)
    _both(monkeypatch, lambda: simulate(jobs, load_config(None), scheduler="easy"),
          frozenset({"select", "easy space"}))
