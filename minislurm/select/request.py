"""What a job asks of the nodes, and the per-node tests select/cons_tres builds on.

``ResourceRequest`` is the request as select sees it (``job_details`` +
``gres_list_req`` of a job): nodes, tasks, CPUs per task, memory, GPUs, ``-w``/``-x``,
``--exclusive``.  The functions here answer per node: would it fit with these free
resources (``fit_mask``), could it ever (``config_mask``), in what order nodes are
tried (``order_nodes``, ``candidate_order``), what one node gives (``node_alloc``),
which nodes a ``--gpus-per-task`` job tries first (``gpus_roomy``).  ``cons_tres``,
``eval_nodes`` and ``gpu_shares`` all read them; this module imports none of those,
so the select package has no import circle.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from minislurm.job import NodeAlloc
from minislurm.select.table import BoolArray, IntArray, NodeTable


@dataclass(frozen=True, slots=True)
class ResourceRequest:
    """A job's request in the terms select needs (built by ``ctld.submit``).

    ``min_nodes``/``max_nodes``: ``-N``.  ``ntasks``/``cpus_per_task``: ``-n``/``-c``;
    ``ntasks_per_node``: ``--ntasks-per-node``.  ``spread``: ``-N`` not given, so the
    tasks may spread over as many nodes as needed (Slurm derives the node count).
    ``mem_per_node`` (``--mem``, 0 = all of each node) or ``mem_per_cpu``
    (``--mem-per-cpu``/``DefMemPerCPU``).  ``gpus_per_node`` and ``gpu_type``: from
    ``--gres=gpu[:type]:n``/``--gpus-per-node``.  ``exclusive``: ``--exclusive``.
    ``req_nodes``/``exc_nodes``: node indices of ``-w``/``-x``.  ``gpus_per_job``:
    ``--gpus=N`` (a total for the whole job, Slurm's ``gres_per_job``: shared out by
    `minislurm.select.gpu_shares.eval_nodes_gpus`, 2 + 1 for ``-N2 --gpus=3``);
    ``gpus_per_task``: ``--gpus-per-task=N`` (``gres_per_task``: a node's GPUs are
    its tasks times N, and its free GPUs cap how many tasks it takes).
    ``cpus_per_gpu``: ``--cpus-per-gpu``: each node gets at least its GPUs times this
    many CPUs (measured on 22.05.8: ``-N2 -n4 --gpus-per-node=1 --cpus-per-gpu=3`` ->
    3(x2); ``--gpus=3 --cpus-per-gpu=2`` -> 4,2); with ``--gpus-per-task``
    ``ctld.submit`` folds it into ``cpus_per_task`` instead.
    """

    min_nodes: int = 1
    max_nodes: int | None = None
    ntasks: int = 1
    cpus_per_task: int = 1
    ntasks_per_node: int | None = None
    spread: bool = False
    mem_per_node: int | None = None
    mem_per_cpu: int | None = None
    gpus_per_node: int = 0
    gpu_type: str | None = None
    exclusive: bool = False
    req_nodes: frozenset[int] = frozenset()
    exc_nodes: frozenset[int] = frozenset()
    gpus_per_job: int = 0
    gpus_per_task: int = 0
    cpus_per_gpu: int = 0

    @property
    def node_count(self) -> int:
        """Nodes the job gets when not spreading (``-N``, at least the ``-w`` nodes)."""
        return max(self.min_nodes, len(self.req_nodes))

    def cpus_on_node(self, nodes: int) -> int:
        """CPUs needed on each of ``nodes`` nodes (block layout: the largest share)."""
        if self.ntasks_per_node is not None:
            cpus = self.ntasks_per_node * self.cpus_per_task
        else:
            cpus = max(-(-self.ntasks // max(nodes, 1)), 1) * self.cpus_per_task
        if self.cpus_per_gpu:  # min_cpus_per_node, inline (select's hot path)
            cpus = max(cpus, self.gpus_per_node * self.cpus_per_gpu)
        return cpus

    @property
    def min_cpus_per_node(self) -> int:
        """``--gpus-per-node``/``--gres`` GPUs times ``--cpus-per-gpu`` (0 without)."""
        return self.gpus_per_node * self.cpus_per_gpu

    def mem_on_node(self, cpus: int, node_mem: int) -> int:
        """Memory (MB) needed on a node given the CPUs it gets there."""
        if self.mem_per_node is not None:
            return node_mem if self.mem_per_node == 0 else self.mem_per_node
        if self.mem_per_cpu is not None:
            return self.mem_per_cpu * cpus
        return 0

    def gpus_for_cpus(self, cpus: int) -> int:
        """GPUs a node needs when it gets ``cpus`` CPUs: ``--gpus-per-node``, or
        ``--gpus-per-task`` times the tasks those CPUs hold (``gres_per_task``)."""
        if self.gpus_per_task:
            return self.gpus_per_task * (cpus // max(self.cpus_per_task, 1))
        return self.gpus_per_node

    @property
    def job_gpus(self) -> int:
        """Every GPU the job asks for (``--gpus``, tasks x ``--gpus-per-task``, nodes x
        ``--gpus-per-node``): the count a node must have free to be preferred (`gpus_roomy`)."""
        if self.gpus_per_job:
            return self.gpus_per_job
        if self.gpus_per_task:
            return self.gpus_per_task * self.ntasks
        return self.gpus_per_node * self.node_count

    def per_node(self) -> tuple[int, int, int]:
        """(cpus, memory MB, GPUs) wanted on each node (memory 0 = whole node for --mem=0).

        A ``--gpus`` total counts as an even share here (the node-space map of
        sched/backfill plans with it); select shares it out unevenly.
        """
        cpus = self.cpus_on_node(self.node_count)
        if self.mem_per_node is not None:
            mem = self.mem_per_node
        elif self.mem_per_cpu is not None:
            mem = self.mem_per_cpu * cpus
        else:
            mem = 0
        if self.gpus_per_job and not self.gpus_per_node:
            return cpus, mem, -(-self.gpus_per_job // max(self.node_count, 1))
        return cpus, mem, self.gpus_for_cpus(cpus)


def fit_mask(
    req: ResourceRequest,
    table: NodeTable,
    free_cpu: IntArray,
    free_mem: IntArray,
    free_gpu: IntArray,
    njobs: IntArray | None,
) -> BoolArray:
    """Nodes whose free resources can host one node's share of ``req`` (vectorised)."""
    cpus, mem, gpus = req.per_node()
    # --mem=0: all of each node's memory; else the same figure on every node (compared
    # as a scalar: numpy broadcasts it, no vector of it is built)
    mem_need: IntArray | int = table.mem if req.mem_per_node == 0 else mem
    if req.exclusive:
        ok = (table.cpus >= cpus) & (table.mem >= mem_need) & (free_cpu == table.cpus)
        ok &= table.total_gpus_of(req.gpu_type) >= gpus
        if njobs is not None:
            ok &= njobs == 0
        return ok
    ok = (free_cpu >= cpus) & (free_mem >= mem_need)
    if gpus:
        ok &= free_gpu >= gpus
    return ok


