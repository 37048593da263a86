"""Advance reservations (``scontrol create reservation``; src/slurmctld/reservation.c).

``scontrol create reservation reservationname=big starttime=now+2hours
duration=14-00:00:00 nodes=n[1-4] users=alice`` sets nodes aside for a time
window.  Jobs submitted with ``--reservation=big`` may run only there (and wait
with reason ``Reservation`` until it starts); other jobs may use those nodes only
if they end before the reservation starts, which backfill respects because the
reservation's nodes leave the map for that window.

What 22.05.8 does, measured on the reference cluster
(tests/minislurm/ctld/reservations/test_resv_*.py):

* a start more than 600 s in the past (``MAX_RESV_DELAY``) is ``Invalid time
  specified``; an unknown node ``Invalid node name specified``;
* nodes already in another reservation whose window meets this one are ``Requested
  reservation overlaps with another reservation``, unless either reservation has
  ``MAINT`` or ``OVERLAP``; nodes running a job that ends after the start are
  ``Requested nodes are busy`` unless ``IGNORE_JOBS``;
* only then is a reservation id drawn (``top_suffix``), so a name taken already
  (``Duplicate reservation name``) uses one up; a reservation without a name is
  called ``<first account or user>_<id>``;
* ``NodeCnt=N`` without ``Nodes=`` takes the first free nodes of the default
  partition (all of them when fewer than N are free; none free: busy), prints
  ``PartitionName=<that partition>`` and no ``SPEC_NODES`` flag;
* the nodes of an active reservation show ``RESERVED`` (``resv`` in sinfo, plus
  ``MAINTENANCE``/``maint``/``$`` for ``MAINT``) only once slurmctld's background
  loop has seen it active: that check runs every 5 s (``last_resv_time``), so right
  after ``starttime=now`` sinfo still says ``idle``.
"""

from __future__ import annotations

from dataclasses import dataclass

from minislurm.errors import Errno, SlurmError
from minislurm.node import ReservationRecord

#: slurmctld accepts a start this many seconds in the past (reservation.c MAX_RESV_DELAY).
MAX_RESV_DELAY = 600
#: slurmctld's background loop sets the nodes' RESERVED/MAINT flags every 5 s.
RESV_CHECK_PERIOD = 5

CREATE_ERR = "Error creating the reservation: "
INVALID_TIME = Errno.ESLURM_INVALID_TIME_VALUE
INVALID_NODE = Errno.ESLURM_INVALID_NODE_NAME
OVERLAPS = Errno.ESLURM_RESERVATION_OVERLAP
BUSY = Errno.ESLURM_NODES_BUSY
DUPLICATE = Errno.ESLURM_RESERVATION_NAME_DUP
INVALID_RESV = Errno.ESLURM_RESERVATION_INVALID
IN_USE = Errno.ESLURM_RESERVATION_BUSY

#: reservation_flags_string (slurm_protocol_defs.c): the order ``Flags=`` prints them in.
FLAG_ORDER = (
    "MAINT", "NO_MAINT", "FLEX", "OVERLAP", "IGNORE_JOBS", "HOURLY", "NO_HOURLY", "DAILY",
    "NO_DAILY", "WEEKDAY", "WEEKEND", "WEEKLY", "NO_WEEKLY", "SPEC_NODES", "ALL_NODES",
    "ANY_NODES", "NO_ANY_NODES", "STATIC", "NO_STATIC", "PART_NODES", "NO_PART_NODES",
    "MAGNETIC", "NO_MAGNETIC", "FIRST_CORES", "TIME_FLOAT", "REPLACE", "REPLACE_DOWN",
    "PURGE_COMP", "NO_HOLD_JOBS_AFTER_END",
)  # fmt: skip


