"""slurm.conf (+ gres.conf beside it), read the way Slurm 22.05 reads it.

Mirrors ``src/common/parse_config.c`` (the ``Key=Value`` tokenizer: case
insensitive keys, ``#`` comments, ``\\`` line continuation, quoted values) and
``src/common/read_config.c`` (the option tables, ``NodeName=`` /
``PartitionName=`` lines with their ``DEFAULT`` entries, and the defaults of
``slurm.conf(5)``).  Keys Slurm accepts but minislurm does not model
(``SlurmctldPort``, ``AuthType``, log files, ...) are kept in
:attr:`SlurmConfig.extra` with a note; a key Slurm does not know, a malformed
line or a bad value raises :class:`ConfigError` whose message is the lines
Slurm logs (``error: ... Parse error in file F line N: "..."`` then
``fatal: Unable to process configuration file``), without the program prefix.
Where Slurm names no file and line (``KillWait value "abc" is not a valid
number``), minislurm adds one line of its own, ``error: in file F line N: "..."``,
so a learner always finds the culprit.  ``Include FILE`` lines are followed.

The parse errors were checked against the real ``scontrol`` of Slurm 22.05.8;
the checks slurmctld makes later (unknown partition nodes, plugin names, Port
and NodeAddr counts, GresTypes) use Slurm's wording where it is known.

``load_config(path)`` reads *path*, else ``$SLURM_CONF``, else the embedded
default cluster ``minislurm/etc/slurm.conf``.
"""

from __future__ import annotations

import functools
import math
import os
import re
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

from minislurm import hostlist
from minislurm.errors import ConfigError, GresError, HostlistError
from minislurm.gres import INVALID_GRES, NodeGres, parse_gres_conf, parse_node_gres

__all__ = [
    "ConfigError", "NodeConfig", "PartitionConfig", "PriorityConfig", "SchedulerParameters",
    "SlurmConfig", "conf_lines", "default_config", "key_values", "load_config", "next_pair",
    "parse_config",
]  # fmt: skip

FATAL = "fatal: Unable to process configuration file"
INFINITE16, INFINITE32 = 0xFFFF, 0xFFFFFFFF
DEFAULT_SLURMD_PORT = 6818

# ---- option tables (read_config.c: slurm_conf_options, _nodename_options, ...) -----------
# Types: s string, b boolean, u16/u32/u64 unsigned numbers, a "array" lines.
_TOP_TYPES: dict[str, str] = {}
for _kind, _names in {
    "u16": "AccountingStoragePort AcctGatherNodeFreq BatchStartTimeout CompleteWait EioTimeout "
    "ExtSensorsFreq FairShareDampeningFactor FastSchedule GetEnvTimeout GroupUpdateForce "
    "GroupUpdateTime HealthCheckInterval InactiveLimit JobFileAppend JobRequeue KillOnBadExit "
    "KillWait MaxTasksPerNode MessageTimeout OverTimeLimit PrologEpilogTimeout "
    "PropagatePrioProcess ResumeRate ResumeTimeout ResvOverRun ReturnToService SchedulerTimeSlice "
    "SlurmctldTimeout SlurmdTimeout SlurmSchedLogLevel SuspendRate SuspendTimeout TCPTimeout "
    "TreeWidth UnkillableStepTimeout VSizeFactor WaitTime",
    "u32": "EpilogMsgTime FirstJobId JobCompPort KeepAliveTime MaxArraySize MaxDBDMsgs MaxJobCount "
    "MaxNodeCount MaxJobId MaxStepCount MinJobAge PriorityWeightAge PriorityWeightAssoc "
    "PriorityWeightFairshare PriorityWeightJobSize PriorityWeightPartition PriorityWeightQOS "
    "SlurmdPort",
    "u64": "DefCPUPerGPU DefMemPerCPU DefMemPerGPU DefMemPerNode MaxMemPerCPU MaxMemPerNode",
    "b": "AccountingStoreJobComment AllowSpecResourcesUsage DisableRootJobs PriorityFavorSmall "
    "TrackWCKey UsePAM",
    "a": "DownNodes FrontendName NodeName NodeSet PartitionName SlurmctldHost",
    "s": "AccountingStorageTRES AccountingStorageEnforce AccountingStorageExternalHost "
    "AccountingStorageHost AccountingStorageBackupHost AccountingStorageLoc "
    "AccountingStorageParameters AccountingStoragePass AccountingStorageType "
    "AccountingStorageUser AccountingStoreFlags AcctGatherEnergyType AcctGatherProfileType "
    "AcctGatherInterconnectType AcctGatherInfinibandType AcctGatherFilesystemType AuthAltTypes "
    "AuthAltParameters AuthInfo AuthType BackupAddr BackupController BcastExclude "
    "BcastParameters BurstBufferParameters BurstBufferType CoreSpecPlugin CliFilterPlugins "
    "ClusterName CommunicationParameters ControlAddr ControlMachine CpuFreqDef CpuFreqGovernors "
    "CredType CryptoType DebugFlags DependencyParameters EnforcePartLimits Epilog "
    "EpilogSlurmctld ExtSensorsType FederationParameters GresTypes GpuFreqDef "
    "HealthCheckNodeState HealthCheckProgram InteractiveStepOptions JobAcctGatherType "
    "JobAcctGatherFrequency JobAcctGatherParams JobCompHost JobCompLoc JobCompParams JobCompPass "
    "JobCompType JobContainerType JobCompUser JobCredentialPrivateKey "
    "JobCredentialPublicCertificate JobSubmitPlugins LaunchParameters LaunchType Licenses "
    "LogTimeFormat MailDomain MailProg MCSParameters MCSPlugin MpiDefault MpiParams "
    "NodeFeaturesPlugins PluginDir PlugStackConfig PowerParameters PowerPlugin PreemptMode "
    "PreemptType PreemptExemptTime PrEpParameters PrEpPlugins PriorityDecayHalfLife "
    "PriorityCalcPeriod PriorityMaxAge PriorityParameters PriorityUsageResetPeriod PriorityType "
    "PriorityFlags PrioritySiteFactorParameters PrioritySiteFactorPlugin PriorityWeightTRES "
    "PrivateData ProctrackType Prolog PrologSlurmctld PrologFlags PropagateResourceLimitsExcept "
    "PropagateResourceLimits RebootProgram ReconfigFlags RequeueExit RequeueExitHold "
    "ResumeFailProgram ResumeProgram ResvEpilog ResvProlog RoutePlugin SbcastParameters "
    "SchedulerParameters SchedulerType ScronParameters SelectType SelectTypeParameters SlurmUser "
    "SlurmdUser SlurmctldAddr SlurmctldDebug SlurmctldLogFile SlurmctldPidFile "
    "SlurmctldPlugstack SlurmctldPort SlurmctldPrimaryOffProg SlurmctldPrimaryOnProg "
    "SlurmctldSyslogDebug SlurmctldParameters SlurmdDebug SlurmdLogFile SlurmdParameters "
    "SlurmdPidFile SlurmdSpoolDir SlurmdSyslogDebug SlurmSchedLogFile SrunEpilog SrunProlog "
    "SrunPortRange StateSaveLocation SuspendExcNodes SuspendExcParts SuspendProgram SuspendTime "
    "SwitchParameters SwitchType TaskEpilog TaskProlog TaskPlugin TaskPluginParam TmpFS "
    "TopologyParam TopologyPlugin UnkillableStepProgram X11Parameters",
}.items():
    _TOP_TYPES.update(dict.fromkeys(_names.split(), _kind))
