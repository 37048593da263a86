"""The node-space map's search over fits packed as bits (``_earliest_packed``).

A map of ``_PACKED`` nodes or more keeps each shape's fits also as words of 64 nodes,
brought up to date where reservations change cells and copied where slots split, and
searches them: a popcount per slot, the first candidate's window ANDed, then every
later window as the AND of two power-of-two runs of rows.  Here, on tables of 60 to
200 nodes (one to four words, widths that are not multiples of 8), with the path
forced on: ``earliest`` follows its rule (the first window that fits, exactly those
nodes) on a fresh map and after each of a series of reservations and held nodes, the
packed rows always equal the boolean ones, and ``starts_now`` answers as ``earliest``
does when that answers *now*.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_node_space_earliest import _rule
from test_node_space_starts_now import NOW, RESOLUTION, WINDOW

from minislurm.job import Allocation, NodeAlloc
from minislurm.sched import node_space
from minislurm.sched.node_space import NodeSpaceMap, fit_cells, fit_key
from minislurm.select.request import ResourceRequest
from minislurm.select.table import BoolArray, NodeShape, NodeTable


@pytest.fixture(autouse=True)
def _packed_on_any_width() -> Iterator[None]:
    saved = node_space._PACKED
    node_space._PACKED = 0
    yield
    node_space._PACKED = saved


def _wide_map(seed: int) -> tuple[NodeSpaceMap, np.random.Generator]:
    """60-200 nodes, about half of them running jobs that end at random times (some
    beyond the window, some UNLIMITED), a few down, and a few reservations."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(60, 201))
    shapes = tuple(NodeShape(f"n{i + 1:03d}", int(rng.choice([4, 8])), 4000,
                             (("a100", int(rng.integers(1, 3))),) if rng.random() < 0.7 else ())
                   for i in range(n))  # fmt: skip
    table = NodeTable(shapes)
    releases: list[tuple[Allocation, int | None]] = []
    for i in rng.choice(n, size=n // 2, replace=False).tolist():
        cpus = int(rng.integers(1, int(table.cpus[i]) + 1))
        gpus = int(rng.integers(0, int(table.free_gpu[i]) + 1))
        alloc = Allocation((table.node_alloc(i, cpus, int(rng.integers(0, 3001)), gpus, None),))
        table.allocate(alloc)
        end = None if rng.random() < 0.1 else NOW + int(rng.integers(-100, WINDOW + 300))
        releases.append((alloc, end))
    table.usable[rng.random(n) < 0.05] = False
    space = NodeSpaceMap(table, NOW, RESOLUTION, WINDOW)
    space.add_releases(releases)
    for _ in range(int(rng.integers(0, 6))):
        _change(space, rng)
    return space, rng


def _change(space: NodeSpaceMap, rng: np.random.Generator) -> None:
    """A reservation of part of a few nodes, or a few whole nodes held."""
    table = space.table
    nodes = rng.choice(len(table), size=int(rng.integers(1, 12)), replace=False)
    start = NOW + int(rng.integers(0, WINDOW))
    end = start + int(rng.integers(1, WINDOW))
    if rng.random() < 0.5:
        space.hold_nodes(np.sort(nodes).astype(np.int64), start, end)
        return
    parts = tuple(NodeAlloc(table.names[i], int(rng.integers(1, int(table.cpus[i]) + 1)),
                            int(rng.integers(0, 3001)), (("a100", 0),) if table.gpus[i] else ())
                  for i in nodes.tolist())  # fmt: skip
    space.reserve(Allocation(parts), start, end)


def _request(rng: np.random.Generator) -> tuple[ResourceRequest, int]:
    """A shape and a duration."""
    nodes = int(rng.choice([1, 2, 5, 20, 40]))
    req = ResourceRequest(min_nodes=nodes, ntasks=nodes, cpus_per_task=int(rng.integers(1, 5)),
                          mem_per_node=int(rng.choice([0, 500, 2000])) or None,
                          gpus_per_node=int(rng.choice([0, 0, 1, 2])),
                          exclusive=bool(rng.random() < 0.2))  # fmt: skip
    return req, int(rng.choice([1, 59, 60, 61, 300, 2000, WINDOW, 2 * WINDOW]))


def _allowed(space: NodeSpaceMap, rng: np.random.Generator) -> BoolArray:
    """Every node, or about four in five."""
    return rng.random(len(space.table)) < (1.0 if rng.random() < 0.5 else 0.8)


def _same(got: tuple[int, BoolArray] | None, want: tuple[int, BoolArray] | None) -> None:
    assert (got is None) == (want is None)
    if got is not None and want is not None:
        assert got[0] == want[0]
        assert got[1].dtype == np.bool_ and np.array_equal(got[1], want[1])


def _bits_are_current(space: NodeSpaceMap, req: ResourceRequest) -> None:
    """The packed fit of ``req``'s shape, slot by slot, is that of the cells now."""
    key = fit_key(req)
    want = fit_cells(space.table, key, space.cpu, space.mem, space.gpu, slice(None))
    words = space._fit_bits(key)[space._order]
    got = np.unpackbits(words.view(np.uint8), axis=1, count=len(space.table),
                        bitorder="little").astype(np.bool_)
    assert np.array_equal(got, want)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_packed_earliest_follows_the_rule_as_the_map_changes(seed: int) -> None:
    space, rng = _wide_map(seed)
    asks = []
    for _ in range(3):
        req, duration = _request(rng)
        asks.append((req, duration, _allowed(space, rng)))
    for req, duration, allowed in asks:  # on the fresh map (fits cached from here on)
        want = _rule(space, req, allowed, req.node_count, duration)
        _same(space.earliest(req, allowed, req.node_count, duration), want)
    for _ in range(4):  # reservations after the fits were cached: stale rows, splits
        _change(space, rng)
        for req, duration, allowed in asks:
            _bits_are_current(space, req)
            want = _rule(space, req, allowed, req.node_count, duration)
            space._bounds.clear()  # no lower bound from the answers before the change
            _same(space.earliest(req, allowed, req.node_count, duration), want)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_packed_starts_now_is_earliest_answering_now(seed: int) -> None:
    space, rng = _wide_map(seed)
    req, duration = _request(rng)
    allowed = _allowed(space, rng)
    count = req.node_count
    want = _rule(space, req, allowed, count, duration)
    nodes = space.starts_now(req, allowed, count, duration)
    if want is not None and want[0] == NOW:
        assert nodes is not None and np.array_equal(nodes, want[1])
    else:
        assert nodes is None
