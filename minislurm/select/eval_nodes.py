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
    cand = np.flatnonzero(ok)
    order = req_idx + [int(i) for i in candidate_order(table, cand, req_idx, free_gpus)]
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