_TOP = {name.lower(): (name, kind) for name, kind in _TOP_TYPES.items()}


def _words(text: str) -> list[str]:
    return text.split()


def _table(spec: str) -> dict[str, tuple[str, str]]:
    pairs = (item.split(":") for item in spec.split())
    return {name.lower(): (name, kind) for name, kind in pairs}


_NODE = _table(
    "BcastAddr:s Boards:u16 CoreSpecCount:u16 CoresPerSocket:u16 CPUs:u16 CPUSpecList:s "
    "CpuBind:s Feature:s Features:s Gres:s MemSpecLimit:u64 NodeAddr:s NodeHostname:s Port:s "
    "Procs:u16 RealMemory:u64 Reason:s Sockets:u16 SocketsPerBoard:u16 State:s "
    "ThreadsPerCore:u16 TmpDisk:u32 TRESWeights:s Weight:u32"
)
_PARTITION = _table(
    "AllocNodes:s AllowAccounts:s AllowGroups:s AllowQos:s Alternate:s CpuBind:s "
    "DefCPUPerGPU:u64 DefMemPerCPU:u64 DefMemPerGPU:u64 DefMemPerNode:u64 Default:b "
    "DefaultTime:s DenyAccounts:s DenyQos:s DisableRootJobs:b ExclusiveUser:b GraceTime:u32 "
    "Hidden:b LLN:b MaxCPUsPerNode:u32 MaxMemPerCPU:u64 MaxMemPerNode:u64 MaxNodes:u32 "
    "MaxTime:s MinNodes:u32 Nodes:s OverSubscribe:s OverTimeLimit:s PreemptMode:s Priority:u16 "
    "PriorityJobFactor:u16 PriorityTier:u16 QOS:s ReqResv:b ResumeTimeout:u16 RootOnly:b "
    "SelectTypeParameters:s Shared:s State:s SuspendTime:u32 SuspendTimeout:u16 "
    "TRESBillingWeights:s"
)
_OTHER_ARRAY = _table("DownNodes:s Nodes:s Reason:s State:s FrontendName:s NodeSet:s Feature:s")

# Keys minislurm models (everything else that Slurm accepts lands in ``extra``).
_MODELLED = {
    k.lower()
    for k in _words(
        "ClusterName SchedulerType SchedulerParameters SelectType SelectTypeParameters "
        "PriorityType PriorityWeightAge PriorityWeightAssoc PriorityWeightFairshare "
        "PriorityWeightJobSize PriorityWeightPartition PriorityWeightQOS PriorityWeightTRES "
        "PriorityMaxAge PriorityDecayHalfLife PriorityFavorSmall PriorityFlags PriorityCalcPeriod "
        "PriorityUsageResetPeriod PreemptType PreemptMode KillWait DefMemPerCPU DefMemPerNode "
        "MaxMemPerCPU MaxMemPerNode MaxArraySize EnforcePartLimits MinJobAge ReturnToService "
        "GresTypes MaxJobCount FirstJobId MaxJobId AccountingStorageTRES SlurmdPort InactiveLimit "
        "OverTimeLimit NodeName PartitionName FairShareDampeningFactor"
    )
}
_PLUGINS = {
    "schedulertype": ("sched/backfill", "sched/builtin"),
    "selecttype": ("select/cons_tres", "select/cons_res", "select/linear"),
    "prioritytype": ("priority/basic", "priority/multifactor"),
    "preempttype": ("preempt/none", "preempt/qos", "preempt/partition_prio"),
}
_PREEMPT_MODES = ("OFF", "CANCEL", "REQUEUE", "SUSPEND", "GANG", "WITHIN")
_PRIORITY_FLAGS = _words(
    "ACCRUE_ALWAYS CALCULATE_RUNNING DEPTH_OBLIVIOUS NO_FAIR_TREE INCR_ONLY MAX_TRES "
    "NO_NORMAL_ALL NO_NORMAL_ASSOC NO_NORMAL_PART NO_NORMAL_QOS NO_NORMAL_TRES "
    "SMALL_RELATIVE_TO_TIME FAIR_TREE"
)
_RESET_PERIODS = ("NONE", "NOW", "DAILY", "WEEKLY", "MONTHLY", "QUARTERLY", "YEARLY")
_NODE_STATES = ("CLOUD", "DOWN", "DRAIN", "FAIL", "FAILING", "FUTURE", "IDLE", "UNKNOWN")
_SELECT_PARAMS = {
    p.lower(): p
    for p in _words(
        "CR_CPU CR_CPU_Memory CR_Core CR_Core_Memory CR_Socket CR_Socket_Memory CR_Memory "
        "CR_ONE_TASK_PER_CORE CR_CORE_DEFAULT_DIST_BLOCK CR_LLN CR_PACK_NODES CR_Board "
        "CR_Board_Memory MULTIPLE_SHARING_GRES_PJ ENFORCE_BINDING_GRES ONE_TASK_PER_SHARING_GRES "
        "LL_SHARED_GRES"
    )
}


