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

A ``--gpus=N`` total (``gres_per_job``) is :func:`eval_nodes_gpus`: the same CPU
shares on nodes picked with the GPUs in mind, then ``_set_job_bits1``'s GPU shares
(:func:`job_gpu_shares`): ``-N2 --gpus=3`` -> 2 + 1 GPUs (tests/test_fidelity_gpus.py).
"""

from __future__ import annotations

import numpy as np

from minislurm.job import Allocation, NodeAlloc
from minislurm.select.cons_tres import ResourceRequest, candidate_order, gpus_roomy, node_alloc
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
    ok = allowed & (avail >= need)
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
        node_alloc(table, i, req, t * cpt) for i, t in zip(picks, tasks, strict=True)
    ))


def job_gpu_shares(free: list[int], gpus: int) -> list[int]:
    """How many of a ``--gpus`` total each chosen node gets, in node order.

    cons_tres ``_set_job_bits1``: each node in turn takes as many of its free GPUs
    as it can while every node still to come keeps one (``gres_per_job - total_gres
    - (rem_nodes - 1)``), lowest indices first; ``_set_job_bits2`` then tops up in
    node order if the total is still short.  Measured on real 22.05.8 (idle 4-GPU
    nodes): ``-N2 --gpus=3`` -> 2,1; ``--gpus=5`` -> 4,1; ``-N3 --gpus=6`` -> 4,1,1;
    ``-N2 --gpus=4`` -> 3,1; ``-N4 --gpus=6`` -> 3,1,1,1.

    >>> job_gpu_shares([4, 4], 3), job_gpu_shares([4, 4, 4], 6), job_gpu_shares([2, 4], 5)
    ([2, 1], [4, 1, 1], [2, 3])
    """
    shares = [0] * len(free)
    taken = 0
    for k, f in enumerate(free):
        room = gpus - taken - (len(free) - k - 1)
        shares[k] = max(min(f, room), 0)
        taken += shares[k]
    for k, f in enumerate(free):  # _set_job_bits2
        more = min(f - shares[k], gpus - taken)
        if more > 0:
            shares[k] += more
            taken += more
    return shares


def _consec_sets(ok: BoolArray, weight: IntArray) -> list[list[int]]:
    """``_eval_nodes``'s sets of consecutive usable nodes (a new set at every gap or
    change of Weight), in node order."""
    sets: list[list[int]] = []
    cur: list[int] = []
    for i in range(len(ok)):
        if ok[i] and cur and weight[i] == weight[cur[-1]] and i == cur[-1] + 1:
            cur.append(i)
            continue
        if cur:
            sets.append(cur)
        cur = [i] if ok[i] else []
    if cur:
        sets.append(cur)
    return sets


class _Picker:
    """The running totals of ``_eval_nodes`` while it takes nodes for a ``--gpus`` job."""

    def __init__(self, req: ResourceRequest, avail: IntArray, free: IntArray, want: int,
                 max_nodes: int) -> None:
        self.cpt = max(req.cpus_per_task, 1)
        self.avail, self.free = avail, free
        self.rem_cpus = req.ntasks * self.cpt
        self.rem_nodes, self.max_left = want, max_nodes
        self.rem_gpus = req.gpus_per_job
        self.picks: list[tuple[int, int]] = []

    @property
    def done(self) -> bool:
        return self.rem_nodes <= 0 and self.rem_cpus <= 0 and self.rem_gpus <= 0

    def covers(self, i: int) -> bool:
        """Node ``i`` alone holds what is still missing (CPUs and GPUs)."""
        return int(self.avail[i]) >= self.rem_cpus and int(self.free[i]) >= self.rem_gpus

    def take(self, i: int, required: bool = False) -> None:
        """Take node ``i`` unless it is the job's last and does not cover the rest."""
        if self.done or self.max_left <= 0:
            return
        if not required and self.max_left == 1 and not self.covers(i):
            return  # the job can take one more node only, and this one is too small
        a = cpus_to_use(int(self.avail[i]), self.rem_cpus, self.rem_nodes, self.cpt)
        self.picks.append((i, a))
        self.rem_cpus -= a
        self.rem_gpus -= int(self.free[i])
        self.rem_nodes -= 1
        self.max_left -= 1

    def take_best_sets(self, sets: list[list[int]], weight: IntArray) -> None:
        """``_eval_nodes``'s best fit: of the lowest Weight, the first set that is
        sufficient (nodes, CPUs, GPUs), else the sufficient one with the fewest CPUs,
        else the biggest; its nodes in order (one node: the one with the fewest CPUs
        that covers the job); then the next set while the job is not satisfied."""
        sets = [list(s) for s in sets]
        while sets and not self.done and self.max_left > 0:
            best, best_key = 0, None
            for k, members in enumerate(sets):
                cpus = int(self.avail[members].sum())
                enough = (len(members) >= self.rem_nodes and cpus >= self.rem_cpus
                          and int(self.free[members].sum()) >= self.rem_gpus)
                key = (int(weight[members[0]]), not enough, cpus if enough else -cpus)
                if best_key is None or key < best_key:
                    best, best_key = k, key
            members = sets.pop(best)
            if self.rem_nodes <= 1:
                single = [i for i in members if self.covers(i)]
                if single:
                    members = [min(single, key=lambda i: (int(self.avail[i]), i))]
            for i in members:
                self.take(i)


