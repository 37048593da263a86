"""select/cons_tres: *whether and where* a job fits (``SelectType=select/cons_tres``).

Mirrors Slurm 22.05's consumable-trackable-resources plugin with
``SelectTypeParameters=CR_Core_Memory``: CPUs, memory (MB) and typed GPUs are
consumed per node; ``--exclusive`` takes whole nodes; ``-w/--nodelist`` nodes
must all be part of the allocation, ``-x/--exclude`` nodes never are.  GPUs are
given by *index* (lowest free first, as gres/gpu does), so ``CUDA_VISIBLE_DEVICES``
follows the allocation and fragmentation is visible (``gpu:a100:2(IDX:0,3)``).

``select`` answers "does it fit *now* on these nodes?": an ``Allocation`` or
``Reason.RESOURCES`` (a value, not an exception).  Node choice follows Slurm's
default without a topology plugin: lowest ``Weight`` first, then nodes already in
use (best fit, so whole nodes stay free for big jobs), then config order; with
``-w`` nodes, the others are taken upward from the first required node, then
downward.  How many CPUs each node gets with ``-N`` and no ``--ntasks-per-node``
is ``_eval_nodes``/``_cpus_to_use``/``_set_task_dist`` (``select/eval_nodes.py``):
``-N2 -n4`` on idle 4-CPU nodes gets 3 + 1 CPUs (``SLURM_JOB_CPUS_PER_NODE=3,1``).
A ``--gpus`` total is shared out in ``select/gpu_shares.py``.  The request and the
per-node tests are in ``select/request.py``.
"""

from __future__ import annotations

import numpy as np

from minislurm.job import Allocation
from minislurm.select.eval_nodes import eval_nodes
from minislurm.select.gpu_shares import eval_nodes_gpus
from minislurm.select.request import (
    ResourceRequest,
    candidate_order,
    fit_mask,
    gpus_roomy,
    node_alloc,
    node_allocs,
    order_nodes,
)
from minislurm.select.table import BoolArray, IntArray, NodeTable
from minislurm.states import Reason


def select(req: ResourceRequest, table: NodeTable, allowed: BoolArray) -> Allocation | Reason:
    """Pick nodes for ``req`` among the ``allowed`` nodes (usable nodes of its partition).

    Returns the allocation, or ``Reason.RESOURCES`` when the job does not fit now.
    ``-N`` without ``--ntasks-per-node`` (and without ``--exclusive``) shares the CPUs
    out as cons_tres's ``_eval_nodes`` does (``select.eval_nodes``): ``-N2 -n4`` on
    idle 4-CPU nodes gets 3 + 1 CPUs, not 2 + 2.  A ``--gpus`` total is shared out
    by ``eval_nodes_gpus`` (``-N2 --gpus=3``: 2 + 1 GPUs); ``--gpus-per-task`` first
    tries the nodes `gpus_roomy` keeps, then any node whose free GPUs hold a task.
    """
    if not req.exclusive and req.gpus_per_job and not req.gpus_per_node:
        return eval_nodes_gpus(req, table, allowed)
    if req.gpus_per_task and not req.exclusive:
        first = _select_cpus(req, table, allowed & gpus_roomy(req, table))
        if isinstance(first, Allocation):
            return first
        return _select_cpus(req, table, allowed, table.free_gpus_of(req.gpu_type))
    return _select_cpus(req, table, allowed)