# ---- data ---------------------------------------------------------------------------------


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


# ---- tokenizer (parse_config.c) -----------------------------------------------------------

_KV_RE = re.compile(r'\s*([A-Za-z0-9_.]+)\s*([-*+/]?)=\s*(?:"([^"]*)"|(\S+))(?=\s|$)')


def conf_lines(text: str) -> list[tuple[int, str]]:
    """Logical lines of a Slurm config file: (first line number, text).

    ``_get_next_line``: text after an unescaped ``#`` is a comment, an odd
    number of trailing backslashes continues the line, then ``\\x`` becomes
    ``x``; blank lines are dropped.
    """
    result: list[tuple[int, str]] = []
    physical = text.split("\n")
    i = 0
    while i < len(physical):
        start, buf = i + 1, ""
        while i < len(physical):
            part = _strip_comment(physical[i].rstrip("\r"))
            i += 1
            stripped = part.rstrip()
            trailing = len(stripped) - len(stripped.rstrip("\\"))
            if trailing % 2 == 1:
                buf += stripped[: len(stripped) - trailing] + "\\" * (trailing - 1)
                continue
            buf += part
            break
        line = re.sub(r"\\(.?)", r"\1", buf, flags=re.DOTALL)  # _strip_escapes
        if line.strip():
            result.append((start, line))
    return result


def _strip_comment(line: str) -> str:
    backslashes = 0
    for idx, char in enumerate(line):
        if char == "#" and backslashes % 2 == 0:
            return line[:idx]
        backslashes = backslashes + 1 if char == "\\" else 0
    return line


def next_pair(text: str) -> tuple[str, str, str, str] | None:
    """One ``Key=Value`` at the start of ``text``: (key, operator, value, rest)."""
    match = _KV_RE.match(text)
    if match is None:
        return None
    value = match.group(3) if match.group(3) is not None else match.group(4)
    return match.group(1), match.group(2), value, text[match.end() :]


def key_values(line: str) -> tuple[list[tuple[str, str]], str]:
    """All leading ``Key=Value`` pairs of a line and the text that did not parse."""
    pairs: list[tuple[str, str]] = []
    rest = line
    while (pair := next_pair(rest)) is not None:
        pairs.append((pair[0], pair[2]))
        rest = pair[3]
    return pairs, rest


# ---- values ---------------------------------------------------------------------------------


class _Bad(Exception):
    """Something Slurm rejects: its ``error:`` lines (without the prefix, ``\n``-separated,
    possibly none), the key concerned and the ``fatal:`` line it ends with."""

    def __init__(self, message: str, key: str = "", fatal: str = "") -> None:
        super().__init__(message)
        self.key = key
        self.fatal = fatal or FATAL

    def lines(self) -> list[str]:
        return [line for line in str(self).split("\n") if line]


def _strtoul(value: str) -> int | None:
    """C ``strtoul(value, &end, 0)`` over the whole string, else ``None``."""
    text = value.strip()
    sign = -1 if text.startswith("-") else 1
    text = text.lstrip("+-")
    try:
        if re.fullmatch(r"0[xX][0-9a-fA-F]+", text):
            return sign * int(text, 16)
        if re.fullmatch(r"0[0-7]+", text):
            return sign * int(text, 8)
        if re.fullmatch(r"\d+", text):
            return sign * int(text)
    except ValueError:
        return None
    return None


def _convert(key: str, kind: str, value: str) -> Any:
    """``_handle_uint16`` / ``_handle_uint32`` / ``_handle_uint64`` / ``_handle_boolean``."""
    if kind in ("s", "a"):
        return value
    if kind == "b":
        low = value.lower()
        if low in ("yes", "up", "true", "1"):
            return True
        if low in ("no", "down", "false", "0"):
            return False
        raise _Bad(f'"{value}" is not a valid option for "{key}"')
    limit = {"u16": INFINITE16, "u32": INFINITE32, "u64": 2**64 - 1}[kind]
    text = value
    multiplier = 1
    if kind != "u16" and text[-1:] in ("k", "K"):
        text, multiplier = text[:-1], 1024
    num = _strtoul(text)
    if num is None:
        if value.lower() in ("unlimited", "infinite"):
            return limit
        quoted = f'"{value}"' if kind == "u16" else f"({value})"
        raise _Bad(f"{key} value {quoted} is not a valid number")
    if value.startswith("-"):
        raise _Bad(f"{key} value ({value}) is less than zero")
    num *= multiplier
    if num > limit:
        raise _Bad(f"{key} value ({value}) is greater than {limit}")
    return num


def time_str2mins(text: str) -> int | None:
    """Slurm's ``time_str2mins`` for config times (``MaxTime``, ``PriorityMaxAge``, ...).

    ``M``, ``M:S``, ``H:M:S``, ``D-H``, ``D-H:M``, ``D-H:M:S`` -> minutes rounded up;
    ``INFINITE`` / ``UNLIMITED`` / ``-1`` -> ``None``.  Raises ``ValueError`` otherwise.
    """
    if text.lower() in ("infinite", "unlimited", "-1"):
        return None
    if re.fullmatch(r"\d+-\d+(:\d+){0,2}", text):
        days, rest = text.split("-")
        parts = [int(p) for p in rest.split(":")] + [0, 0]
        secs = int(days) * 86400 + parts[0] * 3600 + parts[1] * 60 + parts[2]
    elif re.fullmatch(r"\d+(:\d+){0,2}", text):
        parts = [int(p) for p in text.split(":")]
        if len(parts) == 3:
            secs = parts[0] * 3600 + parts[1] * 60 + parts[2]
        else:
            secs = parts[0] * 60 + (parts[1] if len(parts) == 2 else 0)
    else:
        raise ValueError(text)
    return math.ceil(secs / 60)


