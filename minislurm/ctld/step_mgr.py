"""Job steps (slurmctld's step_mgr.c): where an srun runs inside its job's allocation.

``srun`` inside a batch job (or an salloc) asks slurmctld for a *step*: a
set of the job's nodes, a task layout over them (block or cyclic, ``-n``,
``-N``, ``--ntasks-per-node``, ``-c``) and the CPUs and GPUs each node gives
the step. In Slurm 22.05 a step that asks for no GPUs sees every GPU the job
holds on its nodes (capture a2: ``SLURM_STEP_GPUS=0,1``); one that asks for
``--gpus``/``--gres``/``--gpus-per-node`` gets the first ones of the job's.
Step ids count up from 0 per job; the batch script itself is the ``batch`` step.

Steps running side by side (``srun ... &``) share the job's resources as 22.05
does (measured on 22.05.8; srun's ``--exact`` and ``--overlap``):

- a step holds, on each of its nodes, *all* the job's CPUs and memory there unless
  ``--exact`` (or srun's ``--exclusive``) limits it to its tasks' CPUs and their
  memory (``--mem`` per node, else ``--mem-per-cpu`` x CPUs, which srun inherits
  from the job's ``SLURM_MEM_PER_*``); and the GPUs it asks for (or the job asked
  for), the lowest indices no other step holds, so four ``srun --exact
  --gres=gpu:1 &`` steps see ``CUDA_VISIBLE_DEVICES`` 0, 1, 2 and 3;
- a step that fits the job but not beside the running steps is *busy*
  (``ESLURM_NODES_BUSY``, `StepBusy`): srun waits for a step to end and tries
  again; idle nodes of the job are picked first;
- an ``--overlap`` step holds nothing and is never busy, but memory it asks per
  CPU must be free: else ``Memory required by task is not available``, at once
  (a ``--mem`` per node is only checked against the job's).

`plan_step` is a pure function of the job's allocation, srun's options and what
the running steps hold; failures are `SlurmError` with srun's words.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

from minislurm.common.hostlist import expand
from minislurm.common.layout import TaskLayout, default_step_distribution, distribute
from minislurm.errors import Errno, SlurmError
from minislurm.job import Allocation, NodeAlloc
from minislurm.options import JobOptions
from minislurm.select.gpu_shares import job_gpu_shares

_COUNT = re.compile(r"(?:gpu:)?(?:[A-Za-z0-9_]+:)?(\d+)$")


@dataclass(frozen=True, slots=True)
class StepUse:
    """What steps hold on one node of their job (step_mgr.c's ``cpus_used`` and
    ``memory_used``, and the GPU indices of the steps' GRES)."""

    cpus: int = 0
    mem_mb: int = 0
    gpus: frozenset[int] = frozenset()

    def __add__(self, other: StepUse) -> StepUse:
        return StepUse(self.cpus + other.cpus, self.mem_mb + other.mem_mb,
                       self.gpus | other.gpus)


@dataclass(frozen=True, slots=True)
class StepPlan:
    """Where a step runs: its nodes' slice of the job allocation and its layout.

    ``holds``: what the step takes from its job on each node while it runs (nothing
    for an ``--overlap`` step).
    """

    step_id: int
    layout: TaskLayout
    cpus_on_node: tuple[int, ...]
    gpus: tuple[tuple[int, ...], ...]
    distribution: str
    holds: tuple[StepUse, ...] = ()


#: srun's words for ``ESLURM_NODES_BUSY`` and ``ESLURM_INVALID_GRES``.
NODES_BUSY = Errno.ESLURM_NODES_BUSY
INVALID_GRES = Errno.ESLURM_INVALID_GRES


class StepBusy(SlurmError):
    """The step fits its job, but not beside the steps running now (srun retries)."""

    def __init__(self, job_id: int) -> None:
        super().__init__(f"srun: error: Unable to create step for job {job_id}: {NODES_BUSY}", 1)


class StepIdUsed(SlurmError):
    """Refused after slurmctld made the step's record: its step id is used up (measured:
    an ``--overlap`` step short of memory; the next step gets the id after it)."""


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
    if opts.gres:  # --gres=gpu is one GPU, --gres=gpu:0 none (22.05.8 runs such a step)
        count = _gpu_count(opts.gres)
        return ("node", 1 if count is None else count)
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
        raise _step_error(job_id, Errno.ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE)
    # the -w nodes first, then the others, each in allocation order
    cands = [n for n in alloc_nodes if n.node in required] + [
        n for n in alloc_nodes if n.node not in required and n.node not in excluded]
    if want_nodes is not None and want_nodes > len(cands):
        raise _step_error(job_id, Errno.ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE)
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
              job: JobOptions | None = None,
              in_use: Mapping[str, StepUse] | None = None) -> StepPlan:
    """The step an ``srun`` with ``opts`` gets inside ``allocation``.

    ``job``: the job's own options. A step that names no GPUs gets what the *job asked
    for* (step_mgr.c ``_copy_job_tres_to_step``), not what ``--exclusive`` added:
    measured on 22.05.8, ``srun env`` in ``sbatch --exclusive`` sees no GPU, in
    ``sbatch --exclusive --gres=gpu:2`` GPUs 0,1 of the node's 4; ``--gres=none``
    gets none.  Without ``job`` (the simulated clock's steps) such a step sees every
    GPU the job holds.  ``in_use``: what the job's running steps hold per node; the
    step must fit beside them (else `StepBusy`), see the module docstring.
    """
    cpt = opts.cpus_per_task or 1
    node_list, ntasks = _step_nodes(job_id, allocation.nodes, opts, cpt)
    plan = _plan_on(job_id, tuple(node_list), ntasks, opts, step_id, job)
    busy = {k: u for k, u in (in_use or {}).items() if u != StepUse()}
    if opts.overlap:
        # measured: --mem-per-cpu (srun inherits the job's) must fit the memory the
        # running steps leave, a --mem per node only the job's
        for node, ids in zip(node_list, plan.layout.task_ids, strict=True):
            free = node.mem_mb - busy.get(node.node, StepUse()).mem_mb
            if opts.mem_mb is None and _mem_need(opts, node, len(ids) * cpt) > free:
                raise StepIdUsed(_step_error(job_id, Errno.ESLURM_INVALID_TASK_MEMORY).message, 1)
        return replace(plan, holds=tuple(StepUse() for _ in node_list))
    if not busy:
        return plan
    # what is left of each node beside the running steps; idle nodes first
    left = []
    for node in allocation.nodes:
        used = busy.get(node.node, StepUse())
        if used.cpus >= node.cpus:
            continue
        gpus = tuple(g for g in node.gpus if g[1] not in used.gpus)
        left.append(NodeAlloc(node.node, node.cpus - used.cpus, node.mem_mb - used.mem_mb, gpus))
    order = {n.node: i for i, n in enumerate(allocation.nodes)}
    left.sort(key=lambda n: (n.node in busy, order[n.node]))
    exact = opts.exact or opts.exclusive is not None
    try:
        chosen, ntasks = _step_nodes(job_id, tuple(left), opts, cpt)
        chosen.sort(key=lambda n: order[n.node])
        plan = _plan_on(job_id, tuple(chosen), ntasks, opts, step_id, job)
    except SlurmError:
        raise StepBusy(job_id) from None
    whole = {n.node: n for n in allocation.nodes}
    for node, hold in zip(chosen, plan.holds, strict=True):
        if not exact and node.cpus < whole[node.node].cpus:
            raise StepBusy(job_id)  # without --exact a step takes every CPU of the node
        if hold.mem_mb > node.mem_mb:
            raise StepBusy(job_id)
    return plan


