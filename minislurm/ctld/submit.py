"""Submission checks of slurmctld (``job_create``/``_valid_job_part`` in job_mgr.c).

Builds a ``Job`` from ``JobOptions`` or raises ``SubmitError`` with the lines
sbatch prints (capture b_sbatch_errors), e.g.::

    sbatch: error: invalid partition specified: nosuch
    sbatch: error: Batch job submission failed: Invalid partition name specified

Some requests are *accepted* but can never run while the limits stay as they
are; with ``EnforcePartLimits=NO`` (the default) they stay pending with
``PartitionTimeLimit``, ``PartitionNodeLimit`` or ``PartitionConfig``; with
``EnforcePartLimits=ALL``/``ANY`` they are rejected (capture b2_*).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from minislurm.common.gres import parse_gres_request
from minislurm.common.hostlist import expand
from minislurm.common.jobarray import parse_array
from minislurm.common.timespec import INVALID_TIME
from minislurm.dependency import parse_dependency
from minislurm.errors import Errno, GresError, HostlistError, SlurmError, SubmitError
from minislurm.options import JobOptions
from minislurm.select.cons_tres import spread_node_estimate
from minislurm.select.request import ResourceRequest, config_mask
from minislurm.select.table import NodeTable
from minislurm.states import Reason

from .job_mgr import DepItem

#: slurm_strerror texts of the rejections.
INVALID_PARTITION = Errno.ESLURM_INVALID_PARTITION_NAME
NODE_CONFIG = Errno.ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE
INVALID_NODE_NAME = Errno.ESLURM_INVALID_NODE_NAME
DEPENDENCY_PROBLEM = Errno.ESLURM_DEPENDENCY
INVALID_ARRAY = Errno.ESLURM_INVALID_ARRAY
INVALID_TIME_LIMIT = Errno.ESLURM_INVALID_TIME_LIMIT
NODE_COUNT = Errno.ESLURM_INVALID_NODE_COUNT
TOO_MANY_CPUS = Errno.ESLURM_TOO_MANY_REQUESTED_CPUS
INVALID_QOS = Errno.ESLURM_INVALID_QOS
INVALID_ACCOUNT = Errno.ESLURM_INVALID_ACCOUNT
RESERVATION_INVALID = Errno.ESLURM_RESERVATION_INVALID
PARTITION_DOWN = "Partition in DRAIN state"  # submissions to a DRAIN/INACTIVE partition


#: command -> the words before slurmctld's reason when it refuses a job.
_REJECT_WORDS = {
    "sbatch": "Batch job submission failed",
    "salloc": "Job submit/allocate failed",
    "srun": "Unable to allocate resources",
}


def reject(prog: str, reason: str, *info: str) -> SubmitError:
    """The ``SubmitError`` sbatch (or srun/salloc) prints for a rejection.

    The last line is each command's own (22.05.8): sbatch.c ``Batch job submission
    failed``, salloc.c ``Job submit/allocate failed``, srun's allocate.c ``Unable
    to allocate resources``.
    """
    lines = [f"{prog}: error: {line}" for line in info]
    lines.append(f"{prog}: error: {_REJECT_WORDS.get(prog, _REJECT_WORDS['srun'])}: {reason}")
    return SubmitError("\n".join(lines), 1)


@dataclass(frozen=True, slots=True)
class PartView:
    """What submission checks need of a partition (``PartitionName=`` line).

    ``size``: its node count (``part_ptr->total_nodes``), counted once from ``mask``
    (a partition's nodes change only with a new view)."""

    name: str
    mask: Any  # BoolArray of member nodes
    max_time: int | None
    default_time: int | None
    max_nodes: int | None
    min_nodes: int
    state: str
    size: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "size", int(self.mask.sum()))

    def over_time(self, time_limit: int | None) -> bool:
        """A limit above ``MaxTime`` (UNLIMITED is above any): PartitionTimeLimit, or a
        rejection under ``EnforcePartLimits`` (job_limits_check in job_mgr.c)."""
        return self.max_time is not None and (time_limit is None or time_limit > self.max_time)

    def outside_nodes(self, nodes: int) -> bool:
        """A node count outside ``MinNodes``..``MaxNodes`` (or above the partition's
        size): PartitionNodeLimit, or a rejection under ``EnforcePartLimits``."""
        size = self.size
        most = self.max_nodes if self.max_nodes is not None else size
        return nodes > most or nodes > size or nodes < self.min_nodes


