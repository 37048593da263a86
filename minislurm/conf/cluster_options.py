"""The cluster-wide options of slurm.conf that minislurm models.

Mirrors ``_validate_and_set_defaults`` of Slurm 22.05's ``src/common/read_config.c``
(defaults of ``slurm.conf(5)``, ``SelectTypeParameters``, ``EnforcePartLimits``,
``AccountingStorageTRES``, ``PreemptMode``), the plugin lookup of
``plugin_context_create`` (``src/common/plugin.c``: an unknown ``SchedulerType`` /
``SelectType`` / ``PriorityType`` / ``PreemptType`` is fatal), the parsing of
``SchedulerParameters`` by sched/backfill (``src/plugins/sched/backfill/backfill.c``,
``_load_config``) and the ``Priority*`` options priority/multifactor reads
(``src/plugins/priority/multifactor/priority_multifactor.c``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from minislurm.conf.parse_config import Rejected, strtoul, time_str2mins
from minislurm.conf.partitions import preempt_mode_num
from minislurm.conf.records import PriorityConfig, SchedulerParameters
from minislurm.conf.tables import (
    DEFAULT_SLURMD_PORT,
    INFINITE32,
    PLUGINS,
    PRIORITY_FLAGS,
    RESET_PERIODS,
    SCHED_INT_RANGES,
    SELECT_PARAMS,
    TOP_OPTIONS,
)

__all__ = ["build_priority", "cluster_options", "parse_scheduler_parameters"]


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
        elif key in SCHED_INT_RANGES and eq:
            low, high = SCHED_INT_RANGES[key]
            number = strtoul(value) if not value.startswith("-") else -(strtoul(value[1:]) or 0)
            if number is None or not low <= number <= high:
                notes.append(f"Invalid SchedulerParameters {key}: {value}")
            else:
                values[key] = number
        else:
            other.append((item.partition("=")[0].strip(), value if eq else None))
    return SchedulerParameters(**values, other=tuple(other))


def build_priority(top: dict[str, Any], notes: list[str]) -> PriorityConfig:
    """The ``Priority*`` options (``PriorityWeight*``, ``PriorityMaxAge``, ``PriorityFlags``, ...).

    Durations become seconds; unknown ``PriorityFlags`` are dropped with a note.
    """

    def seconds(key: str, default: int) -> int:
        if key not in top:
            return default
        try:
            value = time_str2mins(top[key])
        except ValueError:
            raise Rejected(f'Bad value "{top[key]}" for {TOP_OPTIONS[key][0]}', key) from None
        return INFINITE32 if value is None else value * 60

    flags = tuple(f.strip().upper() for f in top.get("priorityflags", "").split(",") if f.strip())
    # Slurm 22.05 silently ignores flags it does not know; minislurm notes them.
    unknown = [f for f in flags if f not in PRIORITY_FLAGS]
    if unknown:
        notes.append(f"PriorityFlags {','.join(unknown)} unknown, ignored")
        flags = tuple(f for f in flags if f in PRIORITY_FLAGS)
    tres: dict[str, float] = {}
    for item in (i for i in top.get("priorityweighttres", "").split(",") if i):
        name, _eq, weight = item.partition("=")
        try:
            tres[name] = float(weight)
        except ValueError:
            raise Rejected(f"Invalid PriorityWeightTRES: {item}", "priorityweighttres") from None
    reset = top.get("priorityusageresetperiod", "NONE").upper()
    if reset not in RESET_PERIODS:
        raise Rejected(
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


def _plugin_error(key: str, name: str) -> Rejected:
    """What slurmctld logs when ``plugin_context_create`` finds no such plugin."""
    if key == "selecttype":
        return Rejected("", key, f"fatal: Can't find plugin for {name}")
    kind = PLUGINS[key][0].split("/")[0]
    fatal = {
        "sched": "fatal: Failed to initialize sched plugin",
        "priority": "fatal: failed to initialize priority plugin",
        "preempt": "fatal: failed to initialize preempt plugin",
    }[kind]
    return Rejected(
        f"Couldn't find the specified plugin name for {name} looking at all files\n"
        f"cannot find {kind} plugin for {name}\ncannot create {kind} context for {name}",
        key,
        fatal,
    )


def cluster_preempt_mode(value: str) -> str:
    """The cluster-wide ``PreemptMode=`` (``_validate_and_set_defaults``'s message)."""
    try:
        return preempt_mode_num(value)
    except Rejected:
        raise Rejected(f"PreemptMode={value} invalid", "preemptmode") from None


def cluster_options(top: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    """``_validate_and_set_defaults`` for the options minislurm models."""
    for key, allowed in PLUGINS.items():
        if key in top and top[key] not in allowed:
            raise _plugin_error(key, top[key])
    select_params = "NONE"
    if "selecttypeparameters" in top:
        parts = [p.strip() for p in top["selecttypeparameters"].split(",")]
        if any(p.lower() not in SELECT_PARAMS for p in parts):
            raise Rejected(
                f"Bad SelectTypeParameter: {top['selecttypeparameters']}", "selecttypeparameters"
            )
        select_params = ",".join(SELECT_PARAMS[p.lower()] for p in parts)
    enforce = top.get("enforcepartlimits", "NO").upper()
    enforce = {"YES": "ANY"}.get(enforce, enforce)
    if enforce not in ("NO", "ANY", "ALL"):
        raise Rejected(f"Bad EnforcePartLimits: {top['enforcepartlimits']}", "enforcepartlimits")
    tres = ["cpu", "mem", "energy", "node", "billing", "fs/disk", "vmem", "pages"]
    slurmdbd = top.get("accountingstoragetype") == "accounting_storage/slurmdbd"
    for item in (t.strip().lower() for t in top.get("accountingstoragetres", "").split(",")):
        if item and item not in tres:
            if not slurmdbd:
                raise Rejected(
                    "",
                    "accountingstoragetres",
                    f"fatal: slurmdbd is required to run with TRES {item}. Either setup "
                    "slurmdbd or remove this TRES from your configuration.",
                )
            tres.append(item)
    priority = build_priority(top, notes)
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
        "preempt_mode": cluster_preempt_mode(top.get("preemptmode", "OFF")),
        "kill_wait": top.get("killwait", 30),
        "def_mem_per_cpu": _mem(top, "defmempercpu"),
        "def_mem_per_node": _mem(top, "defmempernode"),
        "max_mem_per_cpu": _mem(top, "maxmempercpu"),
        "max_mem_per_node": _mem(top, "maxmempernode"),
        "max_array_size": top.get("maxarraysize", 1001),
        "enforce_part_limits": enforce,
        "min_job_age": top.get("minjobage", 300),
        "return_to_service": top.get("returntoservice", 0),
        "job_requeue": top.get("jobrequeue", 1),
        "accounting_storage_enforce": tuple(
            w.strip().lower() for w in str(top.get("accountingstorageenforce", "")).split(",")
            if w.strip() and w.strip().lower() not in ("none", "0")),
        "gres_types": tuple(g for g in top.get("grestypes", "").split(",") if g),
        "max_job_count": top.get("maxjobcount", 10000),
        "first_job_id": top.get("firstjobid", 1),
        "max_job_id": top.get("maxjobid", 0x03FF0000),
        "accounting_storage_tres": tuple(tres),
        "inactive_limit": top.get("inactivelimit", 0),
        "over_time_limit": top.get("overtimelimit", 0),
        "slurmd_port": top.get("slurmdport", DEFAULT_SLURMD_PORT),
    }
