"""The node table's fast paths against the plain rules they stand for.

- ``request._exclusive_allocs`` (an ``--exclusive`` job's nodes, counts read as lists
  once) must give the very records :func:`request.node_alloc` gives node by node.
- ``NodeTable._count`` updates a node's typed GPU counts once per type (untyped GPUs,
  type None, count in no type, also on a node that holds typed ones).
- ``NodeTable.allocate``/``release`` keep a whole free node's CPU ids and GPU indices
  as one shared tuple: after any sequence of starts and ends, every node's free ids
  must be exactly the ids no running allocation holds, lowest first.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from minislurm.job import Allocation
from minislurm.select import request
from minislurm.select.request import ResourceRequest
from minislurm.select.table import NodeShape, NodeTable


def _table(gpu_types: list[str | None], *, mixed: bool = True) -> NodeTable:
    shapes = []
    for k, t in enumerate(gpu_types):
        gpus: tuple[tuple[str | None, int], ...] = ((t, 2 + k % 3),) if k % 4 else ()
        if k % 5 == 3 and mixed:  # GPUs of two types, or untyped and typed ones
            gpus = ((None, 1), ("a100", 2)) if t is None else (("a100", 1), ("h100", 2))
        shapes.append(NodeShape(f"n{k + 1}", 2 + (k % 3) * 2, 1000 * (k + 1), gpus))
    return NodeTable(shapes)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["a100", "h100", None]), min_size=1, max_size=10),
       st.lists(st.tuples(st.integers(0, 9), st.integers(1, 3), st.integers(0, 2)),
                max_size=8),
       st.sampled_from([(None, None), (0, None), (500, None), (None, 300), (None, None)]),
       st.sampled_from([None, "a100", "h100"]))
def test_exclusive_allocs_are_node_alloc_node_by_node(
        types: list[str | None], busy: list[tuple[int, int, int]],
        mem: tuple[int | None, int | None], gpu_type: str | None) -> None:
    table = _table(types)
    for node, cpus, gpus in busy:  # some partial jobs first: free counts differ per node
        i = node % len(table)
        if table.free_cpu[i] >= cpus and table.free_gpu[i] >= gpus:
            table.allocate(Allocation((table.node_alloc(i, cpus, 10, gpus, None),)))
    req = ResourceRequest(exclusive=True, mem_per_node=mem[0], mem_per_cpu=mem[1],
                          gpu_type=gpu_type)
    idx = list(range(len(table)))[::-1]
    assert request._exclusive_allocs(table, idx, req) == tuple(
        request.node_alloc(table, i, req, 1) for i in idx)
    assert request.node_allocs(table, idx, req, 1) == tuple(
        request.node_alloc(table, i, req, 1) for i in idx)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 5), st.integers(0, 6),
                          st.integers(0, 4)), max_size=40), st.booleans(),
       st.sampled_from([["a100"] * 6, [None] * 6, [None, "a100"] * 3]))
def test_free_ids_are_what_no_running_allocation_holds(
        ops: list[tuple[bool, int, int, int]], mixed: bool, types: list[str | None]) -> None:
    # every GPU of one type, untyped GPUs only, or untyped and typed nodes; with
    # ``mixed`` one node holds GPUs of two types, or untyped and typed ones
    table = _table(types, mixed=mixed)
    running: list[Allocation] = []
    for start, node, cpus, gpus in ops:
        if start or not running:
            i = node % len(table)
            cpus = min(cpus, int(table.free_cpu[i]))
            gpus = min(gpus, int(table.free_gpu[i]))
            if not cpus and not gpus:
                continue
            a = Allocation((table.node_alloc(i, cpus, 0, gpus, None),))
            table.allocate(a)
            running.append(a)
        else:
            table.release(running.pop(node % len(running)))
        table.check()
        for i in range(len(table)):
            held_cpu = {c for a in running for na in a.nodes if na.node == table.names[i]
                        for c in na.cpu_ids}
            held_gpu = {g for a in running for na in a.nodes if na.node == table.names[i]
                        for g in na.gpus}
            assert list(table._cpu_free[i]) == [c for c in range(int(table.cpus[i]))
                                                if c not in held_cpu]
            assert list(table.gpu_free_indices(i)) == [g for g in table._gpu_all[i]
                                                       if g not in held_gpu]
            assert table.gpu_used_indices(i) == [g for g in table._gpu_all[i] if g in held_gpu]
            for t in table.gpu_types:  # the typed counts follow the indices
                assert table.free_gpu_typed[t][i] == sum(
                    1 for g in table.gpu_free_indices(i) if g[0] == t)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 3), min_size=2, max_size=10),
       st.lists(st.tuples(st.integers(0, 9), st.integers(1, 3)), max_size=8),
       st.integers(1, 4))
def test_exclusive_order_is_order_nodes(weights: list[int], busy: list[tuple[int, int]],
                                        nodes: int) -> None:
    """``cons_tres._select_cpus`` orders an ``--exclusive`` job's idle candidates by a
    stable sort on Weight: the nodes `request.order_nodes` would take, in its order."""
    from minislurm.select.cons_tres import select

    table = NodeTable([NodeShape(f"n{k + 1}", 4, 1000, (), w) for k, w in enumerate(weights)])
    for node, cpus in busy:  # busy nodes never host an exclusive job
        i = node % len(table)
        if table.free_cpu[i] >= cpus:
            table.allocate(Allocation((table.node_alloc(i, cpus, 10, 0, None),)))
    req = ResourceRequest(min_nodes=nodes, exclusive=True)
    allowed = table.usable.copy()
    res = select(req, table, allowed)
    fits = allowed & request.fit_mask(req, table, table.free_cpu, table.free_mem,
                                      table.free_gpu, table.njobs)
    order = request.order_nodes(table, fits.nonzero()[0])
    if len(order) < nodes:
        assert not isinstance(res, Allocation)
    else:
        assert isinstance(res, Allocation)
        want = sorted(int(i) for i in order[:nodes])
        assert [table.index[n.node] for n in res.nodes] == want