# ---- the parser -----------------------------------------------------------------------------


@dataclass(slots=True)
class _Line:
    """A parsed NodeName/PartitionName line: its name, options and where it came from."""

    name: str
    options: dict[str, Any]
    lineno: int
    text: str
    filename: str


@dataclass(slots=True)
class _Parsed:
    top: dict[str, tuple[str, Any]] = field(default_factory=dict)
    nodes: list[_Line] = field(default_factory=list)
    partitions: list[_Line] = field(default_factory=list)


class _Parser:
    """``s_p_parse_file`` over one slurm.conf text, collecting Slurm's error lines."""

    def __init__(self, filename: str) -> None:
        self.filename = filename
        self.errors: list[str] = []
        self.result = _Parsed()
        self.defaults: dict[str, dict[str, Any]] = {"nodename": {}, "partitionname": {}}
        self.lines: dict[str, tuple[str, int, str]] = {}

    def parse_error(self, lineno: int, text: str) -> None:
        """The line Slurm logs when a line does not parse completely."""
        self.errors.append(f'Parse error in file {self.filename} line {lineno}: "{text}"')

    def located(self, lineno: int, text: str) -> None:
        """minislurm's own location line, where Slurm logs none."""
        self.errors.append(f'in file {self.filename} line {lineno}: "{text}"')

    def feed(self, text: str) -> None:
        for lineno, line in conf_lines(text):
            self.line(lineno, line)

    def include(self, lineno: int, line: str) -> None:
        """``Include FILE`` (relative names are relative to the including file)."""
        words = line.split()
        if len(words) < 2:
            self.parse_error(lineno, line)
            return
        path = Path(words[1])
        if not path.is_absolute():
            path = Path(self.filename).parent / path
        outer, before = self.filename, len(self.errors)
        try:
            self.filename = str(path)
            self.feed(_read(path))
        except ConfigError as exc:
            self.errors.extend(m.removeprefix("error: ") for m in exc.message.split("\n")[:-1])
        finally:
            self.filename = outer
        if len(self.errors) > before:
            self.errors.append(f'"Include" failed in file {outer} line {lineno}')

    def line(self, lineno: int, line: str) -> None:
        if re.match(r"(?i)include\s", line):
            self.include(lineno, line)
            return
        pair = next_pair(line)
        if pair is None:
            self.parse_error(lineno, line)
            return
        key, _op, value, rest = pair
        entry = _TOP.get(key.lower())
        if entry is None:
            self.errors.append(f"_parse_next_key: Parsing error at unrecognized key: {key}")
            self.located(lineno, line)
            return
        canonical, kind = entry
        if kind == "a":
            self.array_line(lineno, line, canonical, value, rest)
            return
        try:
            converted = _convert(canonical, kind, value)
        except _Bad as exc:
            self.errors.append(str(exc))
            self.located(lineno, line)
            return
        self.result.top[canonical.lower()] = (canonical, converted)
        self.lines[canonical.lower()] = (self.filename, lineno, line)
        if rest.strip():
            self.parse_error(lineno, rest)

    def array_line(self, lineno: int, line: str, key: str, value: str, rest: str) -> None:
        table = {"NodeName": _NODE, "PartitionName": _PARTITION}.get(key, _OTHER_ARRAY)
        options: dict[str, Any] = {}
        while (pair := next_pair(rest)) is not None:
            sub_key, _op, sub_value, after = pair
            entry = table.get(sub_key.lower())
            if entry is None:
                self.errors.append(f"Parsing error at unrecognized key: {sub_key}")
                break
            try:
                options[entry[0].lower()] = _convert(entry[0], entry[1], sub_value)
            except _Bad as exc:
                self.errors.append(str(exc))
                break
            rest = after
        if rest.strip():
            self.parse_error(lineno, rest)
            return
        kind = key.lower()
        if kind not in self.defaults:
            self.result.top.setdefault(kind, (key, []))[1].append((value, options))
            return
        if value.lower() == "default":
            if kind == "nodename":
                for forbidden in ("NodeHostname", "BcastAddr", "NodeAddr"):
                    if forbidden.lower() in options:
                        self.errors.append(f"{forbidden} not allowed with NodeName=DEFAULT")
                        self.located(lineno, line)
                        return
            self.defaults[kind].update(options)
            return
        if kind == "nodename" and value.lower() == "all":
            raise ConfigError(
                f"fatal: '{value}' is a reserved word disallowed for use with NodeName"
            )
        merged = {**self.defaults[kind], **options}
        target = self.result.nodes if kind == "nodename" else self.result.partitions
        target.append(_Line(value, merged, lineno, line, self.filename))


def _fail(lines: list[str], fatal: str = FATAL) -> ConfigError:
    return ConfigError("\n".join([*(f"error: {line}" for line in lines), fatal]))


def _where(item: _Line) -> str:
    return f'in file {item.filename} line {item.lineno}: "{item.text}"'


def _per_node(values: str, count: int, what: str) -> list[str]:
    """NodeAddr/NodeHostname/Port lists: one value for all nodes, or one per node.

    Slurm (``_register_conf_node_aliases``) insists on equal counts for ``Port`` and
    ``NodeAddr``; it accepts any count of ``NodeHostname`` (minislurm then repeats the
    last one).
    """
    try:
        items = hostlist.expand(values)
    except HostlistError:
        raise _Bad(f"Unable to create {what} list from {values}") from None
    if len(items) == 1:
        return items * count
    if len(items) != count:
        if what == "Port":
            raise _Bad(
                "",
                fatal="fatal: Port count must equal that of NodeName records or there must be "
                f"no more than one ({len(items)} != {count})",
            )
        if what == "NodeAddr":
            raise _Bad(
                "",
                fatal="fatal: NodeAddr count must equal that of NodeName records of there "
                "must be no more than one",
            )
        items = (items + [items[-1]] * count)[:count]
    return items


