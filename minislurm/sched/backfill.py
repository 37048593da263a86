"""sched/backfill (``SchedulerType=sched/backfill``; ``_attempt_backfill`` in backfill.c).

Every ``bf_interval`` seconds (when something changed) the pass:

1. builds the node-space map (``NodeSpaceMap``): the resources free now, plus
   each running job's resources coming back at its *time limit* (not its real
   end, which Slurm cannot know), slots rounded to ``bf_resolution`` seconds,
   nothing tracked beyond ``bf_window`` minutes (Slurm builds it anew each pass;
   here the last pass's map before its reservations is kept and brought up to date
   where jobs started or ended, which gives the same map);
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
* ``'easy'``: EASY backfilling: only the first job that cannot start gets a reservation
  (where nobody reads the expected starts, the pass asks an ``EasySpace``: the same
  answers without the map's grids);
* ``'conservative'``: every job gets a reservation, no ``bf_max_job_test`` cap;
* ``'fifo'``: no backfill at all (the main scheduler's strict FIFO).

``bf_continue`` lets Slurm resume an interrupted pass where it stopped; a
simulated pass takes no simulated time and is never interrupted, so it is
accepted and has no effect.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from minislurm.common.hostlist import compress
from minislurm.conf import SchedulerParameters
from minislurm.job import Allocation
from minislurm.sched.builtin import SchedJob, SchedulerContext
from minislurm.sched.easy_space import EasySpace
from minislurm.sched.node_space import AllocCells, FitKey, NodeSpaceMap, fit_key, fit_now
from minislurm.select.cons_tres import spread_node_estimate
from minislurm.select.request import ResourceRequest, order_nodes
from minislurm.select.table import BoolArray, IntArray, NodeTable
from minislurm.states import Reason

POLICIES = ("fifo", "easy", "conservative", "slurm")


@dataclass(frozen=True, slots=True)
class BackfillParams:
    """The ``SchedulerParameters=`` backfill knobs (``from_config``; Slurm 22.05's
    defaults are those of ``minislurm.conf.SchedulerParameters``)."""

    bf_interval: int  # seconds between passes
    bf_window: int  # minutes of future the map covers
    bf_resolution: int  # seconds per map slot
    bf_max_job_test: int  # jobs tested per pass
    bf_continue: bool
    bf_min_prio_reserve: int  # below this priority: start only, no reservation

    @classmethod
    def from_config(cls, sched: SchedulerParameters) -> BackfillParams:
        """The knobs of ``SchedulerParameters=`` (their defaults live in the config record)."""
        return cls(
            bf_interval=sched.bf_interval,
            bf_window=sched.bf_window,
            bf_resolution=sched.bf_resolution,
            bf_max_job_test=sched.bf_max_job_test,
            bf_continue=sched.bf_continue,
            bf_min_prio_reserve=sched.bf_min_prio_reserve,
        )


@dataclass(slots=True)
class Running:
    """A running job as the map needs it: what it holds and when its limit ends."""

    allocation: Allocation
    limit_end: int | None  # None: UNLIMITED


#: The node-space map a pass asks: the map itself, or an EASY pass's `EasySpace`.
Space = NodeSpaceMap | EasySpace


def space_for(policy: str, estimates: bool) -> type[NodeSpaceMap] | type[EasySpace]:
    """What a pass of ``policy`` asks for its node-space map: an EASY pass whose expected
    starts nobody reads (a simulation) asks an `EasySpace`, the same answers without
    the map's grids; every other pass the ``NodeSpaceMap``."""
    return EasySpace if policy == "easy" and not estimates else NodeSpaceMap


