"""slurmctld's job records (``src/slurmctld/job_mgr.c``): the mutable ``Job``.

The controller mutates ``Job`` objects; everything outside the controller sees
frozen ``JobRecord`` snapshots (``Job.snapshot``).  An array job submitted with
``--array=0-7%2`` is one ``Job`` (the *meta* record, id 108) holding the task
indices still pending; when a task starts it is split off with the next job id,
except the LAST one, which reuses the array job id (capture f3_array: 108_0 is
job 109, ..., 108_7 is job 108).
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from minislurm.common.billing import TresWeights, billable_tres
from minislurm.common.hostlist import compress
from minislurm.common.timespec import time_limit_secs
from minislurm.job import Allocation, JobRecord, StepRecord
from minislurm.select.request import ResourceRequest
from minislurm.states import JobState, Reason

from .runner import JobBody

#: ``TOP_PRIORITY`` of priority/basic: job priorities count down from 0xffff0000.
TOP_PRIORITY = 0xFFFF0000


@dataclass(frozen=True, slots=True)
class DepItem:
    """One ``--dependency`` condition: ``afterok:56``, ``singleton``, ``after:5+10``."""

    kind: str  # after | afterany | afterok | afternotok | aftercorr | singleton
    job_id: int | None = None
    delay: int = 0  # minutes (after:job+time)


def ranges_text(indices: list[int]) -> str:
    """``2-7`` / ``1,3,5`` / ``0-9:3`` as squeue prints array task ranges."""
    if not indices:
        return ""
    parts: list[str] = []
    start = prev = indices[0]
    for i in indices[1:]:
        if i == prev + 1:
            prev = i
            continue
        parts.append(str(start) if start == prev else f"{start}-{prev}")
        start = prev = i
    parts.append(str(start) if start == prev else f"{start}-{prev}")
    return ",".join(parts)


#: ``JobRecord`` fields a snapshot computes (from the allocation, the times shown, the
#: request) instead of copying the ``Job`` attribute of the same name.
DERIVED_FIELDS = frozenset({
    "array_task_id", "array_task_str", "array_max_tasks", "priority", "hold",
    "eligible_time", "accrue_time", "start_time", "end_time", "num_nodes", "num_cpus",
    "tres_req", "tres_alloc", "billable_tres", "nodelist", "batch_host", "signal",
    "dependency", "signal_spec", "steps",
})
#: ``JobRecord`` fields slurmctld does not model yet (the record's default stays).
UNMODELLED_FIELDS = frozenset({"suspend_time"})
#: ``JobRecord`` fields a snapshot copies as they are from the ``Job`` attribute of the
#: same name and meaning: the one list of them (the record defines each field once).
SAME_FIELDS = tuple(f.name for f in dataclasses.fields(JobRecord)
                    if f.name not in DERIVED_FIELDS | UNMODELLED_FIELDS)
_same_values = operator.attrgetter(*SAME_FIELDS)
#: The other fields (``DERIVED_FIELDS``, ``UNMODELLED_FIELDS``), in the record's order.
_OTHER_FIELDS = tuple(f.name for f in dataclasses.fields(JobRecord) if f.name not in SAME_FIELDS)
_other_values = operator.itemgetter(*_OTHER_FIELDS)
_UNMODELLED_DEFAULTS = {f.name: f.default for f in dataclasses.fields(JobRecord)
                        if f.name in UNMODELLED_FIELDS}
#: Each field's slot setter, the ``SAME_FIELDS`` first, then the other fields: the order
#: of a snapshot's values (`_new_record`).
_RECORD_SETTERS = tuple(getattr(JobRecord, name).__set__ for name in (*SAME_FIELDS, *_OTHER_FIELDS))


def _new_record(values: tuple[Any, ...]) -> JobRecord:
    """The ``JobRecord`` of ``values``: the ``SAME_FIELDS``' values, then the other
    fields' (``_OTHER_FIELDS``), its slots set one by one.  The frozen dataclass's
    ``__init__`` calls ``object.__setattr__`` per field (74), about twice as long, and
    the values would first be put in the record's order; every ended attempt is
    recorded.  The same record as ``JobRecord(**fields)``: ``JobRecord`` has no
    ``__post_init__`` and no field outside ``__init__`` (a test compares both ways and
    fails if the record gains either)."""
    record = object.__new__(JobRecord)
    for set_field, value in zip(_RECORD_SETTERS, values, strict=True):
        set_field(record, value)
    return record


@functools.lru_cache(maxsize=4096)
def _nodelist(names: tuple[str, ...]) -> str:
    """``compress(names)``: an allocation's ``NodeList``, computed once per set of names
    (a pure function of the tuple, so the cache never goes stale; lesson 7's job starts
    ~900 times on a few of eight nodes)."""
    return compress(names)


#: ``JobRecord`` fields a ``Job`` holds as an attribute of the same name, type and first
#: value: the ``SAME_FIELDS``, and the derived fields whose snapshot starts from the
#: attribute of their name (the times shown, the counts an allocation replaces...).
KEPT_FIELDS = (*SAME_FIELDS, "array_task_id", "priority", "accrue_time", "start_time",
               "end_time", "num_nodes", "num_cpus", "signal")
_kept = [f for f in dataclasses.fields(JobRecord) if f.name in KEPT_FIELDS]
#: A new job's value of each ``KEPT_FIELDS`` field with a default: the record's own
#: (``JobRecord`` states each default once; `Job.__init__` copies this mapping).
RECORD_DEFAULTS: dict[str, Any] = {f.name: f.default for f in _kept
                                   if f.default is not dataclasses.MISSING}
#: The kept fields whose default is a factory (a fresh value per job).
_RECORD_FACTORIES: tuple[tuple[str, Callable[[], Any]], ...] = tuple(
    (f.name, f.default_factory) for f in _kept if f.default_factory is not dataclasses.MISSING)


@dataclass(frozen=True, slots=True)
class _AllocDerived:
    """A job's values computed from one allocation under one ``TRESBillingWeights``."""

    allocation: Allocation
    weights: TresWeights | None
    tres_alloc: dict[str, int]
    billable: float
    nodelist: str


