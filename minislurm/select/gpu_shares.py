"""A ``--gpus=N`` total (``gres_per_job``): which nodes, and how many GPUs on each.

cons_tres picks the nodes with the GPUs in mind (:func:`eval_nodes_gpus`: the CPU
shares of `minislurm.select.eval_nodes`, nodes with partly used GPUs passed over first)
and then deals the GPUs out with ``_set_job_bits1`` (:func:`job_gpu_shares`): each node
in order takes what it can while leaving one GPU for every node still to come, so
``-N2 --gpus=3`` gets 2 + 1 GPUs, ``--gpus=5`` 4 + 1 (measured on 22.05.8,
tests/minislurm/select/test_gpu_placement.py).
"""

from __future__ import annotations

import numpy as np

from minislurm.job import Allocation, NodeAlloc
from minislurm.select.eval_nodes import candidates, cpus_to_use, dist_tasks, usable_cpus
from minislurm.select.request import ResourceRequest, candidate_order, gpus_roomy
from minislurm.select.table import BoolArray, IntArray, NodeTable
from minislurm.states import Reason


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
        # --cpus-per-gpu: the job needs GPUs x that many CPUs in all (gres_job_min_cpus)
        self.rem_cpus = max(req.ntasks * self.cpt, req.gpus_per_job * req.cpus_per_gpu)
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

    Measured on real 22.05.8 (4 nodes of 4 CPUs and 4 GPUs,
    tests/minislurm/select/test_gpu_placement.py):

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
    if not candidates(req, table, ok):
        return Reason.RESOURCES
    req_idx = sorted(req.req_nodes)
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
    if req.cpus_per_gpu:  # measured: --gpus=3 --cpus-per-gpu=2 -> 2+1 GPUs, 4,2 CPUs
        room = usable_cpus(req, table)
        cpus = [min(max(c, g * req.cpus_per_gpu), int(room[i]))
                for i, c, g in zip(nodes, cpus, shares, strict=True)]
    allocs: list[NodeAlloc] = []
    for i, c, g in zip(nodes, cpus, shares, strict=True):
        mem = req.mem_on_node(c, int(table.mem[i]))
        allocs.append(table.node_alloc(i, c, mem, g, req.gpu_type))
    return Allocation(tuple(allocs))


__all__ = ["eval_nodes_gpus", "job_gpu_shares"]
