"""The names Slurm prints for job states, node states and pending reasons.

Mirrors ``src/common/slurm_protocol_defs.c`` of Slurm 22.05:
``job_state_string`` / ``job_state_string_compact`` (``JobState.value`` /
``JobState.short``), ``node_state_string`` / ``node_state_string_compact`` /
``node_state_string_complete`` (``NodeState.long`` / ``.short`` / ``.scontrol``) and
``job_reason_string`` (``Reason.value``).

A node's state in Slurm is one *base* state (IDLE, ALLOCATED, MIXED, DOWN, ...)
plus *flags* (DRAIN, COMPLETING, NOT_RESPONDING, RESERVED, ...).  ``NodeState``
carries both; the three printers give what ``sinfo -o %T`` (``long``),
``sinfo -o %t`` / default ``sinfo`` (``short``) and ``scontrol show node``
(``scontrol``) print, e.g. ``draining`` / ``drng`` / ``ALLOCATED+DRAIN``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class JobState(enum.Enum):
    """A job's state (``squeue -o %T`` prints ``value``, ``%t`` prints ``short``)."""

    PENDING = "PENDING"
    CONFIGURING = "CONFIGURING"
    RUNNING = "RUNNING"
    SUSPENDED = "SUSPENDED"
    COMPLETING = "COMPLETING"
    COMPLETED = "COMPLETED"
    CANCELLED = "CANCELLED"
    FAILED = "FAILED"
    TIMEOUT = "TIMEOUT"
    NODE_FAIL = "NODE_FAIL"
    PREEMPTED = "PREEMPTED"
    BOOT_FAIL = "BOOT_FAIL"
    DEADLINE = "DEADLINE"
    OUT_OF_MEMORY = "OUT_OF_MEMORY"
    REQUEUED = "REQUEUED"
    REQUEUE_HOLD = "REQUEUE_HOLD"
    RESIZING = "RESIZING"
    REVOKED = "REVOKED"
    SPECIAL_EXIT = "SPECIAL_EXIT"
    STOPPED = "STOPPED"

    @property
    def short(self) -> str:
        """The two-letter code of ``squeue -o %t`` (``job_state_string_compact``)."""
        return _JOB_SHORT[self]

    @property
    def is_terminal(self) -> bool:
        """True when the job has ended for good (Slurm's ``IS_JOB_FINISHED``)."""
        return self in _TERMINAL

    @property
    def is_active(self) -> bool:
        """True while the job holds resources (RUNNING, CONFIGURING, COMPLETING, SUSPENDED)."""
        return self in (
            JobState.RUNNING,
            JobState.CONFIGURING,
            JobState.COMPLETING,
            JobState.SUSPENDED,
        )


_JOB_SHORT: dict[JobState, str] = {
    JobState.PENDING: "PD",
    JobState.CONFIGURING: "CF",
    JobState.RUNNING: "R",
    JobState.SUSPENDED: "S",
    JobState.COMPLETING: "CG",
    JobState.COMPLETED: "CD",
    JobState.CANCELLED: "CA",
    JobState.FAILED: "F",
    JobState.TIMEOUT: "TO",
    JobState.NODE_FAIL: "NF",
    JobState.PREEMPTED: "PR",
    JobState.BOOT_FAIL: "BF",
    JobState.DEADLINE: "DL",
    JobState.OUT_OF_MEMORY: "OOM",
    JobState.REQUEUED: "RQ",
    JobState.REQUEUE_HOLD: "RH",
    JobState.RESIZING: "RS",
    JobState.REVOKED: "RV",
    JobState.SPECIAL_EXIT: "SE",
    JobState.STOPPED: "ST",
}

_TERMINAL = frozenset(
    {
        JobState.COMPLETED,
        JobState.CANCELLED,
        JobState.FAILED,
        JobState.TIMEOUT,
        JobState.NODE_FAIL,
        JobState.PREEMPTED,
        JobState.BOOT_FAIL,
        JobState.DEADLINE,
        JobState.OUT_OF_MEMORY,
    }
)


class NodeBase(enum.Enum):
    """A node's base state (``NODE_STATE_*`` without flags)."""

    UNKNOWN = "UNKNOWN"
    DOWN = "DOWN"
    IDLE = "IDLE"
    ALLOCATED = "ALLOCATED"
    ERROR = "ERROR"
    MIXED = "MIXED"
    FUTURE = "FUTURE"


class NodeFlag(enum.Flag):
    """Flags added to the base state (``NODE_STATE_DRAIN``, ``NODE_STATE_COMPLETING``, ...).

    ``scontrol show node`` prints them after the base state joined with ``+`` in
    this order (``node_state_string_complete``), e.g. ``IDLE+DRAIN``.
    """

    NONE = 0
    CLOUD = enum.auto()
    COMPLETING = enum.auto()
    DRAIN = enum.auto()
    DYNAMIC_FUTURE = enum.auto()
    DYNAMIC_NORM = enum.auto()
    INVALID_REG = enum.auto()
    FAIL = enum.auto()
    MAINTENANCE = enum.auto()
    POWER_DOWN = enum.auto()
    POWER_UP = enum.auto()
    NOT_RESPONDING = enum.auto()
    PLANNED = enum.auto()
    POWERED_DOWN = enum.auto()
    REBOOT_ISSUED = enum.auto()
    REBOOT_REQUESTED = enum.auto()
    RESERVED = enum.auto()