class Job:
    """One job as slurmctld holds it (``struct job_record``).

    Its attributes are the mutable state; ``JobRecord`` (minislurm/job.py) is the one
    definition of what a job's fields mean and where they start: a new ``Job`` holds the
    ``KEPT_FIELDS`` with the record's defaults (`RECORD_DEFAULTS`), ``snapshot`` copies
    the ``SAME_FIELDS`` and computes the ``DERIVED_FIELDS``.  The annotations below
    declare those attributes to the type checker, with the record's types (a test
    compares them); a field only the snapshots read needs none.
    """

    # ---- JobRecord's fields, held as they are (their values start as the record's defaults)
    job_id: int
    name: str
    user: str
    uid: int
    group: str
    gid: int
    account: str
    partition: str
    qos: str
    state: JobState
    submit_time: int
    array_job_id: int | None
    array_task_id: int | None
    reason_detail: str
    priority: int
    nice: int
    #: AccrueTime; for an array remainder whose ``%`` throttle cleared its eligible time
    #: the time it first became eligible (None: the eligible time); see `reason`.
    accrue_time: int | None
    begin_time: int | None
    start_time: int | None
    end_time: int | None
    preemptable_time: int | None
    preempt_time: int | None
    time_limit: int | None
    time_min: int | None
    last_sched_eval: int | None
    scheduler: str
    num_nodes: int
    max_nodes: int | None
    num_tasks: int
    num_cpus: int
    cpus_per_task: int
    ntasks_per_node: int | None
    min_memory_mb: int | None
    mem_per_cpu: int | None
    mem_per_gpu: int | None
    tres_per_node: str | None
    tres_per_job: str | None
    tres_per_task: str | None
    gres: str
    exclusive: bool
    allocation: Allocation | None
    req_nodelist: str
    exc_nodelist: str
    reservation: str
    features: str
    exit_code: int
    signal: int
    derived_exit_code: int
    restart_count: int
    requeue: bool
    batch_flag: bool
    cancelled_by: int | None
    work_dir: str
    std_out: str
    std_err: str
    std_in: str
    command: str
    script: str
    comment: str
    sched_nodes: str | None

    def __init__(self, job_id: int, name: str, submit_time: int) -> None:
        #: The last plain snapshot and what it was built from (first attribute: see
        #: `snapshot`, which compares every attribute after it).
        self._snap: tuple[tuple[Any, ...], JobRecord] | None = None
        vars(self).update(RECORD_DEFAULTS)
        for field_name, factory in _RECORD_FACTORIES:
            setattr(self, field_name, factory())
        self.job_id = job_id
        self.name = name
        self.submit_time = submit_time
        # the record's fields without a default: a new job is root's, pending, no reason
        self.user = "root"
        self.uid = 0
        self.group = "root"
        self.gid = 0
        self.account = "root"
        self.partition = ""
        #: The partition's ``TRESBillingWeights`` (set with ``partition``; see billing.py).
        self.billing_weights: TresWeights | None = None
        self.qos = "normal"
        self.state = JobState.PENDING
        self._reason = Reason.NONE
        self.static_reason: Reason | None = None  # partition limit reasons (EnforcePartLimits=NO)
        self.base_priority = 0
        self.hold: str | None = None  # None | 'user' | 'admin'
        self._eligible_time: int | None = None
        self.est_start: int | None = None
        #: The time limit to the second, finer than ``time_limit``'s whole minutes (which
        #: stay what squeue/sacct show): the job ends, and the schedulers plan, at
        #: ``start + exact_limit``.  Only ``simulate --procs N --scheduler easy`` sets it
        #: (the textbook's requested time, ``Controller.submit(exact_limit=)``); None:
        #: ``time_limit * 60``, as slurmctld.
        self.exact_limit: int | None = None
        #: A running attempt's ``end_time`` once ``scontrol update TimeLimit=`` moved it
        #: (None: start + TimeLimit); at least the update's time (job_update.py).
        self.limit_end: int | None = None
        #: The pending attempt is not in accounting yet (requeued by preemption: sacct
        #: shows the PREEMPTED attempt until the job starts again, measured on 22.05.8)
        self.unrecorded = False
        self.request = ResourceRequest()
        self.gpus_total = 0
        #: ``-k/--no-kill`` (``kill_on_node_fail == 0``): a node failure shrinks the job
        self.no_kill = False
        #: When a node failure last shrank the running job (``resize_time``: sacct's
        #: record of the attempt starts there) and its node count before the first one
        #: (what srun still reads in ``SLURM_JOB_NUM_NODES``); None: never shrunk.
        self.resize_time: int | None = None
        self.nodes_before_resize: int | None = None
        #: srun steps a resize closed (RESIZING in sacct): their late reports are dropped
        self.resized_steps: frozenset[int | str] = frozenset()
        self.dependency: tuple[DepItem, ...] = ()
        self.dep_any = False
        self.dep_text = ""
        self.dep_failed = False
        self.kill_on_invalid_dep = False
        self.signal_spec: tuple[int, int] | None = None  # (signal, seconds before end)
        self.signal_text = ""
        self.body = JobBody()
        self.steps: list[StepRecord] = []
        # arrays: the meta record keeps the pending indices
        self.array_pending: list[int] = []
        self.array_max: int | None = None
        self.array_bodies: dict[int, JobBody] | None = None
        # bookkeeping of the controller
        self.attempt = 0
        self.final_state = JobState.CANCELLED  # what a COMPLETING job ends as
        #: A COMPLETING job to put back to PENDING once its processes are gone:
        #: (BeginTime delay, hold 'user'|'admin'|None) -- scontrol requeue, preemption
        self.requeue_after: tuple[int, str | None] | None = None
        #: What a snapshot computes from the allocation (see `_alloc_derived`), kept
        #: with the allocation and billing weights it was computed from.
        self._alloc_cache: _AllocDerived | None = None

    @property
    def reason(self) -> Reason:
        """Why the job waits (``state_reason``).

        ``JobArrayTaskLimit`` on an array's pending remainder clears its eligible time
        and keeps it unset while the ``%`` throttle holds (slurmctld tests
        ``job_array_start_test`` before ``job_independent`` sets ``begin_time``).
        Measured on 22.05.8 with ``--array=0-7%2``: the remainder shows
        ``EligibleTime=Unknown`` and keeps its ``AccrueTime``; a task started once an
        earlier one ended shows that time as ``EligibleTime`` (task 2 started at +4 s:
        +4 s), while the tasks of an array held only by resources keep the submit time
        (``%6`` on a full cluster).  Priorities keep counting from the first eligible
        time (`accrue_time`), as they did before the throttle.
        """
        return self._reason

    @reason.setter
    def reason(self, value: Reason) -> None:
        self._reason = value
        if value is Reason.JOB_ARRAY_TASK_LIMIT and self.array_pending and (
            self._eligible_time is not None
        ):
            if self.accrue_time is None:
                self.accrue_time = self._eligible_time
            self._eligible_time = None

    @property
    def eligible_time(self) -> int | None:
        """``EligibleTime`` (``details->begin_time`` once eligible); see `reason`."""
        return self._eligible_time

    @eligible_time.setter
    def eligible_time(self, value: int | None) -> None:
        if value is not None and self._reason is Reason.JOB_ARRAY_TASK_LIMIT and (
            self.array_pending
        ):
            return  # the throttle still holds the remainder: not eligible yet
        self._eligible_time = value

    # ---- arrays ------------------------------------------------------------
    @property
    def is_array_meta(self) -> bool:
        """True for the record that still holds pending array tasks (``108_[2-7%2]``)."""
        return bool(self.array_pending)

    def split_task(self, new_id: int | None, index: int | None = None) -> Job:
        """Take a pending task (the next one, or ``index``) out of the meta record.

        ``new_id`` is the id of the split-off task; ``None`` when it is the last one,
        which keeps the array job id (the meta record becomes the task).
        """
        if index is None:
            idx = self.array_pending.pop(0)
        else:
            self.array_pending.remove(index)
            idx = index
        body = self.array_bodies.get(idx, self.body) if self.array_bodies else self.body
        if new_id is None:
            self.array_task_id = idx
            self.body = body
            self.accrue_time = None  # a task accrues from its own eligible time
            return self
        task = copy.copy(self)
        task.accrue_time = None
        task.job_id = new_id
        task.array_task_id = idx
        task.array_pending = []
        task.array_bodies = None
        task.steps = []
        task.body = body
        return task

    def split_task_index(self, index: int, new_id: int) -> Job:
        """Split off the pending task ``index`` (``scancel 108_3`` on a pending task)."""
        return self.split_task(new_id, index)

    # ---- snapshots -----------------------------------------------------------
    def priority_view(self) -> PriorityView:
        """What a priority plugin reads of this job, without a whole ``JobRecord``."""
        return PriorityView(self)

    def tres_req(self) -> dict[str, int]:
        """``ReqTRES``: ``cpu``, ``mem`` (MB), ``node``, ``billing`` and ``gres/gpu``.

        ``node`` is the node count the job asked for (``details->min_nodes``: ``-N``, the
        ``-w`` nodes, else 1), not the estimate ``NumNodes`` shows, and ``--mem`` counts
        once per asked node: measured on 22.05.8, ``sbatch -n16`` shows
        ``TRES=cpu=16,mem=16000M,node=1,billing=16`` while pending (``NumNodes=4``),
        ``-n16 --mem=1000`` ``mem=1000M,node=1``, and sacct's ReqTRES keeps these
        values after the start (AllocTRES and a running job's TRES are the allocation's).
        The counts are `_tres_counts`'s (computed once per set of counts and weights);
        each call returns a new dict.
        """
        nodes = self.request.node_count
        mem = self.min_memory_mb * nodes if self.min_memory_mb else 0
        if not mem and self.mem_per_cpu:
            mem = self.mem_per_cpu * self.num_cpus
        # job_set_req_tres: assoc_mgr_tres_weighted of the request, stored as uint64
        ordered, _ = _tres_counts(self.num_cpus, mem, nodes, self.gpus_total,
                                  self.billing_weights)
        return dict(ordered)

    def tres_alloc(self) -> dict[str, int]:
        """``AllocTRES`` of the current allocation (empty while pending)."""
        derived = self._alloc_derived()
        return dict(derived.tres_alloc) if derived is not None else {}

    def billable_tres(self) -> float | None:
        """``calc_job_billable_tres``: the allocation's billing value (a double; the
        CPU count without ``TRESBillingWeights``), None while nothing is allocated."""
        derived = self._alloc_derived()
        return derived.billable if derived is not None else None

    def _alloc_derived(self) -> _AllocDerived | None:
        """What the snapshots compute from the allocation (``AllocTRES``, the billing
        value, ``NodeList``), once per allocation and ``TRESBillingWeights``: a job's
        start and end records share them instead of summing the nodes again."""
        a = self.allocation
        if a is None:
            return None
        weights = self.billing_weights
        cached = self._alloc_cache
        if cached is not None and cached.allocation is a and cached.weights is weights:
            return cached
        tres, billable = _tres_counts(a.num_cpus, a.mem_mb, len(a.nodes), a.num_gpus, weights)
        nodelist = cached.nodelist if cached is not None and cached.allocation is a else (
            _nodelist(a.node_names))
        derived = _AllocDerived(a, weights, tres, billable, nodelist)
        self._alloc_cache = derived
        return derived

    def shown_times(self) -> tuple[int | None, int | None, int | None]:
        """(EligibleTime, StartTime, EndTime) as slurmctld reports an active job.

        A pending job waiting for its BeginTime (``--begin``, a requeue) shows it as
        EligibleTime, AccrueTime and StartTime (capture c2 15_scontrol_show_job_pending,
        job ``later``: slurmctld packs ``details->begin_time`` as the eligible time); a
        job with a start, running or expected, shows start + TimeLimit as EndTime
        (one year for UNLIMITED), as ``job_ptr->end_time`` holds it, or, for a running
        job whose limit ``scontrol update`` changed, the end that update set; start +
        ``exact_limit`` for a job with a limit to the second (simulate's textbook EASY).
        """
        eligible, start, end = self.eligible_time, self.start_time, self.end_time
        if self.state is JobState.PENDING:
            start = self.est_start
            waits = self.hold is None and not self.dependency and self.begin_time is not None
            if eligible is None and waits:
                eligible = self.begin_time
            if waits and self.begin_time is not None and (start is None or start < self.begin_time):
                start = self.begin_time
        if end is None and self.limit_end is not None and self.state is JobState.RUNNING:
            end = self.limit_end  # moved by scontrol update TimeLimit= (job_update.py)
        if end is None and start is not None and not self.state.is_terminal:
            limit = self.time_limit
            end = start + (self.exact_limit if self.exact_limit is not None
                           else 365 * 86400 if limit is None or limit < 0
                           else time_limit_secs(limit))  # fmt: skip
        return eligible, start, end

    def snapshot(self, *, task_index: int | None = None, accounting: bool = False) -> JobRecord:
        """The frozen ``JobRecord`` of this job (``task_index``: one pending array task).

        ``accounting``: the record as slurmdbd keeps it (sacct): no EndTime until the
        job has ended, no expected start, and no signal on the job line of a TIMEOUT or
        CANCELLED job (its ``.batch`` step keeps 0:15; scontrol still shows 0:15).
        """
        if task_index is None and not accounting:
            # squeue/scontrol at 10k jobs: rebuild only jobs that changed. Every attribute
            # is a scalar or a frozen value except the lists (lengths: ``steps`` only
            # grows, ``array_pending`` only shrinks); the tuple keeps the old values alive.
            # The key is taken again after a build, which may fill the cache of what it
            # computes from the allocation (`_alloc_derived`): the next call then matches.
            snap = self._snap
            if snap is not None and snap[0] == self._snap_key():
                return snap[1]
            record = self._snapshot(None, False)
            self._snap = (self._snap_key(), record)
            return record
        return self._snapshot(task_index, accounting)

    def _snap_key(self) -> tuple[Any, ...]:
        """What a plain snapshot is built from: every attribute after ``_snap``."""
        return (tuple(vars(self).values())[1:], len(self.steps), len(self.array_pending))

    def _snapshot(self, task_index: int | None, accounting: bool) -> JobRecord:
        a = self.allocation
        derived = self._alloc_derived()
        signal = self.signal
        if accounting:
            eligible, start, end = self.eligible_time, self.start_time, self.end_time
            if self.resize_time is not None and start is not None:
                start = self.resize_time  # job_post_resize_acctg: a new record from here
            if self.state in (JobState.TIMEOUT, JobState.CANCELLED, JobState.PREEMPTED):
                signal = 0  # sacct: job line 0:0, the .batch step keeps 0:15 (capture c2/25)
        else:
            eligible, start, end = self.shown_times()
        array_task_str = None
        task_id = self.array_task_id
        if self.array_pending and task_index is None:
            array_task_str = ranges_text(self.array_pending)
            if self.array_max is not None:
                array_task_str += f"%{self.array_max}"
        elif task_index is not None:
            task_id = task_index
        derived_values = {
            **_UNMODELLED_DEFAULTS,
            "array_task_id": task_id if array_task_str is None else None,
            "array_task_str": array_task_str,
            "array_max_tasks": self.array_max,
            "priority": 0 if self.hold else self.priority,
            "hold": self.hold is not None,
            "eligible_time": eligible,
            "accrue_time": self.accrue_time if self.accrue_time is not None else eligible,
            "start_time": start,
            "end_time": end,
            "num_nodes": len(a.nodes) if a is not None else self.num_nodes,
            "num_cpus": a.num_cpus if a is not None else self.num_cpus,
            "tres_req": self.tres_req(),
            "tres_alloc": dict(derived.tres_alloc) if derived is not None else {},
            "billable_tres": derived.billable if derived is not None else None,
            "nodelist": derived.nodelist if derived is not None else "",
            "batch_host": a.nodes[0].node if a is not None and a.nodes else "",
            "signal": signal,
            "dependency": self.dep_text,
            "signal_spec": self.signal_text,
            "steps": tuple(self.steps),
        }
        return _new_record(_same_values(self) + _other_values(derived_values))


