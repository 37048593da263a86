"""Job steps (slurmctld's step_mgr.c): where an srun runs inside its job's allocation.

``srun`` inside a batch job (or an salloc) asks slurmctld for a *step*: a
set of the job's nodes, a task layout over them (block or cyclic, ``-n``,
``-N``, ``--ntasks-per-node``, ``-c``) and the CPUs and GPUs each node gives
the step. In Slurm 22.05 a step that asks for no GPUs sees every GPU the job
holds on its nodes (capture a2: ``SLURM_STEP_GPUS=0,1``); one that asks for
``--gpus``/``--gres``/``--gpus-per-node`` gets the first ones of the job's.
Step ids count up from 0 per job; the batch script itself is the ``batch`` step.

`plan_step` is a pure function of the job's allocation and srun's options;
failures are `SlurmError` with srun's words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from minislurm.errors import SlurmError
from minislurm.hostlist import expand
from minislurm.job import Allocation, NodeAlloc
from minislurm.layout import TaskLayout, default_step_distribution, distribute
from minislurm.options import JobOptions
from minislurm.select.gpu_shares import job_gpu_shares

_COUNT = re.compile(r"(?:gpu:)?(?:[A-Za-z0-9_]+:)?(\d+)$")


@dataclass(frozen=True, slots=True)
class StepPlan:
    """Where a step runs: its nodes' slice of the job allocation and its layout."""

    step_id: int
    layout: TaskLayout
    cpus_on_node: tuple[int, ...]
    gpus: tuple[tuple[int, ...], ...]
    distribution: str


def _gpu_count(text: str | None) -> int | None:
    """The count in ``--gpus``-style text (``2``, ``a100:2``, ``gpu:a100:2``)."""
    if not text:
        return None
    match = _COUNT.match(text.split(",")[0])
    return int(match.group(1)) if match else None


def _step_error(job_id: int, why: str) -> SlurmError:
    return SlurmError(f"srun: error: Unable to create step for job {job_id}: {why}", 1)


def gpu_ask(opts: JobOptions) -> tuple[str, int] | None:
    """What GPUs ``opts`` ask for: ``("node", n)`` (``--gpus-per-node``, ``--gres``),
    ``("job", n)`` (``--gpus``), ``("task", n)`` (``--gpus-per-task``), ``("none", 0)``
    (``--gres=none``), or None when they name no GPUs at all."""
    if opts.gres and opts.gres.strip().lower() == "none":
        return ("none", 0)
    if opts.gpus_per_task:
        return ("task", _gpu_count(opts.gpus_per_task) or 0)
    if opts.gpus_per_node:
        return ("node", _gpu_count(opts.gpus_per_node) or 0)
    if opts.gpus:
        return ("job", _gpu_count(opts.gpus) or 0)
    if opts.gres:
        return ("node", _gpu_count(opts.gres) or 1)
    return None


