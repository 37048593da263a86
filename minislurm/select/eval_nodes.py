"""cons_tres ``_eval_nodes``: the CPUs each node gets (``-N``, ``-n``, no ``--ntasks-per-node``).

Slurm 22.05's select/cons_tres does not give every node an even share.  A node
qualifies when one task's CPUs are free on it (``pn_min_cpus = -c``); the nodes
are then taken one after the other and each gets what it can use
(``_select_cores``: whole tasks, no more than ``--mem-per-cpu`` pays for), capped
by ``_cpus_to_use`` so that every node still to come keeps at least one CPU.
Finally ``_set_task_dist`` deals the tasks out (one per node, then round robin)
and each node keeps ``tasks x -c`` CPUs.  Measured on real 22.05.8 with 4-CPU
nodes (tests/minislurm/select/test_cpu_shares.py): ``-N2 -n4`` -> 3,1; ``-N3 -n4 -c2`` ->
4,2,2; ``-N2-3 -n4`` -> 2,1,1 (a node range aims at its maximum).

A ``--gpus=N`` total is `minislurm.select.gpu_shares` (same CPU shares, nodes picked
with the GPUs in mind).
"""

from __future__ import annotations

import numpy as np

from minislurm.job import Allocation
from minislurm.select.request import ResourceRequest, node_alloc
from minislurm.select.table import BoolArray, IntArray, NodeTable
from minislurm.states import Reason


