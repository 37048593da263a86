"""``scontrol create reservation`` and ``update ReservationName=...``
(src/scontrol/create_res.c: ``scontrol_parse_res_options``, ``scontrol_create_res``,
``scontrol_update_res``; ``parse_resv_flags`` of slurm_protocol_defs.c)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from minislurm.cli.scontrol.session import (
    PROG,
    Session,
    pairs_of,
    require_operator,
    tag_is,
)
from minislurm.common.timespec import parse_begin, time_str2secs
from minislurm.errors import Errno, SlurmError

_NO_RESV = "No reservation created."
_NO_UPDATE = "No reservation update."
#: slurmctld's ESLURM_NODES_BUSY text (``Error creating the reservation: ...``).
BUSY = Errno.ESLURM_NODES_BUSY
#: A duration of UNLIMITED: slurmctld makes the reservation a year long (measured).
_YEAR_MINUTES = 365 * 1440
#: parse_resv_flags (scontrol's create_res.c / slurm_protocol_defs.c): the name, the
#: letters a prefix needs, the flag ``Flags=`` prints, whether ``-NAME`` is accepted
#: (measured on 22.05.8: ``mai``/``over``/``ignore`` are accepted, ``ma`` and
#: ``-overlap`` are not; ``static_alloc`` prints STATIC, ``license_only`` ANY_NODES).
_RESV_FLAGS: tuple[tuple[str, int, str, bool], ...] = (
    ("MAINTENANCE", 3, "MAINT", True), ("MAGNETIC", 3, "MAGNETIC", True),
    ("OVERLAP", 1, "OVERLAP", False), ("FLEX", 1, "FLEX", True),
    ("IGNORE_JOBS", 1, "IGNORE_JOBS", False), ("HOURLY", 1, "HOURLY", True),
    ("DAILY", 1, "DAILY", True), ("WEEKDAY", 1, "WEEKDAY", False),
    ("WEEKEND", 5, "WEEKEND", False), ("WEEKLY", 5, "WEEKLY", True),
    ("ANY_NODES", 1, "ANY_NODES", True), ("LICENSE_ONLY", 1, "ANY_NODES", True),
    ("STATIC_ALLOC", 1, "STATIC", True), ("PART_NODES", 2, "PART_NODES", True),
    ("FIRST_CORES", 1, "FIRST_CORES", False), ("TIME_FLOAT", 1, "TIME_FLOAT", False),
    ("REPLACE_DOWN", 8, "REPLACE_DOWN", False), ("REPLACE", 1, "REPLACE", False),
    ("NO_HOLD_JOBS_AFTER_END", 1, "NO_HOLD_JOBS_AFTER_END", False),
)  # fmt: skip


def parse_resv_flags(text: str) -> list[str] | None:
    """``Flags=a,b,-c``: the flags (``-NAME`` to remove one), or None when one is not
    known (``Error parsing flags ...``).  ``PURGE_COMP[=time]`` keeps its time as
    ``PURGE_COMP=HH:MM:SS`` (default 5 minutes)."""
    out: list[str] = []
    for item in text.split(","):
        minus = item.startswith("-")
        word, eq, val = (item[1:] if minus else item).partition("=")
        if tag_is(word, "PURGE_COMP", 2) and word and not minus:
            try:
                secs = time_str2secs(val) if eq else 300
            except ValueError:
                return None
            if secs is None or secs < 0:
                return None
            out.append(f"PURGE_COMP={secs // 3600:02d}:{secs // 60 % 60:02d}:{secs % 60:02d}")
            continue
        hit = next((f for f in _RESV_FLAGS if word and not eq and tag_is(word, f[0], f[1])
                    and (f[3] or not minus)), None)
        if hit is None:
            return None
        out.append(("-" if minus else "") + hit[2])
    return out


@dataclass
class ResvRequest:
    """What ``scontrol create|update reservation`` sends (``resv_desc_msg_t``)."""

    name: str | None = None
    start: int | None = None
    end: int | None = None
    minutes: int | None = None
    nodes: str | None = None
    node_cnt: int | None = None
    users: tuple[str, ...] | None = None
    accounts: tuple[str, ...] | None = None
    flags: list[str] | None = None
    partition: str | None = None


def _resv_duration(text: str) -> int | None:
    """``time_str2mins``: minutes (rounded up), a year for UNLIMITED, None when invalid."""
    try:
        secs = time_str2secs(text)
    except ValueError:
        return None
    if secs is None:
        return _YEAR_MINUTES
    if secs < 0:
        return None
    return (secs + 59) // 60


def _parse_resv(s: Session, pairs: list[tuple[str, str]], now: int, suffix: str
                ) -> ResvRequest | str:
    """``scontrol_parse_res_options``: the arguments in order; the first bad one is
    reported (``scontrol: error: ... {suffix}``) and nothing is sent: then the text of
    errno is returned (``Invalid time specified`` after parse_time, else ``No error``)."""
    r = ResvRequest()
    for tag, val in pairs:
        if tag_is(tag, "ReservationName", 3) or tag_is(tag, "Reservation", 3):
            r.name = val
        elif tag_is(tag, "StartTime", 1) or tag_is(tag, "EndTime", 1):
            which = "start" if tag[:1].lower() == "s" else "end"
            try:
                setattr(r, which, parse_begin(val, now))
            except SlurmError as exc:
                if exc.message:
                    s.ctx.err(exc.message)
                s.error(f"{PROG}: error: Invalid {which} time {tag}={val}.  {suffix}")
                return Errno.ESLURM_INVALID_TIME_VALUE
        elif tag_is(tag, "Duration", 1):
            r.minutes = _resv_duration(val)
            if r.minutes is None:
                s.error(f"{PROG}: error: Invalid duration {tag}={val}.  {suffix}")
                return "No error"
        elif tag_is(tag, "NodeCnt", 5):
            if not val.isdigit():
                s.error(f"{PROG}: error: Invalid node count {val}")
                return "No error"
            r.node_cnt = int(val)
        elif tag_is(tag, "Nodes", 1):
            r.nodes = val
        elif tag_is(tag, "Users", 1):
            r.users = tuple(u for u in val.split(",") if u)
        elif tag_is(tag, "Accounts", 1):
            r.accounts = tuple(a for a in val.split(",") if a)
        elif tag_is(tag, "Flags", 2):
            r.flags = parse_resv_flags(val)
            if r.flags is None:
                s.error(f"{PROG}: error: Error parsing flags {val}.  {suffix}")
                return "No error"
        elif tag_is(tag, "PartitionName", 1):
            r.partition = val
        else:
            s.error(f"{PROG}: error: Unknown parameter {tag}={val}.  {suffix}")
            return "No error"
    return r


def create_reservation(s: Session, args: Sequence[str]) -> None:
    """``scontrol_create_res``: parse, then what is missing is reported as create_res.c
    does (measured on 22.05.8, see tests/minislurm/cli/scontrol/test_reservation_cli.py); without
    ``ReservationName=`` slurmctld names it.  ``Requested nodes are busy`` comes with
    scontrol's note about partitions on stdout."""
    if args and "=" not in args[0]:  # "create reservation key=value ..."
        args = args[1:]
    pairs = pairs_of(s, args)
    if pairs is None:
        return
    ctl = s.controller("Error creating the reservation")
    r = _parse_resv(s, pairs, s.ctx.now(), _NO_RESV)
    if isinstance(r, str):
        return
    if r.start is None:
        s.error(f"{PROG}: error: A start time must be given.  {_NO_RESV}")
    elif r.end is None and r.minutes is None:
        s.error(f"{PROG}: error: An end time or duration must be given.  {_NO_RESV}")
    elif r.end is not None and r.start > r.end:
        s.error(f"{PROG}: error: Start time cannot be after end time.  {_NO_RESV}")
    elif not r.nodes and not r.node_cnt:
        s.error(f"{PROG}: error: CoreCnt, Nodes, NodeCnt, BurstBuffer, Licenses or Watts "
                f"must be specified.  {_NO_RESV}")
    elif not r.users and not r.accounts:
        s.error(f"{PROG}: error: Either Users/Groups and/or Accounts must be specified.  "
                f"{_NO_RESV}")
    else:
        duration = r.minutes if r.minutes is not None else ((r.end or r.start) - r.start) // 60
        if not require_operator(s, ctl, "Error creating the reservation: "):
            return
        try:
            line = ctl.create_reservation(
                r.name or "", r.start, duration, r.nodes or "", users=r.users or (),
                accounts=r.accounts or (), flags=[f for f in r.flags or () if f[0] != "-"],
                node_cnt=r.node_cnt, partition=r.partition or "")
        except SlurmError as exc:
            if exc.message.endswith(BUSY):
                s.ctx.out("Note, unless nodes are directly requested a reservation must "
                          "exist in a single partition.\nIf no partition is requested the "
                          "default partition is assumed.")
            s.error(exc.message)
            return
        s.ctx.out(line)


def update_reservation(s: Session, pairs: list[tuple[str, str]]) -> None:
    """``scontrol_update_res``: ``Reservation updated.``; a parse error is reported with
    ``No reservation update.`` and ``slurm_update error: No error`` (errno is 0; a bad
    time leaves parse_time's ``Invalid time specified``), the controller's refusal as
    ``Error updating the reservation: X`` then ``slurm_update error: X`` (measured)."""
    ctl = s.controller("slurm_update error")
    r = _parse_resv(s, pairs, s.ctx.now(), _NO_UPDATE)
    if isinstance(r, str):
        s.error("slurm_update error: " + r)
        return
    if not require_operator(s, ctl, "Error updating the reservation: ", "slurm_update error: "):
        return
    try:
        line = ctl.update_reservation(
            r.name or "", start=r.start, end=r.end, duration=r.minutes, nodes=r.nodes,
            users=r.users, accounts=r.accounts, flags=r.flags, node_cnt=r.node_cnt,
            partition=r.partition)
    except SlurmError as exc:
        s.error(exc.message)
        s.error("slurm_update error: " + exc.message.split(": ", 1)[-1])
        return
    s.ctx.out(line)