def _step_nodes(job_id: int, alloc_nodes: tuple[NodeAlloc, ...], opts: JobOptions,
                cpt: int) -> tuple[list[NodeAlloc], int]:
    """The step's nodes (allocation order) and task count.

    srun itself refuses more nodes than the job has (``Only allocated 1 nodes asked
    for 2``, exit 1); ``-w`` nodes outside the allocation are slurmctld's ``Requested
    node configuration is not available`` (both measured on 22.05.8).
    """
    want_nodes = opts.nodes_min
    if want_nodes is not None and want_nodes > len(alloc_nodes):
        raise SlurmError(f"srun: error: Only allocated {len(alloc_nodes)} nodes asked for "
                         f"{want_nodes}", 1)
    names = [n.node for n in alloc_nodes]
    required = expand(opts.nodelist) if opts.nodelist else []
    excluded = set(expand(opts.exclude)) if opts.exclude else set()
    if any(r not in names or r in excluded for r in required):
        raise _step_error(job_id, "Requested node configuration is not available")
    # the -w nodes first, then the others, each in allocation order
    cands = [n for n in alloc_nodes if n.node in required] + [
        n for n in alloc_nodes if n.node not in required and n.node not in excluded]
    if want_nodes is not None and want_nodes > len(cands):
        raise _step_error(job_id, "Requested node configuration is not available")
    if opts.ntasks is not None:
        ntasks = opts.ntasks
        if want_nodes is None:
            # as few nodes as hold the tasks, in allocation order
            need, count = ntasks * cpt, 0
            for count, node in enumerate(cands, start=1):  # noqa: B007
                need -= node.cpus
                if need <= 0:
                    break
            want_nodes = max(min(max(count, 1), ntasks, len(cands)), len(required))
    elif opts.ntasks_per_node is not None:
        want_nodes = want_nodes or len(cands)
        ntasks = opts.ntasks_per_node * want_nodes
    else:
        want_nodes = want_nodes or len(cands)
        ntasks = want_nodes
    chosen = {n.node for n in cands[:want_nodes]}
    return [n for n in alloc_nodes if n.node in chosen], ntasks


def plan_step(job_id: int, allocation: Allocation, opts: JobOptions, step_id: int,
              job: JobOptions | None = None) -> StepPlan:
    """The step an ``srun`` with ``opts`` gets inside ``allocation``.

    ``job``: the job's own options. A step that names no GPUs gets what the *job asked
    for* (step_mgr.c ``_copy_job_tres_to_step``), not what ``--exclusive`` added:
    measured on 22.05.8, ``srun env`` in ``sbatch --exclusive`` sees no GPU, in
    ``sbatch --exclusive --gres=gpu:2`` GPUs 0,1 of the node's 4; ``--gres=none``
    gets none.  Without ``job`` (the simulated clock's steps) such a step sees every
    GPU the job holds.
    """
    cpt = opts.cpus_per_task or 1
    node_list, ntasks = _step_nodes(job_id, allocation.nodes, opts, cpt)
    nodes = tuple(node_list)
    cpus = tuple(n.cpus for n in nodes)
    if ntasks * cpt > sum(cpus) or any(c < cpt for c in cpus):
        raise _step_error(job_id, "More processors requested than permitted")
    distribution = opts.distribution or default_step_distribution(ntasks, len(nodes))
    layout = distribute(ntasks, [n.node for n in nodes], cpus,
                        ntasks_per_node=opts.ntasks_per_node, cpus_per_task=cpt,
                        distribution=distribution)
    if opts.exact or opts.exclusive is not None:
        # --exact (srun's --exclusive implies it): only the CPUs of the step's tasks;
        # else every CPU the job has on the node (measured on 22.05.8: ``srun
        # --exclusive env`` in ``sbatch --exclusive`` has SLURM_CPUS_ON_NODE=1, not 4)
        cpus = tuple(len(ids) * cpt for ids in layout.task_ids)
    ask = gpu_ask(opts)
    if ask is None and job is not None:
        ask = gpu_ask(job) or ("none", 0)
    takes: list[int | None]
    if ask is None:
        takes = [None] * len(nodes)
    elif ask[0] == "job":
        takes = list(job_gpu_shares([len(n.gpu_indices) for n in nodes], ask[1]))
        if sum(t or 0 for t in takes) < ask[1]:
            raise _step_error(job_id, "Requested node configuration is not available")
    elif ask[0] == "task":
        takes = [ask[1] * len(ids) for ids in layout.task_ids]
    else:
        takes = [ask[1]] * len(nodes)
    gpus: list[tuple[int, ...]] = []
    for node, take in zip(nodes, takes, strict=True):
        held = node.gpu_indices
        if take is not None and take > len(held):
            raise _step_error(job_id, "Requested node configuration is not available")
        gpus.append(held if take is None else held[:take])
    return StepPlan(step_id, layout, cpus, tuple(gpus), layout.distribution)
