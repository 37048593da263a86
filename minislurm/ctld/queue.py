"""The order of pending jobs: slurmctld's job queue (``build_job_queue``, ``sort_job_queue``).

``JobQueue`` keeps the pending jobs sorted by the key ``sort_job_queue2`` uses: the
partition's ``PriorityTier``, then the job's priority, submit time and id.  The
priorities come from the configured priority plugin (``priority_g_set``), and only
through ``minislurm.priority.PriorityPlugin``: the queue never asks which plugin it
holds, so a new ``PriorityType`` needs no change here.

The order is a list kept sorted on insert; a scheduler pass walks it without copying
it (``_order_walk``).  A change that may move jobs (a new priority, a hold, an update)
marks it for a full sort before the next walk (``resort``); entries of jobs that
left the queue are dropped before a walk once they outnumber a quarter of it.
"""

from __future__ import annotations

import bisect
import operator
from collections.abc import Callable, Iterator
from typing import cast

from minislurm.priority import PriorityPlugin

from .job_mgr import Job

#: (-PriorityTier, -priority, submit time, job id): ``sort_job_queue2``'s order.
Key = tuple[int, int, int, int]


def _key(job: Job, tier: int) -> Key:
    """A job's place in the scheduling order, its partition's PriorityTier ``tier``
    first: higher tier, higher priority, earlier submit time, lower id."""
    return (-tier, -job.priority, job.submit_time, job.job_id)


#: The key of a (key, job) pair (the sort of a rebuild compares keys only: they are unique).
_first = operator.itemgetter(0)


class JobQueue:
    """Pending jobs in scheduling order, with their priorities from ``plugin``.

    ``pending`` is the controller's map of pending jobs (shared, not copied): an entry
    of the order whose job left it is skipped and dropped at the next rebuild.
    ``tier(job)`` is the ``PriorityTier`` of the job's partition.
    """

    def __init__(self, plugin: PriorityPlugin, pending: dict[int, Job],
                 tier: Callable[[Job], int]) -> None:
        self.plugin = plugin
        self._pending = pending
        self._tier = tier
        self._order: list[Job] = []  # pending jobs in order (stale entries skipped)
        self._keys: list[Key] = []
        self._ids: set[int] = set()
        self._dirty = False
        self.readers = 0  # _order_walk generators alive (add copies the list, then)

    # ---- priorities (priority_g_*) -------------------------------------------------
    @property
    def recalculates(self) -> bool:
        """Whether ``PriorityCalcPeriod`` passes change anything (the plugin says)."""
        return self.plugin.recalculates

    def set_priority(self, job: Job, now: int) -> None:
        """``priority_g_set``: the plugin's number for ``job`` at ``now``."""
        job.priority = int(self.plugin.priority(job.priority_view(), now))

    def recalc(self, now: int) -> None:
        """``PriorityCalcPeriod``: every pending job's priority anew (multifactor's decay
        thread); a plugin whose numbers never change (priority/basic) has nothing to redo."""
        if not self.plugin.recalculates:
            return
        jobs = list(self._pending.values())
        prios = self.plugin.priorities([j.priority_view() for j in jobs], now)
        for job, prio in zip(jobs, prios, strict=True):
            job.priority = prio
        self._dirty = True

    def renice(self, job: Job, old_nice: int, now: int) -> None:
        """``Nice=`` changed: the plugin moves the priority, or it is computed anew."""
        moved = self.plugin.renice(job.priority, old_nice, job.nice)
        if moved is None:
            self.set_priority(job, now)
        else:
            job.priority = moved

    # ---- the order -----------------------------------------------------------------
    def key(self, job: Job) -> Key:
        """Scheduling order: PriorityTier of the partition, priority, submit time, id."""
        return _key(job, self._tier(job))

    def _keys_of(self, jobs: list[Job]) -> list[Key]:
        """``key(job)`` of each of ``jobs``, the tier looked up once per partition (every
        pass after a ``PriorityCalcPeriod`` sorts the whole queue anew)."""
        tiers: dict[str, int] = {}
        keys: list[Key] = []
        for j in jobs:
            tier = tiers.get(j.partition)
            if tier is None:
                tier = tiers[j.partition] = self._tier(j)
            keys.append(_key(j, tier))
        return keys

    def resort(self) -> None:
        """Priorities or partitions changed: sort everything before the next walk."""
        self._dirty = True

    def add(self, job: Job) -> None:
        """A job became pending (``_pending`` already holds it): insert it in order."""
        if job.job_id in self._ids:  # requeued: its old entry moves on the next sort
            self._dirty = True
            return
        key = self.key(job)
        at = bisect.bisect_right(self._keys, key)
        if self.readers:  # a pass is walking the list: leave it its copy
            self._order, self._keys = self._order[:], self._keys[:]
        self._keys.insert(at, key)
        self._order.insert(at, job)
        self._ids.add(job.job_id)

    def walk(self) -> Iterator[Job]:
        """Pending jobs, highest priority first (a sorted list kept up to date on insert)."""
        pending = self._pending
        if self._dirty or len(self._order) > 2 * len(pending) + 64:
            live = list(dict.fromkeys(j for j in self._order if pending.get(j.job_id) is j))
            live += [j for j in pending.values() if j.job_id not in self._ids]
            self._ids = {j.job_id for j in live}
            keys = self._keys_of(live)
            if self._dirty:
                pairs = sorted(zip(keys, live, strict=True), key=_first)
                keys, live = [k for k, _ in pairs], [j for _, j in pairs]
            self._order = live
            self._keys = keys
            self._dirty = False
        elif len(self._order) > len(pending) + (len(pending) >> 2) + 8:
            self._compact()
        walk = _order_walk(self, self._order)
        next(walk)  # counts the reader now, before the caller's first job
        return cast(Iterator[Job], walk)

    def _compact(self) -> None:
        """Drop the entries of jobs that left the queue (started, cancelled), keeping the
        order and the keys as they are: every pass walks the whole list, so stale
        entries must not pile up between sorts.  A new list, so that a walk alive keeps
        its own."""
        pending, order, keys = self._pending, self._order, self._keys
        keep = [k for k, j in enumerate(order) if pending.get(j.job_id) is j]
        self._order = [order[k] for k in keep]
        self._keys = [keys[k] for k in keep]
        self._ids = {j.job_id for j in self._order}


def _order_walk(queue: JobQueue, order: list[Job]) -> Iterator[Job | None]:
    """The pending jobs of ``order``, the list as it was when the walk began (what
    ``JobQueue.walk`` returns, started: ``queue.readers`` counts it until it is
    exhausted, closed or collected).

    While a walk is alive, ``JobQueue.add`` inserts into a new list instead, so the walk
    sees the list as it was when the walk began.  A generator rather than an iterator
    class: every scheduler pass takes its jobs from here, one resume per job instead of
    one method call.
    """
    pending = queue._pending
    queue.readers += 1
    try:
        yield None  # primed by walk: the reader counts from the start
        for j in order:
            if pending.get(j.job_id) is j:
                yield j
    finally:
        queue.readers -= 1


__all__ = ["JobQueue", "Key"]