class PriorityView:
    """The fields of a ``JobRecord`` that priority/basic and priority/multifactor read.

    ``set_priority`` runs for every pending job each ``PriorityCalcPeriod``; building a
    whole frozen ``JobRecord`` for it cost most of a recalculation.  The values are
    those ``Job.snapshot()`` would give (``accrue_time``/``eligible_time`` as
    ``shown_times``, node and CPU counts of the allocation when there is one).
    """

    __slots__ = (
        "_job",
        "account",
        "accrue_time",
        "begin_time",
        "eligible_time",
        "hold",
        "job_id",
        "nice",
        "num_cpus",
        "num_nodes",
        "partition",
        "qos",
        "state",
        "submit_time",
        "time_limit",
        "user",
    )  # fmt: skip

    def __init__(self, job: Job) -> None:
        self._job = job
        self.job_id = job.job_id
        self.partition = job.partition
        self.user = job.user
        self.account = job.account
        self.qos = job.qos
        self.state = job.state
        self.submit_time = job.submit_time
        self.begin_time = job.begin_time
        acc = job.accrue_time  # age accrues from accrue_time, else the eligible time
        eligible = acc if acc is not None else job._eligible_time
        if eligible is None and job.state is JobState.PENDING and job.hold is None and (
            not job.dependency and job.begin_time is not None
        ):
            eligible = job.begin_time
        self.eligible_time = eligible
        self.accrue_time = eligible
        self.time_limit = job.time_limit
        a = job.allocation
        self.num_nodes = len(a.nodes) if a is not None else job.num_nodes
        self.num_cpus = a.num_cpus if a is not None else job.num_cpus
        self.nice = job.nice
        self.hold = job.hold is not None

    @property
    def tres_req(self) -> dict[str, int]:
        """``ReqTRES`` (as the snapshot)."""
        return self._job.tres_req()

    @property
    def tres_alloc(self) -> dict[str, int]:
        """``AllocTRES`` (as the snapshot)."""
        return self._job.tres_alloc()


