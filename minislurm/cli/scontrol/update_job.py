"""``scontrol update JobId=...``, ``hold``/``uhold``/``release``, ``requeue``/
``requeuehold`` (src/scontrol/update_job.c: ``scontrol_update_job``,
``scontrol_hold``, ``scontrol_requeue``, ``scontrol_requeue_hold``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, TypedDict

from minislurm.cli.scontrol.session import (
    INVALID_JOB_ID,
    PROG,
    Session,
    split_job_id,
    tag_is,
)
from minislurm.cli.squeue import known_jobs
from minislurm.common.timespec import parse_begin, parse_time_limit, time_str2secs
from minislurm.errors import SlurmError

if TYPE_CHECKING:
    from minislurm.ctld.controller import Controller


class JobChanges(TypedDict, total=False):
    """What ``scontrol update JobId=`` sends (``job_desc_msg_t``'s fields minislurm
    models): the keyword arguments of ``Controller.update_job``."""

    time_limit: int | None
    partition: str
    num_nodes: int
    nice: int
    start_time: int


def update_job(s: Session, pairs: list[tuple[str, str]]) -> None:
    """``scontrol_update_job``: ``JobId=`` + ``TimeLimit=``, ``Partition=``, ``NumNodes=``,
    ``Nice=``, ``StartTime=``/``EligibleTime=`` (the job's BeginTime; a time in the past
    is now; a value parse_time rejects is reported and left out, as scontrol does)."""
    changes: JobChanges = {}
    start_text: str | None = None
    job_ids: list[int] = []
    relative = ""
    for tag, val in pairs:
        if tag_is(tag, "JobId", 3):
            ids = [split_job_id(x) for x in val.split(",")]
            if any(i is None for i in ids):
                s.error(f"{INVALID_JOB_ID} for job {val}")
                return
            job_ids += [i[0] for i in ids if i is not None]
        elif tag_is(tag, "TimeLimit", 5):
            sign = val[:1] if val[:1] in ("+", "-") else ""  # +N / -N: relative
            try:
                changes["time_limit"] = _update_time_limit(val[len(sign):])
            except SlurmError:
                s.error(f"{PROG}: error: Invalid TimeLimit value")
                return
            if sign and not job_ids:
                s.error(f"{PROG}: error: JobId must precede TimeLimit increment or decrement")
                return
            relative = sign
        elif tag_is(tag, "Partition", 2):
            changes["partition"] = val
        elif tag_is(tag, "NumNodes", 8) or tag_is(tag, "ReqNodes", 8):
            if not val.isdigit():
                s.error(f"{PROG}: error: Invalid NumNodes value: {val}")
                return
            changes["num_nodes"] = int(val)
        elif tag_is(tag, "Nice", 2):
            changes["nice"] = int(val) if val.lstrip("-").isdigit() else 100
        elif tag_is(tag, "StartTime", 2) or tag_is(tag, "EligibleTime", 2):
            start_text = val
        else:
            s.error(f"Update of this parameter is not supported: {tag}={val}\nRequest aborted")
            return
    ctl = s.controller("slurm_update error")
    if start_text is not None:
        now = s.ctx.now()
        try:
            changes["start_time"] = max(parse_begin(start_text, now), now)
        except SlurmError as exc:  # parse_time printed why; the field is not sent
            if exc.message:
                s.ctx.err(exc.message)
    for job_id in job_ids:
        try:
            if relative:
                changes["time_limit"] = _relative_limit(ctl, job_id, relative,
                                                        changes["time_limit"])
            ctl.update_job(job_id, uid=s.ctx.uid, **changes)
        except SlurmError as exc:
            s.error(exc.message)


def _update_time_limit(text: str) -> int | None:
    """``TimeLimit=`` minutes as scontrol sends them (``time_str2mins``; None: UNLIMITED).

    Unlike sbatch's ``--time=0``, ``TimeLimit=0`` is not UNLIMITED but 0 minutes: a
    running job's end becomes the update's time (measured on 22.05.8: ``TimeLimit=00:00:00
    EndTime=`` the update, TIMEOUT at the next periodic check).
    """
    minutes = parse_time_limit(text)
    if minutes is None and time_str2secs(text) == 0:
        return 0
    return minutes


def _relative_limit(ctl: Controller, job_id: int, sign: str, minutes: object) -> int | None:
    """``TimeLimit=+N``/``-N``: scontrol adds to or takes from the job's current limit
    (``_get_job_time``); a decrement beyond it is refused (measured on 22.05.8:
    ``TimeLimit decrement larger than current time limit (5 > 1)``)."""
    try:
        current = ctl.job(job_id).time_limit
    except KeyError:
        raise SlurmError(f"{INVALID_JOB_ID} for job {job_id}", 1) from None
    if current is None or not isinstance(minutes, int):
        return current  # UNLIMITED plus or minus anything stays UNLIMITED here
    if sign == "+":
        return current + minutes
    if minutes > current:
        raise SlurmError(f"{PROG}: error: TimeLimit decrement larger than current time limit "
                         f"({minutes} > {current})", 1)
    return current - minutes


def _job_ids(s: Session, ctl: Controller, text: str, *, names: bool) -> list[int]:
    """``[JobID=|Job=]5[,6]`` (``108_3``: its array job) or, with ``names``,
    ``Name=NAME``: the pending jobs of that name.  Anything else is
    ``Invalid job id specified for job X`` (update_job.c ``scontrol_hold``)."""
    for prefix in ("jobid=", "job="):
        if text.lower().startswith(prefix):
            text = text[len(prefix):]
            break
    if names and text.lower().startswith("name="):
        name = text[5:]
        return [j.job_id for j in known_jobs(ctl)
                if j.name == name and j.state.value == "PENDING"]
    ids = [split_job_id(t) for t in text.split(",") if t]
    if not ids or any(i is None for i in ids):
        s.error(f"{INVALID_JOB_ID} for job {text}")
        return []
    return [i[0] for i in ids if i is not None]


def hold(s: Session, args: Sequence[str]) -> None:
    """``hold``/``uhold``/``holdu``/``release`` of each job in the list."""
    if len(args) < 2:
        s.error(f"too few arguments for keyword:{args[0]}")
        return
    op = args[0].lower()
    ctl = s.controller("slurm_suspend error")
    for item in args[1:]:
        for job_id in _job_ids(s, ctl, item, names=True):
            try:
                if op.startswith("rel"):
                    ctl.release(job_id)
                else:
                    ctl.hold(job_id, user=op in ("uhold", "holdu"))
            except SlurmError as exc:
                s.error(exc.message)


def requeue(s: Session, args: Sequence[str], *, then_hold: bool) -> None:
    """``requeue`` / ``requeuehold`` [``Incomplete``|``State=SpecialExit``] job ids."""
    if len(args) < 2:
        s.error(f"too few arguments for keyword:{args[0]}")
        return
    ctl = s.controller("slurm_requeue error")
    for item in args[1:]:
        if item.lower() in ("incomplete", "state=specialexit"):
            continue
        for job_id in _job_ids(s, ctl, item, names=False):
            try:
                ctl.requeue(job_id)
                if then_hold:
                    ctl.hold(job_id, user=s.ctx.uid != 0)
            except SlurmError as exc:
                s.error(exc.message)
