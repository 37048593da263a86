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

from minislurm.common.hostlist import expand
from minislurm.errors import Errno, SlurmError
from minislurm.states import JobState, Reason

from . import lifecycle
from .job_mgr import Job
from .node_mgr import NEED_REASON
from .reservation import (
    BUSY,
    CREATE_ERR,
    DUPLICATE,
    IN_USE,
    INVALID_NODE,
    INVALID_RESV,
    INVALID_TIME,
    OVERLAPS,
    Reservation,
    check_new,
    check_time,
    overlapping,
)
from .runner import SIGKILL, SignalsSteps
from .state import CtldState

INVALID_JOB_ID = Errno.ESLURM_INVALID_JOB_ID


# ---- scancel ------------------------------------------------------------------
def cancel(
    ctl: CtldState, job_id: int, *, task: int | None = None, uid: int = 0
) -> None:
    """``scancel JOBID`` (``task``: ``scancel 108_3``).  Unknown or ended ids are ignored,
    as scancel exits 0 for them (capture b_sbatch_errors 52)."""
    job = ctl.find_job(job_id)
    if job is None:
        return
    if task is not None and job.array_job_id is not None:
        for t in ctl.array_tasks.get(job.array_job_id, []):
            if t.array_task_id == task and t is not job:
                cancel(ctl, t.job_id, uid=uid)
                return
        meta = ctl.find_job(job.array_job_id)
        if meta is not None and task in meta.array_pending and len(meta.array_pending) > 1:
            # a task not split off yet only leaves the array's bitmap: no job record,
            # no job id, no sacct row; `scontrol show job 1_5` then says it is not
            # found (measured on 22.05.8)
            meta.array_pending.remove(task)
            return
        if job.array_task_id != task and not job.array_pending:
            return
    if job.state is JobState.PENDING:
        lifecycle.cancel_pending(ctl, job, uid)
    elif job.state in (JobState.RUNNING, JobState.CONFIGURING):
        job.cancelled_by = uid
        lifecycle.terminate(ctl, job, JobState.CANCELLED, 0, 15)


def signal_job(ctl: CtldState, job_id: int, signal: int, *, uid: int = 0) -> None:
    """``scancel --signal=SIG JOBID``: deliver a signal to a running job's processes.

    Only KILL cancels the job. Any other signal, TERM included, reaches the job's
    steps and the job stays RUNNING (checked on 22.05: ``scancel --signal=TERM``
    leaves it RUNNING; without ``--batch`` the batch shell does not get it), which
    is what submitit's preemption drill relies on. A runner with real processes
    signals the steps (``signal_steps``); the simulated one models a program that
    dies of the signal.
    """
    job = ctl.find_job(job_id)
    if job is None or job.state is not JobState.RUNNING:
        return
    if signal == SIGKILL:
        job.cancelled_by = uid
        lifecycle.terminate(ctl, job, JobState.CANCELLED, 0, signal)
        return
    if isinstance(ctl.runner, SignalsSteps):
        ctl.runner.signal_steps(job_id, signal)
    else:
        ctl.runner.kill(job_id, signal)


