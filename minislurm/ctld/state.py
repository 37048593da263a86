"""slurmctld's state: what the controller knows, its clock and when it acts next.

``CtldState`` is the data every part of the controller reads and changes: the node
table and partitions (``node_mgr.c``/``partition_mgr.c``'s lists), the jobs
(``job_list``) with their pending, running and array indexes, the reservations,
the QOS and associations, the settings read from slurm.conf, the job queue
(``queue.JobQueue``: order through the priority plugin), the accounting store and
the runner (the seam to slurmd).  It also keeps the bookkeeping every job
transition does (``register``, ``add_pending``, ``running_started`` ...) and the
controller's wake-ups (``kick``, ``later``, ``wake_at``, ``idle``).

It holds no rule: the modules beside it are functions over it (``lifecycle``,
``admin``, ``job_update``, ``submit_api``, ``sched_view``, ``preempt``,
``state_save``) and ``controller.Controller`` is the public face.  Nothing here
imports them, so the folder has no import circle.

The clock: ``env.now`` counts SimPy seconds; ``now`` is epoch seconds,
``env.now + clock_offset``.  The creator says which clock it is (``clock=``): a
simulated one starts at ``epoch`` (``SIMULATED``: ``Cluster``, trace simulations);
on the wall clock SimPy time already is epoch seconds (``WALL_CLOCK``: slurmctld).
Without ``clock=`` an environment that declares its wall-clock start
(``WallClockEnvironment``: ``minislurm.daemon.realtime``'s) is the wall clock, any other
simulated.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Protocol, TypeVar, cast, runtime_checkable

import numpy as np
import simpy
from simpy.events import Timeout

from minislurm.common.accounts import QOS, AssociationSet
from minislurm.conf import PartitionConfig, SlurmConfig
from minislurm.priority import PriorityPlugin, make_priority_plugin
from minislurm.sched.backfill import POLICIES, BackfillParams
from minislurm.select.table import NodeShape, NodeTable

from .accounting import Accounting
from .auth import operator_uids
from .job_mgr import Job
from .node_mgr import NodeInfo, NodeManager
from .queue import JobQueue
from .reservation import Reservation
from .runner import GathersUsage, JobRunner, SimulatedRunner
from .submit import PartView

T = TypeVar("T")

#: Default simulated epoch: 2026-01-05T08:00:00 UTC.
DEFAULT_EPOCH = 1767600000

#: ``clock=`` of a controller on the wall clock (``simpy.rt``): SimPy time is epoch time.
WALL_CLOCK = "wall"
#: ``clock=`` of a controller on simulated time: SimPy's 0 is ``epoch``.
SIMULATED = "simulated"


@runtime_checkable
class WallClockEnvironment(Protocol):
    """A SimPy environment on the wall clock: ``now`` is epoch seconds from the start.

    ``started_at`` is that start (epoch seconds): slurmctld counts its periodic
    checks from it (``lifecycle.limit_check_phase``).
    """

    started_at: float


def _no_pass() -> None:
    """The main scheduler before ``Controller`` installs it (``CtldState.main_pass``)."""


class CtldState:
    """What slurmctld knows and when it acts next.  See the module docstring."""

    def __init__(
        self,
        config: SlurmConfig,
        env: simpy.Environment | None = None,
        *,
        runner: JobRunner | None = None,
        policy: str | None = None,
        priority: PriorityPlugin | None = None,
        associations: AssociationSet | None = None,
        clock: str | None = None,
        epoch: int = DEFAULT_EPOCH,
        seed: int = 0,
    ) -> None:
        self.config = config
        self.env = env if env is not None else simpy.Environment()
        wall = self.env if isinstance(self.env, WallClockEnvironment) else None
        if clock is None:
            clock = WALL_CLOCK if wall is not None else SIMULATED
        if clock not in (SIMULATED, WALL_CLOCK):
            raise ValueError(f"unknown clock {clock!r}: use {SIMULATED!r} or {WALL_CLOCK!r}")
        #: epoch seconds at SimPy time 0 (0 on the wall clock)
        self.clock_offset = epoch if clock == SIMULATED else 0
        #: when this slurmctld started (epoch seconds): its periodic checks count from it
        self.started_at = int(wall.started_at) if wall is not None else self.clock_offset
        self.usage_runner: GathersUsage | None = None  # set with the runner (below)
        self.runner = runner if runner is not None else SimulatedRunner(self.env)
        self.seed = seed
        # ---- settings (slurm.conf; defaults live in minislurm.conf's records) ----
        sched = config.scheduler
        self.bf = BackfillParams.from_config(sched)
        self.queue_depth = sched.default_queue_depth or 100
        self.policy = policy or (
            "slurm" if config.scheduler_type.endswith("backfill") else "builtin")
        if self.policy not in (*POLICIES, "builtin"):
            raise ValueError(f"unknown scheduler policy {self.policy!r}: use {POLICIES}")
        self.kill_wait = config.kill_wait
        self.def_mem_per_cpu = config.def_mem_per_cpu
        self.enforce_part_limits = config.enforce_part_limits or "NO"
        self.max_array_size = config.max_array_size or 1001
        self.return_to_service = config.return_to_service or 0
        #: AccountingStorageEnforce=qos (or all): a job's QOS must be one its
        #: association lists (``_get_qos_info``: ``Invalid qos specification``)
        enforce = config.accounting_storage_enforce
        self.enforce_qos = "qos" in enforce or "all" in enforce
        #: JobRequeue: a batch job's Requeue when neither --requeue nor --no-requeue
        self.job_requeue = bool(config.job_requeue)
        self.associations = associations
        #: uids ``validate_super_user`` accepts (`minislurm.ctld.auth`): root, SlurmUser;
        #: the embedded Cluster and the daemon add the user who runs them
        self.operator_uids: set[int] = operator_uids(config)
        self.qos: dict[str, QOS] = {q.name: q for q in associations.qos} if associations else {}
        self.qos.setdefault("normal", QOS(name="normal"))
        self.preempt_type = config.preempt_type
        self.preempt_mode = config.preempt_mode.upper()
        #: slurm_preemption_enabled(): a preempt plugin other than none, PreemptMode not OFF
        self.preemption_enabled = (self.preempt_type != "preempt/none"
                                   and not self.preempt_mode.startswith("OFF"))
        # PriorityCalcPeriod is stored in seconds (config.py; Slurm's default: 5 minutes)
        self.prio_period = config.priority.calc_period or 300
        # ---- nodes and partitions ----------------------------------------------------
        self.table, self.parts, self.part_cfg, self.default_partition, self.nodes_mgr = (
            _build_nodes(config, self.now))
        self._idle_nodes: NodeTable | None = None
        # ---- jobs ----------------------------------------------------------------
        self.priority_plugin: PriorityPlugin = (
            priority if priority is not None else make_priority_plugin(config, associations))
        self.accounting_store = Accounting(self.priority_plugin.record_usage)
        self._next_id = config.first_job_id or 1
        self._jobs: dict[int, Job] = {}
        self._pending: dict[int, Job] = {}
        #: Pending jobs queued without an eligible time (held, ``-d``, ``--begin``, an
        #: array): ``SchedView.mark_independent`` looks at them on every pass.
        self.not_eligible: dict[int, Job] = {}
        self._running: dict[int, Job] = {}
        self.queue = JobQueue(self.priority_plugin, self._pending, self.tier)
        self.array_tasks: dict[int, list[Job]] = {}
        self.array_running: dict[int, int] = {}
        self.active_names: dict[tuple[str, str], set[int]] = {}
        self.user_running: dict[tuple[str, str], list[int]] = {}  # (qos, user) -> [jobs, gpus]
        # ---- reservations ----------------------------------------------------------
        self.reservations_by_name: dict[str, Reservation] = {}
        self.resv_top_suffix = 0  # _generate_resv_id's top_suffix
        #: nodes of active reservations show RESERVED, those restored from saved state too
        self.nodes_mgr.resv_flags = self._resv_flags
        # ---- wake-ups ----------------------------------------------------------------
        #: the main scheduler's pass (``sched/builtin``), installed by ``Controller``
        self.main_pass: Callable[[], None] = _no_pass
        self.main_scheduled = False
        self.bf_enabled = self.policy not in ("fifo", "builtin")
        self.bf_dirty = False
        #: while the backfill agent sleeps until a change: its wake-up, which `kick`
        #: schedules at the change's instant (``loops.BackfillAgent``)
        self.bf_wake: Callable[[simpy.Event], None] | None = None
        self.prio_wake: simpy.Event | None = None
        self._timers = 0  # controller wake-ups still to come (BeginTime, reservations, repairs)
        self.events = 0
        self.passes = {"main": 0, "backfill": 0}
        #: refresh every reserved job's expected start (``squeue --start``) on each
        #: backfill pass; off for trace simulations, whose decisions do not depend on it
        self.bf_estimates = True
        #: no one (squeue, sprio, a notebook) reads the controller between its own
        #: events: trace simulations, which then skip priority passes read by no one
        self.unobserved = False
        #: the backfill pass runs at the instant of the change that asked for it (after
        #: the main scheduler), not ``bf_interval`` seconds later: the textbook EASY of
        #: ``simulate --procs N --scheduler easy`` (minislurm.sim.simulate); Slurm has no
        #: such setting (its ``bf_interval`` is at least 1 s)
        self.bf_at_event = False

    @property
    def _prio_period(self) -> int:
        """``prio_period`` under its former name (tests/minislurm/ctld/test_idle.py reads it)."""
        return self.prio_period

    def is_operator(self, uid: int) -> bool:
        """``validate_super_user``: may ``uid`` update nodes, partitions, reservations?"""
        return uid in self.operator_uids

    # ---- the clock ----------------------------------------------------------------
    @property
    def now(self) -> int:
        """The controller's clock in epoch seconds."""
        return int(self.env.now + self.clock_offset)

    def at(self, timestamp: int) -> float:
        """The SimPy time of an epoch timestamp."""
        return timestamp - self.clock_offset

    def run(self, until: int | None = None) -> None:
        """Run the clock (``until`` is an epoch timestamp, or None: until nothing is left)."""
        self.env.run(until=None if until is None else self.at(until))

    def run_for(self, seconds: int) -> None:
        """Advance the clock by ``seconds`` (0: process what is due now)."""
        if seconds > 0:
            self.env.run(until=self.env.now + seconds)
            return
        while self.env.peek() <= self.env.now:
            self.env.step()

    # ---- wake-ups ----------------------------------------------------------------
    def kick(self) -> None:
        """Something changed: run the main scheduler at this instant, backfill later."""
        self.events += 1
        self.bf_dirty = True
        self.wake_priority()
        wake = self.bf_wake
        if wake is not None:  # the backfill agent sleeps until a change: now
            self.bf_wake = None
            Timeout(self.env, 0).callbacks.append(wake)
        if not self.main_scheduled:
            self.main_scheduled = True
            Timeout(self.env, 0).callbacks.append(self._main)

    def _main(self, _ev: object = None) -> None:
        self.main_scheduled = False
        self.passes["main"] += 1
        self.main_pass()

    def wake_at(self, timestamp: int | None) -> None:
        """Run the schedulers at ``timestamp`` (a BeginTime, a reservation's start)."""
        if timestamp is not None and timestamp > self.now:
            self.later(timestamp - self.now, self.kick)

    def later(self, delay: float, action: Callable[[], None]) -> None:
        """Run ``action`` ``delay`` seconds from now; ``idle`` is False until it ran."""
        self._timers += 1
        Timeout(self.env, max(0.0, delay), action).callbacks.append(self._fire)

    def _fire(self, timer: Timeout) -> None:
        """A `later` timer is due: its value is the action."""
        self._timers -= 1
        cast("Callable[[], None]", timer.value)()

    def later_each(self, plan: Iterable[tuple[float, T]], action: Callable[[T], None]) -> None:
        """`later` for many calls of one action: ``action(arg)`` ``delay`` seconds from
        now for each ``(delay, arg)`` of ``plan``, scheduled in the plan's order.

        Each is one timeout whose value is ``arg``, all with one callback: a closure per
        timer would be 7 more objects, which the collector traverses as long as the
        timer waits (``random_failures`` plans ~5,400 node failures in lesson 7's sweep,
        most of which never come: the run ends first)."""
        env = self.env

        def fire(timer: Timeout) -> None:
            self._timers -= 1
            action(cast(T, timer.value))

        for delay, arg in plan:
            self._timers += 1
            Timeout(env, max(0.0, delay), arg).callbacks.append(fire)

    def wake_priority(self) -> None:
        """The PriorityCalcPeriod loop sleeps while nothing is pending: wake it."""
        if self.prio_wake is not None and not self.prio_wake.triggered:
            self.prio_wake.succeed()

    @property
    def idle(self) -> bool:
        """True when nothing runs and no pending job can start without an outside change.

        No job is running or completing, no scheduler pass is due and no wake-up of the
        controller (a BeginTime, a reservation's start or end, a node repair) is to come:
        the pending jobs, if any, wait for something only a user or an administrator can
        do (a partition limit with ``EnforcePartLimits=NO``, a DOWN partition, a hold).
        """
        return (not self._running and not self.main_scheduled and self._timers == 0
                and not (self.bf_enabled and self.bf_dirty))

    # ---- job bookkeeping (every transition of lifecycle, admin, submission) ---------
    def next_job_id(self) -> int:
        """``get_next_job_id``: taken even by a submission slurmctld then rejects."""
        jid = self._next_id
        self._next_id += 1
        return jid

    def register(self, job: Job) -> None:
        """A new job record (a submission, an array task split off)."""
        self._jobs[job.job_id] = job
        if job.array_job_id is not None:
            self.array_tasks.setdefault(job.array_job_id, []).append(job)

    def add_pending(self, job: Job) -> None:
        """The job waits for the schedulers (submitted, requeued, restored)."""
        self._pending[job.job_id] = job
        if job.eligible_time is None:
            self.not_eligible[job.job_id] = job
        self.wake_priority()
        self.queue.add(job)
        self.active_names.setdefault((job.user, job.name), set()).add(job.job_id)

    def pending_jobs(self) -> Iterable[Job]:
        """The pending jobs, in no particular order."""
        return self._pending.values()

    def pending_done(self, job: Job) -> None:
        """The job left the queue (started, cancelled)."""
        self._pending.pop(job.job_id, None)

    @property
    def has_pending(self) -> bool:
        """Some job waits for the schedulers."""
        return bool(self._pending)

    def still_pending(self, job: Job) -> bool:
        return self._pending.get(job.job_id) is job

    def running_started(self, job: Job) -> None:
        self._running[job.job_id] = job
        if job.array_job_id is not None:
            self.array_running[job.array_job_id] = self.array_running.get(job.array_job_id, 0) + 1
        use = self.user_running.setdefault((job.qos, job.user), [0, 0])
        use[0] += 1
        use[1] += job.allocation.num_gpus if job.allocation else 0
        self.active_names.setdefault((job.user, job.name), set()).add(job.job_id)

    def running_ended(self, job: Job) -> None:
        self._running.pop(job.job_id, None)
        if job.array_job_id is not None:
            self.array_running[job.array_job_id] -= 1
        use = self.user_running[(job.qos, job.user)]
        use[0] -= 1
        use[1] -= job.allocation.num_gpus if job.allocation else 0

    def requeued(self, job: Job) -> None:
        self.add_pending(job)
        self.wake_at(job.begin_time)
        self.kick()

    def running_jobs(self) -> list[Job]:
        return list(self._running.values())

    def record(self, job: Job) -> None:
        """Keep the job's attempt in accounting (``jobacct_storage_g_job_complete``)."""
        self.accounting_store.record(job.snapshot(accounting=True), self.now)

    def job_ended(self, job: Job) -> None:
        if job.state.is_terminal:
            names = self.active_names.get((job.user, job.name))
            if names is not None:
                names.discard(job.job_id)
        self.kick()

    def find_job(self, job_id: int) -> Job | None:
        """The job record of ``job_id`` (None: unknown)."""
        return self._jobs.get(job_id)

    def all_jobs(self) -> Iterator[Job]:
        """Every job record slurmctld keeps, in submission order."""
        return iter(list(self._jobs.values()))

    # ---- the runner ----------------------------------------------------------------
    @property
    def runner(self) -> JobRunner:
        """The seam to slurmd (a lesson may give the controller its own)."""
        return self._runner

    @runner.setter
    def runner(self, runner: JobRunner) -> None:
        self._runner = runner
        #: the runner, if it samples its tasks' usage (``GathersUsage``), asked once per
        #: runner: every job end reads it, and a runtime protocol check costs as much as
        #: the rest of the end of a simulated job's bookkeeping
        self.usage_runner = runner if isinstance(runner, GathersUsage) else None

    # ---- the queue ---------------------------------------------------------------
    def set_priority(self, job: Job) -> None:
        """``priority_g_set`` through the job queue."""
        self.queue.set_priority(job, self.now)

    def pending_in_order(self) -> Iterator[Job]:
        """Pending jobs, highest priority first."""
        return self.queue.walk()

    def tier(self, job: Job) -> int:
        """``PriorityTier`` of the job's partition (1 for an unknown one)."""
        cfg = self.part_cfg.get(job.partition)
        return (cfg.priority_tier if cfg is not None else 1) or 1

    @staticmethod
    def duration(job: Job) -> int:
        """The job's time limit in seconds (a year when UNLIMITED); its ``exact_limit``
        when it has one."""
        if job.exact_limit is not None:
            return job.exact_limit
        if job.time_limit is None or job.time_limit < 0:
            return 365 * 86400
        return job.time_limit * 60

    # ---- nodes -------------------------------------------------------------------
    def idle_table(self) -> NodeTable:
        """The nodes as they are configured, all idle (would a job ever fit?)."""
        if self._idle_nodes is None:
            self._idle_nodes = NodeTable(self.table.shapes)
        return self._idle_nodes

    def _resv_flags(self, i: int) -> tuple[bool, bool]:
        """(RESERVED, MAINT) of node ``i``: it is in an active reservation (MAINT flag)."""
        now, origin = self.now, self.nodes_mgr.origin
        reserved = maint = False
        for resv in self.reservations_by_name.values():
            if i in resv.nodes and resv.flagged(now, origin):
                reserved = True
                maint = maint or resv.has("MAINT")
        return reserved, maint


