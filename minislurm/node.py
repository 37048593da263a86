"""Node, partition and reservation records: snapshots for sinfo and scontrol.

Handed out by ``Controller.nodes()``, ``Controller.partitions()`` and
``Controller.reservations()``; immutable.  Memory in MB, times epoch seconds,
time limits in minutes (``None`` = UNLIMITED).
"""

from __future__ import annotations

from dataclasses import dataclass

from minislurm.states import NodeBase, NodeFlag, NodeState


@dataclass(frozen=True, slots=True)
class NodeRecord:
    """One node as ``scontrol show node`` / ``sinfo -N`` sees it.

    ``gres`` is the configured GRES string (``gpu:a100:8``, ``''`` = none, printed
    ``(null)``); ``gres_used`` what ``sinfo -O GresUsed`` prints
    (``gpu:a100:2(IDX:0-1)``, ``gpu:a100:0(IDX:N/A)`` when none is used).
    ``state`` is base + flags (``state.short`` ``drng``, ``state.scontrol``
    ``ALLOCATED+DRAIN``).  ``reason`` is the text given with
    ``scontrol update ... reason=``; scontrol prints
    ``Reason=maintenance [root@2026-12-02T13:27:43]`` from reason/reason_user/reason_time.
    """

    name: str
    state: NodeState
    cpus: int
    alloc_cpus: int
    real_memory: int
    alloc_mem: int
    sockets: int = 1
    boards: int = 1
    cores_per_socket: int = 1
    threads_per_core: int = 1
    gres: str = ""
    gpus_total: int = 0
    gpus_used: int = 0
    gres_used: str = ""
    partitions: tuple[str, ...] = ()
    reason: str = ""
    reason_time: int | None = None
    reason_user: str = ""
    features: tuple[str, ...] = ()
    weight: int = 1
    node_addr: str = ""
    node_hostname: str = ""
    port: int | None = None
    boot_time: int | None = None
    slurmd_start_time: int | None = None
    last_busy_time: int | None = None
    tmp_disk: int = 0
    jobs: tuple[int, ...] = ()  # ids of jobs holding resources here
    #: ``CfgTRES`` billing: the highest billing of the node's TRES over its partitions
    #: with ``TRESBillingWeights`` (``_set_node_billing_tres``); None: the CPU count.
    billing: int | None = None

    @property
    def idle_cpus(self) -> int:
        """``I`` of sinfo's ``CPUS(A/I/O/T)`` (0 on down/drained nodes: they count as O)."""
        if self.is_unavailable:
            return 0
        return self.cpus - self.alloc_cpus

    @property
    def other_cpus(self) -> int:
        """``O`` of ``CPUS(A/I/O/T)``: CPUs of DOWN/DRAINED nodes not allocated."""
        if self.is_unavailable:
            return self.cpus - self.alloc_cpus
        return 0

    @property
    def is_unavailable(self) -> bool:
        """DOWN, DRAINED/DRAINING or FAIL: the scheduler places no new job here."""
        return self.state.base is NodeBase.DOWN or self.state.has(NodeFlag.DRAIN | NodeFlag.FAIL)

    @property
    def cfg_tres(self) -> dict[str, int]:
        """``CfgTRES`` (``cpu=4,mem=4000M,billing=4,gres/gpu=4``) as a mapping."""
        billing = self.cpus if self.billing is None else self.billing
        tres = {"cpu": self.cpus, "mem": self.real_memory, "billing": billing}
        if self.gpus_total:
            tres["gres/gpu"] = self.gpus_total
        return tres

    @property
    def alloc_tres(self) -> dict[str, int]:
        """``AllocTRES`` (``cpu=2,mem=2000M``; empty when nothing is allocated)."""
        tres: dict[str, int] = {}
        if self.alloc_cpus:
            tres["cpu"] = self.alloc_cpus
        if self.alloc_mem:
            tres["mem"] = self.alloc_mem
        if self.gpus_used:
            tres["gres/gpu"] = self.gpus_used
        return tres


@dataclass(frozen=True, slots=True)
class PartitionRecord:
    """One partition as ``scontrol show partition`` / ``sinfo`` see it.

    ``state`` is ``UP``/``DOWN``/``DRAIN``/``INACTIVE`` (sinfo's AVAIL prints it
    lowercased); ``max_time``/``default_time`` minutes or ``None`` (UNLIMITED / NONE).
    """

    name: str
    nodes: tuple[str, ...]
    default: bool = False
    state: str = "UP"
    max_time: int | None = None
    default_time: int | None = None
    max_nodes: int | None = None
    min_nodes: int = 0
    priority_job_factor: int = 1
    priority_tier: int = 1
    over_subscribe: str = "NO"
    preempt_mode: str = "OFF"
    qos: str = ""
    total_cpus: int = 0
    total_nodes: int = 0
    total_mem: int = 0
    total_gpus: int = 0
    #: ``TRESBillingWeights`` as written ('' = none; then billing is the CPU count).
    billing_weights: str = ""
    #: The partition's weighted TRES (``assoc_mgr_tres_weighted``); None: total CPUs.
    billing: int | None = None

    @property
    def tres(self) -> dict[str, int]:
        """``TRES=cpu=16,mem=16000M,node=4,billing=16,gres/gpu=16``."""
        tres = {
            "cpu": self.total_cpus,
            "mem": self.total_mem,
            "node": self.total_nodes,
            "billing": self.total_cpus if self.billing is None else self.billing,
        }
        if self.total_gpus:
            tres["gres/gpu"] = self.total_gpus
        return tres


@dataclass(frozen=True, slots=True)
class ReservationRecord:
    """An advance reservation (``scontrol create reservation``; ``show reservation``).

    ``state`` is ``ACTIVE`` between start and end, else ``INACTIVE``.
    ``flags`` e.g. ``('SPEC_NODES',)`` when nodes were named.
    """

    name: str
    start_time: int
    end_time: int
    nodes: tuple[str, ...]
    users: tuple[str, ...] = ()
    accounts: tuple[str, ...] = ()
    partition: str = ""
    flags: tuple[str, ...] = ()
    core_count: int = 0
    state: str = "INACTIVE"

    @property
    def duration(self) -> int:
        """Seconds between start and end (``Duration=01:00:00``)."""
        return self.end_time - self.start_time


__all__ = ["NodeRecord", "PartitionRecord", "ReservationRecord"]
