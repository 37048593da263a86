"""sched/backfill (``SchedulerType=sched/backfill``; ``_attempt_backfill`` in backfill.c).

Every ``bf_interval`` seconds (when something changed) the pass:

1. builds the node-space map (``NodeSpaceMap``): the resources free now, plus
   each running job's resources coming back at its *time limit* (not its real
   end, which Slurm cannot know), slots rounded to ``bf_resolution`` seconds,
   nothing tracked beyond ``bf_window`` minutes;
2. walks pending jobs in priority order, at most ``bf_max_job_test`` of them;
3. for each, finds the earliest slot where it fits for its whole time limit:
   if that is *now*, the job starts (it delays no reservation, since those are
   already subtracted from the map); otherwise it gets a reservation in the
   map (its expected start is what ``squeue --start`` shows), so that jobs
   further down can only start where they do not delay it.  As in Slurm's map
   (a node bitmap per time slice) a reservation holds its *whole nodes* for its
   window: a job that would fit beside it by cores does not start on them if
   its run would overlap the window.

``policy`` is a teaching switch:

* ``'slurm'``: as above; jobs with priority below ``bf_min_prio_reserve`` are only
  started, never given a reservation;
* ``'easy'``: EASY backfilling: only the first job that cannot start gets a reservation;
* ``'conservative'``: every job gets a reservation, no ``bf_max_job_test`` cap;
* ``'fifo'``: no backfill at all (the main scheduler's strict FIFO).

``bf_continue`` lets Slurm resume an interrupted pass where it stopped; a
simulated pass takes no simulated time and is never interrupted, so it is
accepted and has no effect.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from minislurm.job import Allocation, NodeAlloc
from minislurm.sched.builtin import SchedJob, SchedulerContext
from minislurm.sched.node_space import NodeSpaceMap
from minislurm.select.cons_tres import ResourceRequest, order_nodes, spread_node_estimate
from minislurm.select.table import BoolArray, NodeTable
from minislurm.states import Reason

POLICIES = ("fifo", "easy", "conservative", "slurm")


@dataclass(frozen=True, slots=True)
class BackfillParams:
    """The ``SchedulerParameters=`` backfill knobs (Slurm 22.05 defaults)."""

    bf_interval: int = 30  # seconds between passes
    bf_window: int = 1440  # minutes of future the map covers
    bf_resolution: int = 60  # seconds per map slot
    bf_max_job_test: int = 500  # jobs tested per pass
    bf_continue: bool = False
    bf_min_prio_reserve: int = 0  # below this priority: start only, no reservation

    @classmethod
    def from_config(cls, sched: object) -> BackfillParams:
        """Read the knobs from ``SlurmConfig.scheduler`` (missing ones keep the defaults)."""
        d = cls()

        def get(name: str, default: int) -> int:
            value = getattr(sched, name, None)
            if value is None and isinstance(getattr(sched, "params", None), dict):
                value = sched.params.get(name)  # type: ignore[attr-defined]
            return default if value is None else int(value)

        return cls(
            bf_interval=get("bf_interval", d.bf_interval),
            bf_window=get("bf_window", d.bf_window),
            bf_resolution=get("bf_resolution", d.bf_resolution),
            bf_max_job_test=get("bf_max_job_test", d.bf_max_job_test),
            bf_continue=bool(getattr(sched, "bf_continue", False)),
            bf_min_prio_reserve=get("bf_min_prio_reserve", d.bf_min_prio_reserve),
        )


@dataclass(slots=True)
class Running:
    """A running job as the map needs it: what it holds and when its limit ends."""

    allocation: Allocation
    limit_end: int | None  # None: UNLIMITED


def _hold(table: NodeTable, nodes: np.ndarray, count: int) -> Allocation:
    """The whole nodes a reservation holds: the first ``count`` of ``nodes``.

    Slurm 22.05's node-space map is a node *bitmap* per time slice:
    ``_add_reservation`` clears the reserved job's nodes from every slice of its
    window, so no lower-priority job may use those nodes then, even when it would
    fit beside the big job by cores (``-N4`` taking 1 CPU per node still blocks a
    1-CPU job that would overlap its window).
    """
    chosen = order_nodes(table, nodes)[:count]
    out = []
    for i in sorted(int(x) for x in chosen):
        gpus = ((None, -1),) * int(table.gpus[i])
        out.append(NodeAlloc(table.names[i], int(table.cpus[i]), int(table.mem[i]), gpus))
    return Allocation(tuple(out))


@dataclass(slots=True)
class _Blocked:
    """A job that cannot start now, whose reservation is made only when it matters."""

    job: SchedJob
    shape: ResourceRequest
    allowed: BoolArray
    count: int
    duration: int


def _reserve(
    space: NodeSpaceMap, table: NodeTable, b: _Blocked, first: bool,
    found: tuple[int, BoolArray] | bool | None = False,
) -> None:
    """Give ``b`` a reservation at its earliest start in the map (``squeue --start``)."""
    if found is False:
        found = space.earliest(b.shape, b.allowed, b.count, b.duration)
    assert found is not True
    if found is None:
        b.job.est_start = None
        return
    start, nodes_ok = found
    if start == space.now:  # fits in the map but select said no: try one slot later
        start += space.resolution
    b.job.est_start = start
    hold = _hold(table, np.flatnonzero(nodes_ok), b.count)
    space.reserve(hold, start, start + b.duration)
    if first and b.job.reason in (Reason.NONE, Reason.PRIORITY):
        b.job.reason = Reason.RESOURCES


def backfill_pass(
    ctx: SchedulerContext,
    table: NodeTable,
    running: list[Running],
    params: BackfillParams,
    *,
    policy: str = "slurm",
    lazy: bool | None = None,
) -> int:
    """One backfill pass; returns how many jobs it started.

    ``lazy`` (default: on except for ``conservative``) makes a blocked job's
    reservation only when a later job could start now, which is when it matters:
    the jobs started are exactly the same, but ``est_start`` of blocked jobs
    behind the last startable one is not refreshed.  It saves most of a pass on
    a full cluster.
    """
    if policy == "fifo":
        return 0
    if lazy is None:
        lazy = policy != "conservative"
    now = ctx.now
    space = NodeSpaceMap(table, now, params.bf_resolution, params.bf_window * 60)
    space.add_releases([(r.allocation, r.limit_end) for r in running])
    started = tested = reservations = 0
    deferred: list[_Blocked] = []
    cap = None if policy == "conservative" else params.bf_max_job_test
    full = False  # nothing is free any more: only the reasons are refreshed
    for job in ctx.pending_in_order():
        if cap is not None and tested >= cap:
            break
        if ctx.blocker(job) is not None:
            continue
        tested += 1
        job.last_sched_eval = now
        req: ResourceRequest = job.request
        duration = ctx.duration(job)
        while True:
            allowed = ctx.allowed(job, duration)
            count = spread_node_estimate(req, table, allowed) if req.spread else req.node_count
            shape = req if not req.spread else _spread_shape(req, count)
            if int(allowed.sum()) < count or (
                req.req_nodes and not allowed[sorted(req.req_nodes)].all()
            ):  # can never fit as nodes stand: say why
                job.reason = ctx.explain(job)
                job.est_start = None
                break
            if full:
                break
            blocked = _Blocked(job, shape, allowed, count, duration)
            may_reserve = not (
                (policy == "easy" and reservations >= 1)
                or (policy == "slurm" and job.priority < params.bf_min_prio_reserve)
            )
            if lazy and not space.fits_now(shape, allowed, count):
                if may_reserve:
                    deferred.append(blocked)
                    reservations += 1
                break
            for b in deferred:  # reservations of higher-priority jobs come first
                _reserve(space, table, b, b is deferred[0] and reservations == len(deferred))
            deferred.clear()
            found = space.earliest(shape, allowed, count, duration)
            if found is not None and found[0] == now:
                res = ctx.try_select(job, allowed & found[1])
                if isinstance(res, Allocation):
                    started_job = ctx.start(job, res, "Backfill")
                    started += 1
                    space.reserve(res, now, now + duration)
                    if started_job is not job and ctx.still_pending(job):
                        why = ctx.blocker(job)
                        if why is None:
                            continue
                        job.reason = why
                    break
            if may_reserve:
                _reserve(space, table, blocked, reservations == 0, found)
                reservations += 1
            elif found is None:
                job.est_start = None
            break
        if not full and not space.anything_free_now():
            full = True  # nothing can start any more: later reservations change no start
    if not lazy:
        for b in deferred:
            _reserve(space, table, b, False)
    return started


def _spread_shape(req: ResourceRequest, count: int) -> ResourceRequest:
    """A spread (``-n`` only) request as ``count`` equal node shares, for the map."""
    return ResourceRequest(
        min_nodes=count, ntasks=req.ntasks, cpus_per_task=req.cpus_per_task,
        ntasks_per_node=req.ntasks_per_node, mem_per_node=req.mem_per_node,
        mem_per_cpu=req.mem_per_cpu, gpus_per_node=req.gpus_per_node, gpu_type=req.gpu_type,
        exclusive=req.exclusive, exc_nodes=req.exc_nodes,
    )  # fmt: skip


__all__ = ["POLICIES", "BackfillParams", "Running", "backfill_pass"]
