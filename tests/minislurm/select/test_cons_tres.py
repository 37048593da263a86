"""select/cons_tres: whether and where a job fits, GPU indices included."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from minislurm.job import Allocation
from minislurm.select.cons_tres import select
from minislurm.select.request import ResourceRequest
from minislurm.select.table import NodeShape, NodeTable
from minislurm.states import Reason


def table(n: int = 2, cpus: int = 8, gpus: int = 4) -> NodeTable:
    return NodeTable([NodeShape(f"n{i + 1}", cpus, cpus * 1000, (("a100", gpus),))
                      for i in range(n)])


def everything(t: NodeTable) -> np.ndarray:
    return np.ones(len(t), dtype=np.bool_)


def test_gpu_indices_follow_the_allocation() -> None:
    t = table()
    first = select(ResourceRequest(gpus_per_node=2, mem_per_cpu=1000), t, everything(t))
    assert isinstance(first, Allocation)
    t.allocate(first)
    second = select(ResourceRequest(gpus_per_node=2, mem_per_cpu=1000), t, everything(t))
    assert isinstance(second, Allocation)
    # best fit: the busy node first, next free indices
    assert first.nodes[0].gpu_indices == (0, 1)
    assert second.nodes[0].node == first.nodes[0].node
    assert second.nodes[0].gpu_indices == (2, 3)


def test_freed_gpus_leave_a_visible_hole() -> None:
    t = table(n=1)
    a = select(ResourceRequest(gpus_per_node=1), t, everything(t))
    assert isinstance(a, Allocation)
    t.allocate(a)
    b2 = select(ResourceRequest(gpus_per_node=2), t, everything(t))
    assert isinstance(b2, Allocation)
    t.allocate(b2)
    t.release(a)
    c = select(ResourceRequest(gpus_per_node=2), t, everything(t))
    assert isinstance(c, Allocation)
    assert c.nodes[0].gpu_indices == (0, 3)  # fragmented: CUDA_VISIBLE_DEVICES=0,3


def test_not_fitting_is_an_answer() -> None:
    t = table(n=1, gpus=4)
    assert select(ResourceRequest(gpus_per_node=5), t, everything(t)) is Reason.RESOURCES
    assert select(ResourceRequest(min_nodes=2), t, everything(t)) is Reason.RESOURCES


def test_exclusive_takes_whole_nodes() -> None:
    t = table(n=2)
    busy = select(ResourceRequest(ntasks=1), t, everything(t))
    assert isinstance(busy, Allocation)
    t.allocate(busy)
    ex = select(ResourceRequest(exclusive=True), t, everything(t))
    assert isinstance(ex, Allocation)
    assert ex.nodes[0].node != busy.nodes[0].node
    assert ex.nodes[0].cpus == 8 and len(ex.nodes[0].gpus) == 4


def test_nodelist_and_exclude() -> None:
    t = table(n=3)
    a = select(ResourceRequest(req_nodes=frozenset({2})), t, everything(t))
    assert isinstance(a, Allocation) and a.node_names == ("n3",)
    b = select(ResourceRequest(min_nodes=2, exc_nodes=frozenset({0})), t, everything(t))
    assert isinstance(b, Allocation) and b.node_names == ("n2", "n3")


def test_spread_tasks_over_nodes() -> None:
    t = table(n=2, cpus=4)
    a = select(ResourceRequest(ntasks=5, spread=True), t, everything(t))
    assert isinstance(a, Allocation)
    assert sorted(a.cpus_per_node) == [1, 4]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 8), st.integers(0, 4), st.integers(1, 3),
                          st.booleans()), min_size=1, max_size=30))
def test_never_more_allocated_than_a_node_has(reqs: list[tuple[int, int, int, bool]]) -> None:
    t = table(n=3)
    held: list[Allocation] = []
    for k, (cpus, gpus, nodes, release_one) in enumerate(reqs):
        res = select(ResourceRequest(min_nodes=nodes, ntasks=cpus * nodes, gpus_per_node=gpus,
                                     mem_per_cpu=1000), t, everything(t))
        if isinstance(res, Allocation):
            t.allocate(res)
            held.append(res)
        if release_one and held:
            t.release(held.pop(k % len(held)))
        t.check()
        for a in held:
            for na in a.nodes:
                assert len(set(na.gpus)) == len(na.gpus)
