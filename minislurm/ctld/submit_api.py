"""``Controller.submit``: sbatch/srun/salloc requests reaching slurmctld.

Every submission takes the next job id, even when slurmctld rejects it; a
rejected one is kept in accounting as FAILED with exit code 1 (capture
b_sbatch_errors 99_final_queue).  Accepted jobs get their priority from the
priority plugin and wake the main scheduler.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from minislurm.errors import SubmitError
from minislurm.options import JobOptions
from minislurm.states import JobState

from .job_mgr import Job
from .runner import JobBody
from .sched_view import SchedView
from .state import CtldState
from .submit import (
    INVALID_ACCOUNT,
    INVALID_PARTITION,
    INVALID_QOS,
    RESERVATION_INVALID,
    check_request,
    parse_array_indices,
    parse_dependencies,
    reject,
)


def _std_path(pattern: str | None, job: Job, array: bool, cwd: str) -> str:
    """``StdOut=``: the ``-o`` pattern made absolute (default ``slurm-%j.out``)."""
    if pattern is None:
        pattern = "slurm-%A_%a.out" if array else "slurm-%j.out"
    if pattern == "none":
        return "/dev/null"
    if array:
        return os.path.join(cwd, pattern) if not pattern.startswith("/") else pattern
    text = pattern.replace("%j", str(job.job_id)).replace("%x", job.name).replace("%u", job.user)
    return text if text.startswith("/") else os.path.join(cwd, text)


def submit(
    ctl: CtldState,
    view: SchedView,
    options: JobOptions,
    script: str = "",
    *,
    name: str | None = None,
    user: str = "root",
    uid: int = 0,
    group: str | None = None,
    gid: int | None = None,
    cwd: str = "/tmp",
    command: str = "",
    body: JobBody | None = None,
    bodies: Mapping[int, JobBody] | None = None,
    prog: str = "sbatch",
    batch: bool = True,
    exact_limit: int | None = None,
) -> int:
    """Queue a job like ``sbatch`` (``prog='srun'``/``'salloc'`` change the error wording).

    ``body`` says what a simulated job does (run time, exit code); ``bodies`` per
    array task index.  ``exact_limit``: the limit in seconds (``Job.exact_limit``),
    within the ``--time`` minutes it refines (``ValueError`` otherwise: a caller's
    mistake, not a user's).  Returns the job id; raises ``SubmitError`` when rejected.
    """
    jid = ctl.next_job_id()
    job = Job(jid, options.job_name or name or "sbatch", ctl.now)
    job.user, job.uid = user, uid
    job.group, job.gid = group or user, uid if gid is None else gid
    try:
        fill(ctl, job, options, prog, cwd)
    except SubmitError:
        job.state, job.exit_code, job.end_time = JobState.FAILED, 1, ctl.now
        job.partition = job.partition or ctl.default_partition
        ctl.accounting_store.record(job.snapshot(accounting=True), ctl.now)
        raise
    if exact_limit is not None:
        minutes = job.time_limit  # None or negative: UNLIMITED, no upper bound
        cap = minutes * 60 if minutes is not None and minutes >= 0 else None
        if exact_limit <= 0 or (cap is not None and exact_limit > cap):
            raise ValueError(f"exact_limit={exact_limit} s is not within TimeLimit={minutes}")
        job.exact_limit = exact_limit
    job.script, job.command = script, command or job.command
    job.batch_flag = batch
    if body is not None:
        job.body = body
    if bodies is not None:
        job.array_bodies = dict(bodies)
    ctl.register(job)
    view.eligible_at_submit(job)  # job_independent, before set_job_prio (age)
    ctl.set_priority(job)  # before queueing: the pending list is sorted on insert
    ctl.add_pending(job)
    job.reason = view.submit_reason(job)
    ctl.wake_at(job.begin_time)
    ctl.kick()
    return jid


def _check_qos_access(ctl: CtldState, job: Job, prog: str) -> None:
    """AccountingStorageEnforce=qos (which implies associations), measured on 22.05.8:
    no association for (user, account) is ``Invalid account or account/partition
    combination specified``; a QOS the association does not list (or none of that
    name) ``Invalid qos specification``."""
    assocs = ctl.associations
    if assocs is None:
        return
    if assocs.user_association(job.user, job.account) is None:
        raise reject(prog, INVALID_ACCOUNT)
    if not assocs.qos_allowed(job.user, job.account, job.qos):
        raise reject(prog, INVALID_QOS)


def fill(ctl: CtldState, job: Job, o: JobOptions, prog: str, cwd: str) -> None:
    """``job_allocate``'s checks of a request: the job record filled from ``o``, or
    ``SubmitError`` with slurmctld's text (a submission and ``--test-only`` alike)."""
    part_name = (o.partition or ctl.default_partition).split(",")[0]
    job.partition = part_name
    part = ctl.parts.get(part_name)
    if part is None:
        raise reject(prog, INVALID_PARTITION, f"invalid partition specified: {part_name}")
    job.billing_weights = ctl.part_cfg[part_name].billing_weights
    if o.dependency:
        job.dependency, job.dep_any = parse_dependencies(o.dependency, prog)
        job.dep_text = o.dependency
    array = None
    if o.array:
        array = parse_array_indices(o.array, ctl.max_array_size, prog)
    checked = check_request(
        o, part, ctl.table, def_mem_per_cpu=ctl.def_mem_per_cpu,
        enforce_part_limits=ctl.enforce_part_limits, prog=prog,
    )  # fmt: skip
    if o.reservation and o.reservation not in ctl.reservations_by_name:
        raise reject(prog, RESERVATION_INVALID)
    job.request = checked.request
    job.time_limit = checked.time_limit
    job.time_min = o.time_min
    job.static_reason = checked.static_reason
    job.num_nodes, job.num_tasks, job.num_cpus = (
        checked.num_nodes, checked.num_tasks, checked.num_cpus)
    job.max_nodes = o.nodes_max
    job.cpus_per_task = o.cpus_per_task or 1
    job.ntasks_per_node = o.ntasks_per_node
    job.min_memory_mb = o.mem_mb
    job.mem_per_cpu = checked.request.mem_per_cpu
    job.mem_per_gpu = o.mem_per_gpu_mb
    job.gpus_total = checked.gpus_total
    job.tres_per_node = checked.tres_per_node
    job.tres_per_job = f"gres:gpu:{o.gpus}" if o.gpus else None
    job.tres_per_task = f"gres:gpu:{o.gpus_per_task}" if o.gpus_per_task else None
    job.gres = checked.gres_text
    job.exclusive = checked.request.exclusive
    job.req_nodelist = o.nodelist or ""
    job.exc_nodelist = o.exclude or ""
    job.reservation = o.reservation or ""
    job.features = o.constraint or ""
    job.qos = o.qos or "normal"
    default_acct = None
    if ctl.associations is not None:
        default_acct = ctl.associations.default_account(job.user)
    job.account = o.account or default_acct or "root"
    if ctl.enforce_qos and ctl.associations is not None:
        _check_qos_access(ctl, job, prog)
    job.nice = o.nice or 0
    job.hold = "user" if o.hold else None
    job.begin_time = o.begin
    job.requeue = ctl.job_requeue if o.requeue is None else o.requeue  # JobRequeue
    job.no_kill = bool(o.no_kill)
    job.kill_on_invalid_dep = bool(o.kill_on_invalid_dep)
    if o.signal is not None:
        job.signal_spec = (o.signal.signal, o.signal.time)
        job.signal_text = f"{o.signal.signal}@{o.signal.time}"
    job.comment = o.comment or ""
    job.work_dir = o.chdir or cwd
    if array is not None:
        job.array_job_id = job.job_id
        job.array_pending, job.array_max = array
    is_array = array is not None
    job.std_out = _std_path(o.output, job, is_array, job.work_dir)
    job.std_err = _std_path(o.error, job, is_array, job.work_dir) if o.error else job.std_out
    job.std_in = o.input or "/dev/null"


__all__ = ["fill", "submit"]
