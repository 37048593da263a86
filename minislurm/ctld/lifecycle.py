"""Running jobs: start, end, time limit, kill, requeue, node failure, preemption.

The state machine of a job attempt (Slurm 22.05 names)::

    PENDING -> RUNNING -> COMPLETED | FAILED (exit code != 0)
                       -> COMPLETING -> TIMEOUT    (time limit: SIGTERM, SIGKILL after KillWait)
                       -> COMPLETING -> CANCELLED  (scancel)
                       -> NODE_FAIL  (a node died; a requeue-able batch job goes back to
                                      PENDING with restart_count + 1 and
                                      BeginTime = now + requeue delay + 1 = 121 s)
                       -> PREEMPTED  (PreemptMode=CANCEL; REQUEUE puts it back to PENDING)

Everything is event driven: a job's end is a SimPy event from the ``JobRunner``;
nothing ticks every second.  Time limits are enforced the way slurmctld does it: its
background thread runs ``job_time_limit()`` every ``PERIODIC_TIMEOUT`` (30) seconds
counted from the daemon's start, and a job whose ``start + TimeLimit`` (plus
``OverTimeLimit``) has passed is timed out *at that check*.  So a 1-minute job
started 10 s after a check ends TIMEOUT ~80 s after its start, not at 60 s (measured
on 22.05.8: starts 21:21:07.8 and 21:21:14.8 with ``--time=1`` both ended at the
check of 21:22:29.98).  Only the one check that matters is scheduled (a timeout at
that instant), so the simulated clock stays deterministic and idle otherwise.  Each
attempt has a number so that events of an attempt that was killed are ignored.
"""

from __future__ import annotations

import weakref
from dataclasses import replace
from typing import SupportsInt

from minislurm.common.hostlist import compress, expand
from minislurm.common.timespec import is_negative_limit, time_limit_secs
from minislurm.job import Allocation
from minislurm.states import LAUNCH_FAILED_STATUS, JobState, Reason

from .accounting import batch_step
from .job_mgr import Job
from .runner import (
    SIGKILL,
    SIGTERM,
    NodeLossRunner,
    SignalsSteps,
    SimulatedRunner,
    WarnsBatch,
)
from .sim_steps import arm_steps, end_steps
from .state import CtldState

#: Seconds a requeued job waits (job_mgr.c: begin_time = now + cred_expire + 1).
REQUEUE_DELAY = 120

#: slurmctld.h ``PERIODIC_TIMEOUT``: seconds between two ``job_time_limit()`` runs.
PERIODIC_TIMEOUT = 30


def limit_check_phase(ctl: CtldState) -> int:
    """When slurmctld's periodic checks are counted from (its start), epoch seconds.

    ``_slurmctld_background`` sets ``last_timelimit_time = now`` when it starts and runs
    ``job_time_limit()`` whenever ``now - last_timelimit_time >= PERIODIC_TIMEOUT``, so
    the checks fall on (whole) seconds ``start + 30k`` (measured on 22.05.8: a daemon
    started at 19:50:13 checked at 19:52:44, 19:53:14, 19:53:44).  The start is the
    controller's ``started_at``: the wall-clock environment's start, or the epoch time
    of SimPy time 0 (the start of a simulated cluster).
    """
    return ctl.started_at