@dataclass(frozen=True, slots=True)
class Checked:
    """The outcome of ``check_request``: the request plus fields derived from it."""

    request: ResourceRequest
    time_limit: int | None
    static_reason: Reason | None
    num_nodes: int
    num_tasks: int
    num_cpus: int
    gpus_total: int
    tres_per_node: str | None
    gres_text: str


def _gpu_request(opts: JobOptions, prog: str) -> tuple[int, str | None, int | None, str | None]:
    """(GPUs per node, type, GPUs per job, TRES_PER_NODE text) from --gres/--gpus*."""
    per_node, gtype, per_job, tpn = 0, None, None, None
    if opts.gres:
        try:
            items = parse_gres_request(opts.gres)
        except GresError:
            raise SubmitError(
                f"{prog}: error: {Errno.ESLURM_INVALID_GRES}", 1
            ) from None
        for item in items:
            if item.name != "gpu":
                raise reject(prog, Errno.ESLURM_INVALID_GRES)
            per_node, gtype = item.count, item.type
        tpn = ",".join(f"gres:{i}" for i in items)
    for text, is_job in ((opts.gpus_per_node, False), (opts.gpus, True)):
        if not text:
            continue
        tname, _, count = text.rpartition(":")
        if not count.isdigit():  # 22.05.8: x is a type no node has, -1 no count: slurmctld
            raise reject(prog, NODE_CONFIG)  # refuses (a job id used), not the front end
        gtype = tname or gtype
        if is_job:
            per_job = int(count)
        else:
            per_node = int(count)
            tpn = f"gres:gpu:{text}"
    return per_node, gtype, per_job, tpn


#: Per node table: (options, prog, DefMemPerCPU, EnforcePartLimits) -> the partition
#: view a request was checked against and its ``Checked`` (`check_request`).
_CHECKED: weakref.WeakKeyDictionary[
    NodeTable, dict[tuple[JobOptions, str, int | None, str], tuple[PartView, Checked]]
] = weakref.WeakKeyDictionary()
#: Distinct requests kept per node table (the memo starts over when full).
_CHECKED_MAX = 4096


def check_request(
    opts: JobOptions,
    part: PartView,
    table: NodeTable,
    *,
    def_mem_per_cpu: int | None,
    enforce_part_limits: str,
    prog: str = "sbatch",
) -> Checked:
    """`check_job_request`'s outcome, kept for the next submission that asks the same.

    slurmctld checks every submission's sizes against its partition's nodes as
    configured (``_valid_job_part``, ``select_nodes``'s config test); a trace asks the
    same request thousands of times.  The outcome is a pure function of the frozen
    options, ``prog``, ``DefMemPerCPU``, ``EnforcePartLimits``, the partition view
    (``PartView``: ``scontrol update`` replaces it with a new one) and the table's
    *configured* counts (``cpus``, ``mem``, ``gpus``, ``gpus_typed``, ``index``,
    ``gpu_types``: set when the ``NodeTable`` is built and never changed; a new
    configuration is a new table).  The memo is keyed on the table, the options and
    the settings, and an entry serves only the same ``PartView`` object (compared by
    identity): a new table or view invalidates it.  A rejection is not kept: its
    ``SubmitError`` is raised again by the checks themselves.
    """
    memo = _CHECKED.get(table)
    if memo is None:
        memo = _CHECKED[table] = {}
    key = (opts, prog, def_mem_per_cpu, enforce_part_limits)
    hit = memo.get(key)
    if hit is not None and hit[0] is part:
        return hit[1]
    checked = check_job_request(opts, part, table, def_mem_per_cpu=def_mem_per_cpu,
                                enforce_part_limits=enforce_part_limits, prog=prog)
    if len(memo) >= _CHECKED_MAX:
        memo.clear()
    memo[key] = (part, checked)
    return checked


