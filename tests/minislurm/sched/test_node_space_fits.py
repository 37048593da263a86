"""The node-space map's cached fits after its cells change.

``earliest`` keeps, per shape, where one share fits in each slot.  A reservation, a
release or a split changes cells after that: a small map (``_SMALL_CELLS``) then
forgets the cached fits and computes every row again when next read; a larger map
recomputes only the cells that changed.  Both must answer as a map that never cached
anything: the rule of ``earliest`` (the first window that fits) on the map's cells as
they are.  Each case runs with the small-map path forced on and off.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_node_space_earliest import _rule
from test_node_space_starts_now import NOW, WINDOW, Case, _map, _mostly, _table, cases
from test_node_space_starts_now import requests as shapes

from minislurm.job import Allocation, NodeAlloc
from minislurm.sched import node_space
from minislurm.sched.node_space import NodeSpaceMap, fit_cells, fit_key
from minislurm.select.request import ResourceRequest

#: A change to the map: (node, CPUs, MB, GPUs, start, end, whole node held).
changes = st.lists(
    st.tuples(st.integers(0, 9), st.integers(1, 8), st.integers(0, 3000), st.integers(0, 2),
              st.integers(NOW, NOW + WINDOW), st.integers(NOW, NOW + WINDOW + 200),
              st.booleans()),
    min_size=1, max_size=6)  # fmt: skip


def _change(space: NodeSpaceMap, change: tuple[int, int, int, int, int, int, bool]) -> None:
    """A reservation of part of a node, or a whole node held (``hold_nodes``)."""
    table = space.table
    i, cpus, mem, gpus, start, end, whole = change
    i %= len(table)
    if whole:
        space.hold_nodes(np.array([i], dtype=np.int64), start, end)
        return
    cpus, mem = min(cpus, int(table.cpus[i])), min(mem, int(table.mem[i]))
    gpu_ids = tuple(("a100", k) for k in range(min(gpus, int(table.gpus[i]))))
    space.reserve(Allocation((NodeAlloc(table.names[i], cpus, mem, gpu_ids),)), start, end)


def _cached_fits_are_current(space: NodeSpaceMap, req: ResourceRequest) -> None:
    """The cached fit of ``req``'s shape, slot by slot, is that of the cells now."""
    key = fit_key(req)
    want = fit_cells(space.table, key, space.cpu, space.mem, space.gpu, slice(None))
    got = space._fit_rows(key)[space._order]
    assert np.array_equal(got, want)


@pytest.mark.parametrize("small_cells", [0, 1 << 30], ids=["cells-updated", "rows-anew"])
@settings(max_examples=150, deadline=None)
@given(case=cases(), first=shapes, second=shapes, data=st.data(), steps=changes,
       duration=st.sampled_from([1, 60, 61, 300, 2000, WINDOW]))
def test_earliest_after_changes_follows_the_rule(
    small_cells: int, case: Case, first: ResourceRequest, second: ResourceRequest,
    data: st.DataObject, steps: list[tuple[int, int, int, int, int, int, bool]],
    duration: int,
) -> None:
    saved = node_space._SMALL_CELLS
    node_space._SMALL_CELLS = small_cells
    try:
        table, releases = _table(case)
        n = len(table)
        allowed = np.array(data.draw(st.lists(_mostly(True), min_size=n, max_size=n)),
                           dtype=np.bool_)
        space = _map(case, table, releases)
        for req in (first, second):  # both shapes cached before the map changes
            space.earliest(req, allowed, req.node_count, duration)
        for change in steps:
            _change(space, change)
            for req in (first, second):
                _cached_fits_are_current(space, req)
                want = _rule(space, req, allowed, req.node_count, duration)
                got = space.earliest(req, allowed, req.node_count, duration)
                assert (got is None) == (want is None)
                if got is not None and want is not None:
                    assert got[0] == want[0] and np.array_equal(got[1], want[1])
    finally:
        node_space._SMALL_CELLS = saved
