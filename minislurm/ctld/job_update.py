"""``scontrol update JobId=...``: slurmctld's ``update_job`` (``job_mgr.c`` ``_update_job``).

The fields minislurm models, with Slurm 22.05's rules:

* ``TimeLimit=``: any job not yet ended; only an operator (uid 0) may raise it, a
  user may lower it (``Access/permission denied``).  A running job's end moves
  with it (``end_time -= old limit; end_time += new limit``, but not before now)
  and it ends TIMEOUT at the first periodic check at or after that end.
* ``Partition=``: pending jobs only (``Job is no longer pending execution``);
  ``Invalid partition name specified`` for an unknown one.
* ``NumNodes=``: pending jobs only; the partition limits apply again.
* ``Nice=``: any job not yet ended; only an operator may lower it.  Under
  priority/basic the priority moves by the difference (never below 2).
* ``StartTime=`` (the job's BeginTime): pending jobs only; a time in the past
  means now, so ``StartTime=now`` lets a requeued job start at once.

Only the job's owner or an operator (uid 0) may update a job.  Errors carry
slurm_strerror's text plus `` for job ID``, as scontrol prints them.
"""

from __future__ import annotations

import dataclasses

from minislurm.common.timespec import UINT32, time_limit_secs
from minislurm.errors import Errno, SlurmError
from minislurm.states import JobState, Reason

from . import lifecycle
from .job_mgr import Job
from .state import CtldState

INVALID_JOB_ID = Errno.ESLURM_INVALID_JOB_ID
JOB_FINISHED = Errno.ESLURM_ALREADY_DONE
NOT_PENDING = Errno.ESLURM_JOB_NOT_PENDING
ACCESS_DENIED = Errno.ESLURM_ACCESS_DENIED
INVALID_PARTITION = Errno.ESLURM_INVALID_PARTITION_NAME
INVALID_TIME_LIMIT = Errno.ESLURM_INVALID_TIME_LIMIT
NODE_COUNT = Errno.ESLURM_INVALID_NODE_COUNT

#: Keep the current value (scontrol sent no such field): ``NO_VAL``.
UNCHANGED = object()

#: The pending reasons ``update_job`` recomputes from the partition's limits.
_PART_REASONS = (Reason.PARTITION_TIME_LIMIT, Reason.PARTITION_NODE_LIMIT)


def update_job(
    ctl: CtldState,
    job_id: int,
    *,
    uid: int = 0,
    time_limit: int | object | None = UNCHANGED,
    partition: str | None = None,
    num_nodes: int | None = None,
    nice: int | None = None,
    start_time: int | None = None,
) -> None:
    """``scontrol update JobId=ID TimeLimit= Partition= NumNodes= Nice= StartTime=``.

    ``time_limit`` is in minutes (``None``: UNLIMITED); ``start_time`` an epoch
    timestamp.  Raises ``SlurmError`` with Slurm's text; nothing changes then.
    """
    job = ctl.find_job(job_id)
    if job is None:
        raise SlurmError(f"{INVALID_JOB_ID} for job {job_id}", 1)
    ended = job.state.is_terminal or job.state is JobState.COMPLETING

    def fail(text: str) -> SlurmError:
        return SlurmError(f"{text} for job {job_id}", 1)

    pending = job.state is JobState.PENDING
    privileged = uid == 0
    if not privileged and uid != job.uid:
        raise fail(ACCESS_DENIED)  # only the owner or an operator
    # ---- validate everything first: a refused update changes nothing ----------
    if time_limit is not UNCHANGED:
        if ended:
            raise fail(JOB_FINISHED)
        new_limit = time_limit if isinstance(time_limit, int) else None
        if not privileged and _minutes(new_limit) > _minutes(job.time_limit):
            raise fail(ACCESS_DENIED)
    if partition is not None:
        if ended or not pending:
            raise fail(JOB_FINISHED if ended else NOT_PENDING)
        if partition not in ctl.parts:
            raise fail(INVALID_PARTITION)
    if num_nodes is not None:
        if ended or not pending:
            raise fail(JOB_FINISHED if ended else NOT_PENDING)
        if num_nodes < 1:
            raise fail(NODE_COUNT)
    if nice is not None:
        if ended:
            raise fail(JOB_FINISHED)
        if not privileged and nice < job.nice:
            raise fail(ACCESS_DENIED)
    if start_time is not None and (ended or not pending):
        raise fail(JOB_FINISHED if ended else NOT_PENDING)
    # ---- apply -----------------------------------------------------------------
    if time_limit is not UNCHANGED:
        _set_time_limit(ctl, job, time_limit if isinstance(time_limit, int) else None)
    if partition is not None:
        job.partition = partition
        job.billing_weights = ctl.part_cfg[partition].billing_weights
    if num_nodes is not None:
        job.num_nodes = num_nodes
        job.max_nodes = num_nodes
        job.num_tasks = max(job.num_tasks, num_nodes)
        job.num_cpus = max(job.num_cpus, num_nodes)
        job.request = dataclasses.replace(
            job.request, min_nodes=num_nodes, max_nodes=num_nodes, spread=False,
            ntasks=max(job.request.ntasks, num_nodes))
    if pending and (partition is not None or num_nodes is not None
                    or time_limit is not UNCHANGED):
        _recheck_partition_limits(ctl, job)
    if nice is not None and nice != job.nice:
        _set_nice(ctl, job, nice)
    if start_time is not None:
        job.begin_time = max(start_time, ctl.now)
        ctl.wake_at(job.begin_time)
    if pending:
        ctl.queue.resort()
    ctl.kick()


