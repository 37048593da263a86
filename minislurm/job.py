"""Job, step and allocation records: the frozen snapshots every formatter reads.

The controller (``minislurm.ctld``) keeps mutable job state internally and hands
out these immutable snapshots (``Controller.jobs()``, ``Controller.job(id)``,
``Controller.accounting()``).  squeue, scontrol, sacct and the job environment
(``slurmd/env.py``) are pure functions of them.

Units (see docs/ARCHITECTURE.md): timestamps are ``int`` epoch seconds,
``time_limit`` is minutes (``None`` = UNLIMITED), memory is MB.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from minislurm.common.jobacct import StepStat
from minislurm.states import JobState, Reason

#: Slurm's NO_VAL for the array task id of a non-array job (``%a`` prints it).
NO_VAL = 4294967294


@dataclass(frozen=True, slots=True)
class NodeAlloc:
    """What a job holds on one node (select/cons_tres's per-node result).

    ``gpus`` lists the allocated GPU *indices* on the node, per type, in index order:
    ``(('a100', 0), ('a100', 1))``; ``CUDA_VISIBLE_DEVICES`` of the batch step is
    ``','.join(str(i) for _, i in gpus)`` (``0,1``), ``gres_used`` of the node prints
    them as ``gpu:a100:2(IDX:0-1)``.  ``cpu_ids``: the CPUs (cores) held, lowest free
    first as cons_tres's core bitmap picks them (``scontrol show job -d``:
    ``CPU_IDs=2-3``); empty for a record made without them.
    """

    node: str
    cpus: int
    mem_mb: int
    gpus: tuple[tuple[str | None, int], ...] = ()
    cpu_ids: tuple[int, ...] = ()

    @property
    def gpu_indices(self) -> tuple[int, ...]:
        """The GPU indices on this node, sorted (what CUDA_VISIBLE_DEVICES lists)."""
        return tuple(sorted(i for _, i in self.gpus))


@dataclass(frozen=True, slots=True)
class Allocation:
    """The resources a job holds: one ``NodeAlloc`` per node, in node (config) order.

    The totals are summed once, when the allocation is made: the scheduler, the
    snapshots and the node accounting read them for every job, and a ``--procs`` job
    is one entry per processor (hundreds of nodes).  They are not part of equality.
    """

    nodes: tuple[NodeAlloc, ...]
    #: Total CPUs (``NumCPUs`` / ``AllocCPUS``).
    num_cpus: int = field(init=False, repr=False, compare=False)
    #: Total memory in MB.
    mem_mb: int = field(init=False, repr=False, compare=False)
    #: Total GPUs (``gres/gpu`` in AllocTRES).
    num_gpus: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        cpus = mem = gpus = 0
        for n in self.nodes:
            cpus += n.cpus
            mem += n.mem_mb
            gpus += len(n.gpus)
        object.__setattr__(self, "num_cpus", cpus)
        object.__setattr__(self, "mem_mb", mem)
        object.__setattr__(self, "num_gpus", gpus)

    @property
    def node_names(self) -> tuple[str, ...]:
        """The allocated node names, in order (``SLURM_JOB_NODELIST`` compresses them)."""
        return tuple(n.node for n in self.nodes)

    @property
    def cpus_per_node(self) -> tuple[int, ...]:
        """CPUs on each node (``SLURM_JOB_CPUS_PER_NODE`` is built from it: ``2(x2)``)."""
        return tuple(n.cpus for n in self.nodes)


@dataclass(frozen=True, slots=True)
class StepRecord:
    """A job step as sacct shows it: ``step_id`` is ``'batch'`` (``JOBID.batch``) or an int.

    ``exit_code``/``signal`` are what sacct prints as ``ExitCode`` ``code:signal``.
    """

    step_id: str | int
    name: str
    state: JobState
    nodelist: str
    num_nodes: int
    ntasks: int
    num_cpus: int
    start_time: int | None
    end_time: int | None
    exit_code: int = 0
    signal: int = 0
    tres_alloc: dict[str, int] = field(default_factory=dict)
    #: What jobacct_gather saw of its tasks (sacct MaxRSS, AveCPU, TRESUsageIn*...);
    #: None: nothing gathered (the simulated clock, a step without tasks).
    usage: StepStat | None = None


@dataclass(frozen=True, slots=True)
class JobRecord:
    """A snapshot of one job (one attempt, when accounting keeps several).

    Field names follow ``scontrol show job``; formatters print them.  Pending jobs
    have ``start_time`` = the backfill-estimated start (or ``None``: ``Unknown``),
    ``nodelist == ''``.  ``reason`` + ``reason_detail`` give what squeue prints in
    ``(REASON)`` (``reason_text``).  ``tres_req``/``tres_alloc`` keys: ``cpu``, ``mem``
    (MB), ``node``, ``billing``, ``gres/gpu`` (and ``gres/gpu:a100`` for typed GPUs).
    """

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
    reason: Reason
    submit_time: int
    # --- identity of arrays ---
    array_job_id: int | None = None
    array_task_id: int | None = None
    array_task_str: str | None = None  # pending remainder of an array, e.g. '2-7%2'
    array_max_tasks: int | None = None  # the %throttle
    # --- why / order ---
    reason_detail: str = ""  # e.g. 'UnavailableNodes:n4'
    priority: int = 0
    nice: int = 0
    hold: bool = False
    # --- time ---
    eligible_time: int | None = None
    accrue_time: int | None = None
    begin_time: int | None = None  # --begin (BeginTime); requeue sets now + 121
    start_time: int | None = None
    end_time: int | None = None
    suspend_time: int | None = None
    preemptable_time: int | None = None  # PreemptEligibleTime= (preemption on, started)
    preempt_time: int | None = None  # PreemptTime= (None: None)
    time_limit: int | None = None  # minutes, None = UNLIMITED
    time_min: int | None = None
    last_sched_eval: int | None = None
    scheduler: str = ""  # 'Main' | 'Backfill' (scontrol's Scheduler=)
    # --- size (requested) ---
    num_nodes: int = 1
    max_nodes: int | None = None
    num_tasks: int = 1
    num_cpus: int = 1
    cpus_per_task: int = 1
    ntasks_per_node: int | None = None
    min_memory_mb: int | None = None  # --mem, per node
    mem_per_cpu: int | None = None  # --mem-per-cpu or DefMemPerCPU
    mem_per_gpu: int | None = None
    tres_per_node: str | None = None  # e.g. 'gres:gpu:2' (squeue %b), None = N/A
    tres_per_job: str | None = None  # --gpus
    tres_per_task: str | None = None  # --gpus-per-task
    gres: str = ""  # the --gres text as given
    exclusive: bool = False
    tres_req: dict[str, int] = field(default_factory=dict)
    tres_alloc: dict[str, int] = field(default_factory=dict)
    #: ``job_ptr->billable_tres`` (``calc_job_billable_tres``): the billing value as a
    #: double, what fair-share usage is charged with per second (``tres_alloc``'s
    #: ``billing`` is it truncated); None while pending.
    billable_tres: float | None = None
    # --- where ---
    nodelist: str = ""  # compressed allocation, '' while pending
    allocation: Allocation | None = None
    req_nodelist: str = ""
    exc_nodelist: str = ""
    batch_host: str = ""
    reservation: str = ""
    features: str = ""
    # --- outcome ---
    exit_code: int = 0
    signal: int = 0
    derived_exit_code: int = 0
    restart_count: int = 0
    requeue: bool = True
    batch_flag: bool = True
    cancelled_by: int | None = None  # uid: sacct prints 'CANCELLED by 0'
    # --- what and where it runs ---
    work_dir: str = ""
    std_out: str = ""
    std_err: str = ""
    std_in: str = "/dev/null"
    command: str = ""
    script: str = ""
    dependency: str = ""  # scontrol's Dependency=, e.g. 'afterok:56(failed)'
    signal_spec: str = ""  # --signal, e.g. 'USR1@60'
    comment: str = ""
    #: Nodes sched/backfill planned a pending job on (``sched_nodes``: squeue %Y,
    #: scontrol's SchedNodeList=); None until a backfill reservation, and once started.
    sched_nodes: str | None = None
    # --- accounting ---
    steps: tuple[StepRecord, ...] = ()

    @property
    def reason_text(self) -> str:
        """squeue's ``%r``: ``ReqNodeNotAvail, UnavailableNodes:n4`` or ``Resources``."""
        if self.reason_detail:
            return f"{self.reason.value}, {self.reason_detail}"
        return self.reason.value

    @property
    def job_id_str(self) -> str:
        """squeue's ``%i``: ``108_3`` for an array task, ``108_[2-7%2]`` for the rest."""
        if self.array_job_id is None:
            return str(self.job_id)
        if self.array_task_str is not None:
            return f"{self.array_job_id}_[{self.array_task_str}]"
        return f"{self.array_job_id}_{self.array_task_id}"

    @property
    def elapsed(self) -> int:
        """Seconds run so far (needs ``end_time`` for ended jobs; see ``run_time``)."""
        if self.start_time is None or self.end_time is None:
            return 0
        return max(0, self.end_time - self.start_time)

    def run_time(self, now: int) -> int:
        """``RunTime``/squeue ``TIME``: seconds since start, frozen at the end."""
        if self.start_time is None or self.state is JobState.PENDING:
            return 0
        end = self.end_time if self.state.is_terminal and self.end_time else now
        return max(0, end - self.start_time)


__all__ = ["NO_VAL", "Allocation", "JobRecord", "NodeAlloc", "StepRecord"]