# scontrol's order of flags after the base state (node_state_string_complete).
_FLAG_ORDER: tuple[NodeFlag, ...] = (
    NodeFlag.CLOUD,
    NodeFlag.COMPLETING,
    NodeFlag.DRAIN,
    NodeFlag.DYNAMIC_FUTURE,
    NodeFlag.DYNAMIC_NORM,
    NodeFlag.INVALID_REG,
    NodeFlag.FAIL,
    NodeFlag.MAINTENANCE,
    NodeFlag.POWER_DOWN,
    NodeFlag.POWER_UP,
    NodeFlag.NOT_RESPONDING,
    NodeFlag.PLANNED,
    NodeFlag.POWERED_DOWN,
    NodeFlag.REBOOT_ISSUED,
    NodeFlag.REBOOT_REQUESTED,
    NodeFlag.RESERVED,
)

_BASE_SHORT: dict[NodeBase, str] = {
    NodeBase.UNKNOWN: "unk",
    NodeBase.DOWN: "down",
    NodeBase.IDLE: "idle",
    NodeBase.ALLOCATED: "alloc",
    NodeBase.ERROR: "err",
    NodeBase.MIXED: "mix",
    NodeBase.FUTURE: "futr",
}


#: The words of flag-driven states, per printer (``node_state_string`` / ``_compact``).
_LONG_WORDS = {"draining": "draining", "drained": "drained", "failing": "failing",
               "fail": "fail", "down": "down", "completing": "completing",
               "reserved": "reserved", "planned": "planned"}
_SHORT_WORDS = {"draining": "drng", "drained": "drain", "failing": "failg", "fail": "fail",
                "down": "down", "completing": "comp", "reserved": "resv", "planned": "plnd"}


@dataclass(frozen=True, slots=True)
class NodeState:
    """A node state: one base state plus flags, with Slurm's three ways of printing it.

    >>> NodeState(NodeBase.ALLOCATED, NodeFlag.DRAIN).short
    'drng'
    >>> NodeState(NodeBase.IDLE, NodeFlag.DRAIN).scontrol
    'IDLE+DRAIN'
    >>> NodeState(NodeBase.DOWN, NodeFlag.NOT_RESPONDING).short
    'down*'
    """

    base: NodeBase
    flags: NodeFlag = NodeFlag.NONE

    def has(self, flag: NodeFlag) -> bool:
        """True when ``flag`` is set."""
        return bool(self.flags & flag)

    @property
    def _suffix(self) -> str:
        """sinfo's one-character suffix: ``*`` not responding, ``~`` powered down, ..."""
        f = self.flags
        if f & NodeFlag.MAINTENANCE:
            return "$"
        if f & (NodeFlag.REBOOT_REQUESTED | NodeFlag.REBOOT_ISSUED):
            return "@"
        if f & NodeFlag.POWER_UP:
            return "#"
        if f & NodeFlag.POWER_DOWN:
            return "%"
        if f & NodeFlag.POWERED_DOWN:
            return "~"
        if f & NodeFlag.NOT_RESPONDING:
            return "*"
        return ""

    @property
    def _draining(self) -> bool:
        return bool(self.flags & NodeFlag.COMPLETING) or self.base in (
            NodeBase.ALLOCATED,
            NodeBase.MIXED,
        )

    def _word(self, words: dict[str, str]) -> str:
        """The state's word from ``words`` (one table per printer), flags first."""
        f = self.flags
        if f & NodeFlag.DRAIN:
            key = "draining" if self._draining else "drained"
        elif f & NodeFlag.FAIL:
            key = "failing" if self._draining else "fail"
        elif self.base is NodeBase.DOWN:
            key = "down"
        elif f & NodeFlag.COMPLETING:
            key = "completing"
        elif f & NodeFlag.RESERVED and self.base is NodeBase.IDLE:
            key = "reserved"
        elif f & NodeFlag.PLANNED and self.base is NodeBase.IDLE:
            key = "planned"
        else:
            return ""
        return words[key]

    @property
    def _maint(self) -> bool:
        """``MAINT`` in place of any other word: slurm's node_state_string returns it for
        a node in a MAINT reservation unless the node is draining, allocated, mixed or
        down (those print their own word plus ``$``).  Measured on 22.05.8: an idle node
        is ``maint`` (``%t`` and ``%T``), ``IDLE+DRAIN+MAINTENANCE+RESERVED`` is
        ``drain$``/``drained$``, ``DOWN+MAINTENANCE+RESERVED`` ``down$``, a node running a
        job ``mix$``/``mixed$``."""
        return bool(self.flags & NodeFlag.MAINTENANCE) and not (
            self.flags & NodeFlag.DRAIN
            or self.base in (NodeBase.ALLOCATED, NodeBase.DOWN, NodeBase.MIXED)
        )

    @property
    def long(self) -> str:
        """``node_state_string`` lowercased as ``sinfo -o %T`` prints it (``draining``)."""
        if self._maint:
            return "maint"
        word = self._word(_LONG_WORDS) or self.base.value.lower()
        return word + self._suffix

    @property
    def short(self) -> str:
        """``node_state_string_compact`` as default ``sinfo`` / ``%t`` prints it (``drng``)."""
        if self._maint:
            return "maint"
        word = self._word(_SHORT_WORDS) or _BASE_SHORT[self.base]
        return word + self._suffix

    @property
    def scontrol(self) -> str:
        """``node_state_string_complete`` as ``scontrol show node`` prints it.

        ``IDLE``, ``MIXED``, ``ALLOCATED+DRAIN``, ``IDLE+DRAIN``, ``DOWN+NOT_RESPONDING``,
        ``IDLE+COMPLETING``.
        """
        parts = [self.base.value]
        parts += [flag.name for flag in _FLAG_ORDER if self.flags & flag and flag.name]
        return "+".join(parts)

    def __str__(self) -> str:
        return self.scontrol