def _minutes(limit: int | None) -> int:
    """A limit for comparisons: UNLIMITED counts as larger than any other."""
    return 1 << 62 if limit is None else limit


def _set_time_limit(ctl: CtldState, job: Job, limit: int | None) -> None:
    """A new limit; a running job gets a new end and periodic check (``arm_time_limit``).

    ``_update_job`` moves ``end_time`` by the change (``end_time += (new - old) * 60``,
    UNLIMITED counting as a year; raised to UNLIMITED: ``now`` + a year), and never
    before now; ``job_time_limit`` then times the job out at the first periodic check
    (every 30 s from slurmctld's start) at or after that.  Measured on 22.05.8 (checks
    at :14 and :44, jobs started 19:51:41, updated 15 s later): ``--time=1`` raised to
    2 -> TIMEOUT 19:53:44; ``--time=3`` lowered to 1 -> TIMEOUT 19:52:44; ``--time=2``
    lowered to 1 after 70 s -> EndTime=19:52:51 (the update), TIMEOUT at the next check,
    19:53:14; raised to UNLIMITED -> never.  Again (checks at :19 and :49): ``--time=3``
    lowered to 1 at 23:06:47 after 75 s -> scontrol ``TimeLimit=00:01:00
    EndTime=23:06:47``, squeue ``%L`` INVALID and ``%e`` 23:06:47, sacct End Unknown;
    TIMEOUT (Reason=TimeLimit) at 23:06:49, sacct End 23:06:49 Elapsed 00:01:17.  An
    identical limit changes nothing.
    """
    if limit == job.time_limit:
        return
    old = job.time_limit
    job.time_limit = limit
    if job.state is JobState.RUNNING and job.start_time is not None:
        now = ctl.now
        if limit is None:
            end = now + _YEAR_MINUTES * 60
        else:
            was = job.limit_end
            if was is None:
                was = job.start_time + (_YEAR_MINUTES * 60 if old is None
                                        else time_limit_secs(old))
            end = was + (_uint32_minutes(limit) - _uint32_minutes(old)) * 60
        job.limit_end = max(end, now)
        lifecycle.arm_time_limit(ctl, job)
        lifecycle.arm_warning(ctl, job)  # --signal follows the new end (measured)


#: ``YEAR_MINUTES``: what ``_update_job`` counts an UNLIMITED (``INFINITE``) limit as.
_YEAR_MINUTES = 365 * 24 * 60


def _uint32_minutes(limit: int | None) -> int:
    """A stored limit as ``_update_job`` subtracts it (``uint32_t``; INFINITE: a year)."""
    return _YEAR_MINUTES if limit is None else limit % UINT32


def _recheck_partition_limits(ctl: CtldState, job: Job) -> None:
    """PartitionTimeLimit / PartitionNodeLimit of a pending job, after its update."""
    part = ctl.parts[job.partition]
    if job.static_reason is not None and job.static_reason not in _PART_REASONS:
        return  # PartitionConfig and the like stay
    reason: Reason | None = None
    if part.over_time(job.time_limit):
        reason = Reason.PARTITION_TIME_LIMIT
    if part.outside_nodes(job.num_nodes):
        reason = reason or Reason.PARTITION_NODE_LIMIT
    job.static_reason = reason
    if reason is None and job.reason in _PART_REASONS:
        job.reason = Reason.NONE


def _set_nice(ctl: CtldState, job: Job, nice: int) -> None:
    """``Nice=``: the priority plugin moves the priority (``PriorityPlugin.renice``:
    priority/basic by the difference, at least 2) or computes it again."""
    old = job.nice
    job.nice = nice
    ctl.queue.renice(job, old, ctl.now)


__all__ = ["UNCHANGED", "update_job"]
