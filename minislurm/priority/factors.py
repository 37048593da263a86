"""The data of priority/multifactor: its parameters, the cluster it normalises against,
and the per-job factors ``sprio`` prints.

``MultifactorParams`` holds what ``_internal_setup`` of ``priority_multifactor.c``
reads from slurm.conf (``PriorityWeight*``, ``PriorityMaxAge``, ``PriorityFavorSmall``,
``PriorityFlags``, ``PriorityDecayHalfLife``, ``PriorityCalcPeriod``,
``PriorityUsageResetPeriod``, ``FairShareDampeningFactor``); ``ClusterView`` holds the
cluster totals the factors divide by (``node_record_count``, ``cluster_cpus``, each
partition's ``PriorityJobFactor`` and TRES counts).  ``PriorityFactors`` is one
``priority_factors_object_t``: the normalised factors plus the weights, from which
the priority and every sprio column follow.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from minislurm.common.billing import billable_tres
from minislurm.conf import PriorityConfig, SlurmConfig
from minislurm.errors import ConfigError

#: Priority 0 is a held job; Slurm caps priorities at 32 bits.
MAX_PRIORITY = 0xFFFFFFFF
#: Slurm's INFINITE (a time limit of UNLIMITED in minutes).
INFINITE = 0xFFFFFFFF

#: ``PriorityFlags`` names accepted in 22.05 (``FAIR_TREE`` is the obsolete default).
PRIORITY_FLAGS = frozenset({
    "ACCRUE_ALWAYS", "CALCULATE_RUNNING", "DEPTH_OBLIVIOUS", "FAIR_TREE", "INCR_ONLY",
    "MAX_TRES", "NO_FAIR_TREE", "NO_NORMAL_ALL", "NO_NORMAL_ASSOC", "NO_NORMAL_PART",
    "NO_NORMAL_QOS", "NO_NORMAL_TRES", "SMALL_RELATIVE_TO_TIME",
})  # fmt: skip

#: The order of Slurm's TRES table (``assoc_mgr_tres_name_array``); others follow by name.
TRES_ORDER = ("cpu", "mem", "energy", "node", "billing", "fs/disk", "vmem", "pages")


def tres_sort_key(name: str) -> tuple[int, str]:
    """Sort TRES names the way Slurm lists them (cpu, mem, ..., then gres/... by name)."""
    return (TRES_ORDER.index(name), "") if name in TRES_ORDER else (len(TRES_ORDER), name)


def parse_tres_weights(spec: str | Mapping[str, float] | None) -> tuple[tuple[str, float], ...]:
    """``PriorityWeightTRES=CPU=1000,Mem=2000,GRES/gpu=3000`` -> ``(('cpu', 1000.0), ...)``."""
    if not spec:
        return ()
    if isinstance(spec, Mapping):
        items = [(str(k).lower(), float(v)) for k, v in spec.items()]
    else:
        items = []
        for part in spec.split(","):
            name, sep, value = part.partition("=")
            try:
                items.append((name.strip().lower(), float(value)))
            except ValueError:
                raise ConfigError(f"Invalid PriorityWeightTRES: {spec}") from None
            if not sep or not name.strip():
                raise ConfigError(f"Invalid PriorityWeightTRES: {spec}")
    return tuple(sorted(items, key=lambda kv: tres_sort_key(kv[0])))


@dataclass(frozen=True, slots=True)
class PriorityWeights:
    """The ``PriorityWeight*`` integers (default 0) and ``PriorityWeightTRES``."""

    age: int = 0
    assoc: int = 0
    fairshare: int = 0
    job_size: int = 0
    partition: int = 0
    qos: int = 0
    tres: tuple[tuple[str, float], ...] = ()

    def tres_weight(self, name: str) -> float:
        """The weight of one TRES (0 when not listed)."""
        return dict(self.tres).get(name, 0.0)


@dataclass(frozen=True, slots=True)
class MultifactorParams:
    """priority/multifactor's configuration (times in seconds, like Slurm stores them)."""

    weights: PriorityWeights = field(default_factory=PriorityWeights)
    max_age: int = 7 * 86400  # PriorityMaxAge=7-0
    favor_small: bool = False  # PriorityFavorSmall=NO
    flags: frozenset[str] = frozenset()
    decay_half_life: int = 7 * 86400  # PriorityDecayHalfLife=7-0
    calc_period: int = 300  # PriorityCalcPeriod=5 (minutes)
    usage_reset_period: str = "NONE"
    damp_factor: float = 1.0  # FairShareDampeningFactor

    def __post_init__(self) -> None:
        unknown = sorted(set(self.flags) - PRIORITY_FLAGS)
        if unknown:
            raise ConfigError(f"Invalid PriorityFlags: {unknown[0]}")

    def has(self, flag: str) -> bool:
        """True when ``PriorityFlags`` has ``flag`` (NO_NORMAL_ALL implies each NO_NORMAL_*)."""
        if flag.startswith("NO_NORMAL_") and "NO_NORMAL_ALL" in self.flags:
            return True
        return flag in self.flags

    @property
    def fair_tree(self) -> bool:
        """Fair Tree unless ``NO_FAIR_TREE`` (or ``DEPTH_OBLIVIOUS``, which implies it)."""
        return not (self.has("NO_FAIR_TREE") or self.has("DEPTH_OBLIVIOUS"))

    @classmethod
    def from_config(cls, priority: PriorityConfig) -> MultifactorParams:
        """Build from slurm.conf's ``Priority*`` options (``SlurmConfig.priority``)."""
        return cls(
            weights=PriorityWeights(
                age=priority.weight_age,
                assoc=priority.weight_assoc,
                fairshare=priority.weight_fairshare,
                job_size=priority.weight_job_size,
                partition=priority.weight_partition,
                qos=priority.weight_qos,
                tres=parse_tres_weights(priority.weight_tres),
            ),
            max_age=priority.max_age,
            favor_small=priority.favor_small,
            flags=frozenset(f.upper() for f in priority.flags),
            decay_half_life=priority.decay_half_life,
            calc_period=priority.calc_period,
            usage_reset_period=priority.usage_reset_period.upper(),
            damp_factor=float(priority.damp_factor or 1),
        )


