"""An EASY pass's ``EasySpace`` answers as the node-space map does.

The rules (``minislurm/sched/easy_space.py``): with the releases, the pass's starts
and at most one reservation of whole nodes in the map, a job fits its whole run on a
node if and only if it fits there now (less the reserved nodes when its run reaches
the reservation), and on the map of releases only the earliest start is the
``count``-th first fit.  Here random tables (shares of nodes, GPUs, nodes down) and
running jobs go through what an EASY pass does -- jobs started now, taken out and put
back around the reservation, the one reservation -- and a few things it never does (a
second reservation, a start later than now), and every question gets the answer of a
``NodeSpaceMap`` given the same changes.  The simulations of
``tests/minislurm/sim/test_pass_reuse_differential.py`` compare whole runs.
"""

from __future__ import annotations

import numpy as np
import pytest

from minislurm.job import Allocation
from minislurm.sched.easy_space import EasySpace
from minislurm.sched.node_space import NodeSpaceMap, _run_starts, release_events
from minislurm.select.request import ResourceRequest
from minislurm.select.table import BoolArray, NodeShape, NodeTable

NOW, RESOLUTION, WINDOW = 1200, 60, 7200


def _lexsorted(node: np.ndarray, t: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, ...]:
    """The events by their rule: sorted by node then time, summed per node."""
    by = np.lexsort((t, node))
    ev_node, ev_time, ev_v = node[by], t[by], v[by]
    cum = np.cumsum(ev_v, axis=0)
    starts = _run_starts(ev_node)
    before = np.zeros_like(cum)
    before[starts[1:]] = cum[starts[1:] - 1]
    cum -= np.maximum.accumulate(before, axis=0)
    return ev_node, ev_time, cum[:, 0], cum[:, 1], cum[:, 2]


@pytest.mark.parametrize("seed", range(8))
def test_release_events_with_one_release_per_node_are_the_sorted_ones(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 300))
    for node in (rng.permutation(n)[: int(rng.integers(1, n + 1))],  # once per node
                 rng.integers(0, n, int(rng.integers(1, 3 * n)))):  # any  # fmt: skip
        t = rng.integers(NOW, NOW + WINDOW, len(node))
        v = rng.integers(0, 9, (len(node), 3))
        got, want = release_events(node, t, v), _lexsorted(node, t, v)
        assert all(np.array_equal(a, b) for a, b in zip(got, want, strict=True))


def _cluster(rng: np.random.Generator) -> tuple[NodeTable, list[tuple[Allocation, int | None]]]:
    n = int(rng.integers(6, 60))
    shapes = [NodeShape(f"n{i:02d}", int(rng.choice([1, 2, 4])), 1000,
                        (("a100", 2),) if rng.random() < 0.4 else ()) for i in range(n)]
    table = NodeTable(shapes)
    running: list[tuple[Allocation, int | None]] = []
    for _ in range(int(rng.integers(1, n))):
        i = int(rng.integers(0, n))
        cpus = int(rng.integers(1, int(table.cpus[i]) + 1))
        if table.free_cpu[i] < cpus:
            continue
        gpus = int(rng.integers(0, int(table.free_gpu[i]) + 1))
        alloc = Allocation((table.node_alloc(i, cpus, int(rng.integers(0, 600)), gpus, None),))
        table.allocate(alloc)
        end = None if rng.random() < 0.1 else NOW + int(rng.integers(1, 2 * WINDOW))
        running.append((alloc, end))
    table.usable[rng.random(n) < 0.1] = False
    return table, running


def _ask(rng: np.random.Generator, n: int) -> tuple[ResourceRequest, BoolArray, int]:
    nodes = int(rng.integers(1, 5))
    req = ResourceRequest(min_nodes=nodes, ntasks=nodes, cpus_per_task=int(rng.integers(1, 3)),
                          mem_per_node=int(rng.choice([0, 100])) or None,
                          gpus_per_node=int(rng.choice([0, 0, 1])),
                          exclusive=bool(rng.random() < 0.2))  # fmt: skip
    return req, rng.random(n) < 0.9, int(rng.choice([1, 60, 600, WINDOW, 3 * WINDOW]))


