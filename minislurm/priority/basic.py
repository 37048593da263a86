"""priority/basic: first in, first out (``PriorityType=priority/basic``).

Mirrors ``priority_p_set`` of ``src/plugins/priority/basic/priority_basic.c`` and
``set_job_prio`` of ``src/slurmctld/job_mgr.c``: each new job gets one less than the
lowest priority given so far (starting below ``TOP_PRIORITY`` = 0xffff0000, so the
first job gets 4294901759), minus its nice value, never below 1 (the nice of a job
does not move the counter for the next); priority 0 means held.  The priority never
changes afterwards.  ``sprio`` refuses to run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from minislurm.errors import SlurmError
from minislurm.priority.factors import MAX_PRIORITY, PriorityFactors

PLUGIN_TYPE = "priority/basic"

#: ``TOP_PRIORITY`` of job_mgr.c: the ``lowest_prio`` a fresh slurmctld starts from.
TOP_PRIORITY = 0xFFFF0000

#: What sprio prints (to stderr, exit 1) under priority/basic.
SPRIO_UNSUPPORTED = (
    "You are not running a supported priority plugin\n"
    "(priority/basic).\n"
    "Only 'priority/multifactor' is supported."
)


class BasicPriority:
    """FIFO priorities, remembered per job id in the order jobs are first seen."""

    name = PLUGIN_TYPE
    #: a FIFO number never changes once given: no ``PriorityCalcPeriod`` passes
    recalculates = False

    def __init__(self) -> None:
        self._lowest = TOP_PRIORITY
        self._assigned: dict[int, int] = {}

    def priority(self, job: Any, now: int) -> int:
        """The job's FIFO priority (assigned on first call; 0 while held).

        A held job loses its place: on release it is assigned anew (``set_job_prio``
        runs again in Slurm, so the job goes to the back of the FIFO).
        """
        if getattr(job, "hold", False):
            self._assigned.pop(job.job_id, None)
            return 0
        prio = self._assigned.get(job.job_id)
        if prio is None:
            new = self._lowest - 1 if self._lowest >= 2 else 1
            new -= int(job.nice)
            prio = int(min(max(new, 1), MAX_PRIORITY))
            self._assigned[job.job_id] = prio
            if prio != 1:
                # the FIFO counter moves by one per job whatever its nice (measured on
                # 22.05.8: nice 0,300,100,0,50 give base-0, -301, -102, -3, -54)
                self._lowest = min(self._lowest, prio + int(job.nice))
        return prio

    def priorities(self, jobs: Sequence[Any], now: int) -> list[int]:
        """``priority`` of each job (no pass ever asks: ``recalculates`` is False)."""
        return [self.priority(job, now) for job in jobs]

    def unread_pass(self, now: int) -> bool:
        """Nothing to decay: a FIFO number does not depend on time."""
        return True

    def renice(self, priority: int, old_nice: int, new_nice: int) -> int | None:
        """``_update_job``'s ``Nice=`` under priority/basic: the priority moves by the
        difference, never below 2 (a held job's 0 stays 0)."""
        if not priority:
            return priority
        return max(priority + old_nice - new_nice, 2)

    def factors(self, job: Any, now: int) -> PriorityFactors:
        """sprio's answer under priority/basic: an error, exit code 1."""
        raise SlurmError(SPRIO_UNSUPPORTED, 1)

    def record_usage(
        self, user: str, account: str, tres_seconds: Mapping[str, float], now: int
    ) -> None:
        """priority/basic keeps no usage."""
        return None


__all__ = ["PLUGIN_TYPE", "SPRIO_UNSUPPORTED", "TOP_PRIORITY", "BasicPriority"]