def _build_nodes(
    item: _Line, slurmd_port: int, gres_types: tuple[str, ...], notes: list[str]
) -> list[NodeConfig]:
    """``_parse_nodename`` + ``_register_conf_node_aliases``: one NodeConfig per name."""
    opt = item.options
    try:
        names = hostlist.expand(item.name)
    except HostlistError:
        raise _Bad(f"Unable to create NodeName list from {item.name}") from None
    cores = opt.get("corespersocket", 1) or 1
    threads = opt.get("threadspercore", 1) or 1
    boards = opt.get("boards", 1) or 1
    cpus = opt.get("cpus", opt.get("procs"))
    sockets = opt.get("sockets")
    if "socketsperboard" in opt:
        if sockets is not None:
            notes.append(
                f"NodeNames={item.name} Sockets=# and SocketsPerBoard=# is invalid , "
                "using SocketsPerBoard"
            )
        sockets = boards * (opt["socketsperboard"] or 1)
    elif sockets is None:
        if cpus and cpus // (cores * threads) and not cpus % (cores * threads):
            sockets = cpus // (cores * threads)
        else:
            sockets = boards
    sockets = sockets or 1
    if cpus is None:
        cpus = sockets * cores * threads
    if cpus not in (sockets, sockets * cores, sockets * cores * threads):
        notes.append(
            f"NodeNames={item.name} CPUs={cpus} match no Sockets, Sockets*CoresPerSocket or "
            "Sockets*CoresPerSocket*ThreadsPerCore. Resetting CPUs."
        )
        cpus = sockets * cores * threads
    if sockets < boards:
        boards = 1
    state = str(opt.get("state", "UNKNOWN"))
    if state.upper() not in _NODE_STATES:
        raise _Bad(
            f"node {item.name} has invalid state {state}",
            fatal=f"fatal: Invalid state {state} from {item.name}",
        )
    state = state.upper()
    try:
        configured = parse_node_gres(opt.get("gres", ""))
    except GresError:
        # slurmctld does not complain; the node simply has no usable GRES.
        notes.append(f"NodeName={item.name} Gres={opt['gres']}: {INVALID_GRES}, ignored")
        configured = ()
    gres = tuple(g for g in configured if g.name in gres_types)
    for name in sorted({g.name for g in configured} - set(gres_types)):
        notes.append(f"NodeName={item.name}: gres/{name} ignored (not listed in GresTypes)")
    hostnames = _per_node(opt.get("nodehostname", item.name), len(names), "NodeHostname")
    if "nodehostname" not in opt:
        hostnames = names
    addrs = _per_node(opt["nodeaddr"], len(names), "NodeAddr") if "nodeaddr" in opt else hostnames
    ports = [str(slurmd_port)] * len(names)
    if "port" in opt:
        ports = _per_node(f"[{opt['port']}]", len(names), "Port")
        if any(not p.isdigit() or int(p) > 65535 for p in ports):
            raise _Bad(f"Invalid Port {opt['port']} for NodeName={item.name}")
    features = tuple(f for f in str(opt.get("features", opt.get("feature", ""))).split(",") if f)
    return [
        NodeConfig(
            name=name,
            cpus=cpus,
            boards=boards,
            sockets=sockets,
            cores_per_socket=cores,
            threads_per_core=threads,
            real_memory=opt.get("realmemory", 1),
            gres=gres,
            features=features,
            weight=opt.get("weight", 1),
            state=state,
            node_addr=addr,
            node_hostname=host,
            port=int(port),
            tmp_disk=opt.get("tmpdisk", 0),
            reason=opt.get("reason"),
        )
        for name, host, addr, port in zip(names, hostnames, addrs, ports, strict=True)
    ]


def _preempt_mode(value: str) -> str:
    """``preempt_mode_num``: ``REQUEUE``, ``SUSPEND,GANG``, ... (upper case)."""
    parts = [p.strip().upper() for p in value.split(",")]
    if not parts or any(p not in _PREEMPT_MODES for p in parts):
        raise _Bad(f'Bad value "{value}" for PreemptMode')
    return ",".join(parts)


def _cluster_preempt_mode(value: str) -> str:
    try:
        return _preempt_mode(value)
    except _Bad:
        raise _Bad(f"PreemptMode={value} invalid", "preemptmode") from None


def _over_subscribe(value: str, notes: list[str]) -> str:
    low = value.lower()
    if low == "no":
        return "NO"
    if low == "exclusive":
        return "EXCLUSIVE"
    for word, minimum in (("yes", 2), ("force", 1)):
        if low == word:
            return f"{word.upper()}:4"
        if low.startswith(word + ":"):  # strtol(): leading digits, the rest ignored
            digits = re.match(r"\s*([+-]?\d+)", value[len(word) + 1 :])
            count = int(digits.group(1)) if digits else 0
            if count < minimum:
                notes.append(f"Ignoring bad OverSubscribe value: {value}")
                return "NO"
            return f"{word.upper()}:{count}"
    raise _Bad(f'Bad value "{value}" for OverSubscribe')


def _part_time(opt: dict[str, Any], key: str, label: str) -> int | None:
    try:
        return time_str2mins(opt[key])
    except ValueError:
        raise _Bad(f'Bad value "{opt[key]}" for {label}') from None


