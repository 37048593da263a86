"""The main scheduler (``SchedulerType=sched/builtin``; ``schedule()`` in job_scheduler.c).

Runs when something happens (a job is submitted or ends): walks pending jobs in
priority order, at most ``default_queue_depth`` of them, and starts each one
that fits *now*. As in ``_schedule()``, the depth counts every job that gets
past the runnable checks (hold, dependency, begin time), including those skipped
because their partition is already blocked (``job_depth++ > def_job_limit``
comes before ``_failed_partition``), so a deep queue costs a pass no more than
the depth. Once a job of a partition cannot start, lower-priority jobs of that
partition are not started by this pass (their reason is ``Priority``; the
blocked job's is ``Resources``), so the main scheduler never jumps the queue:
only sched/backfill may start a lower-priority job, and only where it delays no
reservation. With ``policy='fifo'`` one blocked job blocks every partition
(strict first come, first served: the teaching baseline).

Like ``build_job_queue``, the pass clears the backfill mark of the pending jobs it
walks (``bit_flags &= ~BACKFILL_SCHED``; sched/backfill sets it again on the jobs it
tests): ``scontrol show job`` says ``Scheduler=Main`` until the next backfill pass
(measured on 22.05.8, see ``cli/format/scontrol.py``).  Jobs beyond
``default_queue_depth`` keep theirs, where slurmctld clears every pending job's.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from minislurm.job import Allocation
from minislurm.select.table import BoolArray
from minislurm.states import Reason

#: ``SchedulerParameters=default_queue_depth`` (jobs tested per main pass).
DEFAULT_QUEUE_DEPTH = 100


class SchedJob(Protocol):
    """What the schedulers read and write of a job (``ctld.job_mgr.Job``)."""

    job_id: int
    partition: str
    priority: int
    reason: object
    reason_detail: str
    est_start: int | None
    last_sched_eval: int | None
    scheduler: str
    sched_nodes: str | None


class SchedulerContext(Protocol):
    """The controller as the schedulers see it."""

    @property
    def now(self) -> int:
        """The clock (epoch seconds)."""
        ...

    def pending_in_order(self) -> Iterable[Any]:
        """Pending jobs, highest priority first (array meta records once)."""
        ...

    def blocker(self, job: Any) -> Reason | None:
        """Why the job may not be considered at all (hold, dependency, begin, limits)."""
        ...

    def allowed(self, job: Any, duration: int) -> BoolArray:
        """Nodes the job may use for ``duration`` seconds from now (partition, state, resv)."""
        ...

    def try_select(self, job: Any, allowed: BoolArray, *, preempt: bool = True
                   ) -> Allocation | Reason:
        """select/cons_tres on the allowed nodes, with the reason squeue should show
        (``preempt``: may preempt lower QOS jobs to make room)."""
        ...

    def start(self, job: Any, alloc: Allocation, scheduler: str) -> Any:
        """Start the job (an array meta record starts one task); returns the started job."""
        ...

    def still_pending(self, job: Any) -> bool:
        """True if the record is still pending (an array with tasks left)."""
        ...

    def waiting_reason(self, job: Any) -> Reason:
        """The reason of a job behind a blocked one: Priority, unless its -w nodes are gone."""
        ...

    def explain(self, job: Any) -> Reason:
        """Why the job does not fit (Resources, ReqNodeNotAvail, nodes DOWN/DRAINED...)."""
        ...

    def duration(self, job: Any) -> int:
        """Seconds the job will hold its nodes at most (its time limit)."""
        ...


def main_pass(ctx: SchedulerContext, *, policy: str = "slurm", depth: int | None = None) -> int:
    """One pass of the main scheduler; returns how many jobs started."""
    started = 0
    tested = 0
    blocked: set[str] = set()
    limit = DEFAULT_QUEUE_DEPTH if depth is None else depth
    for job in ctx.pending_in_order():
        if tested >= limit:
            break
        job.scheduler = ""  # build_job_queue: "Remove backfill flag" (Scheduler=Main)
        why = ctx.blocker(job)
        if why is not None:
            job.reason, job.reason_detail = why, job.reason_detail if _keeps(why) else ""
            continue
        tested += 1  # job_depth counts the jobs of blocked partitions too (below)
        if job.partition in blocked or (policy == "fifo" and blocked):
            job.reason = ctx.waiting_reason(job)
            continue
        job.last_sched_eval = ctx.now
        while True:
            res = ctx.try_select(job, ctx.allowed(job, ctx.duration(job)))
            if isinstance(res, Allocation):
                ctx.start(job, res, "Main")
                started += 1
                if ctx.still_pending(job):
                    why = ctx.blocker(job)
                    if why is None:
                        continue
                    job.reason = why
                break
            job.reason = res
            blocked.add(job.partition)
            break
    return started


def _keeps(reason: Reason) -> bool:
    """Reasons whose detail text stays with them (``ReqNodeNotAvail, UnavailableNodes:n4``)."""
    return reason is Reason.REQ_NODE_NOT_AVAIL


__all__ = ["DEFAULT_QUEUE_DEPTH", "SchedJob", "SchedulerContext", "main_pass"]