def check_job_request(
    opts: JobOptions,
    part: PartView,
    table: NodeTable,
    *,
    def_mem_per_cpu: int | None,
    enforce_part_limits: str,
    prog: str = "sbatch",
) -> Checked:
    """Validate sizes against the partition's nodes (``select_nodes``'s config test).

    ``-N0`` (``nodes_min=0``) is rejected with ``Node count specification invalid``
    as slurmctld does for a batch job (``ESLURM_INVALID_NODE_COUNT``).
    """
    if opts.nodes_min == 0 or opts.nodes_max == 0:
        raise reject(prog, NODE_COUNT)
    req_idx: set[int] = set()
    exc_idx: set[int] = set()
    try:
        for text, dest in ((opts.nodelist, req_idx), (opts.exclude, exc_idx)):
            for name in expand(text) if text else []:
                if name not in table.index:
                    raise reject(prog, INVALID_NODE_NAME)
                dest.add(table.index[name])
    except HostlistError:
        raise reject(prog, INVALID_NODE_NAME) from None
    per_node_gpu, gtype, per_job_gpu, tpn = _gpu_request(opts, prog)
    per_task_gpu = 0
    if opts.gpus_per_task:
        tname, _, count = opts.gpus_per_task.rpartition(":")
        if not count.isdigit() or int(count) == 0:
            raise SubmitError(f"{prog}: error: {Errno.ESLURM_INVALID_GRES}", 1)
        per_task_gpu, gtype = int(count), tname or gtype
    if gtype is not None and gtype not in table.gpu_types:
        raise reject(prog, NODE_CONFIG)
    spread = opts.nodes_min is None and not req_idx
    min_nodes = opts.nodes_min or max(len(req_idx), 1)
    ntasks = opts.ntasks or (min_nodes * (opts.ntasks_per_node or 1))
    cpt = task_cpt = opts.cpus_per_task or 1
    cpg = opts.cpus_per_gpu or 0
    usable = part.mask.copy()
    if exc_idx:
        usable[list(exc_idx)] = False
    gpus_per_job = 0
    if per_job_gpu is not None:
        biggest_gpus = int(table.total_gpus_of(gtype)[usable].max()) if usable.any() else 0
        if per_node_gpu == 0:
            if opts.nodes_min is not None and per_job_gpu < opts.nodes_min:
                raise SubmitError(
                    f"{prog}: error: Failed to validate job spec, --gpus < -N\n"
                    f"{prog}: error: {Errno.ESLURM_INVALID_GRES}", 1)
            nodes_for_gpus = -(-per_job_gpu // max(biggest_gpus, 1)) if biggest_gpus else 1
            min_nodes = max(min_nodes, nodes_for_gpus)
            per_node_gpu = -(-per_job_gpu // min_nodes)
            spread = spread and nodes_for_gpus <= 1
            gpus_per_job = per_job_gpu
            most = sorted(table.total_gpus_of(gtype)[usable].tolist(), reverse=True)
            limit = opts.nodes_max or opts.nodes_min
            if limit is not None and per_job_gpu > sum(most[:limit]):
                raise reject(prog, NODE_CONFIG)
        if per_job_gpu > int(table.total_gpus_of(gtype)[usable].sum()):
            raise reject(prog, NODE_CONFIG)
    if cpg and per_task_gpu:
        # measured: -n2 --gpus-per-task=1 --cpus-per-gpu=2 -> 4 CPUs, MinCPUsNode=2
        cpt = max(cpt, per_task_gpu * cpg)
    mem_per_node = opts.mem_mb
    mem_per_cpu = opts.mem_per_cpu_mb
    if mem_per_node is None and mem_per_cpu is None and opts.mem_per_gpu_mb is None:
        mem_per_cpu = def_mem_per_cpu
    if opts.mem_per_gpu_mb is not None and per_node_gpu:
        mem_per_node = opts.mem_per_gpu_mb * per_node_gpu
    req = ResourceRequest(
        min_nodes=min_nodes,
        max_nodes=opts.nodes_max,
        ntasks=ntasks,
        cpus_per_task=cpt,
        ntasks_per_node=opts.ntasks_per_node,
        spread=spread,
        mem_per_node=mem_per_node,
        mem_per_cpu=mem_per_cpu,
        gpus_per_node=0 if gpus_per_job else per_node_gpu,
        gpu_type=gtype,
        gpus_per_job=gpus_per_job,
        gpus_per_task=per_task_gpu,
        exclusive=opts.exclusive == "exclusive",
        req_nodes=frozenset(req_idx),
        exc_nodes=frozenset(exc_idx),
        cpus_per_gpu=0 if per_task_gpu else cpg,
    )
    # --- node configuration: could any node host one node's share? -------------
    one = ResourceRequest(
        ntasks=1 if spread else req.ntasks, cpus_per_task=cpt, ntasks_per_node=req.ntasks_per_node,
        min_nodes=max(req.node_count, opts.nodes_max or 0), mem_per_node=mem_per_node,
        mem_per_cpu=mem_per_cpu, gpus_per_node=per_node_gpu, gpu_type=gtype,
        gpus_per_task=per_task_gpu, cpus_per_gpu=0 if gpus_per_job else req.cpus_per_gpu,
    )  # fmt: skip
    if per_task_gpu and per_task_gpu * ntasks > int(table.total_gpus_of(gtype)[usable].sum()):
        raise reject(prog, NODE_CONFIG)
    # the CPUs --cpus-per-gpu adds fail as a node configuration only (measured:
    # --gres=gpu:2 --cpus-per-gpu=3 on 4-CPU nodes)
    plain = replace(one, cpus_per_gpu=0, cpus_per_task=task_cpt)
    task_cpus = plain.cpus_on_node(plain.node_count)  # -N1-3: the tasks may use 3 nodes
    if not (usable & (table.cpus >= task_cpus)).any():
        # measured: only a per-node need (-c5, --ntasks-per-node=5) says why; -N1 -n6 or
        # -N1-2 -n9 on 4-CPU nodes is the node configuration alone
        per_node = plain.cpus_on_node(plain.ntasks) if plain.ntasks_per_node is None else task_cpus
        why = ("CPU count per node can not be satisfied",) if not (
            usable & (table.cpus >= per_node)).any() else ()
        raise reject(prog, NODE_CONFIG, *why)
    mem_ok = usable & (table.mem >= one.mem_on_node(task_cpus, 0))
    if mem_per_node != 0 and not mem_ok.any():
        raise reject(prog, NODE_CONFIG, "Memory specification can not be satisfied")
    fits = usable & config_mask(one, table)
    if req_idx and not fits[list(req_idx)].all():
        raise reject(prog, NODE_CONFIG)
    nodes = spread_node_estimate(req, table, fits) if spread else req.node_count
    part_nodes = part.size
    if not fits.any() or (nodes <= part_nodes and int(fits.sum()) < nodes):
        raise reject(prog, NODE_CONFIG)
    # --- partition limits: pending (EnforcePartLimits=NO) or rejected ------------
    enforce = enforce_part_limits.upper() not in ("NO", "")
    static: Reason | None = None
    time_limit = opts.time_limit if opts.time_limit_set else part.default_time
    if not opts.time_limit_set and part.default_time is None:
        time_limit = part.max_time
    if time_limit == INVALID_TIME or part.over_time(time_limit):
        if enforce:
            raise reject(prog, INVALID_TIME_LIMIT)
        static = Reason.PARTITION_TIME_LIMIT
    asked = req.min_nodes if spread else nodes  # -n alone asks for no node count
    if part.outside_nodes(asked):
        if enforce:
            raise reject(prog, NODE_COUNT)
        static = static or Reason.PARTITION_NODE_LIMIT
    total_cpus = int(table.cpus[part.mask].sum())
    if ntasks * cpt > total_cpus:
        if enforce:
            raise reject(prog, TOO_MANY_CPUS)
        static = static or Reason.PARTITION_CONFIG
    num_cpus = max(ntasks * cpt, nodes, (per_job_gpu or 0) * cpg,
                   nodes * req.gpus_per_node * req.cpus_per_gpu)
    if req.exclusive:
        num_cpus = max(num_cpus, int(np.sort(table.cpus[fits])[-nodes:].sum()) if fits.any() else 0)
    gpus_total = per_job_gpu if per_job_gpu is not None else per_node_gpu * nodes
    return Checked(
        request=req,
        time_limit=time_limit,
        static_reason=static,
        num_nodes=nodes,
        num_tasks=ntasks,
        num_cpus=num_cpus,
        gpus_total=gpus_total,
        tres_per_node=tpn,
        gres_text=opts.gres or "",
    )


def parse_dependencies(text: str, prog: str) -> tuple[tuple[DepItem, ...], bool]:
    """``--dependency`` via ``minislurm.dependency`` (else ``Job dependency problem``):
    one ``DepItem`` per (condition, job id), and whether any one suffices (``?``)."""
    try:
        spec = parse_dependency(text)
    except (SlurmError, ValueError):
        raise reject(prog, DEPENDENCY_PROBLEM) from None
    items: list[DepItem] = []
    for dep in spec.items:
        kind = dep.kind.lower()
        if kind == "singleton":
            items.append(DepItem("singleton"))
        items += [DepItem(kind, jid, dep.delay) for jid in dep.job_ids]
    return tuple(items), spec.any_of


def parse_array_indices(
    text: str, max_array_size: int, prog: str
) -> tuple[list[int], int | None]:
    """``--array`` via ``common.jobarray.parse_array`` (``Invalid job array specification``)."""
    try:
        spec = parse_array(text, max_array_size)
    except (SlurmError, ValueError):
        raise reject(prog, INVALID_ARRAY) from None
    indices = sorted(set(spec.indices))
    if not indices or indices[-1] >= max_array_size:
        raise reject(prog, INVALID_ARRAY)
    return indices, spec.max_running


__all__ = [
    "Checked",
    "PartView",
    "check_job_request",
    "check_request",
    "parse_array_indices",
    "parse_dependencies",
    "reject",
]
