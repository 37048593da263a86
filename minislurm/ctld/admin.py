"""What users and administrators ask slurmctld besides submitting.

``scancel`` (by id, ``-u user``, ``-t state``, ``-n name``), ``scontrol hold/release``
(``JobHeldAdmin`` for an operator's hold, ``JobHeldUser`` for ``-H``/``scontrol
uhold``), ``scontrol requeue``, ``scontrol update nodename=... state=...``,
``scontrol update partitionname=... state=...``, ``scontrol create reservation``,
and failure injection (a node dying at a given time, or at random with a mean
time between failures).
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from typing import TYPE_CHECKING

from minislurm.errors import SlurmError
from minislurm.hostlist import expand
from minislurm.states import JobState, Reason

from . import lifecycle
from .job_mgr import Job
from .reservation import Reservation, check_new
from .runner import SIGKILL

if TYPE_CHECKING:
    from .controller import Controller

INVALID_JOB_ID = "Invalid job id specified"


class AdminMixin:
    """The operator half of the controller."""

    # ---- scancel ------------------------------------------------------------------
    def cancel(  # type: ignore[misc]
        self: Controller, job_id: int, *, task: int | None = None, uid: int = 0
    ) -> None:
        """``scancel JOBID`` (``task``: ``scancel 108_3``).  Unknown or ended ids are ignored,
        as scancel exits 0 for them (capture b_sbatch_errors 52)."""
        job = self._jobs.get(job_id)
        if job is None:
            return
        if task is not None and job.array_job_id is not None:
            for t in self._array_tasks.get(job.array_job_id, []):
                if t.array_task_id == task and t is not job:
                    self.cancel(t.job_id, uid=uid)
                    return
            meta = self._jobs.get(job.array_job_id)
            if meta is not None and task in meta.array_pending and len(meta.array_pending) > 1:
                one = meta.split_task_index(task, self.next_job_id())
                self.register(one)
                self._cancel_pending(one, uid)
                return
            if job.array_task_id != task and not job.array_pending:
                return
        if job.state is JobState.PENDING:
            self._cancel_pending(job, uid)
        elif job.state in (JobState.RUNNING, JobState.CONFIGURING):
            job.cancelled_by = uid
            lifecycle.terminate(self, job, JobState.CANCELLED, 0, 15)

    def signal_job(self: Controller, job_id: int, signal: int, *, uid: int = 0) -> None:  # type: ignore[misc]
        """``scancel --signal=SIG JOBID``: deliver a signal to a running job's processes.

        Only KILL cancels the job. Any other signal, TERM included, reaches the job's
        steps and the job stays RUNNING (checked on 22.05: ``scancel --signal=TERM``
        leaves it RUNNING; without ``--batch`` the batch shell does not get it), which
        is what submitit's preemption drill relies on. A runner with real processes
        signals the steps (``signal_steps``); the simulated one models a program that
        dies of the signal.
        """
        job = self._jobs.get(job_id)
        if job is None or job.state is not JobState.RUNNING:
            return
        if signal == SIGKILL:
            job.cancelled_by = uid
            lifecycle.terminate(self, job, JobState.CANCELLED, 0, signal)
            return
        steps_only = getattr(self.runner, "signal_steps", None)
        if steps_only is not None:
            steps_only(job_id, signal)
        else:
            self.runner.kill(job_id, signal)

    def _cancel_pending(self: Controller, job: Job, uid: int) -> None:  # type: ignore[misc]
        if job.state is not JobState.PENDING:
            return
        self.pending_done(job)
        job.state = JobState.CANCELLED
        job.cancelled_by = uid
        job.end_time = self.now
        job.array_pending = [] if job.array_pending else job.array_pending
        self.record(job)
        self.job_ended(job)

    def cancel_where(  # type: ignore[misc]
        self: Controller,
        *,
        user: str | None = None,
        state: str | None = None,
        name: str | None = None,
        partition: str | None = None,
        uid: int = 0,
    ) -> list[int]:
        """``scancel -u USER -t STATE -n NAME -p PART``: cancel every matching active job."""
        wanted = None
        if state is not None:
            wanted = {s for s in JobState if s.value == state.upper() or s.short == state.upper()}
        hit = []
        for job in list(self._jobs.values()):
            if job.state.is_terminal:
                continue
            if (user and job.user != user) or (name and job.name != name) or (
                partition and job.partition != partition
            ):
                continue
            if wanted is not None and job.state not in wanted:
                continue
            hit.append(job.job_id)
            self.cancel(job.job_id, uid=uid)
        return hit

    # ---- hold / release / requeue -------------------------------------------------
    def _pending_job(self: Controller, job_id: int) -> Job:  # type: ignore[misc]
        job = self._jobs.get(job_id)
        if job is None:
            raise SlurmError(f"{INVALID_JOB_ID} for job {job_id}", 1)
        if job.state is not JobState.PENDING:
            raise SlurmError("Job is no longer pending execution for job " + str(job_id), 1)
        return job

    def hold(self: Controller, job_id: int, *, user: bool = False) -> None:  # type: ignore[misc]
        """``scontrol hold`` (admin, JobHeldAdmin) or ``scontrol uhold`` (JobHeldUser).

        Like every successful job update, it queues a main-scheduler run (jobs behind
        the held one may start; the held job shows ``Scheduler=Main`` at once, measured
        on 22.05.8 after backfill had tested it).
        """
        job = self._pending_job(job_id)
        job.hold = "user" if user else "admin"
        job.reason = Reason.JOB_HELD_USER if user else Reason.JOB_HELD_ADMIN
        job.est_start = None  # StartTime=Unknown (SchedNodeList= stays), as 22.05.8
        self.set_priority(job)
        self._order_dirty = True
        self.kick()

    def release(self: Controller, job_id: int) -> None:  # type: ignore[misc]
        """``scontrol release``: the job may run again (it gets a new priority)."""
        job = self._pending_job(job_id)
        job.hold = None
        job.reason = Reason.NONE
        self.set_priority(job)
        self._order_dirty = True
        self.kick()

    def requeue(self: Controller, job_id: int) -> None:  # type: ignore[misc]
        """``scontrol requeue``: a running batch job goes back to PENDING (logged REQUEUED)."""
        job = self._jobs.get(job_id)
        if job is None:
            raise SlurmError(f"{INVALID_JOB_ID} for job {job_id}", 1)
        if job.state is not JobState.RUNNING or not job.batch_flag:
            raise SlurmError(f"Job is pending execution for job {job_id}", 1)
        lifecycle.requeue(self, job, JobState.REQUEUED)

    # ---- nodes ----------------------------------------------------------------------
    def update_node(  # type: ignore[misc]
        self: Controller, nodes: str, state: str, reason: str = "", *, user: str = "root"
    ) -> None:
        """``scontrol update nodename=NODES state=down|drain|resume reason=...``."""
        idx = self.nodes_mgr.names(expand(nodes))
        killed = [i for i in idx if self.nodes_mgr.set_state(i, state, reason, user, self.now)]
        if killed:
            lifecycle.kill_on_nodes(self, killed, admin_down=True)
        self.kick()

    def fail_node(self: Controller, name: str, *, repair_after: int | None = None) -> None:  # type: ignore[misc]
        """The node dies now (slurmd stops answering): DOWN*, its jobs requeued or NODE_FAIL.

        ``repair_after`` seconds later slurmd comes back; with ReturnToService=1 the node
        returns to service.
        """
        i = self.nodes_mgr.names([name])[0]
        self.nodes_mgr.fail(i, self.now)
        lifecycle.kill_on_nodes(self, [i], admin_down=False)
        if repair_after is not None:
            def back() -> None:
                self.nodes_mgr.repair(i, self.now, self.return_to_service)
                self.kick()
            self.later(repair_after, back)
        self.kick()

    def schedule_node_failure(  # type: ignore[misc]
        self: Controller, name: str, at: int, *, repair_after: int | None = None
    ) -> None:
        """Inject a failure of ``name`` at epoch time ``at``."""
        delay = max(0, at - self.now)
        self.later(delay, lambda: self.fail_node(name, repair_after=repair_after))

    def random_failures(  # type: ignore[misc]
        self: Controller, mtbf_hours: float, repair_after: int, *, seed: int = 0,
        until: int | None = None, nodes: Iterable[str] | None = None,
    ) -> list[tuple[int, str]]:
        """Exponential failures with the given MTBF per node; returns the (time, node) plan."""
        rng = random.Random(seed)
        plan: list[tuple[int, str]] = []
        horizon = until if until is not None else self.now + 30 * 86400
        for name in nodes if nodes is not None else self.table.names:
            t = self.now
            while True:
                t += int(rng.expovariate(1.0 / (mtbf_hours * 3600))) + 1
                if t >= horizon:
                    break
                plan.append((t, name))
                t += repair_after
        plan.sort()
        for t, name in plan:
            self.schedule_node_failure(name, t, repair_after=repair_after)
        return plan

    # ---- partitions and reservations ------------------------------------------------
    def update_partition(self: Controller, name: str, state: str) -> None:  # type: ignore[misc]
        """``scontrol update partitionname=NAME state=UP|DOWN|DRAIN|INACTIVE``."""
        part = self.parts.get(name)
        if part is None:
            raise SlurmError("slurm_update error: Invalid partition name specified", 1)
        from dataclasses import replace

        self.parts[name] = replace(part, state=state.upper())
        self.kick()

    def create_reservation(  # type: ignore[misc]
        self: Controller, name: str, start: int, duration: int, nodes: str,
        *, users: Iterable[str] = (), accounts: Iterable[str] = (),
    ) -> str:
        """``scontrol create reservation``; ``duration`` in minutes.  Returns scontrol's line."""
        names = expand(nodes)
        idx = tuple(self.nodes_mgr.names(names))
        resv = Reservation(name, start, start + duration * 60, idx, tuple(names), tuple(users),
                           tuple(accounts), int(sum(int(self.table.cpus[i]) for i in idx)))
        check_new(self.reservations_by_name, resv)  # type: ignore[arg-type]
        self.reservations_by_name[name] = resv
        self._wake_at(resv.start)
        self._wake_at(resv.end)
        self.kick()
        return f"Reservation created: {name}"

    def delete_reservation(self: Controller, name: str) -> None:  # type: ignore[misc]
        """``scontrol delete reservation=NAME``; its waiting jobs get ReservationDeleted."""
        if self.reservations_by_name.pop(name, None) is None:
            raise SlurmError("Error deleting the reservation: Requested reservation is invalid", 1)
        self.kick()


__all__ = ["INVALID_JOB_ID", "AdminMixin"]
