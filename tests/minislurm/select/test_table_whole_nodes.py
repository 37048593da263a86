"""``NodeTable.allocate``/``release`` of a large allocation that holds every CPU id of
each of its nodes (a ``--procs`` job's one-CPU nodes) set each node's free ids at once
(`_whole_nodes`); node by node, the same table must come out.  A twin table that always
goes node by node runs the same random allocations and releases (large and small, whole
nodes and shares of nodes, some with GPUs) and is compared after every step.  The twin
also forgets the large allocations it keeps (`_Large`) before each release, so that it
reads their nodes again: the kept arrays must give back exactly what was taken."""

from __future__ import annotations

import random

import pytest

from minislurm.job import Allocation
from minislurm.select.table import NodeShape, NodeTable


def _shapes() -> list[NodeShape]:
    return [NodeShape(f"p{i:03d}", (1, 1, 2, 4)[i % 4], 1000,
                      (("a100", 2),) if i % 5 else ()) for i in range(160)]


def _state(t: NodeTable) -> tuple[object, ...]:
    return (t.free_cpu.tolist(), t.free_mem.tolist(), t.free_gpu.tolist(), t.njobs.tolist(),
            [list(ids) for ids in t._cpu_free], [list(g) for g in t._gpu_free])


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_whole_nodes_at_once_is_node_by_node(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    fast, slow = NodeTable(_shapes()), NodeTable(_shapes())
    monkeypatch.setattr(slow, "_whole_nodes", lambda alloc, idx: False)
    held: list[Allocation] = []
    whole = 0
    for _ in range(600):
        if held and (rng.random() < 0.4 or len(held) > 6):
            alloc = held.pop(rng.randrange(len(held)))
            slow._large.clear()  # read from the nodes again
            assert fast.release(alloc) == slow.release(alloc)
        else:
            cpus = rng.choice((1, 1, 2))
            gpus = 1 if rng.random() < 0.3 else 0
            only_whole = rng.random() < 0.5  # nodes of ``cpus`` CPUs, all free
            idx = [i for i in range(len(fast)) if fast.free_cpu[i] >= cpus
                   and fast.free_gpu[i] >= gpus and rng.random() < 0.8
                   and (not only_whole or fast.free_cpu[i] == fast.cpus[i] == cpus)]
            if len(idx) < 2:
                continue
            idx = idx[: rng.choice((3, 40, 90))]
            alloc = Allocation(fast.node_allocs(idx, cpus, 10, gpus, None))
            whole += fast._whole_nodes(alloc, idx)
            assert fast.allocate(alloc) == slow.allocate(alloc) == idx
            held.append(alloc)
        assert _state(fast) == _state(slow)
        fast.check()
    assert whole > 20  # the path at once ran


def test_a_share_of_a_node_is_not_whole() -> None:
    t = NodeTable([NodeShape(f"n{i:02d}", 2, 100) for i in range(40)])
    idx = list(range(40))
    half = Allocation(t.node_allocs(idx, 1, 10, 0, None))
    assert not t._whole_nodes(half, idx)
    t.allocate(half)
    rest = Allocation(t.node_allocs(idx, 1, 10, 0, None))
    assert not t._whole_nodes(rest, idx)
    t.allocate(rest)
    t.release(half)
    assert [list(ids) for ids in t._cpu_free] == [[0]] * 40
    t.check()


def test_a_deep_copy_gives_back_what_the_table_holds() -> None:
    """``SchedView.earliest_start`` takes running jobs off a deep copy of the table: the
    copy keeps no large allocation of its own, and gives back the same counts."""
    import copy

    t = NodeTable([NodeShape(f"n{i:02d}", 2, 100) for i in range(40)])
    big = Allocation(t.node_allocs(list(range(40)), 2, 100, 0, None))
    t.allocate(big)
    assert len(t._large) == 1
    twin = copy.deepcopy(t)
    assert twin._large == {} and _state(twin) == _state(t)
    twin.release(big)
    assert twin.free_cpu.tolist() == [2] * 40 and twin.njobs.tolist() == [0] * 40
    assert t.free_cpu.tolist() == [0] * 40  # the table itself is as it was
    t.release(big)
    assert t._large == {} and _state(t) == _state(twin)
    t.check()
