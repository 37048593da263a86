"""``NodeSpaceMap.starts_now`` against ``NodeSpaceMap.earliest``.

``starts_now`` is documented as the first slot's test of ``_earliest``, alone: on a
map built the same way it must return exactly the nodes ``earliest`` returns when
``earliest`` answers *now*, and None when ``earliest`` answers a later start or none
inside the window.  Both cache what they found per shape (``_bounds``), so each is
asked on its own freshly built map; then each is asked again after the other on the
same map, where the cached answer must not change what it says.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from minislurm.job import Allocation, NodeAlloc
from minislurm.sched.node_space import NodeSpaceMap
from minislurm.select.request import ResourceRequest
from minislurm.select.table import NodeShape, NodeTable

NOW, RESOLUTION, WINDOW = 1200, 60, 3600  # now on a slot bound: runs end on bounds


@dataclass(frozen=True)
class Case:
    """A node table, the running jobs (node, CPUs, MB, GPUs, limit end) and the
    reservations (node, CPUs, MB, GPUs, start, end) of a map."""

    shapes: tuple[NodeShape, ...]
    down: tuple[bool, ...]
    running: tuple[tuple[int, int, int, int, int | None], ...]
    reserved: tuple[tuple[int, int, int, int, int, int], ...]


def _mostly(value: bool) -> st.SearchStrategy[bool]:
    """``value`` three times in four."""
    return st.sampled_from([value, value, value, not value])


@st.composite
def cases(draw: st.DrawFn) -> Case:
    n = draw(st.integers(1, 10))
    shapes = tuple(
        NodeShape(f"n{i + 1}", draw(st.sampled_from([2, 4, 8, 8])),
                  draw(st.sampled_from([1000, 2000, 4000])),
                  (("a100", g),) if (g := draw(st.integers(0, 2))) else ())
        for i in range(n))  # fmt: skip
    down = tuple(draw(st.lists(_mostly(False), min_size=n, max_size=n)))
    ends = st.one_of(st.none(), st.integers(NOW - 100, NOW + WINDOW + 200))
    running = tuple(draw(st.lists(
        st.tuples(st.integers(0, n - 1), st.integers(1, 8), st.integers(0, 3000),
                  st.integers(0, 2), ends), max_size=16)))  # fmt: skip
    # reservations start anywhere, or often on a slot bound a short run ends on
    starts = st.one_of(st.integers(NOW, NOW + WINDOW),
                       st.integers(0, 10).map(lambda k: NOW + RESOLUTION * k))
    reserved = tuple(draw(st.lists(
        st.tuples(st.integers(0, n - 1), st.integers(1, 8), st.integers(0, 3000),
                  st.integers(0, 2), starts, st.integers(NOW, NOW + WINDOW + 200)),
        max_size=8)))  # fmt: skip
    return Case(shapes, down, running, reserved)


def _table(case: Case) -> tuple[NodeTable, list[tuple[Allocation, int | None]]]:
    """The node table with the running jobs that fit started on it."""
    table = NodeTable(case.shapes)
    releases: list[tuple[Allocation, int | None]] = []
    for i, cpus, mem, gpus, end in case.running:
        cpus = min(cpus, int(table.free_cpu[i]))
        mem = min(mem, int(table.free_mem[i]))
        gpus = min(gpus, int(table.free_gpu[i]))
        if not cpus:
            continue
        alloc = Allocation((table.node_alloc(i, cpus, mem, gpus, None),))
        table.allocate(alloc)
        releases.append((alloc, end))
    table.usable[np.array(case.down, dtype=np.bool_)] = False
    return table, releases


def _map(case: Case, table: NodeTable, releases: list[tuple[Allocation, int | None]]
         ) -> NodeSpaceMap:  # fmt: skip
    """A fresh map: the releases of the running jobs, then the reservations."""
    space = NodeSpaceMap(table, NOW, RESOLUTION, WINDOW)
    space.add_releases(releases)
    for i, cpus, mem, gpus, start, end in case.reserved:
        node = table.names[i]
        cpus, mem = min(cpus, int(table.cpus[i])), min(mem, int(table.mem[i]))
        gpu_ids = tuple(("a100", k) for k in range(min(gpus, int(table.gpus[i]))))
        space.reserve(Allocation((NodeAlloc(node, cpus, mem, gpu_ids),)), start, end)
    return space


requests = st.builds(
    lambda nodes, tpn, cpt, mem, gpus, exclusive: ResourceRequest(
        min_nodes=nodes, ntasks=nodes * tpn, ntasks_per_node=tpn, cpus_per_task=cpt,
        mem_per_node=mem, gpus_per_node=gpus, exclusive=exclusive),
    st.integers(1, 3), st.integers(1, 3), st.integers(1, 2),
    st.sampled_from([None, None, 0, 500, 1500]), st.sampled_from([0, 0, 1, 2]),
    _mostly(False))


@settings(max_examples=400, deadline=None)
@given(cases(), requests, st.data(),
       st.sampled_from([0, 1, 59, 60, 61, 120, 180, 300, 600, 2000, WINDOW, 2 * WINDOW]))
def test_starts_now_is_earliest_answering_now(
        case: Case, req: ResourceRequest, data: st.DataObject, duration: int) -> None:
    table, releases = _table(case)
    n = len(table)
    allowed = np.array(data.draw(st.lists(_mostly(True), min_size=n, max_size=n)),
                       dtype=np.bool_)
    count = req.node_count

    found = _map(case, table, releases).earliest(req, allowed, count, duration)
    nodes = _map(case, table, releases).starts_now(req, allowed, count, duration)
    if found is not None and found[0] == NOW:
        assert nodes is not None
        assert nodes.dtype == np.bool_ and nodes.shape == (n,)
        assert np.array_equal(nodes, found[1])  # the very nodes earliest picks from
        assert int(np.count_nonzero(nodes)) >= count
        assert not (nodes & ~allowed).any()
    else:
        assert nodes is None

    # each again after the other on one map: the answer cached by the first is a
    # lower bound the second honours, and must not change what the second says
    space = _map(case, table, releases)
    space.earliest(req, allowed, count, duration)
    again = space.starts_now(req, allowed, count, duration)
    assert (again is None) == (nodes is None)
    if nodes is not None and again is not None:
        assert np.array_equal(again, nodes)
    space = _map(case, table, releases)
    space.starts_now(req, allowed, count, duration)
    found_again = space.earliest(req, allowed, count, duration)
    assert (found_again is None) == (found is None)
    if found is not None and found_again is not None:
        assert found_again[0] == found[0] and np.array_equal(found_again[1], found[1])
