"""``NodeSpaceMap.earliest`` against the rule it implements, slot by slot.

``earliest`` searches a small map with each slot's nodes as the bits of an int;
otherwise it tests only the slots where enough nodes fit, a candidate's run window
on a few nodes or (on narrow maps) on every node at once, and falls back to prefix
sums after a few near misses; a wide map is searched over its fits packed as bits.
The rule itself: the first slot from which ``count`` allowed nodes (with the GPUs the
request asks per node) fit one share of the request in every slot the run overlaps;
the nodes returned are exactly those.  Asked on fresh maps (no cached lower bounds)
of narrow and wide node tables.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from test_node_space_starts_now import WINDOW, Case, _map, _mostly, _table, cases, requests

from minislurm.job import Allocation
from minislurm.sched import node_space
from minislurm.sched.node_space import NodeSpaceMap, fit_cells, fit_key
from minislurm.select.request import ResourceRequest
from minislurm.select.table import BoolArray, NodeTable


def _rule(space: NodeSpaceMap, req: ResourceRequest, allowed: BoolArray, count: int,
          duration: int) -> tuple[int, BoolArray] | None:  # fmt: skip
    """The first start slot whose whole run window ``count`` allowed nodes fit."""
    table = space.table
    if req.gpus_per_node:
        allowed = allowed & (table.total_gpus_of(req.gpu_type) >= req.gpus_per_node)
    fit = fit_cells(table, fit_key(req), space.cpu, space.mem, space.gpu, slice(None))
    times = space.times
    for s, start in enumerate(times):
        good = allowed.copy()
        for j in range(s, len(times)):
            if j > s and times[j] >= start + duration:
                break
            good &= fit[j]
        if int(np.count_nonzero(good)) >= count:
            return start, good
    return None


def _check(case: Case, table: NodeTable, releases: list[tuple[Allocation, int | None]],
           req: ResourceRequest, allowed: BoolArray, duration: int) -> None:  # fmt: skip
    count = req.node_count
    space = _map(case, table, releases)
    want = _rule(space, req, allowed, count, duration)
    got = space.earliest(req, allowed, count, duration)
    if want is None:
        assert got is None
    else:
        assert got is not None and got[0] == want[0]
        assert got[1].dtype == np.bool_ and np.array_equal(got[1], want[1])


durations = st.sampled_from([1, 59, 60, 61, 120, 180, 300, 600, 2000, WINDOW, 2 * WINDOW])


@settings(max_examples=400, deadline=None)
@given(cases(), requests, st.data(), durations)
def test_earliest_is_the_first_window_that_fits(
        case: Case, req: ResourceRequest, data: st.DataObject, duration: int) -> None:
    table, releases = _table(case)
    n = len(table)
    allowed = np.array(data.draw(st.lists(_mostly(True), min_size=n, max_size=n)),
                       dtype=np.bool_)
    _check(case, table, releases, req, allowed, duration)


@settings(max_examples=300, deadline=None)
@given(cases(), requests, st.data(), durations,
       st.sampled_from([(0, 128, 10**9), (0, 0, 10**9), (0, 0, 0)]))
def test_earliest_without_bits_is_the_first_window_that_fits(
        case: Case, req: ResourceRequest, data: st.DataObject, duration: int,
        limits: tuple[int, int, int]) -> None:
    """The same on the numpy paths: the map's slots as arrays, each window tested on
    every node (a narrow map) or on the nodes free at its start (``_NARROW`` 0), or
    the slots' fits packed as bits (``_PACKED`` 0)."""
    table, releases = _table(case)
    n = len(table)
    allowed = np.array(data.draw(st.lists(_mostly(True), min_size=n, max_size=n)),
                       dtype=np.bool_)
    saved = node_space._BITS, node_space._NARROW, node_space._PACKED
    node_space._BITS, node_space._NARROW, node_space._PACKED = limits
    try:
        _check(case, table, releases, req, allowed, duration)
    finally:
        node_space._BITS, node_space._NARROW, node_space._PACKED = saved