def _plan_on(job_id: int, nodes: tuple[NodeAlloc, ...], ntasks: int, opts: JobOptions,
             step_id: int, job: JobOptions | None) -> StepPlan:
    """The step's layout, CPUs, GPUs and holdings on ``nodes`` (its nodes, chosen)."""
    cpt = opts.cpus_per_task or 1
    cpus = tuple(n.cpus for n in nodes)
    if ntasks * cpt > sum(cpus) or any(c < cpt for c in cpus):
        raise _step_error(job_id, Errno.ESLURM_TOO_MANY_REQUESTED_CPUS)
    distribution = opts.distribution or default_step_distribution(ntasks, len(nodes))
    layout = distribute(ntasks, [n.node for n in nodes], cpus,
                        ntasks_per_node=opts.ntasks_per_node, cpus_per_task=cpt,
                        distribution=distribution)
    exact = opts.exact or opts.exclusive is not None
    task_cpus = tuple(len(ids) * cpt for ids in layout.task_ids)
    if exact:
        # --exact (srun's --exclusive implies it): only the CPUs of the step's tasks;
        # else every CPU the job has on the node (measured on 22.05.8: ``srun
        # --exclusive env`` in ``sbatch --exclusive`` has SLURM_CPUS_ON_NODE=1, not 4)
        cpus = task_cpus
    gpus = _step_gpus(job_id, nodes, layout, opts, job)
    holds = []
    for node, n_cpus, t_cpus, ids in zip(nodes, cpus, task_cpus, gpus, strict=True):
        mem = _mem_need(opts, node, t_cpus)
        if mem > node.mem_mb:
            raise _step_error(job_id, Errno.ESLURM_INVALID_TASK_MEMORY)
        holds.append(StepUse(n_cpus, mem if exact else node.mem_mb, frozenset(ids)))
    return StepPlan(step_id, layout, cpus, gpus, layout.distribution, tuple(holds))


