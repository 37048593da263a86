"""The node-space map's allocation arrays kept between backfill passes (``AllocCells``).

A map built with cells kept from an earlier pass must equal one built from scratch,
cells of jobs that no longer run are forgotten, and a new allocation that happens to
reuse a forgotten one's id is read anew.
"""

from __future__ import annotations

import numpy as np
import pytest

from minislurm.job import Allocation, NodeAlloc
from minislurm.sched.node_space import AllocCells, NodeSpaceMap, cumsum_rows
from minislurm.select.table import NodeShape, NodeTable


def _table() -> NodeTable:
    t = NodeTable([NodeShape(f"n{i + 1}", 4, 4000, (("a100", 2),)) for i in range(4)])
    return t


def _alloc(*nodes: tuple[str, int, int, int]) -> Allocation:
    return Allocation(tuple(NodeAlloc(n, c, m, tuple(("a100", g) for g in range(k)))
                            for n, c, m, k in nodes))


def _grids(space: NodeSpaceMap) -> tuple[list[int], list[list[int]], list[list[int]],
                                         list[list[int]]]:
    return space.times, space.cpu.tolist(), space.mem.tolist(), space.gpu.tolist()


def test_kept_cells_build_the_same_map_as_a_fresh_one() -> None:
    t = _table()
    a = _alloc(("n1", 3, 1000, 1), ("n2", 1, 500, 0))
    b = _alloc(("n3", 4, 4000, 2))
    c = _alloc(("n2", 2, 100, 1), ("n4", 1, 10, 0))
    for x in (a, b, c):
        t.allocate(x)
    cells = AllocCells(t)
    first = NodeSpaceMap(t, now=0, resolution=60, window=3600, cells=cells)
    first.add_releases([(a, 600), (b, 90), (c, None)])
    t.release(b)  # b ended: the next pass sees a and c only, later
    kept = NodeSpaceMap(t, now=100, resolution=60, window=3600, cells=cells)
    kept.add_releases([(c, 1300), (a, 600)])
    fresh = NodeSpaceMap(t, now=100, resolution=60, window=3600)
    fresh.add_releases([(c, 1300), (a, 600)])
    assert _grids(kept) == _grids(fresh)
    assert kept.times == [100, 600, 1320]
    assert kept.cpu[0].tolist() == [1, 1, 4, 3]
    assert kept.gpu[1].tolist() == [2, 1, 2, 2]
    # the reservation of a started job reads its cells too
    kept.reserve(b, 100, 700)
    fresh.reserve(b, 100, 700)
    assert _grids(kept) == _grids(fresh)


def test_cells_of_jobs_no_longer_running_are_dropped() -> None:
    t = _table()
    a = _alloc(("n1", 1, 10, 0))
    b = _alloc(("n2", 2, 20, 1))
    cells = AllocCells(t)
    idx, vals = cells.of(a)
    assert idx.tolist() == [0] and vals.tolist() == [[1, 10, 0]]
    cells.of(b)
    assert cells.of(a)[0] is idx  # kept: not read again
    cells.keep([b])
    assert cells.of(a)[0] is not idx  # forgotten, read anew
    assert np.array_equal(cells.of(b)[1], np.array([[2, 20, 1]]))


def test_concat_forgets_ended_jobs_now_and_then() -> None:
    """The cells of jobs no longer running are dropped once they outnumber the running
    jobs' (twice as many, plus 64), not at every pass; what is kept stays right."""
    t = _table()
    cells = AllocCells(t)
    for i in range(300):
        allocs = [_alloc((f"n{1 + (i + k) % 4}", 1 + k, 10, 0)) for k in range(3)]
        idx, vals, lens = cells.concat(allocs)
        assert len(cells) <= 2 * len(allocs) + 64 + len(allocs)
        assert lens.tolist() == [1, 1, 1]
        assert vals[:, 0].tolist() == [1, 2, 3]
        assert idx.tolist() == [(i + k) % 4 for k in range(3)]


def test_same_running_jobs_reuse_the_concatenation() -> None:
    t = _table()
    a = _alloc(("n1", 1, 10, 0), ("n2", 1, 10, 0))
    b = _alloc(("n3", 2, 20, 1))
    cells = AllocCells(t)
    first = cells.concat([a, b])
    assert first[0].tolist() == [0, 1, 2] and first[2].tolist() == [2, 1]
    assert cells.concat([a, b]) is first
    other = cells.concat([b])
    assert other is not first and other[0].tolist() == [2]


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("width", [4, 300])
def test_cumsum_rows_is_numpy_cumsum_down_the_rows(width: int, dtype: type) -> None:
    rng = np.random.default_rng(1)
    grid: np.ndarray = rng.integers(-5, 5, size=(12, width)).astype(dtype)
    want = grid.copy()
    want[:9] = np.cumsum(grid[:9], axis=0)
    cumsum_rows(grid, 9)
    assert np.array_equal(grid, want)