def _build_nodes(config: SlurmConfig, now: int) -> tuple[
    NodeTable, dict[str, PartView], dict[str, PartitionConfig], str, NodeManager
]:
    """The node table, the partitions (views and configs), the default partition's
    name and the node manager of ``config`` (``read_slurm_conf``)."""
    nodes, parts = config.nodes, config.partitions
    shapes = [
        NodeShape(n.name, n.cpus, n.real_memory,
                  tuple((g.type, g.count) for g in n.gres if g.name == "gpu"), n.weight)
        for n in nodes
    ]  # fmt: skip
    table = NodeTable(shapes)
    member: dict[str, list[str]] = {n.name: [] for n in nodes}
    views: dict[str, PartView] = {}
    cfgs: dict[str, PartitionConfig] = {}
    for p in parts:
        mask = np.zeros(len(table), dtype=np.bool_)
        for name in p.nodes:
            if name in table.index:
                mask[table.index[name]] = True
                member[name].append(p.name)
        views[p.name] = PartView(p.name, mask, p.max_time, p.default_time,
                                 p.max_nodes, p.min_nodes, str(p.state).upper())
        cfgs[p.name] = p
    default = config.default_partition
    default_name = default.name if default is not None else (parts[0].name if parts else "")
    infos = [NodeInfo(n, tuple(sorted(member[n.name])), now) for n in nodes]
    return table, views, cfgs, default_name, NodeManager(table, infos)


__all__ = ["DEFAULT_EPOCH", "SIMULATED", "WALL_CLOCK", "CtldState", "WallClockEnvironment"]