def _hold(
    table: NodeTable, nodes: np.ndarray, count: int, free_cpu: IntArray | None = None
) -> IntArray:
    """The whole nodes a reservation holds: the first ``count`` of ``nodes`` (indices).

    Slurm 22.05's node-space map is a node *bitmap* per time slice:
    ``_add_reservation`` clears the reserved job's nodes from every slice of its
    window, so no lower-priority job may use those nodes then, even when it would
    fit beside the big job by cores (``-N4`` taking 1 CPU per node still blocks a
    1-CPU job that would overlap its window).
    """
    if free_cpu is not None:  # the nodes as they were (a postponed reservation)
        table = copy.copy(table)
        table.free_cpu = free_cpu
    return order_nodes(table, nodes)[:count]


@dataclass(slots=True)
class _Blocked:
    """A job that cannot start now, whose reservation is made only when it matters."""

    job: SchedJob
    shape: ResourceRequest
    allowed: BoolArray
    count: int
    duration: int
    named: bool = True  # record the planned nodes (sched_nodes)


class _Postponed:
    """Reservations a lazy pass has not made yet, and the starts that came after them.

    When a job can start now, the reservations of the blocked jobs before it must be
    in the map -- unless none of them can begin before the job would end: then they
    do not touch its run and change nothing about whether it starts.  ``start_bound``
    gives, for each, a time its reservation cannot start before; while the job's end
    is within the smallest of those bounds (``horizon``), the reservations wait.  When
    they are needed (a job whose run reaches beyond the horizon, or one that gets a
    reservation itself), ``materialize`` makes them exactly as the pass would have:
    the jobs started since are taken out of the map, the reservations are made in
    priority order with the starts put back between them where they came, and the
    node order of each reservation (busy nodes first) sees the nodes as they were.
    """

    def __init__(self, space: Space, table: NodeTable) -> None:
        self.space = space
        self.table = table
        self.log: list[tuple[list[_Blocked], bool] | tuple[Allocation, int]] = []
        self.horizon = space.horizon + 1  # nothing postponed: no limit
        self.waiting = 0  # reservations in the log

    def add_batch(self, batch: list[_Blocked], first: bool) -> None:
        """Postpone the reservations of ``batch`` (``first``: its head is the pass's first)."""
        for b in batch:
            bound = self.space.start_bound(b.shape, b.allowed, b.count)
            self.horizon = min(self.horizon, bound)
        if first and batch[0].job.reason in (Reason.NONE, Reason.PRIORITY):
            batch[0].job.reason = Reason.RESOURCES
        self.log.append((batch, first))
        self.waiting += len(batch)

    def add_start(self, alloc: Allocation, duration: int) -> None:
        """A job started (now, for ``duration`` seconds) after the postponed reservations."""
        if self.waiting:
            self.log.append((alloc, duration))

    def covers(self, duration: int) -> bool:
        """True if a run of ``duration`` seconds from now ends before any postponed start."""
        return not self.waiting or self.space.now + duration <= self.horizon

    def materialize(self) -> None:
        """Make the postponed reservations, in order, as if they had never waited."""
        if not self.waiting:
            self.log.clear()
            return
        space, now = self.space, self.space.now
        free_cpu = self.table.free_cpu.copy()
        for entry in self.log:  # take the later starts out again
            if isinstance(entry[0], Allocation):
                alloc, duration = entry
                assert isinstance(alloc, Allocation) and isinstance(duration, int)
                space.add(alloc, now, now + duration, +1)
                _give(space.cells, free_cpu, alloc, +1)
        for entry in self.log:
            if isinstance(entry[0], Allocation):
                alloc, duration = entry
                assert isinstance(alloc, Allocation) and isinstance(duration, int)
                space.reserve(alloc, now, now + duration)
                _give(space.cells, free_cpu, alloc, -1)
            else:
                batch, first = entry
                assert isinstance(batch, list) and isinstance(first, bool)
                for b in batch:
                    _reserve(space, self.table, b, first and b is batch[0], free_cpu=free_cpu)
        self.log.clear()
        self.horizon = space.horizon + 1
        self.waiting = 0


def _give(cells: AllocCells, free_cpu: IntArray, alloc: Allocation, sign: int) -> None:
    """Add (``+1``) or take (``-1``) the CPUs of ``alloc`` in ``free_cpu`` (its arrays as
    the map keeps them: an allocation names each of its nodes once)."""
    idx, vals = cells.of(alloc)
    free_cpu[idx] += sign * vals[:, 0]


