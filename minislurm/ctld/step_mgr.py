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
from minislurm.job import Allocation
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


def plan_step(job_id: int, allocation: Allocation, opts: JobOptions, step_id: int) -> StepPlan:
    """The step an ``srun`` with ``opts`` gets inside ``allocation``."""
    alloc_nodes = allocation.nodes
    want_nodes = opts.nodes_min
    if want_nodes is not None and want_nodes > len(alloc_nodes):
        raise _step_error(job_id, "Requested node configuration is not available")
    cpt = opts.cpus_per_task or 1
    if opts.ntasks is not None:
        ntasks = opts.ntasks
        if want_nodes is None:
            # as few nodes as hold the tasks, in allocation order
            need, count = ntasks * cpt, 0
            for count, node in enumerate(alloc_nodes, start=1):  # noqa: B007
                need -= node.cpus
                if need <= 0:
                    break
            want_nodes = min(max(count, 1), ntasks, len(alloc_nodes))
    elif opts.ntasks_per_node is not None:
        want_nodes = want_nodes or len(alloc_nodes)
        ntasks = opts.ntasks_per_node * want_nodes
    else:
        want_nodes = want_nodes or len(alloc_nodes)
        ntasks = want_nodes
    nodes = alloc_nodes[:want_nodes]
    cpus = tuple(n.cpus for n in nodes)
    if ntasks * cpt > sum(cpus) or any(c < cpt for c in cpus):
        raise _step_error(job_id, "More processors requested than permitted")
    per_node_gpus = _gpu_count(opts.gpus_per_node)
    total_gpus = _gpu_count(opts.gpus) or _gpu_count(opts.gres)
    gpus: list[tuple[int, ...]] = []
    shares: list[int] | None = None
    if per_node_gpus is None and total_gpus is not None and not opts.gres:
        shares = job_gpu_shares([len(n.gpu_indices) for n in nodes], total_gpus)
        if sum(shares) < total_gpus:
            raise _step_error(job_id, "Requested node configuration is not available")
    for k, node in enumerate(nodes):
        held = node.gpu_indices
        take = per_node_gpus if per_node_gpus is not None else None
        if shares is not None:
            take = shares[k]
        elif take is None and total_gpus is not None:
            take = total_gpus
        if take is not None and take > len(held):
            raise _step_error(job_id, "Requested node configuration is not available")
        gpus.append(held if take is None else held[:take])
    distribution = opts.distribution or default_step_distribution(ntasks, len(nodes))
    layout = distribute(ntasks, [n.node for n in nodes], cpus,
                        ntasks_per_node=opts.ntasks_per_node, cpus_per_task=cpt,
                        distribution=distribution)
    return StepPlan(step_id, layout, cpus, tuple(gpus), layout.distribution)