@functools.lru_cache(maxsize=4096, typed=True)
def _tres_counts(cpu: int, mem: int, node: int, gpus: int, weights: TresWeights | None
                 ) -> tuple[dict[str, int], float]:
    """TRES counts as slurmctld keeps them (``tres_req_cnt``/``tres_alloc_cnt``): ``cpu``,
    ``mem`` (MB), ``node``, ``gres/gpu`` when there are GPUs, and ``billing``, the
    ``assoc_mgr_tres_weighted`` value of the others stored as a uint64, in TRES id order
    (`_tres_ordered`); with that billing value as a double (``calc_job_billable_tres``).

    A pure function of its arguments (``typed``: an int and an equal float or bool are
    distinct keys; ``TresWeights`` is frozen), so the cache never goes stale: thousands
    of jobs of a few shapes share one computation per shape and ``TRESBillingWeights``.
    The dict is shared: every caller hands out copies of it, never it."""
    tres = {"cpu": cpu, "mem": mem, "node": node}
    if gpus:
        tres["gres/gpu"] = gpus
    billable = billable_tres(tres, weights)
    tres["billing"] = int(billable)
    return _tres_ordered(tres), billable


def _tres_ordered(tres: dict[str, int]) -> dict[str, int]:
    """TRES in slurmctld's id order (cpu, mem, node, billing, then gres/*)."""
    order = ("cpu", "mem", "energy", "node", "billing")
    head = {k: tres[k] for k in order if k in tres}
    return {**head, **{k: v for k, v in tres.items() if k not in head}}


__all__ = [
    "DERIVED_FIELDS",
    "KEPT_FIELDS",
    "RECORD_DEFAULTS",
    "SAME_FIELDS",
    "TOP_PRIORITY",
    "UNMODELLED_FIELDS",
    "DepItem",
    "Job",
    "PriorityView",
    "ranges_text",
]