def _build_partition(
    item: _Line, node_names: tuple[str, ...], preempt_mode: str, notes: list[str]
) -> PartitionConfig:
    """``_parse_partitionname`` + ``build_part_bitmap``."""
    opt = item.options
    max_time = _part_time(opt, "maxtime", "MaxTime") if "maxtime" in opt else None
    default_time = _part_time(opt, "defaulttime", "DefaultTime") if "defaulttime" in opt else None
    state = str(opt.get("state", "UP")).upper()
    state = next((s for s in ("DOWN", "UP", "DRAIN", "INACTIVE") if state.startswith(s)), "")
    if not state:
        raise _Bad(f'Bad value "{opt["state"]}" for State')
    expr = ",".join(str(opt.get("nodes", "")).split())
    members: set[str] = set()
    if expr.upper() == "ALL":
        members = set(node_names)
    elif expr:
        invalid = f"fatal: Invalid node names in partition {item.name}"
        try:
            wanted = hostlist.expand(expr)
        except HostlistError as exc:
            logged = [m.removeprefix("error: ") for m in exc.message.split("\n")[:-1]]
            detail = "\n".join(
                [*logged, f"nodespec_to_hostlist: hostlist_create() error for {expr}"]
            )
            raise _Bad(detail, fatal=invalid) from None
        for name in wanted:
            if name not in node_names:
                raise _Bad(f'_find_node_record: lookup failure for node "{name}"', fatal=invalid)
            members.add(name)
    factor = opt.get("priority", opt.get("priorityjobfactor", 1))
    tier = opt.get("priority", opt.get("prioritytier", 1))
    shared = opt.get("oversubscribe", opt.get("shared"))

    def names(key: str) -> tuple[str, ...] | None:
        value = opt.get(key)
        if value is None or value.upper() == "ALL":
            return None
        return tuple(v.lower() for v in value.split(","))

    def limit(key: str, infinite: int = INFINITE32) -> int | None:
        value = opt.get(key)
        return None if value is None or value >= infinite else int(value)

    return PartitionConfig(
        name=item.name, nodes=tuple(n for n in node_names if n in members),
        default=bool(opt.get("default", False)), max_time=max_time, default_time=default_time,
        max_nodes=limit("maxnodes"), min_nodes=opt.get("minnodes", 0), state=state,
        priority_job_factor=factor, priority_tier=tier,
        over_subscribe=_over_subscribe(shared, notes) if shared is not None else "NO",
        preempt_mode=_preempt_mode(opt["preemptmode"]) if "preemptmode" in opt else preempt_mode,
        qos=opt.get("qos"), max_cpus_per_node=limit("maxcpuspernode"),
        def_mem_per_cpu=limit("defmempercpu", 2**63), max_mem_per_cpu=limit("maxmempercpu", 2**63),
        allow_accounts=names("allowaccounts"), allow_qos=names("allowqos"),
        hidden=bool(opt.get("hidden", False)), exclusive_user=bool(opt.get("exclusiveuser", False)),
        nodes_expr=expr,
    )  # fmt: skip


# ---- cluster-wide options --------------------------------------------------------------------

_SCHED_INT = {
    "bf_window": (1, 43200), "bf_resolution": (1, 3600), "bf_max_job_test": (1, 1_000_000),
    "bf_interval": (-1, 10800), "bf_min_prio_reserve": (0, 2**32 - 1),
    "bf_max_job_user": (0, 2**32 - 1), "sched_interval": (-1, 2**31 - 1),
    "sched_min_interval": (0, 1_000_000), "default_queue_depth": (0, 2**31 - 1),
}  # fmt: skip


def parse_scheduler_parameters(text: str, notes: list[str]) -> SchedulerParameters:
    """``SchedulerParameters=bf_window=2880,bf_continue,...``.

    Like sched/backfill, an out-of-range or non-numeric value logs
    ``Invalid SchedulerParameters bf_window: ...`` (kept here as a note) and the
    default stays.
    """
    values: dict[str, Any] = {}
    other: list[tuple[str, str | None]] = []
    for item in (part for part in text.split(",") if part):
        key, eq, value = item.partition("=")
        key = key.strip().lower()
        if key == "bf_continue" and not eq:
            values["bf_continue"] = True
        elif key in _SCHED_INT and eq:
            low, high = _SCHED_INT[key]
            number = _strtoul(value) if not value.startswith("-") else -(_strtoul(value[1:]) or 0)
            if number is None or not low <= number <= high:
                notes.append(f"Invalid SchedulerParameters {key}: {value}")
            else:
                values[key] = number
        else:
            other.append((item.partition("=")[0].strip(), value if eq else None))
    return SchedulerParameters(**values, other=tuple(other))


def _priority(top: dict[str, Any], notes: list[str]) -> PriorityConfig:
    def seconds(key: str, default: int) -> int:
        if key not in top:
            return default
        try:
            value = time_str2mins(top[key])
        except ValueError:
            raise _Bad(f'Bad value "{top[key]}" for {_TOP[key][0]}', key) from None
        return INFINITE32 if value is None else value * 60

    flags = tuple(f.strip().upper() for f in top.get("priorityflags", "").split(",") if f.strip())
    # Slurm 22.05 silently ignores flags it does not know; minislurm notes them.
    unknown = [f for f in flags if f not in _PRIORITY_FLAGS]
    if unknown:
        notes.append(f"PriorityFlags {','.join(unknown)} unknown, ignored")
        flags = tuple(f for f in flags if f in _PRIORITY_FLAGS)
    tres: dict[str, float] = {}
    for item in (i for i in top.get("priorityweighttres", "").split(",") if i):
        name, _eq, weight = item.partition("=")
        try:
            tres[name] = float(weight)
        except ValueError:
            raise _Bad(f"Invalid PriorityWeightTRES: {item}", "priorityweighttres") from None
    reset = top.get("priorityusageresetperiod", "NONE").upper()
    if reset not in _RESET_PERIODS:
        raise _Bad(
            f'Bad value "{top["priorityusageresetperiod"]}" for PriorityUsageResetPeriod',
            "priorityusageresetperiod",
        )
    return PriorityConfig(
        type=top.get("prioritytype", "priority/basic"),
        weight_age=top.get("priorityweightage", 0),
        weight_assoc=top.get("priorityweightassoc", 0),
        weight_fairshare=top.get("priorityweightfairshare", 0),
        weight_job_size=top.get("priorityweightjobsize", 0),
        weight_partition=top.get("priorityweightpartition", 0),
        weight_qos=top.get("priorityweightqos", 0),
        weight_tres=tres,
        max_age=seconds("prioritymaxage", 7 * 86400),
        decay_half_life=seconds("prioritydecayhalflife", 7 * 86400),
        favor_small=bool(top.get("priorityfavorsmall", False)),
        flags=flags,
        calc_period=seconds("prioritycalcperiod", 5 * 60),
        usage_reset_period=reset,
        damp_factor=top.get("fairsharedampeningfactor", 1),
    )