@dataclass(frozen=True, slots=True)
class PartitionView:
    """What the factors need of a partition: ``PriorityJobFactor``, MaxTime, TRES totals."""

    name: str
    priority_job_factor: int = 1
    max_time: int | None = None  # minutes, None = UNLIMITED
    tres_total: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ClusterView:
    """Cluster totals: ``node_record_count``, ``cluster_cpus`` and the partitions."""

    node_count: int
    cpu_count: int
    partitions: Mapping[str, PartitionView] = field(default_factory=dict)

    @property
    def max_partition_priority(self) -> int:
        """``part_max_priority``: the highest ``PriorityJobFactor``."""
        return max((p.priority_job_factor for p in self.partitions.values()), default=0)

    @classmethod
    def from_config(cls, config: SlurmConfig) -> ClusterView:
        """Totals from a ``SlurmConfig`` (nodes' CPUs, RealMemory, GPUs; partitions)."""
        nodes = {n.name: n for n in config.nodes}
        parts: dict[str, PartitionView] = {}
        for p in config.partitions:
            total: dict[str, int] = {"cpu": 0, "mem": 0, "node": 0, "billing": 0}
            for name in p.nodes:
                n = nodes.get(name)
                if n is None:
                    continue
                total["cpu"] += n.cpus
                total["billing"] += n.cpus
                total["mem"] += n.real_memory
                total["node"] += 1
                for g in n.gres:
                    for key in {f"gres/{g.name}", *([f"gres/{g.name}:{g.type}"] if g.type else [])}:
                        total[key] = total.get(key, 0) + g.count
            weights = p.billing_weights
            if weights is not None:  # the partition's TRES billing (partition_mgr.c)
                counted = {k: v for k, v in total.items() if k.count(":") == 0}
                total["billing"] = int(billable_tres(counted, weights))
            parts[p.name] = PartitionView(
                name=p.name,
                priority_job_factor=p.priority_job_factor,
                max_time=p.max_time,
                tres_total=total,
            )
        return cls(
            node_count=len(nodes),
            cpu_count=sum(n.cpus for n in nodes.values()),
            partitions=parts,
        )


@dataclass(frozen=True, slots=True)
class PriorityFactors:
    """One job's priority factors in one partition (a ``priority_factors_object_t``).

    ``age`` ... ``qos`` are the normalised factors (0..1; partition/QOS/association
    may exceed 1 with ``NO_NORMAL_*``), ``tres`` the normalised TRES factors, ``site``
    and ``nice`` plain integers.  ``weighted_*`` and ``priority`` are what sprio prints.
    """

    job_id: int
    partition: str
    user: str
    account: str
    weights: PriorityWeights
    site: int = 0
    age: float = 0.0
    assoc: float = 0.0
    fairshare: float = 0.0
    job_size: float = 0.0
    part: float = 0.0
    qos: float = 0.0
    nice: int = 0
    tres: tuple[tuple[str, float], ...] = ()

    @property
    def weighted_age(self) -> float:
        """``PriorityWeightAge * age_factor``."""
        return self.age * self.weights.age

    @property
    def weighted_assoc(self) -> float:
        """``PriorityWeightAssoc * assoc_factor``."""
        return self.assoc * self.weights.assoc

    @property
    def weighted_fairshare(self) -> float:
        """``PriorityWeightFairshare * fair-share_factor``."""
        return self.fairshare * self.weights.fairshare

    @property
    def weighted_job_size(self) -> float:
        """``PriorityWeightJobSize * job_size_factor``."""
        return self.job_size * self.weights.job_size

    @property
    def weighted_part(self) -> float:
        """``PriorityWeightPartition * partition_factor``."""
        return self.part * self.weights.partition

    @property
    def weighted_qos(self) -> float:
        """``PriorityWeightQOS * QOS_factor``."""
        return self.qos * self.weights.qos

    @property
    def weighted_tres(self) -> tuple[tuple[str, float], ...]:
        """``TRES_weight_<type> * TRES_factor_<type>`` for each weighted TRES."""
        return tuple((n, f * self.weights.tres_weight(n)) for n, f in self.tres)

    @property
    def priority(self) -> int:
        """The job priority: the documented sum, clamped to 1 .. 2**32-1, truncated."""
        total = (
            self.site
            + self.weighted_age
            + self.weighted_assoc
            + self.weighted_fairshare
            + self.weighted_job_size
            + self.weighted_part
            + self.weighted_qos
            + sum(v for _, v in self.weighted_tres)
            - self.nice
        )
        if total < 1:
            total = 1
        return int(min(total, MAX_PRIORITY))


__all__ = [
    "INFINITE",
    "MAX_PRIORITY",
    "PRIORITY_FLAGS",
    "TRES_ORDER",
    "ClusterView",
    "MultifactorParams",
    "PartitionView",
    "PriorityFactors",
    "PriorityWeights",
    "parse_tres_weights",
    "tres_sort_key",
]