def _reserve(
    space: Space, table: NodeTable, b: _Blocked, first: bool,
    found: tuple[int, BoolArray] | bool | None = False, *, free_cpu: IntArray | None = None,
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
    held = _hold(table, np.flatnonzero(nodes_ok), b.count, free_cpu)
    if b.named:  # SchedNodeList= (not kept where nobody reads it: simulate())
        b.job.sched_nodes = compress([table.names[i] for i in sorted(held.tolist())])
    space.hold_nodes(held, start, start + b.duration)
    if first and b.job.reason in (Reason.NONE, Reason.PRIORITY):
        b.job.reason = Reason.RESOURCES


class _PassView:
    """What a pass asks again and again, answered once: allowed nodes, fits now.

    ``allowed`` depends on the partition, the job's reservation and (when advance
    reservations exist) its duration: it is kept per ``ctx.allowed_key`` for the pass
    (the node states do not change during a pass).  "How many allowed nodes fit one
    share of this shape now" is kept per (shape, allowed nodes) until a job starts.
    """

    def __init__(self, ctx: SchedulerContext, table: NodeTable) -> None:
        self.ctx = ctx
        self.table = table
        key_of = getattr(ctx, "allowed_key", None)
        self._key_of = key_of if callable(key_of) else None
        self._allowed: dict[object, tuple[BoolArray, int]] = {}
        self._now_rows: dict[FitKey, BoolArray] = {}
        self._now_counts: dict[tuple[FitKey, object], int] = {}
        self._free_now: bool | None = None

    def allowed(self, job: SchedJob, duration: int) -> tuple[BoolArray, int, object]:
        """(allowed nodes, how many, cache key) for ``job`` running ``duration`` seconds."""
        key = self._key_of(job, duration) if self._key_of is not None else None
        if key is None:
            mask = self.ctx.allowed(job, duration)
            return mask, int(np.count_nonzero(mask)), object()
        hit = self._allowed.get(key)
        if hit is None:
            mask = self.ctx.allowed(job, duration)
            hit = self._allowed[key] = (mask, int(np.count_nonzero(mask)))
        return hit[0], hit[1], key

    def fits_now(
        self, shape: ResourceRequest, allowed: BoolArray, akey: object, count: int
    ) -> bool:
        """Could ``count`` allowed nodes host ``shape`` now (ignoring its duration)?"""
        fk = fit_key(shape)
        n = self._now_counts.get((fk, akey))
        if n is None:
            row = self._now_rows.get(fk)
            if row is None:
                row = self._now_rows[fk] = fit_now(self.table, fk)
            n = self._now_counts[(fk, akey)] = int(np.count_nonzero(allowed & row))
        return n >= count

    def anything_free_now(self) -> bool:
        """True while some usable node has a free CPU now."""
        if self._free_now is None:
            t = self.table
            self._free_now = bool((t.usable & (t.free_cpu > 0)).any())
        return self._free_now

    def started(self) -> None:
        """A job started: what fits now changed."""
        self._now_rows.clear()
        self._now_counts.clear()
        self._free_now = None


def backfill_pass(
    ctx: SchedulerContext,
    table: NodeTable,
    running: list[Running] | Callable[[], list[Running]],
    params: BackfillParams,
    *,
    policy: str = "slurm",
    lazy: bool | None = None,
    estimates: bool = True,
    cells: AllocCells | None = None,
) -> int:
    """One backfill pass; returns how many jobs it started.

    ``lazy`` (default: on except for ``conservative``) makes a blocked job's
    reservation only when a later job could start now, which is when it matters:
    the jobs started are exactly the same, but ``est_start`` of blocked jobs
    behind the last startable one is not refreshed.  It saves most of a pass on
    a full cluster.  The node-space map itself is built only once it is needed
    (``running`` may be a function giving the running jobs then): a lazy pass in
    which no tested job fits now never builds it.  ``cells`` keeps the running
    jobs' allocations as arrays, and the last pass's map of releases, from one pass
    to the next (``AllocCells``).
    """
    if policy == "fifo":
        return 0
    if lazy is None:
        lazy = policy != "conservative"
    now = ctx.now
    view = _PassView(ctx, table)
    space_box: list[Space] = []
    space_kind = space_for(policy, estimates)

    def space_now() -> Space:
        if not space_box:
            space = space_kind(table, now, params.bf_resolution, params.bf_window * 60, cells)
            jobs = running() if callable(running) else running
            space.add_releases([(r.allocation, r.limit_end) for r in jobs])
            space_box.append(space)
        return space_box[0]

    started = tested = reservations = 0
    deferred: list[_Blocked] = []
    post: _Postponed | None = None  # reservations made only once a decision needs them
    cap = None if policy == "conservative" else params.bf_max_job_test
    full = False  # nothing is free any more: only reasons (and estimates) are refreshed
    for job in ctx.pending_in_order():
        if cap is not None and tested >= cap:
            break
        if ctx.blocker(job) is not None:
            continue
        if estimates and not tested:  # the pass has a job to test
            _clear_estimates(ctx)
        tested += 1
        job.last_sched_eval = now
        job.scheduler = "Backfill"  # BACKFILL_SCHED: Scheduler=Backfill:* while it pends
        req: ResourceRequest = job.request
        duration = ctx.duration(job)
        while True:
            allowed, n_allowed, akey = view.allowed(job, duration)
            count = spread_node_estimate(req, table, allowed) if req.spread else req.node_count
            shape = req if not req.spread else _spread_shape(req, count)
            if n_allowed < count or (
                req.req_nodes and not allowed[sorted(req.req_nodes)].all()
            ):  # can never fit as nodes stand: say why
                job.reason = ctx.explain(job)
                job.est_start = None
                break
            if full and not estimates:
                break
            may_reserve = not (
                (policy == "easy" and reservations >= 1)
                or (policy == "slurm" and job.priority < params.bf_min_prio_reserve)
            )
            least = least_share(req, shape, count)  # what select needs of a node
            test_shape, test_count = (shape, count) if least is None else least
            if lazy and not view.fits_now(test_shape, allowed, akey, test_count):
                if may_reserve:
                    deferred.append(_Blocked(job, shape, allowed, count, duration, estimates))
                    reservations += 1
                break
            blocked = _Blocked(job, shape, allowed, count, duration, estimates)
            space = space_now()
            if post is None:
                post = _Postponed(space, table)
            if deferred:  # reservations of higher-priority jobs come first
                post.add_batch(deferred, reservations == len(deferred))
                deferred = []
            if not post.covers(duration):
                post.materialize()
            only_now = _only_now(job, may_reserve, least)
            if only_now:  # found None: not now (later, or never: not told apart)
                nodes_now = space.starts_now(test_shape, allowed, test_count, duration)
                found = None if nodes_now is None else (now, nodes_now)
            else:
                found = space.earliest(test_shape, allowed, test_count, duration)
            if found is not None and found[0] == now:
                res = ctx.try_select(job, allowed & found[1], preempt=False)
                if isinstance(res, Allocation):
                    started_job = ctx.start(job, res, "Backfill")
                    started += 1
                    view.started()
                    space.reserve(res, now, now + duration)
                    post.add_start(res, duration)
                    if started_job is not job and ctx.still_pending(job):
                        why = ctx.blocker(job)
                        if why is None:
                            continue
                        job.reason = why
                    break
            if only_now:  # no reservation, est_start None already: nothing else to learn
                if post.waiting and found is None:
                    post.materialize()  # as below: the map is whole before the next job
                break
            if least is not None:  # the reservation: an even share on every node
                found = space.earliest(shape, allowed, count, duration)
            if post.waiting and (may_reserve or found is None or found[0] != now):
                post.materialize()  # what comes next depends on the whole map
                if found is None or found[0] != now:
                    found = space.earliest(shape, allowed, count, duration)
            if may_reserve:
                _reserve(space, table, blocked, reservations == 0, found)
                reservations += 1
            elif found is None:
                job.est_start = None
            break
        if not full and not view.anything_free_now():
            full = True  # nothing can start any more: later reservations change no start
    if estimates and (post is not None or deferred):  # the expected starts of squeue --start
        if post is None:
            post = _Postponed(space_now(), table)
        if deferred:
            post.add_batch(deferred, reservations == len(deferred))
        post.materialize()
    return started


def _only_now(job: SchedJob, may_reserve: bool, least: object) -> bool:
    """True if all a pass needs of ``job`` is whether it can start now.

    A job that gets no reservation (EASY behind its first, Slurm's below
    ``bf_min_prio_reserve``) either starts now or waits; the start ``earliest`` finds
    later would only be used to clear its expected start when it has none inside the
    window -- and it has none already (``est_start`` None: nobody reads estimates, or
    they were cleared).  ``least`` (an uneven share) searches again with the job's own
    shape, so that case keeps the full search.
    """
    return not may_reserve and least is None and job.est_start is None


def _clear_estimates(ctx: SchedulerContext) -> None:
    """``_clear_job_estimates``: a pass that has jobs to test first forgets the expected
    start and planned nodes of every pending job (held ones too); the jobs it tests get
    new ones.  With nothing to test, the old ones stay (a held job keeps its
    SchedNodeList=, as measured on 22.05.8)."""
    for job in ctx.pending_in_order():
        job.est_start = None
        job.sched_nodes = None


def least_share(
    req: ResourceRequest, shape: ResourceRequest, count: int
) -> tuple[ResourceRequest, int] | None:
    """The least a node must have free for select to use it, and how many such nodes.

    cons_tres's ``_eval_nodes`` takes a node with one task's CPUs free and shares the
    tasks out unevenly (``-N2 -n5`` beside busy nodes gets 2 + 3 CPUs), and a spread
    request (``-n`` alone) fills nodes one task at a time.  So the start-now attempt of
    sched/backfill (``_try_sched``: select on the nodes no reservation holds during the
    job's window) must offer select every such node, not only those with an even share
    free; ``None`` when the job's ``shape`` on ``count`` nodes in the map is that least
    (``--ntasks-per-node``, ``--exclusive``, one task per node).  Reservations for
    later still hold an even share, as the job's shape in the map.
    """
    if req.exclusive or req.ntasks_per_node is not None:
        return None
    one = ResourceRequest(  # a --gpus total leaves each node at least one GPU
        ntasks=1, cpus_per_task=req.cpus_per_task, mem_per_node=req.mem_per_node,
        mem_per_cpu=req.mem_per_cpu, gpus_per_node=req.gpus_per_node or min(req.gpus_per_job, 1),
        gpu_type=req.gpu_type, gpus_per_task=req.gpus_per_task, exc_nodes=req.exc_nodes,
    )  # fmt: skip
    least = 1 if req.spread else count
    if least == count and fit_key(one) == fit_key(shape):
        return None
    return one, least


def _spread_shape(req: ResourceRequest, count: int) -> ResourceRequest:
    """A spread (``-n`` only) request as ``count`` equal node shares, for the map."""
    return ResourceRequest(
        min_nodes=count, ntasks=req.ntasks, cpus_per_task=req.cpus_per_task,
        ntasks_per_node=req.ntasks_per_node, mem_per_node=req.mem_per_node,
        mem_per_cpu=req.mem_per_cpu, gpus_per_node=req.gpus_per_node, gpu_type=req.gpu_type,
        gpus_per_job=req.gpus_per_job, gpus_per_task=req.gpus_per_task,
        exclusive=req.exclusive, exc_nodes=req.exc_nodes,
    )  # fmt: skip


__all__ = ["POLICIES", "BackfillParams", "Running", "backfill_pass", "least_share"]