def _same_answers(easy: EasySpace, full: NodeSpaceMap, rng: np.random.Generator) -> None:
    n = len(full.table)
    for _ in range(4):
        req, allowed, d = _ask(rng, n)
        count = req.node_count
        assert easy.start_bound(req, allowed, count) == full.start_bound(req, allowed, count)
        a, b = easy.starts_now(req, allowed, count, d), full.starts_now(req, allowed, count, d)
        assert (a is None) == (b is None)
        if a is not None and b is not None:
            assert np.array_equal(a, b)


def _same_earliest(easy: EasySpace, full: NodeSpaceMap, rng: np.random.Generator
                   ) -> tuple[ResourceRequest, tuple[int, BoolArray] | None, int]:
    """One job's earliest start asked of both: (the request, the answer, its duration)."""
    req, allowed, d = _ask(rng, len(full.table))
    got, want = (easy.earliest(req, allowed, req.node_count, d),
                 full.earliest(req, allowed, req.node_count, d))  # fmt: skip
    assert (got is None) == (want is None)
    if got is not None and want is not None:
        assert got[0] == want[0] and np.array_equal(got[1], want[1])
    return req, want, d


def _start(table: NodeTable, rng: np.random.Generator) -> Allocation | None:
    free = np.flatnonzero(table.usable & (table.free_cpu >= 1))
    if not len(free):
        return None
    i = int(rng.choice(free))
    alloc = Allocation((table.node_alloc(i, 1, 0, 0, None),))
    table.allocate(alloc)
    return alloc


@pytest.mark.parametrize("seed", range(40))
def test_an_easy_pass_gets_the_answers_of_the_map(seed: int) -> None:
    rng = np.random.default_rng(seed)
    table, running = _cluster(rng)
    easy = EasySpace(table, NOW, RESOLUTION, WINDOW)
    full = NodeSpaceMap(table, NOW, RESOLUTION, WINDOW)
    for space in (easy, full):
        space.add_releases(running)
    _same_answers(easy, full, rng)
    started: list[tuple[Allocation, int]] = []
    for _ in range(int(rng.integers(0, 4))):  # jobs of the pass start now
        alloc = _start(table, rng)
        if alloc is not None:
            d = int(rng.integers(1, WINDOW))
            started.append((alloc, d))
            for space in (easy, full):
                space.reserve(alloc, NOW, NOW + d)
    req, allowed, d = _ask(rng, len(table))  # a job that fits now: the earliest is now
    want = full.earliest(req, allowed, req.node_count, d)
    if want is not None and want[0] == NOW:  # (an EASY pass asks no other while started)
        got = easy.earliest(req, allowed, req.node_count, d)
        assert got is not None and got[0] == NOW and np.array_equal(got[1], want[1])
    _same_answers(easy, full, rng)
    for alloc, d in started:  # the reservation: the starts taken out, then put back
        for space in (easy, full):
            space.add(alloc, NOW, NOW + d, +1)
    req, want, d = _same_earliest(easy, full, rng)
    if want is not None:
        held = np.flatnonzero(want[1])[: req.node_count]
        start = want[0] if want[0] > NOW else NOW + RESOLUTION
        for space in (easy, full):
            space.hold_nodes(held, start, start + d)
    for alloc, d in started:
        for space in (easy, full):
            space.reserve(alloc, NOW, NOW + d)
    assert easy._map is None  # all of it inside the pattern
    _same_answers(easy, full, rng)
    if rng.random() < 0.5:  # outside the pattern: a second reservation, a later start
        held = rng.choice(len(table), size=2, replace=False)
        for space in (easy, full):
            space.hold_nodes(np.sort(held), NOW + 120, NOW + 600)
    else:
        alloc = _start(table, rng)
        if alloc is not None:
            for space in (easy, full):
                space.reserve(alloc, NOW + 300, NOW + 900)
    _same_answers(easy, full, rng)
    _same_earliest(easy, full, rng)
