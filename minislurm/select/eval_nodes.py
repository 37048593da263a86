"""cons_tres ``_eval_nodes`` for ``-N`` without ``--ntasks-per-node``: how many CPUs each node gets.

Slurm 22.05's select/cons_tres does not give every node an even share.  A node
qualifies when one task's CPUs are free on it (``pn_min_cpus = -c``); the nodes
are then taken one after the other and each gets what it can use
(``_select_cores``: whole tasks, no more than ``--mem-per-cpu`` pays for), capped
by ``_cpus_to_use`` so that every node still to come keeps at least one CPU.
Finally ``_set_task_dist`` deals the tasks out (one per node, then round robin)
and each node keeps ``tasks x -c`` CPUs.  Measured on real 22.05.8 with 4-CPU
nodes (tests/test_fidelity_select.py): ``-N2 -n4`` -> 3,1; ``-N3 -n4 -c2`` ->
4,2,2; ``-N2-3 -n4`` -> 2,1,1 (a node range aims at its maximum).
"""

from __future__ import annotations

import numpy as np

from minislurm.job import Allocation
from minislurm.select.cons_tres import ResourceRequest, candidate_order, node_alloc
from minislurm.select.table import BoolArray, IntArray, NodeTable
from minislurm.states import Reason


def usable_cpus(req: ResourceRequest, table: NodeTable) -> IntArray:
    """CPUs of each node ``req`` could use now (cons_tres ``_select_cores``/``_allocate_sc``).

    Whole tasks only (a multiple of ``-c``), and no more than the free memory pays
    for with ``--mem-per-cpu``: 4,000 MB free and ``--mem-per-cpu=1500`` leave 2 CPUs.
    """
    cpt = max(req.cpus_per_task, 1)
    avail = table.free_cpu.copy()
    if req.mem_per_cpu is not None and req.mem_per_node is None:
        avail = np.minimum(avail, table.free_mem // max(req.mem_per_cpu, 1))
    return (avail // cpt) * cpt


def cpus_to_use(avail: int, rem_cpus: int, rem_nodes: int, pn_min_cpus: int) -> int:
    """cons_tres ``_cpus_to_use``: leave one CPU for each node still to be picked.

    >>> cpus_to_use(4, 4, 2, 1), cpus_to_use(4, 1, 1, 1)   # -N2 -n4: 3 + 1
    (3, 1)
    """
    limit = rem_cpus - max(rem_nodes - 1, 0)
    if avail > limit:
        return max(limit, pn_min_cpus)
    return avail


def dist_tasks(ntasks: int, cpus: list[int], cpus_per_task: int) -> list[int]:
    """Tasks per node on the CPUs ``eval_nodes`` picked (``_set_task_dist``/``_compute_c_b``).

    One task on every node first, then one more per node and round while CPUs remain
    (``-N3 -n4 -c2`` on 4, 3, 2 usable CPUs: 2, 1, 1 tasks).
    """
    cpt = max(cpus_per_task, 1)
    left = [c // cpt for c in cpus]
    tasks = [0] * len(cpus)
    placed = 0
    for n in range(len(cpus)):
        tasks[n] = 1
        left[n] = max(left[n] - 1, 0)
        placed += 1
    while placed < ntasks:
        before = placed
        for n in range(len(cpus)):
            if placed >= ntasks:
                break
            if left[n] > 0:
                tasks[n] += 1
                left[n] -= 1
                placed += 1
        if placed == before:
            break
    return tasks


def eval_nodes(req: ResourceRequest, table: NodeTable, allowed: BoolArray) -> Allocation | Reason:
    """``-N`` (or ``-N min-max``) with ``-n``: cons_tres ``_eval_nodes`` and ``dist_tasks``.

    Nodes qualify with one task's CPUs free (``pn_min_cpus = -c``), not an even
    share.  They are taken one by one (the ``-w`` nodes first); each gets what it
    can use, but never so much that the nodes still to come get less than one CPU
    each (:func:`cpus_to_use`), and the last node is skipped unless it covers the
    rest.  ``-N min-max`` aims at ``max`` nodes (capped by ``-n``) and settles for
    ``min``.  The tasks are then dealt out (:func:`dist_tasks`) and each node keeps
    ``tasks x -c`` CPUs: ``-N2 -n4`` -> 3,1 (``SLURM_JOB_CPUS_PER_NODE=3,1``);
    ``-N3 -n3 -c2`` -> 2(x3).
    """
    cpt = max(req.cpus_per_task, 1)
    avail = usable_cpus(req, table)
    ok = allowed & (avail >= cpt)
    if req.mem_per_node is not None:
        ok &= table.free_mem >= (table.mem if req.mem_per_node == 0 else req.mem_per_node)
    if req.gpus_per_node:
        ok &= table.free_gpus_of(req.gpu_type) >= req.gpus_per_node
    if req.exc_nodes:
        ok[list(req.exc_nodes)] = False
    req_idx = sorted(req.req_nodes)
    if req_idx and not ok[req_idx].all():
        return Reason.RESOURCES
    min_nodes = req.node_count
    want = min_nodes
    if req.max_nodes is not None and req.max_nodes > min_nodes:
        want = max(min_nodes, min(req.max_nodes, req.ntasks))
    if req_idx:
        ok[req_idx] = False
    order = req_idx + [int(i) for i in candidate_order(table, np.flatnonzero(ok), req_idx)]
    rem_cpus, rem_nodes, max_left = req.ntasks * cpt, want, want
    picks: list[tuple[int, int]] = []
    for i in order:
        if max_left == 0 or (rem_nodes <= 0 and rem_cpus <= 0):
            break
        a = int(avail[i])
        if i not in req.req_nodes and max_left == 1 and a < rem_cpus:
            continue  # the job can take one more node only, and this one is too small
        a = cpus_to_use(a, rem_cpus, rem_nodes, cpt)
        picks.append((i, a))
        rem_cpus -= a
        rem_nodes -= 1
        max_left -= 1
    if rem_cpus > 0 or len(picks) < min_nodes:
        return Reason.RESOURCES
    picks.sort()
    tasks = dist_tasks(req.ntasks, [a for _, a in picks], cpt)
    return Allocation(tuple(
        node_alloc(table, i, req, t * cpt) for (i, _), t in zip(picks, tasks, strict=True)
    ))


__all__ = ["cpus_to_use", "dist_tasks", "eval_nodes", "usable_cpus"]