def order_flags(flags: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """``flags`` (upper case, ``PURGE_COMP=...`` allowed) in Slurm's printing order."""
    def key(flag: str) -> int:
        base = flag.split("=", 1)[0]
        return FLAG_ORDER.index(base) if base in FLAG_ORDER else len(FLAG_ORDER)
    seen: list[str] = []
    for f in flags:
        if f and f not in seen:
            seen.append(f)
    return tuple(sorted(seen, key=key))


@dataclass(slots=True)
class Reservation:
    """One reservation as slurmctld keeps it (``slurmctld_resv_t``)."""

    name: str
    start: int
    end: int
    nodes: tuple[int, ...]
    node_names: tuple[str, ...]
    users: tuple[str, ...]
    accounts: tuple[str, ...] = ()
    core_count: int = 0
    flags: tuple[str, ...] = ("SPEC_NODES",)
    partition: str = ""
    created: int = 0
    resv_id: int = 0

    def active(self, now: int) -> bool:
        """True between StartTime and EndTime."""
        return self.start <= now < self.end

    def overlaps(self, start: int, end: int) -> bool:
        """True when ``[start, end)`` meets the reservation's window."""
        return start < self.end and self.start < end

    def has(self, flag: str) -> bool:
        """True when ``Flags=`` holds ``flag``."""
        return flag in self.flags

    def may_overlap(self) -> bool:
        """MAINT and OVERLAP reservations may share nodes with others (_resv_overlap)."""
        return self.has("MAINT") or self.has("OVERLAP")

    def allows(self, user: str, account: str) -> bool:
        """Users=/Accounts= of the reservation."""
        return (not self.users and not self.accounts) or user in self.users or (
            account in self.accounts
        )

    def flagged(self, now: int, origin: int) -> bool:
        """True when slurmctld's 5-s background check has marked the nodes reserved:
        it ran after the reservation started (and was created) and before it ended.
        ``origin`` is when slurmctld started (the checks' phase)."""
        seen = _next_check(max(self.start, self.created), origin)
        return seen <= now and now < _next_check(self.end, origin)

    def record(self, now: int) -> ReservationRecord:
        """The snapshot ``scontrol show reservation`` prints."""
        return ReservationRecord(
            name=self.name, start_time=self.start, end_time=self.end, nodes=self.node_names,
            users=self.users, accounts=self.accounts, flags=order_flags(self.flags),
            partition=self.partition, core_count=self.core_count,
            state="ACTIVE" if self.active(now) else "INACTIVE",
        )  # fmt: skip


def _next_check(t: int, origin: int) -> int:
    """The first background reservation check strictly after ``t``."""
    k = max(0, (t - origin) // RESV_CHECK_PERIOD + 1)
    return origin + k * RESV_CHECK_PERIOD


def check_time(start: int, end: int, now: int) -> None:
    """``Invalid time specified`` for a start more than MAX_RESV_DELAY in the past."""
    if start < now - MAX_RESV_DELAY or end < start:
        raise SlurmError(CREATE_ERR + INVALID_TIME, 1)


def overlapping(existing: dict[str, Reservation], resv: Reservation) -> bool:
    """``_resv_overlap``: another reservation holds one of the nodes in the window."""
    if resv.may_overlap():
        return False
    return any(
        other.name != resv.name and not other.may_overlap()
        and other.overlaps(resv.start, resv.end) and set(other.nodes) & set(resv.nodes)
        for other in existing.values()
    )  # fmt: skip


def check_new(existing: dict[str, Reservation], resv: Reservation, now: int) -> None:
    """Refuse bad times and overlapping node sets like slurmctld does (the name is
    checked later, once the reservation id is drawn: ``AdminMixin.create_reservation``)."""
    check_time(resv.start, resv.end, now)
    if overlapping(existing, resv):
        raise SlurmError(CREATE_ERR + OVERLAPS, 1)


__all__ = [
    "BUSY", "CREATE_ERR", "DUPLICATE", "FLAG_ORDER", "INVALID_NODE", "INVALID_RESV",
    "INVALID_TIME", "IN_USE", "MAX_RESV_DELAY", "OVERLAPS", "RESV_CHECK_PERIOD",
    "Reservation", "check_new", "check_time", "order_flags", "overlapping",
]  # fmt: skip
