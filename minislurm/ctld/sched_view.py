"""The controller as the schedulers see it, and the one place pending reasons are decided.

``SchedView`` implements ``minislurm.sched.builtin.SchedulerContext`` over a
``CtldState``: sched/builtin's main pass and sched/backfill call only this.  It is
the middle of slurmctld's ``job_scheduler.c`` (``job_independent``,
``_job_runnable_test1/2``) and ``select_nodes`` (``node_scheduler.c``):

* ``blocker``: why a pending job may not be considered at all (held,
  ``Dependency``, ``BeginTime``, partition limits and state, ``Reservation``,
  ``JobArrayTaskLimit``, QOS limits), in the order the schedulers test them;
* ``submit_reason``: the reason ``job_allocate`` gives a job as it is accepted,
  from the same rules in the order slurmctld tests them at submission;
* ``allowed``: the nodes a job may use (its partition's usable nodes, minus
  advance reservations in its way);
* ``try_select``: select/cons_tres, then preempt/qos, then why not (``Resources``,
  ``ReqNodeNotAvail, UnavailableNodes:n4``, nodes DOWN or DRAINED);
* ``earliest_start``: when and where a request would start if submitted now
  (``_will_run_test``), the model ``sbatch --test-only`` answers with.

Every pending reason a job shows is decided here; the rules are small functions
read by both orders, so changing one rule means changing one function.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator

import numpy as np

from minislurm.common.hostlist import compress
from minislurm.job import Allocation
from minislurm.select.cons_tres import select
from minislurm.select.request import ResourceRequest, config_mask
from minislurm.select.table import BoolArray
from minislurm.states import Reason

from . import lifecycle
from .depend import NEVER, OK, evaluate
from .job_mgr import Job
from .preempt import try_preempt
from .state import CtldState

#: ``blocker``'s reasons that ``build_job_queue`` does not set (the schedulers' walks do:
#: QOS limits are tested in ``schedule()`` and ``_attempt_backfill``).
_NOT_IN_BUILD_JOB_QUEUE = frozenset({Reason.QOS_MAX_JOBS_PER_USER, Reason.QOS_MAX_GRES_PER_USER})

#: select_nodes' state_desc when the nodes a job needs are up but reserved.
MAY_BE_RESERVED = "May be reserved for other job"


class SchedView:
    """``SchedulerContext`` over the controller's state.  See the module docstring."""

    def __init__(self, state: CtldState) -> None:
        self.state = state

    @property
    def now(self) -> int:
        return self.state.now

    def pending_in_order(self) -> Iterator[Job]:
        return self.state.pending_in_order()

    def still_pending(self, job: Job) -> bool:
        return self.state.still_pending(job)

    def duration(self, job: Job) -> int:
        return self.state.duration(job)

    def start(self, job: Job, alloc: Allocation, scheduler: str) -> Job:
        return lifecycle.start_job(self.state, job, alloc, scheduler)

    # ---- pending reasons: the rules ----------------------------------------------
    @staticmethod
    def _held(job: Job) -> Reason | None:
        """``-H``/``scontrol hold``/``uhold``: JobHeldAdmin or JobHeldUser."""
        if job.hold is None:
            return None
        return Reason.JOB_HELD_ADMIN if job.hold == "admin" else Reason.JOB_HELD_USER

    def _dependency(self, job: Job) -> Reason | None:
        """``-d``: Dependency while a target is unresolved, DependencyNeverSatisfied."""
        if not job.dependency:
            return None
        status = evaluate(job, self._targets, self._singleton_waits, self.state.now)
        if status == NEVER:
            return Reason.DEPENDENCY_NEVER_SATISFIED
        return None if status == OK else Reason.DEPENDENCY

    def _begin(self, job: Job) -> Reason | None:
        """``--begin`` (or a requeued job's wait): BeginTime until then."""
        if job.begin_time is not None and job.begin_time > self.state.now:
            return Reason.BEGIN_TIME
        return None

    def _reservation(self, job: Job) -> Reason | None:
        """``--reservation``: ReservationDeleted, or Reservation until it starts."""
        if not job.reservation:
            return None
        resv = self.state.reservations_by_name.get(job.reservation)
        if resv is None:
            return Reason.RESERVATION_DELETED
        return None if resv.active(self.state.now) else Reason.RESERVATION

    def _partition_state(self, job: Job) -> Reason | None:
        """PartitionDown / PartitionInactive (``scontrol update PartitionName= State=``)."""
        part = self.state.parts.get(job.partition)
        if part is None or part.state not in ("DOWN", "INACTIVE"):
            return None
        return Reason.PARTITION_DOWN if part.state == "DOWN" else Reason.PARTITION_INACTIVE

    def _array_limit(self, job: Job) -> Reason | None:
        """``--array=...%N``: JobArrayTaskLimit while N tasks run."""
        if job.array_max is None or job.array_job_id is None:
            return None
        if self.state.array_running.get(job.array_job_id, 0) >= job.array_max:
            return Reason.JOB_ARRAY_TASK_LIMIT
        return None

    def _qos_limit(self, job: Job) -> Reason | None:
        """QOS ``MaxJobsPerUser`` / ``MaxTRESPerUser=gres/gpu``."""
        qos = self.state.qos.get(job.qos)
        if qos is None:
            return None
        max_jobs = qos.max_jobs_per_user
        max_gpu = (qos.max_tres_per_user or {}).get("gres/gpu")
        if max_jobs is None and max_gpu is None:
            return None
        use = self.state.user_running.get((job.qos, job.user), [0, 0])
        if max_jobs is not None and use[0] >= max_jobs:
            return Reason.QOS_MAX_JOBS_PER_USER
        if max_gpu is not None and use[1] + job.gpus_total > max_gpu:
            return Reason.QOS_MAX_GRES_PER_USER
        return None

    def _targets(self, job_id: int) -> list[Job]:
        state = self.state
        if job_id in state.array_tasks:
            return state.array_tasks[job_id]
        job = state.find_job(job_id)
        return [job] if job is not None else []

    def _singleton_waits(self, job: Job) -> bool:
        ids = self.state.active_names.get((job.user, job.name), set())
        return any(i < job.job_id for i in ids if i != job.job_id)

    # ---- pending reasons: the two orders -------------------------------------------
    def blocker(self, job: Job) -> Reason | None:
        """Why ``job`` cannot be considered now (None: it can), as the schedulers test:
        held, dependency, begin time, (the job becomes eligible), a partition limit,
        the partition's state, the reservation, the array's task limit, QOS limits.

        Every scheduler pass asks this of every pending job it walks, so the common
        job (not held, no ``-d``) takes the rules inline and calls a rule's function
        only when the job has what that rule reads (``--reservation``, ``%N``, a QOS
        with per-user limits); the answers are the same as the rules'.  The clock is
        read only by the two rules that need it (a ``--begin`` job, a job not yet
        eligible): reading it cost a fifth of a pass over a waiting queue."""
        if job.hold is None and not job.dependency:
            state = self.state
            if job.begin_time is not None and job.begin_time > state.now:
                return Reason.BEGIN_TIME
            if job._eligible_time is None:
                job.eligible_time = state.now
            if job.static_reason is not None:
                return job.static_reason
            part = state.parts.get(job.partition)
            if part is not None and part.state in ("DOWN", "INACTIVE"):
                return Reason.PARTITION_DOWN if part.state == "DOWN" else (
                    Reason.PARTITION_INACTIVE)
            if job.reservation:
                why = self._reservation(job)
                if why:
                    return why
            if job.array_max is not None and job.array_job_id is not None:
                why = self._array_limit(job)
                if why:
                    return why
            qos = state.qos.get(job.qos)
            if qos is None or (qos.max_jobs_per_user is None and not qos.max_tres_per_user):
                return None
            return self._qos_limit(job)
        return self._blocker_by_rules(job)

    def _blocker_by_rules(self, job: Job) -> Reason | None:
        """``blocker`` rule by rule, in the schedulers' order (its reference)."""
        why = self._held(job)
        if why is not None:
            return why
        why = self._dependency(job)
        if why is not None:
            if why is Reason.DEPENDENCY_NEVER_SATISFIED and job.kill_on_invalid_dep:
                state = self.state
                state.env.timeout(0).callbacks.append(
                    lambda _e: lifecycle.cancel_pending(state, job, 0))
            return why
        why = self._begin(job)
        if why is not None:
            return why
        if job._eligible_time is None:  # (the property's getter, inline: every pass)
            job.eligible_time = self.state.now
        if job.static_reason is not None:
            return job.static_reason
        return (self._partition_state(job) or self._reservation(job)
                or self._array_limit(job) or self._qos_limit(job))

    def eligible_at_submit(self, job: Job) -> None:
        """``job_allocate``'s ``job_independent``: a job that may run as it is accepted
        gets its eligible time (``details->begin_time``) then, not at the first pass
        that walks it.  Measured on 22.05.8 (``default_queue_depth=2``, six ``-N1`` jobs
        behind a running ``-N4 --exclusive`` one): every pending job, the deep ones
        too, shows ``EligibleTime`` and ``AccrueTime`` equal to its ``SubmitTime``, and
        the age factor counts from there.  Not for a job held (priority 0), waiting on
        a dependency, a ``--begin`` or a reservation not started, nor for an array:
        ``job_allocate`` skips ``job_independent`` for one (its tasks become eligible
        at the first ``build_job_queue``, the next scheduler pass)."""
        if job.array_job_id is not None or job.hold is not None:
            return
        if not (self._dependency(job) or self._begin(job) or self._reservation(job)):
            job.eligible_time = self.state.now

    def mark_independent(self) -> None:
        """``build_job_queue``'s first walk: ``job_independent`` for *every* pending job,
        not only the ones a pass then tests (``default_queue_depth``,
        ``bf_max_job_test``).  A job deep in the queue becomes eligible at the first
        pass after its dependency is satisfied, its ``--begin`` came, its hold was
        released (an array: the first pass after its submission).  It shows the
        reason that keeps it waiting (Dependency, BeginTime, JobHeldUser, a partition
        limit), None once a BeginTime or Dependency reason no longer holds, and
        otherwise keeps the reason it had.  Measured on 22.05.8
        with ``default_queue_depth=2``: an array behind six jobs shows its submission
        as EligibleTime, a ``--begin=now+4`` job its begin time and reason None after
        the next pass.  Only the jobs queued without an eligible time need the test
        (``CtldState.not_eligible``); the others got it when they were accepted
        (`eligible_at_submit`) or stay eligible."""
        waiting = self.state.not_eligible
        if not waiting:
            return
        pending = self.state.still_pending
        for job_id, job in list(waiting.items()):
            if not pending(job) or job._eligible_time is not None:
                del waiting[job_id]
                continue
            why = self.blocker(job)
            if why is None and job.reason in (Reason.BEGIN_TIME, Reason.DEPENDENCY):
                job.reason = Reason.NONE  # job_independent: "Job is eligible to start now"
            elif why is not None and why not in _NOT_IN_BUILD_JOB_QUEUE and (
                    why is not job.reason):
                job.reason, job.reason_detail = why, ""
            if job._eligible_time is not None:
                del waiting[job_id]

    def submit_reason(self, job: Job) -> Reason:
        """The reason slurmctld gives a job as it accepts it (job_allocate), before any
        scheduler looked at it: squeue right after sbatch shows it (measured on 22.05.8:
        ``-H`` JobHeldUser, then a partition limit (``-N9`` on 4 nodes, ``-t 2:00:00``
        over MaxTime) PartitionConfig (the scheduler then says PartitionNodeLimit or
        PartitionTimeLimit), ``--reservation`` of one not started yet Reservation (even
        with ``--begin`` or ``-d``, which the scheduler then reports instead), ``-d`` on
        a pending job Dependency, ``--begin=now+1hour`` BeginTime; otherwise the job's
        reason as it is).  Only what squeue prints changes: the schedulers set the
        reason again on their next pass (``blocker``)."""
        why = self._held(job)
        if why is not None:
            return why
        if job.static_reason is not None:  # a partition limit: the scheduler says which
            return Reason.PARTITION_CONFIG
        return self._reservation(job) or self._dependency(job) or self._begin(job) or job.reason

    def waiting_reason(self, job: Job) -> Reason:
        """Priority for a job behind a blocked one, unless its ``-w`` nodes are unavailable."""
        req = job.request.req_nodes
        if req and not self.state.table.usable[sorted(req)].all():
            return self._why_not(job)
        job.reason_detail = ""
        return Reason.PRIORITY

    def explain(self, job: Job) -> Reason:
        """Why ``job`` does not fit now, as squeue prints it."""
        return self._why_not(job)

    # ---- where -----------------------------------------------------------------
    def allowed_key(self, job: Job, duration: int) -> tuple[object, ...]:
        """What ``allowed(job, duration)`` depends on during one scheduler pass.

        The partition and the job's reservation; the duration too while advance
        reservations exist (whether one is in the way depends on it).
        """
        if not self.state.reservations_by_name:
            return (job.partition, job.reservation)
        return (job.partition, job.reservation, duration)

    def allowed(self, job: Job, duration: int) -> BoolArray:
        """Partition nodes that accept jobs, minus reservations in the way."""
        state = self.state
        part = state.parts.get(job.partition)
        mask = (part.mask if part is not None else np.ones(len(state.table), np.bool_)).copy()
        mask &= state.table.usable
        now = state.now
        for resv in state.reservations_by_name.values():
            idx = list(resv.nodes)
            if job.reservation == resv.name:
                only = np.zeros_like(mask)
                only[idx] = True
                mask &= only
            elif resv.overlaps(now, now + duration):
                mask[idx] = False
        return mask

    def try_select(self, job: Job, allowed: BoolArray, *, preempt: bool = True
                   ) -> Allocation | Reason:
        """select/cons_tres plus the reason squeue shows when the job does not fit.

        ``preempt``: when the job does not fit, preempt/qos may make room on ``allowed``.
        The main scheduler does; the backfill pass does not (its ``allowed`` is only
        the nodes its map found free, so preempting there would pick other victims
        than Slurm, whose main scheduler makes room at submission on all the job's
        nodes, as measured on 22.05.8 in tests/minislurm/ctld/test_preemption.py).
        """
        res = select(job.request, self.state.table, allowed)
        if isinstance(res, Allocation):
            return res
        preempted = try_preempt(self.state, job, allowed) if preempt else None
        if preempted is not None:
            return preempted
        return self._why_not(job)

    def _why_not(self, job: Job) -> Reason:
        """`_why_not_by_rules`, with its common answer first: no ``-w`` nodes, no
        reservation, every node usable: none of its node rules applies, so
        ``Resources`` (a job of a busy cluster that waits its turn; the rules take a
        dozen vector operations, on every job a pass could not start)."""
        if (not job.request.req_nodes and not self.state.reservations_by_name
                and self.state.table.usable.all()):
            job.reason_detail = ""
            return Reason.RESOURCES
        return self._why_not_by_rules(job)

    def _why_not_by_rules(self, job: Job) -> Reason:
        """The reason of a job that does not fit now, as 22.05.8's select_nodes gives it
        (measured on the reference cluster, tests/minislurm/ctld/reservations/test_resv_reasons.py):

        * a ``-w`` node DOWN/DRAINED: ``ReqNodeNotAvail, UnavailableNodes:<down nodes>``;
          a ``-w`` node in another reservation: ``ReqNodeNotAvail, May be reserved for
          other job``;
        * fewer usable nodes than ``-N`` once down nodes and other reservations are left
          out: ``Nodes required for job are DOWN, DRAINED or reserved for jobs in higher
          priority partitions``;
        * the job would not fit on those nodes even if they were idle (``-n13`` with one
          of four 4-CPU nodes reserved or drained): ``ReqNodeNotAvail,
          UnavailableNodes:<down and reserved nodes>`` when a node is down, else ``...,
          May be reserved for other job``;
        * otherwise ``Resources``.
        """
        table = self.state.table
        part = self.state.parts.get(job.partition)
        pmask = part.mask if part is not None else np.ones(len(table), np.bool_)
        down = pmask & ~table.usable
        req = job.request
        if req.req_nodes and (~table.usable[list(req.req_nodes)]).any():
            job.reason_detail = "UnavailableNodes:" + compress(
                [table.names[i] for i in np.flatnonzero(down)])
            return Reason.REQ_NODE_NOT_AVAIL
        reserved = self._reserved_for_others(job) & pmask
        if req.req_nodes and reserved[list(req.req_nodes)].any():
            job.reason_detail = MAY_BE_RESERVED
            return Reason.REQ_NODE_NOT_AVAIL
        job.reason_detail = ""
        avail = pmask & table.usable & ~reserved
        if req.exc_nodes:
            avail[list(req.exc_nodes)] = False
        fits = avail if req.spread else avail & config_mask(req, table)
        if (down.any() or reserved.any()) and int(fits.sum()) < req.node_count:
            return Reason.NODES_DOWN_DRAINED
        if (down.any() or reserved.any()) and not job.reservation and not isinstance(
            select(req, self.state.idle_table(), avail), Allocation
        ):
            if down.any():
                job.reason_detail = "UnavailableNodes:" + compress(
                    [table.names[i] for i in np.flatnonzero(down | reserved)])
            else:
                job.reason_detail = MAY_BE_RESERVED
            return Reason.REQ_NODE_NOT_AVAIL
        return Reason.RESOURCES

    def _reserved_for_others(self, job: Job) -> BoolArray:
        """Nodes of the reservations (other than the job's) in the job's way now."""
        state = self.state
        mask = np.zeros(len(state.table), np.bool_)
        now, end = state.now, state.now + state.duration(job)
        for resv in state.reservations_by_name.values():
            if job.reservation != resv.name and resv.overlaps(now, end):
                mask[list(resv.nodes)] = True
        return mask

    # ---- when ------------------------------------------------------------------
    def earliest_start(self, req: ResourceRequest, allowed: BoolArray
                       ) -> tuple[int, Allocation] | None:
        """(start, allocation) of ``req`` on ``allowed``: now, or when enough running
        jobs have ended (select/cons_tres's ``_will_run_test``: the running jobs are
        taken away one by one in the order their limits end, select is tried again after
        each; no pending job's reservation counts).  None: it fits nowhere."""
        state = self.state
        res = select(req, state.table, allowed)
        if isinstance(res, Allocation):
            return state.now, res
        ending = sorted(
            (j.start_time + state.duration(j), j.job_id, j.allocation)
            for j in state.running_jobs()
            if j.allocation is not None and j.start_time is not None
            and j.time_limit is not None and j.time_limit >= 0
        )  # fmt: skip
        if not ending:
            return None
        table = copy.deepcopy(state.table)
        for end, _job_id, alloc in ending:
            table.release(alloc)
            res = select(req, table, allowed)
            if isinstance(res, Allocation):
                return max(end, state.now), res
        return None


__all__ = ["MAY_BE_RESERVED", "SchedView"]
