"""The tables of slurm.conf keys Slurm 22.05 accepts, their types and the values they take.

Mirrors the ``s_p_options_t`` tables of ``src/common/read_config.c``
(``slurm_conf_options``, ``_nodename_options``, ``_partition_options``, and the
``DownNodes`` / ``FrontendName`` / ``NodeSet`` ones) with the ``s_p_type_t`` of
``src/common/parse_config.c`` each key is read as: ``s`` string
(``S_P_STRING``), ``b`` boolean (``S_P_BOOLEAN``), ``u16`` / ``u32`` / ``u64``
unsigned numbers (``S_P_UINT16`` ...) and ``a`` the array keys that start a
line of their own (``S_P_ARRAY``: ``NodeName=``, ``PartitionName=``, ...).

Also here: which top-level keys minislurm models (:data:`MODELLED_KEYS`;
every other accepted key lands in ``SlurmConfig.extra``), the plugin names it
knows (``SchedulerType``, ``SelectType``, ``PriorityType``, ``PreemptType``), the
words ``PreemptMode``, ``PriorityFlags``, ``PriorityUsageResetPeriod``, node
``State`` and ``SelectTypeParameters`` accept, and the ranges of the
``SchedulerParameters`` options sched/backfill checks.  Keys are looked up in
lower case (Slurm compares them with ``strcasecmp``); the tables map the lower
case key to ``(canonical spelling, type)``.
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_SLURMD_PORT", "INFINITE16", "INFINITE32", "MODELLED_KEYS", "NODE_OPTIONS",
    "NODE_STATES", "OTHER_ARRAY_OPTIONS", "PARTITION_OPTIONS", "PLUGINS", "PREEMPT_MODES",
    "PRIORITY_FLAGS", "RESET_PERIODS", "SCHED_INT_RANGES", "SELECT_PARAMS", "TOP_OPTIONS",
]  # fmt: skip

INFINITE16, INFINITE32 = 0xFFFF, 0xFFFFFFFF  # INFINITE16 / INFINITE (slurm.h)
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
TOP_OPTIONS = {name.lower(): (name, kind) for name, kind in _TOP_TYPES.items()}


def _words(text: str) -> list[str]:
    return text.split()


def _table(spec: str) -> dict[str, tuple[str, str]]:
    pairs = (item.split(":") for item in spec.split())
    return {name.lower(): (name, kind) for name, kind in pairs}


NODE_OPTIONS = _table(
    "BcastAddr:s Boards:u16 CoreSpecCount:u16 CoresPerSocket:u16 CPUs:u16 CPUSpecList:s "
    "CpuBind:s Feature:s Features:s Gres:s MemSpecLimit:u64 NodeAddr:s NodeHostname:s Port:s "
    "Procs:u16 RealMemory:u64 Reason:s Sockets:u16 SocketsPerBoard:u16 State:s "
    "ThreadsPerCore:u16 TmpDisk:u32 TRESWeights:s Weight:u32"
)
PARTITION_OPTIONS = _table(
    "AllocNodes:s AllowAccounts:s AllowGroups:s AllowQos:s Alternate:s CpuBind:s "
    "DefCPUPerGPU:u64 DefMemPerCPU:u64 DefMemPerGPU:u64 DefMemPerNode:u64 Default:b "
    "DefaultTime:s DenyAccounts:s DenyQos:s DisableRootJobs:b ExclusiveUser:b GraceTime:u32 "
    "Hidden:b LLN:b MaxCPUsPerNode:u32 MaxMemPerCPU:u64 MaxMemPerNode:u64 MaxNodes:u32 "
    "MaxTime:s MinNodes:u32 Nodes:s OverSubscribe:s OverTimeLimit:s PreemptMode:s Priority:u16 "
    "PriorityJobFactor:u16 PriorityTier:u16 QOS:s ReqResv:b ResumeTimeout:u16 RootOnly:b "
    "SelectTypeParameters:s Shared:s State:s SuspendTime:u32 SuspendTimeout:u16 "
    "TRESBillingWeights:s"
)
OTHER_ARRAY_OPTIONS = _table(
    "DownNodes:s Nodes:s Reason:s State:s FrontendName:s NodeSet:s Feature:s"
)

# Keys minislurm models (everything else that Slurm accepts lands in ``extra``).
MODELLED_KEYS = {
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
PLUGINS = {
    "schedulertype": ("sched/backfill", "sched/builtin"),
    "selecttype": ("select/cons_tres", "select/cons_res", "select/linear"),
    "prioritytype": ("priority/basic", "priority/multifactor"),
    "preempttype": ("preempt/none", "preempt/qos", "preempt/partition_prio"),
}
PREEMPT_MODES = ("OFF", "CANCEL", "REQUEUE", "SUSPEND", "GANG", "WITHIN")
PRIORITY_FLAGS = _words(
    "ACCRUE_ALWAYS CALCULATE_RUNNING DEPTH_OBLIVIOUS NO_FAIR_TREE INCR_ONLY MAX_TRES "
    "NO_NORMAL_ALL NO_NORMAL_ASSOC NO_NORMAL_PART NO_NORMAL_QOS NO_NORMAL_TRES "
    "SMALL_RELATIVE_TO_TIME FAIR_TREE"
)
RESET_PERIODS = ("NONE", "NOW", "DAILY", "WEEKLY", "MONTHLY", "QUARTERLY", "YEARLY")
NODE_STATES = ("CLOUD", "DOWN", "DRAIN", "FAIL", "FAILING", "FUTURE", "IDLE", "UNKNOWN")
SELECT_PARAMS = {
    p.lower(): p
    for p in _words(
        "CR_CPU CR_CPU_Memory CR_Core CR_Core_Memory CR_Socket CR_Socket_Memory CR_Memory "
        "CR_ONE_TASK_PER_CORE CR_CORE_DEFAULT_DIST_BLOCK CR_LLN CR_PACK_NODES CR_Board "
        "CR_Board_Memory MULTIPLE_SHARING_GRES_PJ ENFORCE_BINDING_GRES ONE_TASK_PER_SHARING_GRES "
        "LL_SHARED_GRES"
    )
}


# ---- SchedulerParameters (sched/backfill _load_config, sched/builtin) ---------------------
# The numeric options minislurm models: (lowest, highest) value Slurm accepts.
SCHED_INT_RANGES = {
    "bf_window": (1, 43200), "bf_resolution": (1, 3600), "bf_max_job_test": (1, 1_000_000),
    "bf_interval": (-1, 10800), "bf_min_prio_reserve": (0, 2**32 - 1),
    "bf_max_job_user": (0, 2**32 - 1), "sched_interval": (-1, 2**31 - 1),
    "sched_min_interval": (0, 1_000_000), "default_queue_depth": (0, 2**31 - 1),
}  # fmt: skip