def cancel_where(
    ctl: CtldState,
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
    for job in ctl.all_jobs():
        if job.state.is_terminal:
            continue
        if (user and job.user != user) or (name and job.name != name) or (
            partition and job.partition != partition
        ):
            continue
        if wanted is not None and job.state not in wanted:
            continue
        hit.append(job.job_id)
        cancel(ctl, job.job_id, uid=uid)
    return hit


# ---- hold / release / requeue -------------------------------------------------
def _pending_job(ctl: CtldState, job_id: int) -> Job:
    job = ctl.find_job(job_id)
    if job is None:
        raise SlurmError(f"{INVALID_JOB_ID} for job {job_id}", 1)
    if job.state is not JobState.PENDING:
        raise SlurmError(Errno.ESLURM_JOB_NOT_PENDING + " for job " + str(job_id), 1)
    return job


def hold(ctl: CtldState, job_id: int, *, user: bool = False) -> None:
    """``scontrol hold`` (admin, JobHeldAdmin) or ``scontrol uhold`` (JobHeldUser).

    Like every successful job update, it queues a main-scheduler run (jobs behind
    the held one may start; the held job shows ``Scheduler=Main`` at once, measured
    on 22.05.8 after backfill had tested it).
    """
    queued = ctl.find_job(job_id)
    if queued is not None and queued.requeue_after is not None:  # requeuehold while the
        queued.requeue_after = (queued.requeue_after[0], "user" if user else "admin")
        return  # requeued attempt completes: held once it is PENDING again
    lifecycle.hold_pending(ctl, _pending_job(ctl, job_id), user=user)


def release(ctl: CtldState, job_id: int) -> None:
    """``scontrol release``: the job may run again (it gets a new priority)."""
    job = _pending_job(ctl, job_id)
    job.hold = None
    job.reason = Reason.NONE
    ctl.set_priority(job)
    ctl.queue.resort()
    ctl.kick()


def requeue(ctl: CtldState, job_id: int) -> None:
    """``scontrol requeue``: a running batch job goes back to PENDING (logged REQUEUED)."""
    job = ctl.find_job(job_id)
    if job is None:
        raise SlurmError(f"{INVALID_JOB_ID} for job {job_id}", 1)
    if job.state is not JobState.RUNNING or not job.batch_flag:
        raise SlurmError(f"{Errno.ESLURM_JOB_PENDING} for job {job_id}", 1)
    lifecycle.requeue(ctl, job, JobState.REQUEUED)


# ---- nodes ----------------------------------------------------------------------
def update_node(
    ctl: CtldState, nodes: str, state: str, reason: str = "", *, user: str = "root"
) -> None:
    """``scontrol update nodename=NODES state=down|drain|resume reason=...``.

    As slurmctld's ``update_node``: nodes are taken in order and an unknown name
    stops there (the nodes before it keep their change); a state change that does
    not apply to one node is skipped and reported at the end, the others are made.
    ``state`` empty: only the reason changes.
    """
    if state.upper() in ("DOWN", "DRAIN", "FAIL") and not reason:
        raise SlurmError(NEED_REASON, 1)
    killed: list[int] = []
    failure: SlurmError | None = None
    try:
        for name in expand(nodes):
            i = ctl.nodes_mgr.names([name])[0]
            try:
                if ctl.nodes_mgr.set_state(i, state, reason, user, ctl.now):
                    killed.append(i)
            except SlurmError as exc:
                failure = exc
    except SlurmError as exc:
        failure = exc
    finally:
        if killed:
            lifecycle.kill_on_nodes(ctl, killed, admin_down=True)
        ctl.kick()
    if failure is not None:
        raise failure


def fail_node(ctl: CtldState, name: str, *, repair_after: int | None = None) -> None:
    """The node dies now (slurmd stops answering): DOWN*, its jobs requeued or NODE_FAIL.

    ``repair_after`` seconds later slurmd comes back; with ReturnToService=1 the node
    returns to service.
    """
    i = ctl.nodes_mgr.names([name])[0]
    ctl.nodes_mgr.fail(i, ctl.now)
    lifecycle.kill_on_nodes(ctl, [i], admin_down=False)
    if repair_after is not None:
        def back() -> None:
            ctl.nodes_mgr.repair(i, ctl.now, ctl.return_to_service)
            ctl.kick()
        ctl.later(repair_after, back)
    ctl.kick()


def schedule_node_failure(
    ctl: CtldState, name: str, at: int, *, repair_after: int | None = None
) -> None:
    """Inject a failure of ``name`` at epoch time ``at``."""
    delay = max(0, at - ctl.now)
    ctl.later(delay, lambda: fail_node(ctl, name, repair_after=repair_after))


def random_failures(
    ctl: CtldState, mtbf_hours: float, repair_after: int, *, seed: int = 0,
    until: int | None = None, nodes: Iterable[str] | None = None,
) -> list[tuple[int, str]]:
    """Exponential failures with the given MTBF per node; returns the (time, node) plan.

    Each failure is scheduled as `schedule_node_failure` does (`CtldState.later_each`:
    the same timers, one callback for all), with the clock and the rate read once (no
    event runs meanwhile): lesson 7's sweep plans ~5,400 of them."""
    rng = random.Random(seed)
    plan: list[tuple[int, str]] = []
    now = ctl.now
    horizon = until if until is not None else now + 30 * 86400
    rate = 1.0 / (mtbf_hours * 3600)
    draw = rng.expovariate
    for name in nodes if nodes is not None else ctl.table.names:
        t = now
        while True:
            t += int(draw(rate)) + 1
            if t >= horizon:
                break
            plan.append((t, name))
            t += repair_after
    plan.sort()

    def fail(name: str) -> None:
        fail_node(ctl, name, repair_after=repair_after)

    ctl.later_each(((max(0, t - now), name) for t, name in plan), fail)
    return plan


# ---- partitions and reservations ------------------------------------------------
def update_partition(ctl: CtldState, name: str, state: str) -> None:
    """``scontrol update partitionname=NAME state=UP|DOWN|DRAIN|INACTIVE``."""
    part = ctl.parts.get(name)
    if part is None:
        raise SlurmError("slurm_update error: " + Errno.ESLURM_INVALID_PARTITION_NAME, 1)
    from dataclasses import replace

    ctl.parts[name] = replace(part, state=state.upper())
    ctl.kick()


def create_reservation(
    ctl: CtldState, name: str, start: int, duration: int, nodes: str,
    *, users: Iterable[str] = (), accounts: Iterable[str] = (),
    flags: Iterable[str] = (), node_cnt: int | None = None, partition: str = "",
) -> str:
    """``scontrol create reservation``; ``duration`` in minutes.  Returns scontrol's line.

    ``name`` empty: slurmctld names it ``<first account or user>_<id>``.  ``nodes``
    empty with ``node_cnt``: the first free nodes of ``partition`` (default: the
    default partition).  Checks and errors in slurmctld's order (reservation.py).
    """
    now = ctl.now
    users, accounts = tuple(users), tuple(accounts)
    flag_set = [f.upper() for f in flags if f]
    end = start + duration * 60
    check_time(start, end, now)
    probe = Reservation(name, start, end, (), (), users, accounts,
                        flags=tuple(flag_set), created=now)
    if nodes:
        try:
            names = expand(nodes)
            idx = tuple(ctl.nodes_mgr.names(names))
        except SlurmError:
            raise SlurmError(CREATE_ERR + INVALID_NODE, 1) from None
        flag_set.append("SPEC_NODES")
        part_name = partition
    else:
        part_name = partition or ctl.default_partition
        idx = _resv_pick_nodes(ctl, probe, part_name, node_cnt or 0)
        names = [ctl.table.names[i] for i in idx]
    resv = Reservation(name, start, end, idx, tuple(names), users, accounts,
                       int(sum(int(ctl.table.cpus[i]) for i in idx)),
                       flags=tuple(flag_set), partition=part_name, created=now)
    check_new(ctl.reservations_by_name, resv, now)
    if "IGNORE_JOBS" not in flag_set and _resv_busy(ctl, idx, start):
        raise SlurmError(CREATE_ERR + BUSY, 1)
    resv.resv_id = _resv_next_id(ctl)
    if name:
        if name in ctl.reservations_by_name:
            raise SlurmError(CREATE_ERR + DUPLICATE, 1)
    else:
        key = (accounts or users or ("resv",))[0]
        while f"{key}_{resv.resv_id}" in ctl.reservations_by_name:
            resv.resv_id = _resv_next_id(ctl)
        resv.name = f"{key}_{resv.resv_id}"
    ctl.reservations_by_name[resv.name] = resv
    ctl.wake_at(resv.start)
    ctl.wake_at(resv.end)
    ctl.kick()
    return f"Reservation created: {resv.name}"


def _resv_next_id(ctl: CtldState) -> int:
    """``_generate_resv_id``: slurmctld's ``top_suffix`` + 1."""
    ctl.resv_top_suffix += 1
    return ctl.resv_top_suffix


def _resv_busy(ctl: CtldState, idx: Iterable[int], start: int) -> bool:
    """``_job_overlap``: a running job on one of the nodes ends after ``start``."""
    wanted = {ctl.table.names[i] for i in idx}
    for job in ctl.running_jobs():
        alloc = job.allocation
        end = lifecycle.running_end(job)
        end = start + 1 if end is None else end  # UNLIMITED: always in the way
        if alloc is not None and end > start and any(n.node in wanted for n in alloc.nodes):
            return True
    return False


def _resv_pick_nodes(
    ctl: CtldState, probe: Reservation, part_name: str, count: int,
    skip: Iterable[int] = (),
) -> tuple[int, ...]:
    """``_select_nodes`` for ``NodeCnt=``: the partition's usable nodes in order, less
    those in overlapping reservations (and ``skip``); fewer than ``count`` left: all of
    them.  Without IGNORE_JOBS that many must be free of jobs running past the start,
    else ``Requested nodes are busy`` (measured on 22.05.8: n1 reserved, a job on n4,
    NodeCnt=5 and NodeCnt=3 are busy, NodeCnt=2 takes n[2-3]; n[1-3] reserved,
    NodeCnt=5 takes n4)."""
    part = ctl.parts.get(part_name)
    if part is None:
        raise SlurmError(CREATE_ERR + Errno.ESLURM_INVALID_PARTITION_NAME, 1)
    taken: set[int] = set(skip)
    if not probe.may_overlap():
        for other in ctl.reservations_by_name.values():
            if not other.may_overlap() and other.overlaps(probe.start, probe.end):
                taken.update(other.nodes)
    avail = [i for i in range(len(ctl.table))
             if part.mask[i] and ctl.table.usable[i] and i not in taken]
    count = min(count, len(avail))
    if not probe.has("IGNORE_JOBS"):
        avail = [i for i in avail if not _resv_busy(ctl, (i,), probe.start)]
    if count <= 0 or len(avail) < count:
        raise SlurmError(CREATE_ERR + BUSY, 1)
    return tuple(avail[:count])


def update_reservation(
    ctl: CtldState, name: str, *, start: int | None = None, duration: int | None = None,
    end: int | None = None, nodes: str | None = None, users: Iterable[str] | None = None,
    accounts: Iterable[str] | None = None, flags: Iterable[str] | None = None,
    node_cnt: int | None = None, partition: str | None = None,
) -> str:
    """``scontrol update reservationname=NAME ...`` (``duration`` in minutes; ``users``
    entries may start with ``+``/``-`` to add or remove; ``flags`` ``-NAME`` removes
    one; ``node_cnt`` adds the first free nodes or drops the last ones).  Returns
    ``Reservation updated.``; errors are ``Error updating the reservation: ...``."""
    resv = ctl.reservations_by_name.get(name)
    err = "Error updating the reservation: "
    if resv is None:
        raise SlurmError(err + INVALID_RESV, 1)
    assert isinstance(resv, Reservation)
    now = ctl.now
    new_start = resv.start if start is None else start
    length = resv.end - resv.start
    new_end = new_start + length
    if duration is not None:
        new_end = new_start + duration * 60
    elif end is not None:
        new_end = end
    try:
        check_time(new_start, new_end, now) if start is not None else None
    except SlurmError:
        raise SlurmError(err + INVALID_TIME, 1) from None
    idx, names = resv.nodes, resv.node_names
    if nodes is not None:
        try:
            names = tuple(expand(nodes))
            idx = tuple(ctl.nodes_mgr.names(list(names)))
        except SlurmError:
            raise SlurmError(err + INVALID_NODE, 1) from None
    part_name = resv.partition if partition is None else partition
    if partition and partition not in ctl.parts:
        raise SlurmError(err + Errno.ESLURM_INVALID_PARTITION_NAME, 1)
    if node_cnt is not None and node_cnt < len(idx):
        idx, names = idx[:max(node_cnt, 1)], names[:max(node_cnt, 1)]
    elif node_cnt is not None and node_cnt > len(idx):
        probe = Reservation(resv.name, new_start, new_end, idx, names, resv.users,
                            resv.accounts, flags=resv.flags)
        try:
            more = _resv_pick_nodes(ctl, probe, part_name or ctl.default_partition,
                                         node_cnt - len(idx), skip=idx)
        except SlurmError as exc:
            raise SlurmError(err + exc.message.removeprefix(CREATE_ERR), 1) from None
        idx = tuple(sorted((*idx, *more)))
        names = tuple(ctl.table.names[i] for i in idx)
    new_flags = list(resv.flags)
    for f in flags or ():
        f = f.upper()
        if f.startswith("-"):
            new_flags = [x for x in new_flags if x != f[1:]]
        elif f not in new_flags:
            new_flags.append(f)
    trial = Reservation(resv.name, new_start, new_end, idx, names, resv.users,
                        resv.accounts, flags=tuple(new_flags))
    if overlapping(ctl.reservations_by_name, trial):
        raise SlurmError(err + OVERLAPS, 1)
    resv.start, resv.end, resv.nodes, resv.node_names = new_start, new_end, idx, names
    resv.core_count = int(sum(int(ctl.table.cpus[i]) for i in idx))
    resv.flags = tuple(new_flags)
    resv.partition = part_name
    resv.users = _edit_list(resv.users, users)
    resv.accounts = _edit_list(resv.accounts, accounts)
    ctl.wake_at(resv.start)
    ctl.wake_at(resv.end)
    ctl.kick()
    return "Reservation updated."


def delete_reservation(ctl: CtldState, name: str) -> None:
    """``scontrol delete reservation=NAME``: refused while a pending or running job
    asks for it (``Requested reservation is in use``, measured on 22.05.8)."""
    if name not in ctl.reservations_by_name:
        raise SlurmError(INVALID_RESV, 1)
    if any(j.reservation == name and not j.state.is_terminal for j in ctl.all_jobs()):
        raise SlurmError(IN_USE, 1)
    del ctl.reservations_by_name[name]
    ctl.kick()


def _edit_list(current: tuple[str, ...], change: Iterable[str] | None) -> tuple[str, ...]:
    """``Users=a,b`` replaces; ``Users=+c`` adds; ``Users=-a`` removes (update_resv)."""
    if change is None:
        return current
    items = [c for c in change if c]
    if items and all(c[0] in "+-" for c in items):
        out = list(current)
        for c in items:
            if c[0] == "+" and c[1:] not in out:
                out.append(c[1:])
            elif c[0] == "-" and c[1:] in out:
                out.remove(c[1:])
        return tuple(out)
    return tuple(items)


__all__ = [
    "INVALID_JOB_ID",
    "cancel",
    "cancel_where",
    "create_reservation",
    "delete_reservation",
    "fail_node",
    "hold",
    "random_failures",
    "release",
    "requeue",
    "schedule_node_failure",
    "signal_job",
    "update_node",
    "update_partition",
    "update_reservation",
]