def _mem(top: dict[str, Any], key: str) -> int | None:
    value = top.get(key)
    return None if value in (None, 0) or value >= 2**63 else int(value)


def _plugin_error(key: str, name: str) -> _Bad:
    """What slurmctld logs when ``plugin_context_create`` finds no such plugin."""
    if key == "selecttype":
        return _Bad("", key, f"fatal: Can't find plugin for {name}")
    kind = _PLUGINS[key][0].split("/")[0]
    fatal = {
        "sched": "fatal: Failed to initialize sched plugin",
        "priority": "fatal: failed to initialize priority plugin",
        "preempt": "fatal: failed to initialize preempt plugin",
    }[kind]
    return _Bad(
        f"Couldn't find the specified plugin name for {name} looking at all files\n"
        f"cannot find {kind} plugin for {name}\ncannot create {kind} context for {name}",
        key,
        fatal,
    )


def _cluster_options(top: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    """``_validate_and_set_defaults`` for the options minislurm models."""
    for key, allowed in _PLUGINS.items():
        if key in top and top[key] not in allowed:
            raise _plugin_error(key, top[key])
    select_params = "NONE"
    if "selecttypeparameters" in top:
        parts = [p.strip() for p in top["selecttypeparameters"].split(",")]
        if any(p.lower() not in _SELECT_PARAMS for p in parts):
            raise _Bad(
                f"Bad SelectTypeParameter: {top['selecttypeparameters']}", "selecttypeparameters"
            )
        select_params = ",".join(_SELECT_PARAMS[p.lower()] for p in parts)
    enforce = top.get("enforcepartlimits", "NO").upper()
    enforce = {"YES": "ANY"}.get(enforce, enforce)
    if enforce not in ("NO", "ANY", "ALL"):
        raise _Bad(f"Bad EnforcePartLimits: {top['enforcepartlimits']}", "enforcepartlimits")
    tres = ["cpu", "mem", "energy", "node", "billing", "fs/disk", "vmem", "pages"]
    slurmdbd = top.get("accountingstoragetype") == "accounting_storage/slurmdbd"
    for item in (t.strip().lower() for t in top.get("accountingstoragetres", "").split(",")):
        if item and item not in tres:
            if not slurmdbd:
                raise _Bad(
                    "",
                    "accountingstoragetres",
                    f"fatal: slurmdbd is required to run with TRES {item}. Either setup "
                    "slurmdbd or remove this TRES from your configuration.",
                )
            tres.append(item)
    priority = _priority(top, notes)
    if priority.type == "priority/multifactor" and not slurmdbd:
        # priority/multifactor's init: both factors need the association usage of slurmdbd
        if priority.weight_age:
            notes.append("PriorityWeightAge can only be used with SlurmDBD, ignoring")
            priority = replace(priority, weight_age=0)
        if priority.weight_fairshare:
            notes.append("PriorityWeightFairshare can only be used with SlurmDBD, ignoring")
            priority = replace(priority, weight_fairshare=0)
    return {
        "scheduler_type": top.get("schedulertype", "sched/backfill"),
        "scheduler": parse_scheduler_parameters(top.get("schedulerparameters", ""), notes),
        "select_type": top.get("selecttype", "select/linear"),
        "select_type_parameters": select_params,
        "priority": priority,
        "preempt_type": top.get("preempttype", "preempt/none"),
        "preempt_mode": _cluster_preempt_mode(top.get("preemptmode", "OFF")),
        "kill_wait": top.get("killwait", 30),
        "def_mem_per_cpu": _mem(top, "defmempercpu"),
        "def_mem_per_node": _mem(top, "defmempernode"),
        "max_mem_per_cpu": _mem(top, "maxmempercpu"),
        "max_mem_per_node": _mem(top, "maxmempernode"),
        "max_array_size": top.get("maxarraysize", 1001),
        "enforce_part_limits": enforce,
        "min_job_age": top.get("minjobage", 300),
        "return_to_service": top.get("returntoservice", 0),
        "gres_types": tuple(g for g in top.get("grestypes", "").split(",") if g),
        "max_job_count": top.get("maxjobcount", 10000),
        "first_job_id": top.get("firstjobid", 1),
        "max_job_id": top.get("maxjobid", 0x03FF0000),
        "accounting_storage_tres": tuple(tres),
        "inactive_limit": top.get("inactivelimit", 0),
        "over_time_limit": top.get("overtimelimit", 0),
        "slurmd_port": top.get("slurmdport", DEFAULT_SLURMD_PORT),
    }


# ---- gres.conf merge ---------------------------------------------------------------------------


def _merge_gres(
    nodes: list[NodeConfig], gres_text: str | None, gres_filename: str, notes: list[str]
) -> list[NodeConfig]:
    """Give each node's GRES the device files gres.conf lists for it, and GRES indices."""
    lines = parse_gres_conf(gres_text, gres_filename, notes) if gres_text is not None else []
    if gres_text is not None and re.search(r"(?im)^\s*autodetect\s*=", gres_text):
        notes.append(f"{gres_filename}: AutoDetect is ignored (minislurm has no GPUs to probe)")
    merged: list[NodeConfig] = []
    for node in nodes:
        counters: dict[str, int] = {}
        new_gres: list[NodeGres] = []
        for g in node.gres:
            files: list[str] = []
            for line in lines:
                applies = line.node_names is None or node.name in line.node_names
                if applies and line.name == g.name and g.type in (None, line.type):
                    files.extend(line.files)
            label = f"{g.name}:{g.type}" if g.type else g.name
            if len(files) > g.count:  # slurmd's WARNING, then it ignores the extra devices
                notes.append(
                    f"A line in {gres_filename} for GRES {label} has {len(files) - g.count} more "
                    "configured than expected in slurm.conf. Ignoring extra GRES."
                )
            elif files and len(files) < g.count:  # slurmctld then DRAINs the node
                notes.append(
                    f"{node.name}: gres/{g.name} count reported lower than configured "
                    f"({len(files)} < {g.count}) by {gres_filename}; slurmctld would drain the node"
                )
            start = counters.get(g.name, 0)
            counters[g.name] = start + g.count
            indices = tuple(range(start, start + g.count))
            new_gres.append(NodeGres(g.name, g.type, g.count, tuple(files[: g.count]), indices))
        merged.append(_replace_gres(node, tuple(new_gres)))
    return merged


def _replace_gres(node: NodeConfig, gres: tuple[NodeGres, ...]) -> NodeConfig:
    return replace(node, gres=gres)


# ---- entry points ------------------------------------------------------------------------------


def parse_config(
    text: str,
    filename: str = "slurm.conf",
    gres_text: str | None = None,
    gres_filename: str | None = None,
) -> SlurmConfig:
    """Parse a slurm.conf text (and optionally its gres.conf) into a :class:`SlurmConfig`."""
    parser = _Parser(filename)
    parser.feed(text)
    if parser.errors:
        raise _fail(parser.errors)
    top = {key: value for key, (_canonical, value) in parser.result.top.items()}
    notes: list[str] = []
    extra: dict[str, str] = {}
    for key, (canonical, value) in parser.result.top.items():
        if key not in _MODELLED:
            if isinstance(value, list):  # SlurmctldHost, DownNodes, ...: one entry per line
                value = ",".join(str(v) for v, _options in value)
            extra[canonical] = value if isinstance(value, str) else str(value)
            notes.append(f"{canonical} is accepted (as Slurm does) but ignored by minislurm")
    if not top.get("clustername"):
        raise _fail(["ClusterName needs to be specified"])
    if not (top.get("slurmctldhost") or top.get("controlmachine")):
        raise _fail(["No SlurmctldHost defined."])
    if top.get("maxarraysize", 0) > 4000001:
        notes.append(f"MaxArraySize value ({top['maxarraysize']}) is greater than 4000001")
    try:
        options = _cluster_options(top, notes)
    except _Bad as exc:
        lines = exc.lines()
        if exc.key in parser.lines:
            where, lineno, text = parser.lines[exc.key]
            lines.append(f'in file {where} line {lineno}: "{text}"')
        raise _fail(lines, exc.fatal) from None

    nodes: list[NodeConfig] = []
    for item in parser.result.nodes:
        try:
            built = _build_nodes(item, options["slurmd_port"], options["gres_types"], notes)
        except _Bad as exc:
            raise _fail([*exc.lines(), _where(item)], exc.fatal) from None
        for node in built:
            if any(n.name == node.name for n in nodes):
                fatal = f"fatal: Duplicated NodeName {node.name} in the config file"
                raise _fail([_where(item)], fatal)
        nodes.extend(built)
    gres_name = gres_filename or str(Path(filename).with_name("gres.conf"))
    try:
        nodes = _merge_gres(nodes, gres_text, gres_name, notes)
    except GresError as exc:
        raise ConfigError(exc.message) from None

    # slurmctld sorts its node table by name (strnatcmp): a1, a2, b1, n09, n9, n10
    nodes.sort(key=functools.cmp_to_key(lambda a, b: hostlist.natcmp(a.name, b.name)))
    node_names = tuple(n.name for n in nodes)
    partitions: list[PartitionConfig] = []
    default_name: str | None = None
    for item in parser.result.partitions:
        try:
            part = _build_partition(item, node_names, options["preempt_mode"], notes)
        except _Bad as exc:
            raise _fail([*exc.lines(), _where(item)], exc.fatal) from None
        if any(p.name == part.name for p in partitions):
            fatal = (
                "fatal: _build_single_partitionline_info: duplicate entry for partition "
                f"{part.name}"
            )
            raise _fail([_where(item)], fatal)
        partitions.append(part)
        if part.default:
            default_name = part.name
    return SlurmConfig(
        cluster_name=str(top["clustername"]).lower(),
        nodes=tuple(nodes),
        partitions=tuple(partitions),
        default_partition_name=default_name,
        extra=extra,
        notes=tuple(notes),
        source=filename,
        **options,
    )


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(
            f"error: s_p_parse_file: cannot stat file {path}: No such file or directory, "
            f"retrying in 1sec up to 60sec\n{FATAL}"
        ) from None
    except OSError as exc:
        raise ConfigError(f'error: s_p_parse_file: unable to read "{path}": {exc.strerror}\n'
                          f"{FATAL}") from None  # fmt: skip


def load_config(path: str | os.PathLike[str] | None = None) -> SlurmConfig:
    """Load slurm.conf from ``path``, else ``$SLURM_CONF``, else the embedded default.

    gres.conf is read from the same folder when it exists (as Slurm does).
    """
    chosen = path if path is not None else os.environ.get("SLURM_CONF")
    if chosen is None:
        return default_config()
    conf = Path(chosen)
    gres = conf.with_name("gres.conf")
    gres_text = gres.read_text(encoding="utf-8") if gres.is_file() else None
    return parse_config(_read(conf), str(conf), gres_text, str(gres))


def default_config() -> SlurmConfig:
    """The embedded teaching cluster ``minislurm/etc/slurm.conf`` (+ its gres.conf)."""
    etc = resources.files("minislurm") / "etc"
    text = (etc / "slurm.conf").read_text(encoding="utf-8")
    gres_file = etc / "gres.conf"
    gres_text = gres_file.read_text(encoding="utf-8") if gres_file.is_file() else None
    return parse_config(text, "minislurm/etc/slurm.conf", gres_text, "minislurm/etc/gres.conf")