def usable_cpus(req: ResourceRequest, table: NodeTable) -> IntArray:
    """CPUs of each node ``req`` could use now (cons_tres ``_select_cores``/``_allocate_sc``).

    Whole tasks only (a multiple of ``-c``), and no more than the free memory pays
    for with ``--mem-per-cpu``: 4,000 MB free and ``--mem-per-cpu=1500`` leave 2 CPUs;
    with ``--gpus-per-task`` no more tasks than the free GPUs serve (2 free GPUs and
    ``--gpus-per-task=1`` leave 2 CPUs).
    """
    cpt = max(req.cpus_per_task, 1)
    avail = table.free_cpu.copy()
    if req.mem_per_cpu is not None and req.mem_per_node is None:
        avail = np.minimum(avail, table.free_mem // max(req.mem_per_cpu, 1))
    if req.gpus_per_task:  # gres_select_filter_sock_core: max_tasks = free GPUs / per task
        avail = np.minimum(avail, table.free_gpus_of(req.gpu_type) // req.gpus_per_task * cpt)
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


def candidates(req: ResourceRequest, table: NodeTable, ok: BoolArray) -> bool:
    """Narrow ``ok`` (nodes with room for one task) by ``--mem`` and ``-x``; False when
    a ``-w`` node is not among them (the job cannot start now)."""
    if req.mem_per_node is not None:
        ok &= table.free_mem >= (table.mem if req.mem_per_node == 0 else req.mem_per_node)
    if req.exc_nodes:
        ok[list(req.exc_nodes)] = False
    return not req.req_nodes or bool(ok[sorted(req.req_nodes)].all())


def eval_nodes(
    req: ResourceRequest, table: NodeTable, allowed: BoolArray, free_gpus: IntArray | None = None
) -> Allocation | Reason:
    """``-N`` (or ``-N min-max``, or ``-n`` alone) with ``-n``: cons_tres ``choose_nodes``
    + ``_eval_nodes`` + ``_cpus_to_use`` (job_test.c, 22.05), then ``dist_tasks``.

    One ``_eval_nodes`` pass (``attempt``):

    1. The ``-w`` nodes are taken first, in index order, each through ``_cpus_to_use``.
    2. The other usable nodes form *sets of consecutive nodes*: a set ends at a node
       that cannot take one task (a gap) or whose (sched) weight differs.
    3. Best fit, repeated while the job is not satisfied: the set holding a ``-w``
       node, else the lowest weight; at equal weight the first *sufficient* set
       (CPUs >= rem_cpus and ``_enough_nodes``), a sufficient one with fewer CPUs,
       or, while none suffices, the one with the most CPUs.  In the chosen set:
       with a ``-w`` node, upward from it then downward, no size check; without,
       if one node is still wanted, only the smallest node that covers the rest;
       otherwise in index order, skipping a node when it would be the job's last
       (``max_nodes == 1``) and is too small.  Each node gets ``_cpus_to_use``
       (leave one CPU for each of ``min_rem_nodes - 1``, never under ``-c``).

    ``choose_nodes``: when the pass fails and more than ``min_nodes`` nodes are
    usable, drop the nodes with at most 1, 2, ... usable CPUs (not ``-w`` ones,
    never below ``min_nodes`` nodes) and try again.  So with 2,1,4,4 free CPUs,
    ``-N2 -n7`` fails on n1 (2) + a last node needing 5, then without n2 the set
    n3-n4 is sufficient: 4 + 3.  ``-N3 -n10``: n1 2 + n2 1 + 7 fails; without n2,
    n3-n4 (biggest) 4 + 4, then n1 2.  ``_cpus_to_use`` also lowers the node's
    ``avail_cpus`` for later passes (kept in ``avail``), as in Slurm.

    ``free_gpus`` (a GPU job's second try): Slurm's ``can_job_run_on_node`` makes a
    GRES job's sched_weight ``weight << 8 | 0xff - near_gpu_cnt``, so nodes with more
    free GPUs form lower-weight sets.  The tasks are dealt out by :func:`dist_tasks`
    and each node keeps ``tasks x -c`` CPUs (``-N2 -n4`` idle: 3,1).
    """
    cpt = max(req.cpus_per_task, 1)
    avail = usable_cpus(req, table)  # avail_res->avail_cpus, lowered by _cpus_to_use
    n = len(table)
    # _select_cores: a node must hold one task (all of them for a -N1 job)
    need = req.ntasks * cpt if req.max_nodes == 1 or (
        req.max_nodes is None and not req.spread and req.node_count == 1) else cpt
    ok = allowed & (avail >= max(need, req.min_cpus_per_node))
    if req.gpus_per_node:
        ok &= table.free_gpus_of(req.gpu_type) >= req.gpus_per_node
    if not candidates(req, table, ok):
        return Reason.RESOURCES
    req_idx = sorted(req.req_nodes)
    min_nodes = req.node_count
    if req.spread:  # no -N: details->max_nodes 0 -> partition max, req_nodes = min_nodes
        max_nodes, req_nodes = n, min_nodes
    else:  # sbatch -N a[-b]: max_nodes = b (or a), req_nodes = max_nodes
        max_nodes = req_nodes = max(req.max_nodes or min_nodes, min_nodes)
    if req.ntasks > 1 and max_nodes > req.ntasks:  # choose_nodes
        max_nodes = max(req.ntasks, min_nodes)
    weight = table.weight.astype(np.int64)
    gpus = np.zeros(n, dtype=np.int64)
    if free_gpus is not None:
        weight = (weight << 8) | (0xFF - np.minimum(free_gpus, 0xFF))
        gpus = free_gpus.astype(np.int64)

    def enough(nodes: int, rem_nodes: int) -> bool:  # _enough_nodes
        extra = req_nodes - min_nodes if req_nodes > min_nodes else 0
        return nodes >= rem_nodes - extra

    def attempt(usable: BoolArray) -> list[int] | None:
        """One ``_eval_nodes`` pass over ``usable``: the nodes taken, or None."""
        taken = np.zeros(n, dtype=np.bool_)
        taken[req_idx] = True  # -w nodes stay set in node_map
        rem_cpus = req.ntasks * cpt  # rem_cpus == rem_max_cpus (no max CPU count)
        rem_nodes, min_rem, max_left = max(min_nodes, req_nodes), min_nodes, max_nodes

        def take(i: int, a: int) -> None:
            nonlocal rem_cpus, rem_nodes, min_rem, max_left
            a = cpus_to_use(a, rem_cpus, min_rem, cpt)
            avail[i] = a  # _cpus_to_use writes avail_res->avail_cpus back
            taken[i] = True
            rem_cpus, rem_nodes = rem_cpus - a, rem_nodes - 1
            min_rem, max_left = min_rem - 1, max_left - 1

        def done() -> bool:
            return max_left == 0 or (rem_nodes <= 0 and rem_cpus <= 0)

        for i in req_idx:
            if max_left <= 0:
                break
            if avail[i] < need:
                return None
            take(i, int(avail[i]))
        if req_idx and rem_nodes <= 0 and rem_cpus <= 0:
            return req_idx
        if req_idx and max_left <= 0:
            return None
        # sets of consecutive nodes: [start, end, cpus, nodes, first required, weight]
        sets: list[list[int]] = []
        cur = [0, 0, 0, 0, -1, -1]  # weight -1 = NO_VAL64
        apc = np.zeros(n, dtype=np.int64)  # avail_cpu_per_node
        for i in range(n):
            present = bool(usable[i])
            if present and i not in req.req_nodes:
                apc[i] = avail[i] if avail[i] >= need else 0
                present = apc[i] > 0
            if present and cur[5] != -1 and weight[i] != cur[5]:
                if cur[3] == 0:
                    cur[4] = -1
                else:
                    cur[1] = i - 1
                    sets.append(cur)
                    cur = [0, 0, 0, 0, -1, 0]  # xcalloc'ed weight
            if present:
                if cur[3] == 0:
                    cur[0] = i
                if i in req.req_nodes:  # a required node
                    if cur[4] == -1:
                        cur[4] = i
                    continue
                cur[2] += int(apc[i])
                cur[3] += 1
                cur[5] = int(weight[i])
            elif cur[3] == 0:
                cur[4], cur[5] = -1, -1
            else:
                cur[1] = i - 1
                sets.append(cur)
                cur = [0, 0, 0, 0, -1, -1]
        if cur[3]:
            cur[1] = n - 1
            sets.append(cur)
        while sets and max_left > 0:
            best: list[int] | None = None
            best_ok = False
            for s in sets:
                if s[3] == 0:
                    continue
                ok_s = s[2] >= rem_cpus and enough(s[3], rem_nodes)
                if best is None or (best[4] == -1 and s[4] != -1) or s[5] < best[5]:
                    best, best_ok = s, ok_s  # first, holds a -w node, or lower weight
                elif s[5] == best[5] and ((ok_s and (not best_ok or s[2] < best[2]))
                                          or (not ok_s and s[2] > best[2])):
                    best, best_ok = s, ok_s  # first sufficient, tighter, or bigger
            if best is None:
                break
            first, last, req_first = best[0], best[1], best[4]
            if req_first != -1:  # up from the required node, then down
                for i in [*range(req_first, last + 1), *range(req_first - 1, first - 1, -1)]:
                    if done():
                        break
                    if not taken[i] and apc[i] > 0:
                        take(i, int(apc[i]))
            else:
                if rem_nodes <= 1:  # best fit single node
                    fits = [i for i in range(first, last + 1)
                            if apc[i] >= rem_cpus and not taken[i]]
                    if fits:
                        one = min(fits, key=lambda i: (int(apc[i]), i))
                        apc[first:last + 1] = np.where(np.arange(first, last + 1) == one,
                                                       apc[first:last + 1], 0)
                for i in range(first, last + 1):
                    if done():
                        break
                    if taken[i] or apc[i] <= 0:
                        continue
                    if max_left == 1 and apc[i] < rem_cpus:
                        continue  # the job's last node must cover the rest
                    take(i, int(apc[i]))
            if rem_nodes <= 0 and rem_cpus <= 0:
                return [int(i) for i in np.flatnonzero(taken)]
            best[2] = best[3] = 0
        if rem_cpus <= 0 and enough(0, rem_nodes):
            return [int(i) for i in np.flatnonzero(taken)]
        return None

    usable = ok.copy()
    picks = attempt(usable)
    left = int(usable.sum())
    if picks is None and left > min_nodes:  # choose_nodes: drop the smallest, retry
        most = int((avail + gpus)[ok].max()) if ok.any() else 0
        for count in range(1, most):
            changed = False
            for i in np.flatnonzero(usable):
                if 0 < avail[i] + gpus[i] <= count and i not in req.req_nodes:
                    usable[i] = False
                    changed = True
                    left -= 1
                    if left <= min_nodes:
                        break
            if not changed and count != 1:
                continue
            picks = attempt(usable)
            if picks is not None or left <= min_nodes:
                break
    elif picks is None:
        picks = attempt(usable)
    if picks is None or len(picks) < min_nodes:
        return Reason.RESOURCES
    tasks = dist_tasks(req.ntasks, [int(avail[i]) for i in picks], cpt)
    return Allocation(tuple(
        node_alloc(table, i, req, max(t * cpt, req.min_cpus_per_node))
        for i, t in zip(picks, tasks, strict=True)
    ))


__all__ = ["candidates", "cpus_to_use", "dist_tasks", "eval_nodes", "usable_cpus"]