def config_mask(req: ResourceRequest, table: NodeTable) -> BoolArray:
    """Nodes that could host one node's share if they were empty (configuration check)."""
    cpus, mem, gpus = req.per_node()
    ok = table.cpus >= cpus
    if req.mem_per_node != 0:
        ok &= table.mem >= mem
    if gpus:
        ok &= table.total_gpus_of(req.gpu_type) >= gpus
    return ok


def order_nodes(
    table: NodeTable, candidates: IntArray, free_gpus: IntArray | None = None
) -> IntArray:
    """Slurm's node order: lowest Weight, busy nodes first (best fit), then config order.

    With ``free_gpus`` (a GPU job's second try, see :func:`select`), the nodes with
    the most free GPUs come first after Weight: measured on real 22.05.8 with n1
    holding 1 free GPU and n2-n4 2 each, ``-n3 --gpus-per-task=1`` gets n2 + n3.
    """
    idle = (table.free_cpu[candidates] == table.cpus[candidates]).astype(np.int64)
    if free_gpus is not None:
        idle = -free_gpus[candidates]
    keys = np.lexsort((candidates, idle, table.weight[candidates]))
    return candidates[keys]


def node_alloc(table: NodeTable, i: int, req: ResourceRequest, cpus: int) -> NodeAlloc:
    """What node ``i`` gives a job getting ``cpus`` CPUs there: an ``--exclusive`` job
    (``details->whole_node``) gets the whole node (every CPU, the memory asked or all
    of it, every free GPU), else its share."""
    if req.exclusive:
        all_cpus = int(table.cpus[i])
        gpus = int(table.free_gpu[i]) if req.gpu_type is None else int(
            table.free_gpus_of(req.gpu_type)[i]
        )
        return table.node_alloc(i, all_cpus, _exclusive_mem(req, int(table.mem[i]), all_cpus),
                                max(gpus, 0), None)
    mem = req.mem_on_node(cpus, int(table.mem[i]))
    return table.node_alloc(i, cpus, mem, req.gpus_for_cpus(cpus), req.gpu_type)


