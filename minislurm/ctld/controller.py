"""slurmctld on a SimPy clock: the ``Controller``.

``Controller(config, env)`` holds nodes, partitions, jobs and reservations and
decides *what order* (priority plugin), *where* (select/cons_tres) and *when*
(sched/builtin + sched/backfill).  It runs under any SimPy environment:
``simpy.Environment`` for simulated time, ``simpy.rt.RealtimeEnvironment`` for
wall-clock mode; it never reads the wall clock itself.  ``env.now`` counts
seconds; when it is small (a fresh environment) the controller adds ``epoch``
(default 2026-01-05T08:00:00 UTC) so that timestamps are real epoch seconds.

Scheduling is event driven: a submission or a job end triggers the main
scheduler (once per instant however many events happened), and a backfill pass
follows ``bf_interval`` seconds after a change; nothing ticks while idle
(``loops.py``: ``kick``, the backfill and PriorityCalcPeriod loops, ``idle``).
Job updates (``scontrol update JobId=``) live in ``job_update.py``.
"""

from __future__ import annotations

import bisect
import dataclasses
from collections.abc import Iterable, Iterator

import numpy as np
import simpy

from minislurm.common.billing import billable_tres
from minislurm.job import Allocation, JobRecord, StepRecord
from minislurm.node import NodeRecord, PartitionRecord, ReservationRecord
from minislurm.priority.basic import BasicPriority
from minislurm.priority.multifactor import MultifactorPriority
from minislurm.sched.backfill import POLICIES, BackfillParams
from minislurm.select.table import NodeShape, NodeTable
from minislurm.states import JobState

from . import lifecycle
from .accounting import Accounting, batch_step
from .admin import AdminMixin
from .auth import operator_uids
from .eligibility import EligibilityMixin
from .job_mgr import Job
from .job_update import UpdateMixin
from .loops import LoopsMixin
from .node_mgr import NodeInfo, NodeManager
from .runner import JobRunner, SimulatedRunner
from .submit import PartView
from .submit_api import SubmitMixin

#: Priority plugins that read a ``PriorityView`` instead of a whole ``JobRecord``.
_VIEW_PLUGINS = (BasicPriority, MultifactorPriority)


def _first(pair: tuple[tuple[int, int, int, int], Job]) -> tuple[int, int, int, int]:
    return pair[0]

#: Default simulated epoch: 2026-01-05T08:00:00 UTC.
DEFAULT_EPOCH = 1767600000


class _OrderWalk:
    """The pending jobs of ``order`` as it is now (what ``pending_in_order`` returns).

    The scheduling order is a list kept sorted on insert; a pass walks it without
    copying it (a deep queue made that copy the cost of every pass): while a walk is
    alive, ``add_pending`` inserts into a new list instead, so the walk sees the list
    as it was when the walk began.
    """

    __slots__ = ("_alive", "_ctl", "_it", "_pending")

    def __init__(self, ctl: Controller, order: list[Job]) -> None:
        self._ctl = ctl
        self._it = iter(order)
        self._pending = ctl._pending
        self._alive = True
        ctl._order_readers += 1

    def __iter__(self) -> _OrderWalk:
        return self

    def __next__(self) -> Job:
        pending = self._pending
        for j in self._it:
            if pending.get(j.job_id) is j:
                return j
        self._end()
        raise StopIteration

    def _end(self) -> None:
        if self._alive:
            self._alive = False
            self._ctl._order_readers -= 1

    def __del__(self) -> None:
        self._end()


