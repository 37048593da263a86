"""A textbook EASY backfilling scheduler: the yardstick of ``simulate --procs N --scheduler easy``.

EASY (Lifka 1995; as defined by Mu'alem and Feitelson, IEEE TPDS 12(6), 2001) on a
machine of ``procs`` identical processors, at one-second resolution, event-driven:

- the events are arrivals and completions; at each event time, completions are
  processed first, then arrivals (in submit time, then job number order), then the
  scheduler runs once;
- the queue is first come, first served: jobs start from its head while they fit;
- when the head does not fit, it gets a reservation: the **shadow time** is the
  earliest time at which enough processors are free for it, counting each running job
  as ending at ``start + requested time`` (the scheduler does not know the runtime),
  and the **extra** processors are those free at the shadow time beyond the head's;
- every other queued job, in queue order, is started (backfilled) iff it fits in the
  processors free now and either ends by the shadow time (``now + requested <=
  shadow``) or uses only extra processors (``size <= extra``; those are then used up);
- a job runs ``min(runtime, requested)`` seconds (killed at its limit).

Small and slow on purpose (it sorts the running jobs at each event): it is read, not run
for speed.  Waits and bounded slowdowns are computed here as in ``minislurm.sim.metrics``.

Two knobs, off by default, model where Slurm's sched/backfill differs from the textbook,
so that a test can show *which* difference explains a gap: ``limit_unit=60`` rounds each
requested time up to whole minutes (Slurm keeps time limits in minutes: ``--time``),
for the reservation and the kill; ``backfill_delay=1`` runs the backfill step not at
the event but in a pass that many seconds later (``bf_interval``; the head-of-queue
starts still happen at the event, as Slurm's main scheduler does on submission and
completion).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

#: Feitelson's threshold of bounded slowdown (seconds), as minislurm.sim.metrics.TAU.
TAU = 10


@dataclass(frozen=True, slots=True)
class RefJob:
    """A rigid job: arrives at ``submit``, needs ``size`` processors, runs ``runtime``
    seconds, asks for ``requested`` seconds (its time limit)."""

    number: int
    submit: int
    size: int
    runtime: int
    requested: int


@dataclass(frozen=True, slots=True)
class RefOutcome:
    """When a job started and ended."""

    job: RefJob
    start: int
    end: int

    @property
    def wait(self) -> int:
        """Seconds from arrival to start."""
        return self.start - self.job.submit

    def bounded_slowdown(self, tau: int = TAU) -> float:
        """``max(1, (wait + run) / max(run, tau))``."""
        run = self.end - self.start
        return max(1.0, (self.wait + run) / max(run, tau))


def shadow_and_extra(
    now: int, free: int, head_size: int, running: Iterable[tuple[int, int]]
) -> tuple[int, int]:
    """The head's reservation: ``(shadow time, extra processors)``.

    ``running``: ``(requested end, size)`` of each running job.  Processors come back
    in order of requested end; the shadow time is the first end at which ``free`` plus
    what came back covers ``head_size`` (``now`` when it already does).  The extra
    processors are all those free at the shadow time: every job ending then counts,
    not only the ones needed to cover the head.
    """
    available = free
    if available >= head_size:
        return now, available - head_size
    ends = sorted(running)
    for i, (end, size) in enumerate(ends):
        available += size
        if available >= head_size:
            available += sum(s for e, s in ends[i + 1:] if e == end)
            return end, available - head_size
    raise ValueError(f"a job of {head_size} processors can never start")


def easy_schedule(
    jobs: Sequence[RefJob], procs: int, *, limit_unit: int = 1, backfill_delay: int = 0
) -> list[RefOutcome]:
    """Run ``jobs`` under EASY on ``procs`` processors; outcomes in job number order.

    Jobs larger than the machine, or without a positive requested time, are dropped
    (they could never run), as SWF simulators do.  ``limit_unit``, ``backfill_delay``:
    Slurm's deviations (module docstring); the textbook is 1 and 0.
    """
    arrivals = sorted(
        (
            replace(j, requested=-(-j.requested // limit_unit) * limit_unit)
            for j in jobs
            if 0 < j.size <= procs and j.requested > 0
        ),
        key=lambda j: (j.submit, j.number),
    )
    queue: list[RefJob] = []
    running: dict[int, tuple[int, int]] = {}  # number -> (requested end, size)
    completions: list[tuple[int, int]] = []  # heap of (end, number)
    outcomes: dict[int, RefOutcome] = {}
    free = procs
    nxt = 0

    def start(job: RefJob, now: int) -> None:
        nonlocal free
        free -= job.size
        end = now + min(job.runtime, job.requested)
        running[job.number] = (now + job.requested, job.size)
        heapq.heappush(completions, (end, job.number))
        outcomes[job.number] = RefOutcome(job, now, end)

    def schedule(now: int, backfill: bool) -> None:
        while queue and queue[0].size <= free:
            start(queue.pop(0), now)
        if not queue or not backfill:
            return
        shadow, extra = shadow_and_extra(now, free, queue[0].size, running.values())
        for job in list(queue[1:]):
            if job.size > free:
                continue
            if now + job.requested <= shadow:
                queue.remove(job)
                start(job, now)
            elif job.size <= extra:
                queue.remove(job)
                start(job, now)
                extra -= job.size

    passes: list[int] = []  # times of delayed backfill passes (backfill_delay > 0)
    while nxt < len(arrivals) or completions or passes:
        candidates = passes[:1]
        if nxt < len(arrivals):
            candidates.append(arrivals[nxt].submit)
        if completions:
            candidates.append(completions[0][0])
        now = min(candidates)
        while completions and completions[0][0] == now:
            _, number = heapq.heappop(completions)
            free += running.pop(number)[1]
        while nxt < len(arrivals) and arrivals[nxt].submit == now:
            queue.append(arrivals[nxt])
            nxt += 1
        in_pass = bool(passes) and passes[0] == now
        if in_pass:
            passes.pop(0)
        schedule(now, backfill=backfill_delay == 0 or in_pass)
        if backfill_delay and not in_pass and queue and now + backfill_delay not in passes:
            passes.append(now + backfill_delay)
    return [outcomes[n] for n in sorted(outcomes)]


def mean_wait(outcomes: Sequence[RefOutcome]) -> float:
    """Mean wait (seconds) of the outcomes."""
    return sum(o.wait for o in outcomes) / len(outcomes) if outcomes else 0.0


def mean_bounded_slowdown(outcomes: Sequence[RefOutcome], tau: int = TAU) -> float:
    """Mean bounded slowdown of the outcomes."""
    return sum(o.bounded_slowdown(tau) for o in outcomes) / len(outcomes) if outcomes else 0.0
