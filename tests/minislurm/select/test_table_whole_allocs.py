"""``NodeTable.node_allocs`` without GPUs keeps the ``NodeAlloc`` of a node taken whole
(every CPU free and taken): through allocations and releases on nodes of 1 and 4 CPUs
it gives, node by node, what ``node_alloc`` (the readable rule) gives."""

from __future__ import annotations

import random

from minislurm.job import Allocation
from minislurm.select.table import NodeShape, NodeTable


def test_node_allocs_are_node_alloc_of_each_node() -> None:
    rng = random.Random(7)
    table = NodeTable([NodeShape(f"n{i:02d}", 1 if i % 3 else 4, 1000) for i in range(24)])
    held: list[Allocation] = []
    for step in range(3000):
        if held and (rng.random() < 0.45 or len(held) > 12):
            table.release(held.pop(rng.randrange(len(held))))
            continue
        cpus = rng.choice((1, 1, 2, 4))
        mem = rng.choice((0, 1, 10)) if step < 2000 else step % 200  # then > 64 sizes
        idx = [i for i in range(len(table))
               if table.free_cpu[i] >= cpus and table.free_mem[i] >= mem and rng.random() < 0.4]
        if not idx:
            continue
        got = table.node_allocs(idx, cpus, mem, 0, None)
        assert got == tuple(table.node_alloc(i, cpus, mem, 0, None) for i in idx)
        alloc = Allocation(got)
        table.allocate(alloc)
        table.check()
        held.append(alloc)