class Controller(SubmitMixin, AdminMixin, UpdateMixin, LoopsMixin, EligibilityMixin):
    """A faithful, compact slurmctld.  See the module docstring."""

    def __init__(
        self,
        config: object,
        env: simpy.Environment | None = None,
        *,
        runner: JobRunner | None = None,
        policy: str | None = None,
        priority: object | None = None,
        associations: object | None = None,
        epoch: int = DEFAULT_EPOCH,
        seed: int = 0,
    ) -> None:
        self.config = config
        self.env = env if env is not None else simpy.Environment()
        self._offset = epoch if self.env.now < 1e9 else 0
        self.runner: JobRunner = runner if runner is not None else SimulatedRunner(self.env)
        self.seed = seed
        sched = getattr(config, "scheduler", None)
        self.bf = BackfillParams.from_config(sched)
        self.queue_depth = int(getattr(sched, "default_queue_depth", 100) or 100)
        stype = str(getattr(config, "scheduler_type", "sched/backfill"))
        self.policy = policy or ("slurm" if stype.endswith("backfill") else "builtin")
        if self.policy not in (*POLICIES, "builtin"):
            raise ValueError(f"unknown scheduler policy {self.policy!r}: use {POLICIES}")
        self.kill_wait = int(getattr(config, "kill_wait", 30))
        self.def_mem_per_cpu = getattr(config, "def_mem_per_cpu", None)
        self.enforce_part_limits = str(getattr(config, "enforce_part_limits", "NO") or "NO")
        self.max_array_size = int(getattr(config, "max_array_size", 1001) or 1001)
        self.return_to_service = int(getattr(config, "return_to_service", 0) or 0)
        #: AccountingStorageEnforce=qos (or all): a job's QOS must be one its
        #: association lists (``_get_qos_info``: ``Invalid qos specification``)
        enforce = tuple(getattr(config, "accounting_storage_enforce", ()) or ())
        self.enforce_qos = "qos" in enforce or "all" in enforce
        #: JobRequeue: a batch job's Requeue when neither --requeue nor --no-requeue
        self.job_requeue = bool(int(getattr(config, "job_requeue", 1)))
        self.associations = associations
        #: uids ``validate_super_user`` accepts (`minislurm.ctld.auth`): root, SlurmUser;
        #: the embedded Cluster and the daemon add the user who runs them
        self.operator_uids: set[int] = operator_uids(config)
        self.qos = self._load_qos(associations)
        self.preempt_type = str(getattr(config, "preempt_type", "preempt/none"))
        self.preempt_mode = str(getattr(config, "preempt_mode", "OFF")).upper()
        #: slurm_preemption_enabled(): a preempt plugin other than none, PreemptMode not OFF
        self.preemption_enabled = (self.preempt_type != "preempt/none"
                                   and not self.preempt_mode.startswith("OFF"))
        self._build_nodes(config)
        self.priority_plugin = priority if priority is not None else self._make_priority(
            config, associations
        )
        self.accounting_store = Accounting(getattr(self.priority_plugin, "record_usage", None))
        self._next_id = int(getattr(config, "first_job_id", 1) or 1)
        self._jobs: dict[int, Job] = {}
        self._pending: dict[int, Job] = {}
        self._order: list[Job] = []  # pending jobs in scheduling order (stale entries skipped)
        self._order_keys: list[tuple[int, int, int, int]] = []
        self._order_ids: set[int] = set()
        self._order_dirty = False
        self._order_readers = 0  # _OrderWalk iterators alive (add_pending copies, then)
        self._running: dict[int, Job] = {}
        self._array_tasks: dict[int, list[Job]] = {}
        self._array_running: dict[int, int] = {}
        self._active_names: dict[tuple[str, str], set[int]] = {}
        self._user_running: dict[tuple[str, str], list[int]] = {}  # (qos, user) -> [jobs, gpus]
        self.reservations_by_name: dict[str, object] = {}
        #: nodes of active reservations show RESERVED, those restored from saved state too
        self._resv_hook()
        self._main_scheduled = False
        self._bf_dirty = False
        self._bf_wake: simpy.Event | None = None
        self._prio_wake: simpy.Event | None = None
        self._timers = 0  # controller wake-ups still to come (BeginTime, reservations, repairs)
        self.events = 0
        self.passes = {"main": 0, "backfill": 0}
        #: refresh every reserved job's expected start (``squeue --start``) on each
        #: backfill pass; off for trace simulations, whose decisions do not depend on it
        self.bf_estimates = True
        #: no one (squeue, sprio, a notebook) reads the controller between its own
        #: events: trace simulations, which then skip priority passes read by no one
        self.unobserved = False
        self._bf_enabled = self.policy not in ("fifo", "builtin")
        if self._bf_enabled:
            self.env.process(self._backfill_loop())
        # PriorityCalcPeriod is stored in seconds (config.py; Slurm's default: 5 minutes)
        prio_cfg = getattr(config, "priority", None)
        self._prio_period = int(getattr(prio_cfg, "calc_period", 300) or 300)
        if not str(getattr(self.priority_plugin, "name", "")).endswith("basic"):
            self.env.process(self._priority_loop())

    def is_operator(self, uid: int) -> bool:
        """``validate_super_user``: may ``uid`` update nodes, partitions, reservations?"""
        return uid in self.operator_uids

    # ---- construction -----------------------------------------------------------
    def _build_nodes(self, config: object) -> None:
        nodes = tuple(getattr(config, "nodes", ()))
        parts = tuple(getattr(config, "partitions", ()))
        shapes = [
            NodeShape(n.name, n.cpus, n.real_memory,
                      tuple((g.type, g.count) for g in n.gres if g.name == "gpu"), n.weight)
            for n in nodes
        ]  # fmt: skip
        self.table = NodeTable(shapes)
        member: dict[str, list[str]] = {n.name: [] for n in nodes}
        self.parts: dict[str, PartView] = {}
        self.part_cfg: dict[str, object] = {}
        for p in parts:
            mask = np.zeros(len(self.table), dtype=np.bool_)
            for name in p.nodes:
                if name in self.table.index:
                    mask[self.table.index[name]] = True
                    member[name].append(p.name)
            self.parts[p.name] = PartView(p.name, mask, p.max_time, p.default_time,
                                          p.max_nodes, p.min_nodes, str(p.state).upper())
            self.part_cfg[p.name] = p
        default = getattr(config, "default_partition", None)
        self.default_partition = default.name if default is not None else (
            parts[0].name if parts else "")
        infos = [NodeInfo(n, tuple(sorted(member[n.name])), self.now) for n in nodes]
        self.nodes_mgr = NodeManager(self.table, infos)

    @staticmethod
    def _make_priority(config: object, associations: object | None) -> object:
        try:
            from minislurm.priority import make_priority_plugin
        except ImportError:  # pragma: no cover
            from minislurm.priority.basic import BasicPriority
            return BasicPriority()
        return make_priority_plugin(config, associations)  # type: ignore[arg-type]

    @staticmethod
    def _load_qos(associations: object | None) -> dict[str, object]:
        qos = {q.name: q for q in getattr(associations, "qos", ())} if associations else {}
        if "normal" not in qos:
            from minislurm.common.accounts import QOS
            qos["normal"] = QOS(name="normal")
        return qos

    # ---- the clock ----------------------------------------------------------------
    @property
    def now(self) -> int:
        """The controller's clock in epoch seconds."""
        return int(self.env.now + self._offset)

    def at(self, timestamp: int) -> float:
        """The SimPy time of an epoch timestamp."""
        return timestamp - self._offset

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

    # ---- bookkeeping used by lifecycle ---------------------------------------------
    def next_job_id(self) -> int:
        jid = self._next_id
        self._next_id += 1
        return jid

    def register(self, job: Job) -> None:
        self._jobs[job.job_id] = job
        if job.array_job_id is not None:
            self._array_tasks.setdefault(job.array_job_id, []).append(job)

    def add_pending(self, job: Job) -> None:
        self._pending[job.job_id] = job
        self._wake_priority()
        if job.job_id in self._order_ids:  # requeued: its old entry moves on the next sort
            self._order_dirty = True
        else:
            key = self._key(job)
            at = bisect.bisect_right(self._order_keys, key)
            if self._order_readers:  # a pass is walking the list: leave it its copy
                self._order, self._order_keys = self._order[:], self._order_keys[:]
            self._order_keys.insert(at, key)
            self._order.insert(at, job)
            self._order_ids.add(job.job_id)
        name_key = (job.user, job.name)
        self._active_names.setdefault(name_key, set()).add(job.job_id)

    def pending_done(self, job: Job) -> None:
        self._pending.pop(job.job_id, None)

    def running_started(self, job: Job) -> None:
        self._running[job.job_id] = job
        if job.array_job_id is not None:
            self._array_running[job.array_job_id] = self._array_running.get(job.array_job_id, 0) + 1
        use = self._user_running.setdefault((job.qos, job.user), [0, 0])
        use[0] += 1
        use[1] += job.allocation.num_gpus if job.allocation else 0
        self._active_names.setdefault((job.user, job.name), set()).add(job.job_id)

    def running_ended(self, job: Job) -> None:
        self._running.pop(job.job_id, None)
        if job.array_job_id is not None:
            self._array_running[job.array_job_id] -= 1
        use = self._user_running[(job.qos, job.user)]
        use[0] -= 1
        use[1] -= job.allocation.num_gpus if job.allocation else 0

    def requeued(self, job: Job) -> None:
        self.add_pending(job)
        self._wake_at(job.begin_time)
        self.kick()

    def running_jobs(self) -> list[Job]:
        return list(self._running.values())

    def record(self, job: Job) -> None:
        self.accounting_store.record(job.snapshot(accounting=True), self.now)

    def add_step(self, job_id: int, step: StepRecord) -> None:
        """An srun step ended: slurmd's step completion is kept in the job's accounting.

        ``KeyError`` for an unknown job.  A step that reports after its job's attempt was
        recorded (the job ended first) is added to that attempt's accounting record.
        """
        job = self._jobs[job_id]
        if step.step_id in job.resized_steps:
            return  # closed RESIZING when a --no-kill job lost its node (lifecycle.shrink)
        if any(s.step_id == step.step_id and s.state is not JobState.RUNNING
               for s in job.steps):
            return  # the job's end already closed it (CANCELLED with the job's signal)
        if job.state is not JobState.PENDING:  # a requeued job's steps were its last attempt's
            job.steps[:] = [s for s in job.steps  # it replaces the step's RUNNING record
                            if s.step_id != step.step_id]
            job.steps.append(step)
        if job.state.is_terminal or job.state is JobState.PENDING:
            self.accounting_store.add_step(job_id, step)

    def step_started(self, job_id: int, step: StepRecord) -> None:
        """An srun step runs (``squeue -s`` and sacct show it ``RUNNING``)."""
        job = self._jobs[job_id]
        if job.state is JobState.RUNNING:
            job.steps.append(step)

    def job_ended(self, job: Job) -> None:
        if job.state.is_terminal:
            names = self._active_names.get((job.user, job.name))
            if names is not None:
                names.discard(job.job_id)
        self.kick()

    # ---- scheduling -----------------------------------------------------------------
    def set_priority(self, job: Job) -> None:
        """Ask the priority plugin (ours read a ``PriorityView``; others a ``JobRecord``)."""
        plugin = self.priority_plugin
        view = job.priority_view() if isinstance(plugin, _VIEW_PLUGINS) else job.snapshot()
        job.priority = int(plugin.priority(view, self.now))  # type: ignore[attr-defined]

    def recalc_priorities(self) -> None:
        """``PriorityCalcPeriod``: every pending job's priority anew (multifactor's decay
        thread); priority/basic's numbers never change, so it has nothing to redo."""
        plugin = self.priority_plugin
        if isinstance(plugin, BasicPriority):
            return
        jobs = list(self._pending.values())
        if isinstance(plugin, MultifactorPriority):
            prios = plugin.priorities([j.priority_view() for j in jobs], self.now)
            for job, prio in zip(jobs, prios, strict=True):
                job.priority = prio
        else:
            for job in jobs:
                self.set_priority(job)
        self._order_dirty = True

    def decay_priorities(self) -> None:
        """A ``PriorityCalcPeriod`` pass whose numbers the next pass replaces unread: the
        usage decay only (multifactor without ``INCR_ONLY``), else the full pass."""
        plugin = self.priority_plugin
        if isinstance(plugin, MultifactorPriority) and plugin.history_free:
            plugin.decay_only(self.now)
        else:
            self.recalc_priorities()

    def _key(self, job: Job) -> tuple[int, int, int, int]:
        """Scheduling order: PriorityTier of the partition, priority, submit time, id."""
        return (-self._tier(job), -job.priority, job.submit_time, job.job_id)

    def pending_in_order(self) -> Iterator[Job]:
        """Pending jobs, highest priority first (a sorted list kept up to date on insert)."""
        pending = self._pending
        if self._order_dirty or len(self._order) > 2 * len(pending) + 64:
            live = list(dict.fromkeys(j for j in self._order if pending.get(j.job_id) is j))
            live += [j for j in pending.values() if j.job_id not in self._order_ids]
            self._order_ids = {j.job_id for j in live}
            keys = [self._key(j) for j in live]
            if self._order_dirty:
                pairs = sorted(zip(keys, live, strict=True), key=_first)
                keys, live = [k for k, _ in pairs], [j for _, j in pairs]
            self._order = live
            self._order_keys = keys
            self._order_dirty = False
        return _OrderWalk(self, self._order)

    def allowed_key(self, job: Job, duration: int) -> tuple[object, ...]:
        """What ``allowed(job, duration)`` depends on during one scheduler pass.

        The partition and the job's reservation; the duration too while advance
        reservations exist (whether one is in the way depends on it).
        """
        if not self.reservations_by_name:
            return (job.partition, job.reservation)
        return (job.partition, job.reservation, duration)

    def _tier(self, job: Job) -> int:
        cfg = self.part_cfg.get(job.partition)
        return int(getattr(cfg, "priority_tier", 1) or 1)

    def still_pending(self, job: Job) -> bool:
        return self._pending.get(job.job_id) is job

    def duration(self, job: Job) -> int:
        if job.time_limit is None or job.time_limit < 0:
            return 365 * 86400
        return job.time_limit * 60

    def start(self, job: Job, alloc: Allocation, scheduler: str) -> Job:
        return lifecycle.start_job(self, job, alloc, scheduler)

    # ---- queries (snapshots) -----------------------------------------------------------
    def job(self, job_id: int) -> JobRecord:
        """One job's snapshot; ``KeyError`` if unknown."""
        return self._jobs[job_id].snapshot()

    def jobs(self, *, expand_arrays: bool = False, include_done: bool = True) -> list[JobRecord]:
        """All jobs slurmctld knows, in job id order (``squeue``/``scontrol show job``).

        ``expand_arrays`` gives one record per pending array task (``squeue -r``).
        """
        out: list[JobRecord] = []
        for job in sorted(self._jobs.values(), key=lambda j: j.job_id):
            if not include_done and job.state.is_terminal:
                continue
            if expand_arrays and job.is_array_meta:
                out += [job.snapshot(task_index=i) for i in job.array_pending]
            else:
                out.append(job.snapshot())
        return out

    def nodes(self) -> list[NodeRecord]:
        """All nodes in config order (``sinfo``/``scontrol show node``)."""
        records = [self.nodes_mgr.snapshot(i) for i in range(len(self.table))]
        if any(getattr(c, "billing_weights", None) for c in self.part_cfg.values()):
            records = [dataclasses.replace(r, billing=self._node_billing(r)) for r in records]
        return records

    def _node_billing(self, node: NodeRecord) -> int:
        """``_set_node_billing_tres``: the node's highest billing over its partitions
        with ``TRESBillingWeights``, else its CPU count."""
        tres = {"cpu": node.cpus, "mem": node.real_memory, "node": 1}
        if node.gpus_total:
            tres["gres/gpu"] = node.gpus_total
        best = max((billable_tres(tres, w) for w in (
            getattr(self.part_cfg.get(p), "billing_weights", None) for p in node.partitions)
            if w is not None), default=0.0)
        return int(best or node.cpus)

    def partitions(self) -> list[PartitionRecord]:
        """All partitions in config order."""
        out = []
        for name, pv in self.parts.items():
            cfg = self.part_cfg[name]
            m = pv.mask
            out.append(PartitionRecord(
                name=name, nodes=tuple(self.table.names[i] for i in np.flatnonzero(m)),
                default=name == self.default_partition, state=pv.state, max_time=pv.max_time,
                default_time=pv.default_time, max_nodes=pv.max_nodes, min_nodes=pv.min_nodes,
                priority_job_factor=int(getattr(cfg, "priority_job_factor", 1)),
                priority_tier=int(getattr(cfg, "priority_tier", 1)),
                over_subscribe=str(getattr(cfg, "over_subscribe", "NO")),
                preempt_mode=str(getattr(cfg, "preempt_mode", "OFF")),
                qos=str(getattr(cfg, "qos", "") or ""), total_cpus=int(self.table.cpus[m].sum()),
                total_nodes=int(m.sum()), total_mem=int(self.table.mem[m].sum()),
                total_gpus=int(self.table.gpus[m].sum()),
            ))  # fmt: skip
            weights = getattr(cfg, "billing_weights", None)
            if weights is not None:
                rec = out[-1]
                tres = {"cpu": rec.total_cpus, "mem": rec.total_mem, "node": rec.total_nodes}
                if rec.total_gpus:
                    tres["gres/gpu"] = rec.total_gpus
                out[-1] = dataclasses.replace(rec, billing_weights=weights.text,
                                  billing=int(billable_tres(tres, weights)))
        return out

    def reservations(self) -> list[ReservationRecord]:
        """All reservations (``scontrol show reservation``)."""
        return [r.record(self.now) for r in self.reservations_by_name.values()]  # type: ignore[attr-defined]

    def accounting(self) -> list[JobRecord]:
        """What sacct reads: every ended attempt, then the jobs still active."""
        done = list(self.accounting_store.attempts)
        active = [_with_running_batch(j.snapshot(accounting=True))
                  for j in self._jobs.values() if not j.state.is_terminal and not j.unrecorded]
        return sorted(done + active, key=lambda r: (r.job_id, r.restart_count, r.end_time or 0))

    def pending(self) -> Iterable[JobRecord]:
        """Pending jobs in scheduling order."""
        return [j.snapshot() for j in self.pending_in_order()]


def _with_running_batch(record: JobRecord) -> JobRecord:
    """A running batch job's record as sacct sees it: its ``.batch`` step runs too."""
    if record.state is not JobState.RUNNING or any(s.step_id == "batch" for s in record.steps):
        return record
    step = batch_step(record, None, 0, 0)
    return record if step is None else dataclasses.replace(record, steps=(step, *record.steps))


__all__ = ["DEFAULT_EPOCH", "Controller", "JobState"]
