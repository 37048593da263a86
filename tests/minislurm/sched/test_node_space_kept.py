"""Differential: the node-space map a backfill pass derives from the last pass's map
(``NodeSpaceMap._derive``) equals the map built from every running job (``_build``).

Each simulation below runs with every ``add_releases`` checked: right after it, a
map of the same releases is built from scratch (fresh allocation arrays, nothing kept)
and the two must agree in the slot times, the free CPUs, memory and GPUs of every
slot and node (slot order), and the events ``start_bound`` reads.  The simulations
cover a generated GPU workload on many nodes, ``--procs`` traces under EASY and
Slurm's backfill, and a cluster where a running job's limit is changed (``scontrol
update TimeLimit=``) and nodes go down and come back.  Each must derive most maps
and build some again (the first one, a change of the usable nodes, or many releases
changed at once), so that both paths are compared.  Maps of fewer than
``_DERIVE_NODES`` nodes are derived only when nothing changed (building them anew is
cheaper); here every map is derived where it can be, so that small clusters test it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from bench_loader import load_benchmark
from ctld_helpers import gpu_cluster, sub

from minislurm.job import Allocation
from minislurm.sched import backfill, node_space
from minislurm.sched.node_space import NodeSpaceMap
from minislurm.sim.simulate import simulate
from minislurm.sim.workload.lublin import LublinSpec, lublin_workload


def _events(space: NodeSpaceMap) -> list[tuple[int, int, int, int, int]] | None:
    """The events as ``start_bound`` reads them: per node, in time order, what it got
    back by then.  A node has one event per release in a map built from scratch and
    one per change in a derived one: the same once a node's events at one time are
    taken as the last of them, and an event that gives nothing back is dropped."""
    if space._events is None:
        return None
    node, when, *got = (e.tolist() for e in space._events)
    rows = list(zip(node, when, *got, strict=True))
    assert [r[:2] for r in rows] == sorted(r[:2] for r in rows), "not by node, then time"
    last: dict[tuple[int, int], tuple[int, int, int, int, int]] = {}
    for r in rows:
        last[r[0], r[1]] = r
    out: list[tuple[int, int, int, int, int]] = []
    for r in last.values():
        before = out[-1][2:] if out and out[-1][0] == r[0] else (0, 0, 0)
        if r[2:] != before:
            out.append(r)
    return out


def _state(space: NodeSpaceMap) -> tuple[object, ...]:
    events = _events(space)
    return (space.now, space.horizon, space.times, space.cpu.tolist(), space.mem.tolist(),
            space.gpu.tolist(), events)  # fmt: skip


@pytest.fixture
def checked(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """Every map a pass makes compared with one built from scratch; how each was made."""
    counts: Counter[str] = Counter()
    real_add = NodeSpaceMap.add_releases
    real_build = NodeSpaceMap._build
    real_derive = NodeSpaceMap._derive
    real_matches = node_space._BuiltMap.matches
    checking: list[NodeSpaceMap] = []
    last: dict[int, tuple[Allocation, int | None]] = {}

    def add_releases(self: NodeSpaceMap, releases: list[tuple[Allocation, int | None]]) -> None:
        checking.append(self)
        try:
            real_add(self, releases)
        finally:
            checking.pop()
        fresh = NodeSpaceMap(self.table, self.now, self.resolution, self.horizon - self.now)
        assert fresh.cells is not self.cells
        real_add(fresh, releases)
        assert _state(self) == _state(fresh)
        counts["maps"] += 1
        moved = [a for a, end in releases if id(a) in last and last[id(a)][0] is a
                 and last[id(a)][1] != end]  # fmt: skip
        counts["limit moved"] += len(moved)
        last.clear()
        last.update((id(a), (a, end)) for a, end in releases)

    def build(self: NodeSpaceMap, *args: Any) -> None:
        if checking and checking[-1] is self:
            counts["built"] += 1
        real_build(self, *args)

    def derive(self: NodeSpaceMap, built: Any, *args: Any) -> object:
        got = real_derive(self, built, *args)
        counts["derived" if got is not None else "refused"] += 1
        counts["derived with changes"] += got is not None and got is not built
        return got

    def matches(self: Any, *args: Any) -> bool:
        got = real_matches(self, *args)
        counts["kept map usable" if got else "kept map not usable"] += 1
        return got

    monkeypatch.setattr(node_space, "_DERIVE_NODES", 0)
    monkeypatch.setattr(NodeSpaceMap, "add_releases", add_releases)
    monkeypatch.setattr(NodeSpaceMap, "_build", build)
    monkeypatch.setattr(NodeSpaceMap, "_derive", derive)
    monkeypatch.setattr(node_space._BuiltMap, "matches", matches)
    yield counts


def _both_paths(counts: Counter[str]) -> None:
    assert counts["maps"] > 20, counts
    assert counts["derived"] > counts["maps"] // 2, counts  # mostly derived
    assert counts["derived with changes"] > counts["maps"] // 4, counts  # not only copied
    assert counts["built"] >= 1, counts  # and some built from scratch, compared too


def test_generated_gpu_workload_on_many_nodes(checked: Counter[str]) -> None:
    bench = load_benchmark("bench_simulate")
    simulate(bench.workload(1500, 40), bench.cluster(40), scheduler="slurm")
    _both_paths(checked)
    assert checked["refused"] >= 1, checked  # many jobs started at once: built again


@pytest.mark.parametrize("scheduler", ["easy", "slurm"])
def test_procs_traces(checked: Counter[str], scheduler: str,
                      monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    # an EASY pass of a simulation asks an EasySpace, which keeps no map: the map here
    monkeypatch.setattr(backfill, "space_for", lambda *_: NodeSpaceMap)
    trace = lublin_workload(LublinSpec(jobs=600, procs=128, seed=4))
    simulate(trace, procs=128, scheduler=scheduler)
    _both_paths(checked)


def test_limits_updated_and_nodes_down(checked: Counter[str]) -> None:
    ctl = gpu_cluster(nodes=8, gpus=4, cpus=16, params="bf_interval=30,bf_resolution=60")
    rng = np.random.default_rng(7)
    running: list[int] = []
    for step in range(24):
        for _ in range(4):
            nodes = int(rng.integers(1, 3))
            jid = sub(ctl, int(rng.integers(300, 4000)), time_limit=int(rng.integers(10, 90)),
                      nodes_min=nodes, nodes_max=nodes, ntasks_per_node=int(rng.integers(1, 5)),
                      gpus_per_node=str(rng.integers(1, 3)))  # fmt: skip
            running.append(jid)
        ctl.run_for(240)
        live = [j for j in running if ctl.job(j).state.name == "RUNNING"]
        if step % 3 == 1 and live:  # scontrol update TimeLimit= on a running job
            ctl.update_job(live[0], time_limit=int(rng.integers(5, 120)))
        if step == 8:
            ctl.update_node("g3", "down", "fan")
        if step == 12:
            ctl.update_node("g3", "resume")
        if step == 15:
            ctl.update_node("g5,g6", "drain", "bios")
        if step == 19:
            ctl.update_node("g5,g6", "resume")
    ctl.run_for(3 * 86400)
    _both_paths(checked)
    assert checked["kept map not usable"] >= 1, checked  # the usable nodes changed
    assert checked["limit moved"] >= 1, checked  # a running job's limit end changed
