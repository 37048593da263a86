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

from collections.abc import Callable, Iterable
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


class SelectMemo:
    """The main scheduler's failed selects, answered again while nothing they read changed.

    A job that could not start (select said no, with the reason squeue shows) gets the
    same answer from the next pass if the job, its request, its allowed nodes and
    everything select and the reason read are the same: a queue whose head waits is
    tested again at every submission, on an unchanged machine.  ``fingerprint`` gives
    that "everything" (the node table's free and configured resources, node states,
    partitions) as bytes; the controller passes a memo only when nothing else decides
    (no advance reservation: ``ctld.loops.run_main``), and ``may_preempt(job)`` says
    which jobs' selects also depend on the running jobs (preempt/qos: a QOS that
    preempts others), whose answers are never kept.  Only failures
    are kept, and only those of the current fingerprint: a start, or a pass that finds
    the fingerprint changed, forgets them.
    """

    def __init__(self, fingerprint: Callable[[], bytes],
                 may_preempt: Callable[[Any], bool] | None = None) -> None:  # fmt: skip
        self._fingerprint = fingerprint
        self._may_preempt = may_preempt
        self._fp: bytes | None = None  # taken in this pass since the last change
        self._fails_fp = b""  # the fingerprint the kept failures belong to
        self._fails: dict[int, tuple[Any, object, bytes, Reason, str]] = {}
        self.hits = 0

    def begin(self) -> None:
        """A new pass: the state may have changed since the last one."""
        self._fp = None

    def changed(self) -> None:
        """A job started: the nodes changed."""
        self._fp = None

    def _current(self) -> None:
        if self._fp is None:
            fp = self._fingerprint()
            if fp != self._fails_fp:
                self._fails.clear()
                self._fails_fp = fp
            self._fp = fp

    def failed(self, job: Any, allowed: BoolArray) -> Reason | None:
        """The reason select gave ``job`` on these nodes in this state, or None."""
        if self._may_preempt is not None and self._may_preempt(job):
            self._fp = None  # its select may preempt: look at the state again after it
            return None  # and its answer depends on the running jobs it may preempt
        if not self._fails:  # nothing kept: no need to read the state (remember will)
            return None
        self._current()
        hit = self._fails.get(id(job))
        if hit is None or hit[0] is not job or hit[1] != _asked(job) or (
            hit[2] != allowed.tobytes()
        ):
            return None
        job.reason_detail = hit[4]  # what _why_not set with the reason
        self.hits += 1
        return hit[3]

    def remember(self, job: Any, allowed: BoolArray, reason: Reason) -> None:
        """``job`` does not fit ``allowed`` now, for ``reason``."""
        if self._may_preempt is not None and self._may_preempt(job):
            return
        self._current()
        self._fails[id(job)] = (job, _asked(job), allowed.tobytes(), reason,
                                job.reason_detail)


def _asked(job: Any) -> tuple[Any, str, str]:
    """What a job asked select for, as a memoised failure remembers it: its request,
    partition and reservation (a change of any of them, ``scontrol update``, forgets it)."""
    return (job.request, job.partition, job.reservation)


def main_pass(
    ctx: SchedulerContext, *, policy: str = "slurm", depth: int | None = None,
    memo: SelectMemo | None = None,
) -> int:
    """One pass of the main scheduler; returns how many jobs started.

    ``memo``: failed selects of earlier passes, valid while nothing they read changed
    (``SelectMemo``): the same decisions, without selecting again."""
    if memo is not None:
        memo.begin()
    started = 0
    tested = 0
    blocked: set[str] = set()
    limit = DEFAULT_QUEUE_DEPTH if depth is None else depth
    fifo = policy == "fifo"
    blocker, waiting_reason = ctx.blocker, ctx.waiting_reason  # asked of every job walked
    for job in ctx.pending_in_order():
        if tested >= limit:
            break
        job.scheduler = ""  # build_job_queue: "Remove backfill flag" (Scheduler=Main)
        why = blocker(job)
        if why is not None:
            job.reason, job.reason_detail = why, job.reason_detail if _keeps(why) else ""
            continue
        tested += 1  # job_depth counts the jobs of blocked partitions too (below)
        if blocked and (fifo or job.partition in blocked):
            job.reason = waiting_reason(job)
            continue
        job.last_sched_eval = ctx.now
        while True:
            allowed = ctx.allowed(job, ctx.duration(job))
            known = memo.failed(job, allowed) if memo is not None else None
            res: Allocation | Reason
            if known is not None:
                res = known
            else:
                res = ctx.try_select(job, allowed)
                if memo is not None and not isinstance(res, Allocation):
                    memo.remember(job, allowed, res)
            if isinstance(res, Allocation):
                ctx.start(job, res, "Main")
                started += 1
                if memo is not None:
                    memo.changed()
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


__all__ = ["DEFAULT_QUEUE_DEPTH", "SchedJob", "SchedulerContext", "SelectMemo", "main_pass"]