def node_allocs(table: NodeTable, idx: list[int], req: ResourceRequest, cpus: int
                ) -> tuple[NodeAlloc, ...]:
    """:func:`node_alloc` of ``cpus`` CPUs on each node of ``idx``, in that order.

    A share that does not depend on the node (no ``--exclusive``, no ``--mem=0``) is
    built in one loop (``NodeTable.node_allocs``); an ``--exclusive`` job's whole nodes
    by `_exclusive_allocs` (the per-node counts read once); the rest node by node."""
    if req.exclusive:
        return _exclusive_allocs(table, idx, req)
    if req.mem_per_node == 0:
        return tuple([node_alloc(table, i, req, cpus) for i in idx])
    return table.node_allocs(idx, cpus, req.mem_on_node(cpus, 0), req.gpus_for_cpus(cpus),
                             req.gpu_type)


def _exclusive_allocs(table: NodeTable, idx: list[int], req: ResourceRequest
                      ) -> tuple[NodeAlloc, ...]:
    """:func:`node_alloc`'s ``--exclusive`` case on each node of ``idx``, the same
    records: the nodes' CPUs, memory and free GPUs are read as lists in one numpy call
    each (not as numpy scalars node by node; a frontier job holds 2,000 nodes)."""
    at = np.asarray(idx, dtype=np.int64)
    cpus_of = table.cpus[at].tolist()
    mem_of = table.mem[at].tolist()
    gpus_of = table.free_gpus_of(req.gpu_type)[at].tolist()
    return tuple([table.node_alloc(i, cpus, _exclusive_mem(req, all_mem, cpus), max(gpus, 0),
                                   None)
                  for i, cpus, all_mem, gpus in zip(idx, cpus_of, mem_of, gpus_of, strict=True)])


def _exclusive_mem(req: ResourceRequest, all_mem: int, cpus: int) -> int:
    """The memory an ``--exclusive`` job gets on a node of ``all_mem`` MB and ``cpus``
    CPUs (it gets every CPU): ``--mem`` as asked, ``--mem-per-cpu`` times the node's
    CPUs (at most all of it), else all of it (``--mem=0`` too)."""
    if req.mem_per_node not in (None, 0):
        return int(req.mem_per_node or 0)
    if req.mem_per_node is None and req.mem_per_cpu is not None:
        return min(all_mem, req.mem_per_cpu * cpus)
    return all_mem


def gpus_roomy(req: ResourceRequest, table: NodeTable) -> BoolArray:
    """Nodes select/cons_tres tries first for a ``--gpus``/``--gpus-per-task`` job.

    Measured on real 22.05.8 (tests/minislurm/select/test_gpu_placement.py): a node whose GPUs are
    partly in use is passed over while other nodes can host the job, unless it has
    as many GPUs free as the whole job asks for.  With one GPU job holding 2 of n1's
    4, ``-N2 --gpus=3`` gets n2 + n3 (not n1 + n2) and ``-N2 --ntasks-per-node=2
    --gpus-per-task=1`` too, although n1's 2 free GPUs would do; ``-N2 --gpus=2``
    still takes n1.  So a node qualifies when its free GPUs reach
    ``min(job's GPUs, node's GPUs)`` (all of them free, or enough for the whole job).
    """
    free = table.free_gpus_of(req.gpu_type)
    total = table.total_gpus_of(req.gpu_type)
    return free >= np.minimum(total, req.job_gpus)


def candidate_order(
    table: NodeTable, cand: IntArray, req_idx: list[int], free_gpus: IntArray | None = None
) -> IntArray:
    """The order extra nodes are taken in: :func:`order_nodes`, or with ``-w`` nodes
    given, upward from the first required node and then downward (``_eval_nodes``
    selects from the set holding the required nodes "first working up then down")."""
    if not req_idx:
        return order_nodes(table, cand, free_gpus)
    first = req_idx[0]
    above = (cand < first).astype(np.int64)
    dist = np.abs(cand - first)
    keys = np.lexsort((dist, above, table.weight[cand]))
    return cand[keys]


__all__ = [
    "ResourceRequest",
    "candidate_order",
    "config_mask",
    "fit_mask",
    "gpus_roomy",
    "node_alloc",
    "node_allocs",
    "order_nodes",
]
