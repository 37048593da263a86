"""The records slurmctld builds from slurm.conf: nodes, partitions, cluster options.

Mirror what Slurm 22.05 keeps after reading the file: ``slurm_conf_t``
(``slurm/slurm.h``, filled by ``src/common/read_config.c``: the cluster-wide
options ``scontrol show config`` prints) as :class:`SlurmConfig`, a node's
``config_record_t``/``node_record_t`` (``src/common/node_conf.h``) as
:class:`NodeConfig`, a partition's ``part_record_t`` (``src/slurmctld/slurmctld.h``)
as :class:`PartitionConfig`, and the parsed ``SchedulerParameters`` and
``Priority*`` options as :class:`SchedulerParameters` and :class:`PriorityConfig`.
All are frozen data; :func:`minislurm.conf.read_config.parse_config` builds them and
``from minislurm.conf.read_config import ...`` is the import path to use.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from minislurm.common import hostlist
from minislurm.common.billing import TresWeights
from minislurm.common.gres import NodeGres
from minislurm.conf.cgroup_conf import CgroupConfig
from minislurm.conf.tables import DEFAULT_SLURMD_PORT

__all__ = [
    "NodeConfig", "PartitionConfig", "PriorityConfig", "SchedulerParameters", "SlurmConfig",
]  # fmt: skip


@dataclass(frozen=True, slots=True)
class NodeConfig:
    """One node of a ``NodeName=`` line (slurm.conf(5) NODE CONFIGURATION).

    ``sockets`` is the node's total socket count (``Boards`` x ``SocketsPerBoard``,
    or ``Sockets=``); ``real_memory`` is MB; ``state`` the configured ``State=``
    (``UNKNOWN`` when not given); ``port`` the slurmd port (``Port=``, else ``SlurmdPort``).
    """

    name: str
    cpus: int
    boards: int
    sockets: int
    cores_per_socket: int
    threads_per_core: int
    real_memory: int
    gres: tuple[NodeGres, ...]
    features: tuple[str, ...]
    weight: int
    state: str
    node_addr: str
    node_hostname: str
    port: int
    tmp_disk: int = 0
    reason: str | None = None

    @property
    def sockets_per_board(self) -> int:
        return self.sockets // self.boards

    @property
    def cores(self) -> int:
        """Total cores (``Sockets`` x ``CoresPerSocket``)."""
        return self.sockets * self.cores_per_socket

    def gres_count(self, name: str = "gpu", gres_type: str | None = None) -> int:
        """How many ``name`` GRES (of ``gres_type`` if given) the node has."""
        return sum(g.count for g in self.gres if g.name == name and gres_type in (None, g.type))


@dataclass(frozen=True, slots=True)
class PartitionConfig:
    """One ``PartitionName=`` line (slurm.conf(5) PARTITION CONFIGURATION).

    ``nodes`` are in node-table order without duplicates (``node_list`` is the
    hostlist scontrol prints for them, ``Nodes=a[1-2],b1``).  Times are
    minutes; ``max_time=None`` is UNLIMITED, ``default_time=None`` is NONE (jobs
    without ``--time`` get ``max_time``); ``max_nodes=None`` is UNLIMITED.
    ``over_subscribe`` is spelled as ``scontrol show partition`` prints it
    (``NO``, ``EXCLUSIVE``, ``YES:4``, ``FORCE:4``); ``preempt_mode`` is the
    partition's own ``PreemptMode`` or, when absent, the cluster's.
    """

    name: str
    nodes: tuple[str, ...]
    default: bool
    max_time: int | None
    default_time: int | None
    max_nodes: int | None
    min_nodes: int
    state: str
    priority_job_factor: int
    priority_tier: int
    over_subscribe: str
    preempt_mode: str
    qos: str | None
    max_cpus_per_node: int | None = None
    def_mem_per_cpu: int | None = None
    max_mem_per_cpu: int | None = None
    allow_accounts: tuple[str, ...] | None = None
    allow_qos: tuple[str, ...] | None = None
    hidden: bool = False
    exclusive_user: bool = False
    nodes_expr: str = ""
    #: ``TRESBillingWeights`` (None: a job's billing is its CPU count).
    billing_weights: TresWeights | None = None

    @property
    def node_list(self) -> str:
        """``Nodes=`` as ``scontrol show partition`` prints it (a sorted hostlist)."""
        return hostlist.compress(self.nodes, sort=True)


@dataclass(frozen=True, slots=True)
class SchedulerParameters:
    """``SchedulerParameters=`` (sched/backfill and sched/builtin options).

    ``bf_window`` minutes, ``bf_resolution`` / ``bf_interval`` / ``sched_interval``
    seconds, ``sched_min_interval`` microseconds; ``bf_max_job_user=0`` means no
    limit.  Options minislurm does not model are kept in ``other`` as given.
    """

    bf_window: int = 1440
    bf_resolution: int = 60
    bf_max_job_test: int = 500
    bf_continue: bool = False
    bf_interval: int = 30
    bf_min_prio_reserve: int = 0
    bf_max_job_user: int = 0
    sched_interval: int = 60
    sched_min_interval: int = 2
    default_queue_depth: int = 100
    other: tuple[tuple[str, str | None], ...] = ()

    def get(self, key: str) -> str | None:
        """Value of an unmodelled option (``None`` for a flag or when absent)."""
        return dict(self.other).get(key)


@dataclass(frozen=True, slots=True)
class PriorityConfig:
    """The ``Priority*`` options of slurm.conf (read by priority/multifactor).

    Durations are **seconds**, as slurmctld stores them (``PriorityMaxAge=7-0`` is
    604800; slurm.conf gives them in minutes or ``D-HH:MM:SS``); ``weight_tres`` maps
    the TRES names of ``PriorityWeightTRES`` as written (``CPU``, ``GRES/gpu``) to weights;
    ``damp_factor`` is ``FairShareDampeningFactor``.
    """

    type: str = "priority/basic"
    weight_age: int = 0
    weight_assoc: int = 0
    weight_fairshare: int = 0
    weight_job_size: int = 0
    weight_partition: int = 0
    weight_qos: int = 0
    weight_tres: dict[str, float] = field(default_factory=dict)
    max_age: int = 7 * 86400
    decay_half_life: int = 7 * 86400
    favor_small: bool = False
    flags: tuple[str, ...] = ()
    calc_period: int = 5 * 60
    usage_reset_period: str = "NONE"
    damp_factor: int = 1


@dataclass(frozen=True, slots=True)
class SlurmConfig:
    """A whole cluster configuration (what ``scontrol show config`` describes).

    ``nodes`` are in slurmctld's node-table order, which Slurm 22.05 sorts by name
    in natural order (``cpu01`` .. ``gpu04``, ``n9`` before ``n10``) whatever the order
    of the NodeName lines; ``partitions`` are in file order.
    """

    cluster_name: str
    nodes: tuple[NodeConfig, ...]
    partitions: tuple[PartitionConfig, ...]
    default_partition_name: str | None = None
    scheduler_type: str = "sched/backfill"
    scheduler: SchedulerParameters = SchedulerParameters()
    select_type: str = "select/linear"
    select_type_parameters: str = "NONE"
    priority: PriorityConfig = PriorityConfig()
    preempt_type: str = "preempt/none"
    preempt_mode: str = "OFF"
    kill_wait: int = 30
    def_mem_per_cpu: int | None = None
    def_mem_per_node: int | None = None
    max_mem_per_cpu: int | None = None
    max_mem_per_node: int | None = None
    max_array_size: int = 1001
    enforce_part_limits: str = "NO"
    min_job_age: int = 300
    return_to_service: int = 0
    #: ``AccountingStorageEnforce`` as lower-case words (``associations``, ``limits``,
    #: ``qos``, ``safe``, ``all``...); empty = none, Slurm's default
    accounting_storage_enforce: tuple[str, ...] = ()
    #: ``JobRequeue``: 1 (default) makes batch jobs requeue-able unless ``--no-requeue``;
    #: 0 leaves ``--requeue`` the only way
    job_requeue: int = 1
    gres_types: tuple[str, ...] = ()
    max_job_count: int = 10000
    first_job_id: int = 1
    max_job_id: int = 0x03FF0000
    accounting_storage_tres: tuple[str, ...] = (
        "cpu", "mem", "energy", "node", "billing", "fs/disk", "vmem", "pages",
    )  # fmt: skip
    inactive_limit: int = 0
    over_time_limit: int = 0
    slurmd_port: int = DEFAULT_SLURMD_PORT
    extra: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    source: str = ""
    #: cgroup.conf beside slurm.conf (read when a cgroup plugin is configured).
    cgroup: CgroupConfig = field(default_factory=CgroupConfig)

    @property
    def uses_cgroup(self) -> bool:
        """Whether a plugin reads cgroup.conf (TaskPlugin, ProctrackType or
        JobAcctGatherType naming a cgroup plugin)."""
        keys = ("TaskPlugin", "ProctrackType", "JobAcctGatherType")
        return any("cgroup" in str(self.extra.get(k, "")) for k in keys)

    @property
    def use_local_device_index(self) -> bool:
        """``gres_use_local_device_index``: ``TaskPlugin`` includes ``task/cgroup`` and
        cgroup.conf has ``ConstrainDevices=yes``: jobs see their GPUs numbered from 0."""
        return "cgroup" in str(self.extra.get("TaskPlugin", "")) and self.cgroup.constrain_devices

    @property
    def default_partition(self) -> PartitionConfig | None:
        """The partition marked ``Default=YES`` (the last one wins, as in Slurm)."""
        return self.find_partition(self.default_partition_name or "")

    def find_node(self, name: str) -> NodeConfig | None:
        return next((n for n in self.nodes if n.name == name), None)

    def find_partition(self, name: str) -> PartitionConfig | None:
        return next((p for p in self.partitions if p.name == name), None)

    def node(self, name: str) -> NodeConfig:
        """The node called ``name``; ``KeyError`` if it is not configured."""
        found = self.find_node(name)
        if found is None:
            raise KeyError(name)
        return found

    def partition(self, name: str) -> PartitionConfig:
        """The partition called ``name``; ``KeyError`` if it is not configured."""
        found = self.find_partition(name)
        if found is None:
            raise KeyError(name)
        return found

    @property
    def node_names(self) -> tuple[str, ...]:
        return tuple(n.name for n in self.nodes)