def _select_cpus(
    req: ResourceRequest, table: NodeTable, allowed: BoolArray, free_gpus: IntArray | None = None
) -> Allocation | Reason:
    """:func:`select` for every request but a ``--gpus`` total: by CPUs (and GPUs per node).

    ``free_gpus``: order the nodes by free GPUs first (:func:`order_nodes`).
    """
    if req.spread and (req.exclusive or req.ntasks_per_node is not None or req.gpus_per_task):
        return _select_spread(req, table, allowed, free_gpus)
    if not req.exclusive and req.ntasks_per_node is None:  # -n alone too (choose_nodes)
        return eval_nodes(req, table, allowed, free_gpus)
    gpu_free = table.free_gpus_of(req.gpu_type)
    ok = allowed & fit_mask(req, table, table.free_cpu, table.free_mem, gpu_free, table.njobs)
    if req.exc_nodes:
        ok[list(req.exc_nodes)] = False
    count = req.node_count
    cpus = req.cpus_on_node(count)
    req_idx = sorted(req.req_nodes)
    if req_idx and not ok[req_idx].all():
        return Reason.RESOURCES
    chosen = list(req_idx)
    if len(chosen) < count:
        if req_idx:
            ok[req_idx] = False
        cand = ok.nonzero()[0]  # np.flatnonzero of the 1-D mask, without its wrapper
        if len(cand) < count - len(chosen):
            return Reason.RESOURCES
        if req.exclusive and free_gpus is None and not req_idx:
            # fit_mask kept only idle nodes: order_nodes's order is then by Weight, then
            # config order (its busy-first key is the same for all), a stable sort
            order = cand[table.weight[cand].argsort(kind="stable")]
        else:
            order = candidate_order(table, cand, req_idx, free_gpus)
        chosen += order[: count - len(chosen)].tolist()
    chosen.sort()
    return Allocation(node_allocs(table, chosen, req, cpus))


def _select_spread(
    req: ResourceRequest, table: NodeTable, allowed: BoolArray, free_gpus: IntArray | None = None
) -> Allocation | Reason:
    """``-n`` without ``-N``: fill nodes with whole tasks until every task is placed."""
    cpt = req.cpus_per_task
    remaining = req.ntasks
    gpu_free = table.free_gpus_of(req.gpu_type)
    cand = allowed.copy()
    if req.exc_nodes:
        cand[list(req.exc_nodes)] = False
    if req.exclusive:
        cand &= table.njobs == 0
    if req.gpus_per_node:
        cand &= gpu_free >= req.gpus_per_node
    if req.gpus_per_task:
        cand &= gpu_free >= req.gpus_per_task
    req_idx = sorted(req.req_nodes)
    others = np.flatnonzero(cand)
    others = others[~np.isin(others, req_idx)] if req_idx else others
    order = list(req_idx) + [int(i) for i in order_nodes(table, others, free_gpus)]
    picks: list[tuple[int, int]] = []
    for i in order:
        if remaining <= 0 and i not in req.req_nodes:
            break
        room = int(table.cpus[i]) if req.exclusive else int(table.free_cpu[i])
        free_mem = int(table.mem[i]) if req.exclusive else int(table.free_mem[i])
        if req.mem_per_cpu is not None and req.mem_per_node is None:
            room = min(room, free_mem // max(req.mem_per_cpu, 1))
        if req.mem_per_node is not None:
            need = int(table.mem[i]) if req.mem_per_node == 0 else req.mem_per_node
            if need > free_mem:
                room = 0
        tasks = min(remaining, room // cpt) if room >= req.min_cpus_per_node else 0
        if req.gpus_per_task and not req.exclusive:  # the node's free GPUs cap its tasks
            tasks = min(tasks, int(gpu_free[i]) // req.gpus_per_task)
        if req.ntasks_per_node is not None:
            tasks = min(tasks, req.ntasks_per_node)
        if tasks <= 0:
            if i in req.req_nodes:
                return Reason.RESOURCES
            continue
        picks.append((i, tasks))
        remaining -= tasks
    if remaining > 0 or len(picks) < req.min_nodes:
        return Reason.RESOURCES
    if req.max_nodes is not None and len(picks) > req.max_nodes:
        return Reason.RESOURCES
    picks.sort()
    least = req.min_cpus_per_node
    return Allocation(tuple(node_alloc(table, i, req, max(t * cpt, least)) for i, t in picks))


def spread_node_estimate(req: ResourceRequest, table: NodeTable, allowed: BoolArray) -> int:
    """How many nodes a spread request needs on empty nodes (for limits and backfill)."""
    cpus = table.cpus[allowed] if allowed.any() else table.cpus
    biggest = int(cpus.max()) if len(cpus) else 1
    per_node = max(biggest // max(req.cpus_per_task, 1), 1)
    if req.ntasks_per_node is not None:
        per_node = min(per_node, req.ntasks_per_node)
    return max(req.min_nodes, -(-req.ntasks // per_node))


__all__ = ["select", "spread_node_estimate"]