class Reason(enum.Enum):
    """Why a job waits (or why it ended), exactly as ``squeue -o %r`` prints it.

    ``job_reason_string`` of Slurm 22.05.  ``scontrol show job`` prints the same
    text with blanks replaced by ``_`` (``Reason.scontrol``).  A reason may carry a
    detail on the job (``JobRecord.reason_detail``): ``ReqNodeNotAvail`` is printed
    ``ReqNodeNotAvail, UnavailableNodes:n4`` (see ``JobRecord.reason_text``).
    """

    NONE = "None"
    PRIORITY = "Priority"
    DEPENDENCY = "Dependency"
    RESOURCES = "Resources"
    PARTITION_NODE_LIMIT = "PartitionNodeLimit"
    PARTITION_TIME_LIMIT = "PartitionTimeLimit"
    PARTITION_DOWN = "PartitionDown"
    PARTITION_INACTIVE = "PartitionInactive"
    PARTITION_CONFIG = "PartitionConfig"
    JOB_HELD_ADMIN = "JobHeldAdmin"
    JOB_HELD_USER = "JobHeldUser"
    BEGIN_TIME = "BeginTime"
    DEPENDENCY_NEVER_SATISFIED = "DependencyNeverSatisfied"
    REQ_NODE_NOT_AVAIL = "ReqNodeNotAvail"
    NODES_DOWN_DRAINED = (
        "Nodes required for job are DOWN, DRAINED or reserved for jobs in higher "
        "priority partitions"
    )
    RESERVATION = "Reservation"
    RESERVATION_DELETED = "ReservationDeleted"
    JOB_ARRAY_TASK_LIMIT = "JobArrayTaskLimit"
    BAD_CONSTRAINTS = "BadConstraints"
    INVALID_ACCOUNT = "InvalidAccount"
    INVALID_QOS = "InvalidQOS"
    QOS_JOB_LIMIT = "QOSJobLimit"
    QOS_RESOURCE_LIMIT = "QOSResourceLimit"
    QOS_TIME_LIMIT = "QOSTimeLimit"
    QOS_MAX_GRES_PER_USER = "QOSMaxGRESPerUser"
    QOS_MAX_GRES_PER_JOB = "QOSMaxGRESPerJob"
    QOS_MAX_JOBS_PER_USER = "QOSMaxJobsPerUserLimit"
    QOS_MAX_SUBMIT_PER_USER = "QOSMaxSubmitJobPerUserLimit"
    QOS_MAX_CPU_PER_USER = "QOSMaxCpuPerUserLimit"
    QOS_MAX_NODE_PER_JOB = "QOSMaxNodePerJobLimit"
    QOS_MAX_WALL_PER_JOB = "QOSMaxWallDurationPerJobLimit"
    QOS_GRP_GRES = "QOSGrpGRES"
    QOS_GRP_CPU = "QOSGrpCpuLimit"
    NON_ZERO_EXIT_CODE = "NonZeroExitCode"
    TIME_LIMIT = "TimeLimit"
    NODE_DOWN = "NodeDown"
    SYSTEM_FAILURE = "SystemFailure"
    JOB_LAUNCH_FAILURE = "JobLaunchFailure"
    PROLOG = "Prolog"
    CLEANING = "cleaning"

    @property
    def scontrol(self) -> str:
        """How ``scontrol show job`` prints it: blanks become ``_``."""
        return self.value.replace(" ", "_")


__all__ = ["LAUNCH_FAILED_STATUS", "JobState", "NodeBase", "NodeFlag", "NodeState", "Reason"]


#: The status slurmstepd reports when it cannot set up the batch script's IO (an ``-o``
#: directory that does not exist): Slurm 22.05 shows ``FAILED 0:53`` for the job
#: (``Reason=JobLaunchFailure``) and ``CANCELLED 0:53`` for ``JOBID.batch``.
LAUNCH_FAILED_STATUS = 53