def _mem_need(opts: JobOptions, node: NodeAlloc, task_cpus: int) -> int:
    """Memory (MB) the step's tasks need on ``node``: ``--mem`` (0: all the job has
    there), else ``--mem-per-cpu`` x their CPUs, else nothing asked."""
    if opts.mem_mb is not None:
        return node.mem_mb if opts.mem_mb == 0 else opts.mem_mb
    if opts.mem_per_cpu_mb is not None:
        return opts.mem_per_cpu_mb * task_cpus
    return 0


def _step_gpus(job_id: int, nodes: tuple[NodeAlloc, ...], layout: TaskLayout,
               opts: JobOptions, job: JobOptions | None) -> tuple[tuple[int, ...], ...]:
    """The GPU indices the step gets on each node: the first ``nodes`` offer.

    More GPUs than the job has is ``Invalid generic resource (gres) specification``
    (measured on 22.05.8 for ``--gres=gpu:3`` and ``--gpus=3`` in a ``--gres=gpu:2``
    job; the first also names both per-node counts on a line of its own).
    """
    ask = gpu_ask(opts)
    job_ask = gpu_ask(job) if job is not None else None
    if ask is None and job is not None:
        ask = job_ask or ("none", 0)
    takes: list[int | None]
    if ask is None:
        takes = [None] * len(nodes)
    elif ask[0] == "job":
        takes = list(job_gpu_shares([len(n.gpu_indices) for n in nodes], ask[1]))
        if sum(t or 0 for t in takes) < ask[1]:
            raise _step_error(job_id, INVALID_GRES)
    elif ask[0] == "task":
        takes = [ask[1] * len(ids) for ids in layout.task_ids]
    else:
        takes = [ask[1]] * len(nodes)
    gpus: list[tuple[int, ...]] = []
    for node, take in zip(nodes, takes, strict=True):
        held = node.gpu_indices
        if take is not None and take > len(held):
            why = _step_error(job_id, INVALID_GRES).message
            if ask is not None and ask[0] == "node" and job_ask and job_ask[0] == "node":
                why = (f"srun: error: Step requested gres_per_node=gpu:{take} is more than "
                       f"the job's gres_per_node=gpu:{job_ask[1]}\n{why}")
            raise SlurmError(why, 1)
        gpus.append(held if take is None else held[:take])
    return tuple(gpus)
