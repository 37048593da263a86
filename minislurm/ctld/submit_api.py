"""``Controller.submit``: sbatch/srun/salloc requests reaching slurmctld.

Every submission takes the next job id, even when slurmctld rejects it; a
rejected one is kept in accounting as FAILED with exit code 1 (capture
b_sbatch_errors 99_final_queue).  Accepted jobs get their priority from the
priority plugin and wake the main scheduler.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from minislurm.errors import SubmitError
from minislurm.options import JobOptions
from minislurm.states import JobState, Reason

from .depend import NEVER, OK, evaluate
from .job_mgr import Job
from .runner import JobBody
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

if TYPE_CHECKING:
    from .controller import Controller


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


class SubmitMixin:
    """The submission half of the controller."""

    def submit(  # type: ignore[misc]
        self: Controller,
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
    ) -> int:
        """Queue a job like ``sbatch`` (``prog='srun'``/``'salloc'`` change the error wording).

        ``body`` says what a simulated job does (run time, exit code); ``bodies`` per
        array task index.  Returns the job id; raises ``SubmitError`` when rejected.
        """
        jid = self.next_job_id()
        job = Job(jid, options.job_name or name or "sbatch", self.now)
        job.user, job.uid = user, uid
        job.group, job.gid = group or user, uid if gid is None else gid
        try:
            self._fill(job, options, prog, cwd)
        except SubmitError:
            job.state, job.exit_code, job.end_time = JobState.FAILED, 1, self.now
            job.partition = job.partition or self.default_partition
            self.accounting_store.record(job.snapshot(accounting=True), self.now)
            raise
        job.script, job.command = script, command or job.command
        job.batch_flag = batch
        if body is not None:
            job.body = body
        if bodies is not None:
            job.array_bodies = dict(bodies)
        self.register(job)
        self.set_priority(job)  # before queueing: the pending list is sorted on insert
        self.add_pending(job)
        job.reason = self._submit_reason(job)
        self._wake_at(job.begin_time)
        self.kick()
        return jid

    def _submit_reason(self: Controller, job: Job) -> Reason:  # type: ignore[misc]
        """The reason slurmctld gives a job as it accepts it (job_allocate), before any
        scheduler looked at it: squeue right after sbatch shows it (measured on 22.05.8:
        ``-H`` JobHeldUser, then a partition limit (``-N9`` on 4 nodes, ``-t 2:00:00``
        over MaxTime) PartitionConfig (the scheduler then says PartitionNodeLimit or
        PartitionTimeLimit), ``--reservation`` of one not started yet Reservation (even
        with ``--begin`` or ``-d``, which the scheduler then reports instead), ``-d`` on
        a pending job Dependency, ``--begin=now+1hour`` BeginTime; otherwise None).
        Only what squeue prints changes: the schedulers set the reason again on their
        next pass (``blocker``)."""
        if job.hold is not None:
            return Reason.JOB_HELD_ADMIN if job.hold == "admin" else Reason.JOB_HELD_USER
        if job.static_reason is not None:  # a partition limit: the scheduler says which
            return Reason.PARTITION_CONFIG
        resv = self.reservations_by_name.get(job.reservation) if job.reservation else None
        if resv is not None and not resv.active(self.now):  # type: ignore[attr-defined]
            return Reason.RESERVATION
        if job.dependency:
            status = evaluate(job, self._targets, self._singleton_waits, self.now)
            if status == NEVER:
                return Reason.DEPENDENCY_NEVER_SATISFIED
            if status != OK:
                return Reason.DEPENDENCY
        if job.begin_time is not None and job.begin_time > self.now:
            return Reason.BEGIN_TIME
        return job.reason

    def submit_invocation(self: Controller, inv: Any, **kw: Any) -> int:  # type: ignore[misc]
        """``submit`` for an ``SbatchInvocation`` (options, script text, name, args)."""
        path = inv.script_path  # --wrap and a script on stdin: Command=(null), as 22.05.8
        cmd = " ".join([path, *inv.script_args]) if path else ""
        kw.setdefault("command", cmd)
        return self.submit(inv.options, inv.script_text, name=inv.job_name, **kw)

    def _check_qos_access(self: Controller, job: Job, prog: str) -> None:  # type: ignore[misc]
        """AccountingStorageEnforce=qos (which implies associations), measured on 22.05.8:
        no association for (user, account) is ``Invalid account or account/partition
        combination specified``; a QOS the association does not list (or none of that
        name) ``Invalid qos specification``."""
        assocs: Any = self.associations
        if assocs.user_association(job.user, job.account) is None:
            raise reject(prog, INVALID_ACCOUNT)
        if not assocs.qos_allowed(job.user, job.account, job.qos):
            raise reject(prog, INVALID_QOS)

    def _fill(self: Controller, job: Job, o: JobOptions, prog: str, cwd: str) -> None:  # type: ignore[misc]
        part_name = (o.partition or self.default_partition).split(",")[0]
        job.partition = part_name
        part = self.parts.get(part_name)
        if part is None:
            raise reject(prog, INVALID_PARTITION, f"invalid partition specified: {part_name}")
        job.billing_weights = getattr(self.part_cfg.get(part_name), "billing_weights", None)
        if o.dependency:
            job.dependency, job.dep_any = parse_dependencies(o.dependency, prog)
            job.dep_text = o.dependency
        array = None
        if o.array:
            array = parse_array_indices(o.array, self.max_array_size, prog)
        checked = check_request(
            o, part, self.table, def_mem_per_cpu=self.def_mem_per_cpu,
            enforce_part_limits=self.enforce_part_limits, prog=prog,
        )  # fmt: skip
        if o.reservation and o.reservation not in self.reservations_by_name:
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
        if self.associations is not None:
            default_acct = self.associations.default_account(job.user)  # type: ignore[attr-defined]
        job.account = o.account or default_acct or "root"
        if self.enforce_qos and self.associations is not None:
            self._check_qos_access(job, prog)
        job.nice = o.nice or 0
        job.hold = "user" if o.hold else None
        job.begin_time = o.begin
        job.requeue = self.job_requeue if o.requeue is None else o.requeue  # JobRequeue
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


__all__ = ["SubmitMixin"]
