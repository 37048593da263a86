"""Advance reservations (``scontrol create reservation``; src/slurmctld/reservation.c).

``scontrol create reservation reservationname=big starttime=now+2hours
duration=14-00:00:00 nodes=n[1-4] users=alice`` sets nodes aside for a time
window.  Jobs submitted with ``--reservation=big`` may run only there (and wait
with reason ``Reservation`` until it starts); other jobs may use those nodes only
if they end before the reservation starts, which backfill respects because the
reservation's nodes leave the map for that window.
"""

from __future__ import annotations

from dataclasses import dataclass

from minislurm.errors import SlurmError
from minislurm.node import ReservationRecord


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

    def active(self, now: int) -> bool:
        """True between StartTime and EndTime."""
        return self.start <= now < self.end

    def overlaps(self, start: int, end: int) -> bool:
        """True when ``[start, end)`` meets the reservation's window."""
        return start < self.end and self.start < end

    def allows(self, user: str, account: str) -> bool:
        """Users=/Accounts= of the reservation."""
        return (not self.users and not self.accounts) or user in self.users or (
            account in self.accounts
        )

    def record(self, now: int) -> ReservationRecord:
        """The snapshot ``scontrol show reservation`` prints."""
        return ReservationRecord(
            name=self.name, start_time=self.start, end_time=self.end, nodes=self.node_names,
            users=self.users, accounts=self.accounts, flags=("SPEC_NODES",),
            core_count=self.core_count, state="ACTIVE" if self.active(now) else "INACTIVE",
        )  # fmt: skip


def check_new(existing: dict[str, Reservation], resv: Reservation) -> None:
    """Refuse duplicates and overlapping node sets like slurmctld does."""
    if resv.name in existing:
        raise SlurmError("Error creating the reservation: Reservation request overlaps", 1)
    if resv.end <= resv.start:
        raise SlurmError("Error creating the reservation: Invalid time specification", 1)
    for other in existing.values():
        if other.overlaps(resv.start, resv.end) and set(other.nodes) & set(resv.nodes):
            raise SlurmError("Error creating the reservation: Requested nodes are busy", 1)


__all__ = ["Reservation", "check_new"]