def eval_nodes_gpus(
    req: ResourceRequest, table: NodeTable, allowed: BoolArray
) -> Allocation | Reason:
    """Nodes, CPUs and GPUs of a ``--gpus=N`` job (Slurm's ``gres_per_job``).

    Measured on real 22.05.8 (4 nodes of 4 CPUs and 4 GPUs, tests/test_fidelity_gpus.py):

    1. First only the nodes `gpus_roomy` keeps (all GPUs free, or as many free as the
       job wants) are considered, in ``_eval_nodes``'s sets of consecutive nodes,
       best fit first: with 2 of n2's GPUs busy, ``-N2 --gpus=3`` gets n3 + n4 (the
       set n1 alone is too small); with 2 of n1's busy, n2 + n3.
    2. If they cannot host the job, every node with a free GPU, most free GPUs
       first: with n1, n2, n3 holding 2 free GPUs and n4 4, ``-N2 --gpus=5`` gets
       n1 + n4.  The last node the job may take must cover what is still missing.

    CPUs are shared as in :func:`eval_nodes` (``-N2 -n4 --gpus=3`` -> 3,1 CPUs) and
    the GPUs by :func:`job_gpu_shares` in node order (2,1 GPUs).
    """
    cpt = max(req.cpus_per_task, 1)
    avail = usable_cpus(req, table)
    if req.ntasks_per_node is not None:
        need = req.ntasks_per_node * cpt
        avail = np.where(avail >= need, need, 0).astype(np.int64)
    free = table.free_gpus_of(req.gpu_type)
    ok = allowed & (avail >= cpt) & (free >= 1)
    if req.mem_per_node is not None:
        ok &= table.free_mem >= (table.mem if req.mem_per_node == 0 else req.mem_per_node)
    if req.exc_nodes:
        ok[list(req.exc_nodes)] = False
    req_idx = sorted(req.req_nodes)
    if req_idx and not ok[req_idx].all():
        return Reason.RESOURCES
    want = req.node_count
    if req.max_nodes is not None:
        max_nodes = max(req.max_nodes, want)
    else:
        max_nodes = len(table) if req.spread else want
    picker: _Picker | None = None
    for roomy in (True, False):
        cand = ok & gpus_roomy(req, table) if roomy else ok.copy()
        if req_idx and not cand[req_idx].all():
            continue
        picker = _Picker(req, avail, free, want, max_nodes)
        for i in req_idx:
            picker.take(i, required=True)
        if req_idx:
            cand[req_idx] = False
        if roomy and not req_idx:
            picker.take_best_sets(_consec_sets(cand, table.weight), table.weight)
        else:
            for i in candidate_order(table, np.flatnonzero(cand), req_idx, free):
                picker.take(int(i))
        if picker.done:
            break
    if picker is None or not picker.done or len(picker.picks) < req.min_nodes:
        return Reason.RESOURCES
    picks = sorted(picker.picks)
    nodes = [i for i, _ in picks]
    if req.ntasks_per_node is not None:
        cpus = [int(avail[i]) for i in nodes]
    else:
        cpus = [t * cpt for t in dist_tasks(req.ntasks, [a for _, a in picks], cpt)]
    shares = job_gpu_shares([int(free[i]) for i in nodes], req.gpus_per_job)
    allocs: list[NodeAlloc] = []
    for i, c, g in zip(nodes, cpus, shares, strict=True):
        mem = req.mem_on_node(c, int(table.mem[i]))
        allocs.append(table.node_alloc(i, c, mem, g, req.gpu_type))
    return Allocation(tuple(allocs))


__all__ = [
    "cpus_to_use", "dist_tasks", "eval_nodes", "eval_nodes_gpus", "job_gpu_shares", "usable_cpus",
]