def test_fit_key_is_the_same_for_equal_requests_and_follows_the_shape() -> None:
    from minislurm.sched.node_space import fit_key
    from minislurm.select.request import ResourceRequest

    a = ResourceRequest(min_nodes=2, ntasks=8, gpus_per_node=4, mem_per_cpu=1000)
    assert fit_key(a) == (4, 4000, False, 4, False)
    assert fit_key(ResourceRequest(min_nodes=2, ntasks=8, gpus_per_node=4,
                                   mem_per_cpu=1000)) == fit_key(a)
    assert fit_key(ResourceRequest(min_nodes=2, ntasks=8, gpus_per_node=4, mem_per_cpu=500,
                                   exclusive=True)) == (4, 2000, False, 4, True)


def test_fit_key_of_short_lived_requests_is_their_own() -> None:
    """The keys are kept by the request's identity: requests made and dropped one
    after another (ids free to be reused), past the size where the cache is emptied,
    each get the key of their own shape."""
    from minislurm.sched import node_space
    from minislurm.select.request import ResourceRequest

    for i in range(2 * node_space._FIT_KEYS_MAX + 10):
        cpus, mem = 1 + i % 7, 100 * (i % 5)
        req = ResourceRequest(ntasks=cpus, mem_per_node=mem)
        assert node_space.fit_key(req) == (cpus, mem, mem == 0, 0, False)
        del req
    assert len(node_space._FIT_KEYS) <= node_space._FIT_KEYS_MAX


def _state(space: NodeSpaceMap) -> tuple[object, ...]:
    events = tuple(e.tolist() for e in space._events) if space._events is not None else None
    return (*_grids(space), events)


def test_a_pass_with_the_same_releases_reuses_the_map_and_gets_the_same_one() -> None:
    t = _table()
    a = _alloc(("n1", 3, 1000, 1), ("n2", 1, 500, 0))
    b = _alloc(("n3", 4, 4000, 2))
    for x in (a, b):
        t.allocate(x)
    cells = AllocCells(t)
    first = NodeSpaceMap(t, now=0, resolution=60, window=3600, cells=cells)
    first.add_releases([(a, 600), (b, 150)])
    built = cells.built
    assert built is not None
    first.reserve(_alloc(("n4", 4, 4000, 2)), 120, 600)  # a reservation changes no later map
    kept = NodeSpaceMap(t, now=100, resolution=60, window=3600, cells=cells)
    kept.add_releases([(a, 600), (b, 150)])
    assert cells.built is built and kept._events is built.events  # reused, not built again
    fresh = NodeSpaceMap(t, now=100, resolution=60, window=3600)
    fresh.add_releases([(a, 600), (b, 150)])
    assert _state(kept) == _state(fresh)
    assert kept.times == [100, 180, 600]
    key = (1, 0, False, 0, False)
    assert kept._first_fit(key).tolist() == fresh._first_fit(key).tolist()
    # the reused buffers are the map's own: a reservation in one leaves the other alone
    kept.reserve(b, 120, 600)
    again = NodeSpaceMap(t, now=110, resolution=60, window=3600, cells=cells)
    again.add_releases([(a, 600), (b, 150)])
    fresh = NodeSpaceMap(t, now=110, resolution=60, window=3600)
    fresh.add_releases([(a, 600), (b, 150)])
    assert _state(again) == _state(fresh)


@pytest.mark.parametrize("change", ["free", "usable", "limit", "window", "at_now"])
def test_the_map_is_built_again_when_what_it_reads_changed(change: str) -> None:
    t = _table()
    a = _alloc(("n1", 3, 1000, 1))
    b = _alloc(("n2", 1, 10, 0))
    t.allocate(a)
    cells = AllocCells(t)
    NodeSpaceMap(t, now=0, resolution=60, window=3600, cells=cells).add_releases([(a, 600)])
    built = cells.built
    now, ends, window = 100, 600, 3600
    if change == "free":
        t.allocate(b)  # another job's CPUs are taken but it is not running (yet)
    elif change == "usable":
        t.usable[3] = False
    elif change == "limit":
        ends = 1200
    elif change == "window":
        window = 400  # the release is beyond the window now
    else:
        now = 600  # the release is now: the first slot is another one
    kept = NodeSpaceMap(t, now=now, resolution=60, window=window, cells=cells)
    kept.add_releases([(a, ends)])
    fresh = NodeSpaceMap(t, now=now, resolution=60, window=window)
    fresh.add_releases([(a, ends)])
    assert kept._events is not built.events
    assert _state(kept) == _state(fresh)