def next_limit_check(ctl: CtldState, deadline: int) -> int:
    """The first periodic check at or after ``deadline`` (and not before now).

    ``job_time_limit`` times a job out when ``end_time <= now - OverTimeLimit*60``;
    ``deadline`` is that ``end_time + OverTimeLimit*60``.
    """
    phase = limit_check_phase(ctl)
    due = max(deadline, ctl.now)
    k = -(-(due - phase) // PERIODIC_TIMEOUT)
    return phase + k * PERIODIC_TIMEOUT


def running_end(job: Job) -> int | None:
    """slurmctld's ``end_time`` of a running job (None: not started, or UNLIMITED).

    ``start + TimeLimit * 60`` (``job_end_time_reset``, the product in ``uint32_t``),
    unless ``scontrol update TimeLimit=`` moved it since (``job.limit_end``, never
    before the update: a limit lowered below the time used ends the job now).
    ``start + exact_limit`` for a job with a limit to the second (simulate's textbook
    EASY; ``arm_time_limit`` then times it out at that second, not at a periodic check).
    """
    limit = job.time_limit
    if limit is None or job.start_time is None:
        return None
    if job.limit_end is not None:
        return job.limit_end
    if job.exact_limit is not None:  # simulate's textbook EASY: the limit to the second
        return job.start_time + job.exact_limit
    return job.start_time + time_limit_secs(limit)


def limit_deadline(ctl: CtldState, job: Job) -> int | None:
    """``end_time + OverTimeLimit`` of a running job (None: never times out).

    ``end_time`` is `running_end`.  UNLIMITED never times out, nor does a limit that
    was negative on the command line (``--time=-5``: stored as ``2**32 - 7199``
    minutes, its end 136 years on; measured running on 22.05.8 in a partition without
    MaxTime).
    """
    end = running_end(job)
    if end is None or is_negative_limit(job.time_limit):
        return None
    over = ctl.config.over_time_limit or 0
    return end + over * 60


def arm_time_limit(ctl: CtldState, job: Job) -> None:
    """Schedule the periodic check that will see ``job`` over its limit (if any).

    Called when the job starts, when a recovered controller re-adopts it, and when
    ``scontrol update TimeLimit=`` changes its limit (job_update.py): the job then ends
    TIMEOUT at the first check at or after its new end (`running_end`), which is the
    update's own time when the new limit is already used up (``_update_job`` sets
    ``end_time = now`` then; plus ``OverTimeLimit`` in both cases).  A check that finds
    the limit moved later (or UNLIMITED) does nothing.  The check fires at
    the epoch second it stands for (``ctl.at``), also on the wall clock.
    """
    deadline = limit_deadline(ctl, job)
    if deadline is None:
        return
    attempt = job.attempt
    # a limit to the second (``exact_limit``: the textbook's) is enforced at that second
    at = deadline if job.exact_limit is not None else next_limit_check(ctl, deadline)
    delay = max(ctl.at(at) - ctl.env.now, 0)
    ctl.env.timeout(delay).callbacks.append(lambda _ev: time_limit(ctl, job, attempt))


def start_job(ctl: CtldState, job: Job, alloc: Allocation, scheduler: str) -> Job:
    """Start ``job`` (an array meta record splits off its next task) on ``alloc``."""
    now = ctl.now
    if job.is_array_meta:
        last = len(job.array_pending) == 1
        task = job.split_task(None if last else ctl.next_job_id())
        if not last:
            ctl.register(task)
        else:
            ctl.pending_done(job)
        job = task
    else:
        ctl.pending_done(job)
    job.state = JobState.RUNNING
    job.reason, job.reason_detail = Reason.NONE, ""
    job.start_time = now
    job.est_start = None
    job.end_time = job.limit_end = None
    job.allocation = alloc
    job.scheduler = scheduler
    job.sched_nodes = None
    job.last_sched_eval = now
    job.preempt_time = None
    job.unrecorded = False
    job.resize_time = job.nodes_before_resize = None
    job.resized_steps = frozenset()
    # PreemptEligibleTime= (scontrol): shown for a started job while preemption is on
    job.preemptable_time = now if ctl.preemption_enabled else None
    if job.eligible_time is None:
        job.eligible_time = now
    ctl.nodes_mgr.allocate(job.job_id, alloc, now)
    ctl.running_started(job)
    job.attempt = job.attempt + 1
    attempt = job.attempt
    done = ctl.runner.start(job, alloc, job.body)
    done.callbacks.append(lambda ev: body_ended(ctl, job, attempt, ev.value))
    if isinstance(ctl.runner, SimulatedRunner):
        arm_steps(ctl, job, attempt)  # the script's srun lines as steps .0, .1, ...
    arm_time_limit(ctl, job)
    arm_warning(ctl, job)
    return job


#: ``WARN_SENT``: the attempt of each job whose ``--signal`` was sent (once per attempt).
_WARNED: weakref.WeakKeyDictionary[Job, int] = weakref.WeakKeyDictionary()


def _warning_due(ctl: CtldState, job: Job, before: int) -> int | None:
    """When ``job_time_limit`` sends the ``--signal`` warning: at the first periodic check
    where ``now + warn_time + PERIODIC_TIMEOUT >= end_time`` (sbatch(1): "up to 60
    seconds earlier than specified"; measured: ``--time=2 --signal=B:USR1@60`` -> 48 s
    after start).  None when the job never times out."""
    deadline = limit_deadline(ctl, job)
    end = running_end(job)
    if deadline is None or end is None:
        return None
    return next_limit_check(ctl, end - before - PERIODIC_TIMEOUT)


def arm_warning(ctl: CtldState, job: Job) -> None:
    """Schedule the check that sends ``--signal=[B:]SIG@TIME`` (if any, not yet sent).

    Called when the job starts and when ``scontrol update TimeLimit=`` moves its end:
    the check compares with the current end, so the warning follows the new limit.
    Measured on 22.05.8 (``--signal=B:USR1@60``, checks at :15 and :45, jobs started
    20:14:10, updated 5 s later): ``--time=3`` lowered to 2 -> USR1 at 20:14:45 (as
    an unchanged ``--time=2``); ``--time=2`` raised to 4 -> USR1 at 20:16:45, not at
    20:14:45; each job warned once.
    """
    if job.signal_spec is None or _WARNED.get(job) == job.attempt:
        return
    sig, before = job.signal_spec
    at = _warning_due(ctl, job, before)
    if at is None:
        return
    attempt = job.attempt
    delay = max(ctl.at(at) - ctl.env.now, 0)
    ctl.env.timeout(delay).callbacks.append(lambda _ev: _signal(ctl, job, attempt, sig))


def _signal(ctl: CtldState, job: Job, attempt: int, sig: int) -> None:
    """``--signal=[B:]SIG@TIME``: deliver SIG shortly before the time limit.

    Only if it is still due for the job's current limit (a raised limit leaves an
    earlier check with nothing to do) and was not sent yet in this attempt.  A runner
    with real processes routes it (``warn_signal``: ``B:`` to the batch shell alone,
    otherwise to every srun step); the simulated runner logs it.
    """
    if job.attempt != attempt or job.state is not JobState.RUNNING:
        return
    before = job.signal_spec[1] if job.signal_spec is not None else 0
    due = _warning_due(ctl, job, before)
    if due is None or due > ctl.now or _WARNED.get(job) == attempt:
        return
    _WARNED[job] = attempt
    warn(ctl, job.job_id, sig)


def warn(ctl: CtldState, job_id: int, sig: int) -> None:
    """Send the ``--signal`` warning: routed by a runner that can (``WarnsBatch``: ``B:``
    to the batch shell alone, otherwise to every srun step); the simulated runner logs
    it as a signal to the job."""
    if isinstance(ctl.runner, WarnsBatch):
        ctl.runner.warn_signal(job_id, sig)
    else:
        ctl.runner.kill(job_id, sig)


def _exit_code(value: object) -> int:
    """A runner's plain exit status (an ``int``, or anything ``int()`` reads)."""
    if isinstance(value, SupportsInt | str | bytes):
        return int(value)
    raise TypeError(f"a job body ended with {value!r}, not an exit status")


def body_ended(ctl: CtldState, job: Job, attempt: int, value: object) -> None:
    """The runner reports the batch script's exit: finish the attempt."""
    if job.attempt != attempt or job.state.is_terminal or job.state is JobState.PENDING:
        return
    code, sig = value if isinstance(value, tuple) else (_exit_code(value), 0)
    if job.state is JobState.COMPLETING:
        completed(ctl, job, sig)
        return
    if code == 0 and sig == 0:
        finish(ctl, job, JobState.COMPLETED, 0, 0)
    elif code == 0 and sig == LAUNCH_FAILED_STATUS:  # slurmstepd could not open -o/-e/-i
        finish(ctl, job, JobState.FAILED, code, sig)
        job.reason = Reason.JOB_LAUNCH_FAILURE
    else:
        finish(ctl, job, JobState.FAILED, code, sig)
        job.reason = Reason.NON_ZERO_EXIT_CODE


def time_limit(ctl: CtldState, job: Job, attempt: int) -> None:
    """A periodic check (``job_time_limit``) is due: run it once this instant's events are done.

    A job whose body ends at the very instant of the check has COMPLETED (or FAILED)
    before the check sees it overrun: the check is deferred behind the body's end
    reported at the same instant.
    """
    if job.attempt != attempt or job.state is not JobState.RUNNING:
        return
    ctl.env.timeout(0).callbacks.append(lambda _ev: _enforce_limit(ctl, job, attempt))


def _enforce_limit(ctl: CtldState, job: Job, attempt: int) -> None:
    """TIMEOUT, SIGTERM now, SIGKILL after KillWait (if the limit still holds)."""
    if job.attempt != attempt or job.state is not JobState.RUNNING:
        return
    deadline = limit_deadline(ctl, job)
    if deadline is None:
        return  # raised to UNLIMITED (scontrol update TimeLimit=)
    if deadline > ctl.now:
        return  # raised meanwhile: a later check is scheduled
    terminate(ctl, job, JobState.TIMEOUT, 0, SIGTERM)
    job.reason = Reason.TIME_LIMIT


def terminate(ctl: CtldState, job: Job, final: JobState, code: int, sig: int, *,
              latency: float = 0.0) -> None:
    """Kill a running attempt: COMPLETING until the body is gone (at most KillWait).

    ``latency``: seconds before the SIGTERM goes out (slurmctld's agent signals the
    job after answering the request that asked for it).
    """
    job.state = JobState.COMPLETING
    job.final_state = final
    job.exit_code, job.signal = code, sig
    job.end_time = ctl.now
    attempt = job.attempt

    def force(_ev: object) -> None:
        if job.attempt == attempt and job.state is JobState.COMPLETING:
            ctl.runner.kill(job.job_id, SIGKILL)
            if job.state is JobState.COMPLETING and job.attempt == attempt:
                completed(ctl, job, SIGKILL)

    def deliver(_ev: object = None) -> None:
        if job.attempt != attempt or job.state is not JobState.COMPLETING:
            return
        ctl.runner.kill(job.job_id, SIGTERM)
        if job.state is JobState.COMPLETING and job.attempt == attempt:
            ctl.env.timeout(max(ctl.kill_wait, 0)).callbacks.append(force)

    if latency > 0:
        ctl.env.timeout(latency).callbacks.append(deliver)
    else:
        deliver()


def finish(ctl: CtldState, job: Job, state: JobState, code: int, sig: int) -> None:
    """The attempt is over: record it, free its nodes, wake the scheduler."""
    now = ctl.now
    job.state = state
    job.exit_code, job.signal = code, sig
    if job.end_time is None or state in (JobState.COMPLETED, JobState.FAILED):
        job.end_time = now
    end_steps(job, job.end_time, sig)
    step = batch_step(job, job.end_time, code, sig)
    gather = ctl.usage_runner.jobacct if ctl.usage_runner is not None else None
    if step is not None and gather is not None:
        usage = gather.forget(job.job_id, "batch")
        if usage.ntasks:
            step = replace(step, usage=usage)
    if step is not None and job.resize_time is None:  # a resized job's .batch: RESIZING
        job.steps.append(step)
    if job.allocation is not None:
        ctl.nodes_mgr.release(job.job_id, job.allocation, now)
        ctl.running_ended(job)
    ctl.record(job)
    ctl.job_ended(job)


def requeue(ctl: CtldState, job: Job, logged_as: JobState, *, delay: int = REQUEUE_DELAY,
            hold: str | None = None, stopped: bool = False) -> None:
    """Put a running job back to PENDING (node failure, ``scontrol requeue``, preemption).

    The attempt that died is kept in accounting as ``logged_as`` (NODE_FAIL,
    REQUEUED or PREEMPTED); the job waits for BeginTime = request time + delay + 1
    (``hold``: then held, ``scontrol requeuehold``).  A node failure ends the attempt
    at once.  ``scontrol requeue`` and preemption stop it as slurmd stops any job
    (measured on 22.05.8 with a script that traps SIGTERM): SIGTERM with slurmstepd's
    ``*** JOB N ON n1 CANCELLED AT ... DUE TO JOB REQUEUE ***`` (``DUE TO PREEMPTION``),
    the job COMPLETING (``CG``, its nodes still busy: a preemptor waits with reason
    Resources) until its processes are gone, SIGKILL after KillWait; then PENDING.
    The attempt ends at the request in sacct; its batch step ends when the script
    died, CANCELLED 0:15 (killed by SIGTERM) or 0:9 (it outlived KillWait).
    ``stopped``: the runner was already told to stop the attempt (``node_failed``).
    """
    if job.allocation is None or logged_as is JobState.NODE_FAIL:
        now = ctl.now
        if job.allocation is not None:
            job.state = logged_as
            job.end_time = now
            end_steps(job, now, SIGKILL)
            step = batch_step(job, now, 0, SIGKILL)
            if step is not None:
                job.steps.append(step)
            if not stopped:
                ctl.runner.kill(job.job_id, SIGKILL)
            ctl.nodes_mgr.release(job.job_id, job.allocation, now)
            ctl.running_ended(job)
            ctl.record(job)
        _back_to_pending(ctl, job, logged_as, now, delay, hold)
        return
    job.requeue_after = (delay, hold)  # `completed` puts it back to PENDING
    # the SIGTERM follows the reply: a job that runs `scontrol requeue $SLURM_JOB_ID`
    # itself (submitit) sees the command succeed first
    terminate(ctl, job, logged_as, 0, 0,
              latency=ctl.runner.agent_delay if isinstance(ctl.runner, SignalsSteps) else 0.0)


def completed(ctl: CtldState, job: Job, died: int | None = None) -> None:
    """A COMPLETING attempt's processes are gone (``died``: the signal that ended the
    script, if known): finish it, or put it back to PENDING when it was requeued."""
    if job.requeue_after is None:
        finish(ctl, job, job.final_state, job.exit_code, job.signal)
        return
    delay, hold = job.requeue_after
    job.requeue_after = None
    now, asked = ctl.now, job.end_time if job.end_time is not None else ctl.now
    sig = died if died else SIGTERM
    job.state = job.final_state
    end_steps(job, now, sig)
    step = batch_step(job, now, 0, sig)
    if step is not None:
        job.steps.append(step)
    if job.allocation is not None:
        ctl.nodes_mgr.release(job.job_id, job.allocation, now)
        ctl.running_ended(job)
    ctl.record(job)
    _back_to_pending(ctl, job, job.final_state, asked, delay, hold)
    ctl.kick()


def _back_to_pending(ctl: CtldState, job: Job, logged_as: JobState, asked: int, delay: int,
                     hold: str | None) -> None:
    """``_job_requeue_op``: the next attempt is submitted anew at ``asked``."""
    job.attempt = job.attempt + 1
    job.state = JobState.PENDING
    job.allocation = None
    job.start_time = job.end_time = None
    job.preemptable_time = job.preempt_time = None
    job.unrecorded = logged_as is JobState.PREEMPTED
    job.steps = []
    job.restart_count += 1
    job.exit_code = job.signal = 0
    job.submit_time = asked  # _job_requeue_op: the next attempt is submitted anew
    job.eligible_time = None  # eligible again at its BeginTime (shown as EligibleTime)
    job.est_start = None
    job.begin_time = asked + delay + 1
    job.reason, job.reason_detail = Reason.BEGIN_TIME, ""
    ctl.requeued(job)
    if hold is not None:
        hold_pending(ctl, job, user=hold == "user")


def hold_pending(ctl: CtldState, job: Job, *, user: bool) -> None:
    """``scontrol hold``/``uhold`` of a pending job: JobHeldAdmin or JobHeldUser.

    Like every successful job update, it queues a main-scheduler run (jobs behind the
    held one may start; the held job shows ``Scheduler=Main`` at once, measured on
    22.05.8 after backfill had tested it).
    """
    job.hold = "user" if user else "admin"
    job.reason = Reason.JOB_HELD_USER if user else Reason.JOB_HELD_ADMIN
    job.est_start = None  # StartTime=Unknown (SchedNodeList= stays), as 22.05.8
    ctl.set_priority(job)
    ctl.queue.resort()
    ctl.kick()


def cancel_pending(ctl: CtldState, job: Job, uid: int) -> None:
    """A pending job ends CANCELLED (``scancel``, ``--kill-on-invalid-dep``)."""
    if job.state is not JobState.PENDING:
        return
    ctl.pending_done(job)
    job.state = JobState.CANCELLED
    job.cancelled_by = uid
    job.end_time = ctl.now
    job.array_pending = [] if job.array_pending else job.array_pending
    ctl.record(job)
    ctl.job_ended(job)


def kill_on_nodes(ctl: CtldState, node_indices: list[int], *, admin_down: bool) -> None:
    """A node died or was set DOWN (``admin_down``): its jobs are requeued or end NODE_FAIL.

    Both ways the job's ExitCode is 0:0 (``admin_down`` is kept for callers' clarity).
    """
    names = {ctl.table.names[i] for i in node_indices}
    victims = [j for j in ctl.running_jobs() if j.allocation is not None
               and not names.isdisjoint(j.allocation.node_names)]
    for job in victims:
        if _keeps_running(job, names):
            shrink(ctl, job, names)
            continue
        ctl.runner.node_failed(job.job_id, _failed_per_step(job, names))
        if job.requeue and job.batch_flag:
            requeue(ctl, job, JobState.NODE_FAIL, stopped=True)
        else:
            job.end_time = ctl.now
            # its srun steps were stopped with SIGTERM: CANCELLED 0:15 (a standalone
            # srun's step measured on 22.05.8, tests/minislurm/ctld/nodes/test_node_failure.py)
            end_steps(job, job.end_time, SIGTERM)
            # ExitCode=0:0 whether slurmd died or an admin set the node DOWN (22.05.8,
            # tests/minislurm/ctld/test_scenarios_realslurm.py: --no-requeue job, state=down)
            finish(ctl, job, JobState.NODE_FAIL, 0, 0)
            job.reason = Reason.NODE_DOWN


def _keeps_running(job: Job, down: set[str]) -> bool:
    """``kill_running_job_by_node_name``: a ``--no-kill`` job on more than one node keeps
    running on the others. minislurm's one exception: the batch host itself (its script
    would be lost with it; the job then ends as without ``-k``)."""
    alloc = job.allocation
    if not job.no_kill or alloc is None or len(alloc.nodes) < 2:
        return False
    survivors = [n for n in alloc.nodes if n.node not in down]
    return bool(survivors) and (not job.batch_flag or alloc.nodes[0].node not in down)


def shrink(ctl: CtldState, job: Job, down: set[str]) -> None:
    """``--no-kill`` under a node failure (``excise_node_from_job`` and the resize
    accounting, slurmctld job_mgr.c): the steps on the DOWN nodes are killed (their
    srun hears ``Node failure on n2``; ``kill_step_on_node``: SIGKILL), the job loses
    those nodes and runs on, new steps fit the survivors (``srun -N1``). sacct closes
    the attempt so far as ``RESIZING`` (with its batch step and the killed steps) and
    opens a record from the failure on the remaining nodes; ``scontrol show job`` keeps
    the StartTime and shows the smaller NodeList/NumNodes/NumCPUs/TRES. Measured on
    22.05.8: ``sbatch -N2 -k`` + ``scontrol update nodename=n2 state=down``."""
    now = ctl.now
    alloc = job.allocation
    assert alloc is not None
    failed = _failed_per_step(job, down)
    keep = Allocation(tuple(n for n in alloc.nodes if n.node not in down))
    lost = Allocation(tuple(n for n in alloc.nodes if n.node in down))
    # job_pre_resize_acctg: the record so far ends RESIZING with the steps it ran
    before = job.snapshot(accounting=True)
    closed = [s if s.state is not JobState.RUNNING or s.step_id not in failed
              else replace(s, state=JobState.RESIZING, end_time=now) for s in job.steps]
    batch = batch_step(before, None, 0, 0)  # still running: RESIZING 0:0 from here
    if batch is not None and job.resize_time is None:
        closed.append(replace(batch, state=JobState.RESIZING, end_time=now))
    ctl.accounting_store.record(replace(before, state=JobState.RESIZING, end_time=now,
                                        steps=tuple(closed)), now)
    # the steps that lost a node are over; the others run on into the new record
    job.resized_steps = job.resized_steps | frozenset(failed)
    job.steps[:] = [s for s in job.steps if s.state is JobState.RUNNING
                    and s.step_id not in failed]
    if job.nodes_before_resize is None:
        job.nodes_before_resize = len(alloc.nodes)
    job.resize_time = now
    ctl.table.forget(alloc)  # given back as ``lost`` now and ``keep`` at the end
    ctl.nodes_mgr.release(job.job_id, lost, now)
    job.allocation = keep
    if isinstance(ctl.runner, NodeLossRunner):
        ctl.runner.node_lost(job.job_id, keep, failed)


def _failed_per_step(job: Job, down: set[str]) -> dict[int, str]:
    """The DOWN nodes of each running srun step that spans one (what ``srun_node_fail``
    tells that step's srun), as hostlists."""
    out: dict[int, str] = {}
    for step in job.steps:
        if step.state is JobState.RUNNING and isinstance(step.step_id, int):
            hit = [n for n in expand(step.nodelist) if n in down]
            if hit:
                out[step.step_id] = compress(hit)
    return out


__all__ = [
    "PERIODIC_TIMEOUT",
    "REQUEUE_DELAY",
    "arm_time_limit",
    "arm_warning",
    "body_ended",
    "completed",
    "finish",
    "kill_on_nodes",
    "limit_check_phase",
    "limit_deadline",
    "next_limit_check",
    "requeue",
    "running_end",
    "shrink",
    "start_job",
    "terminate",
    "time_limit",
]
