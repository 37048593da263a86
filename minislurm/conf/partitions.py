"""``PartitionName=`` lines into partitions.

Mirrors ``_parse_partitionname`` of Slurm 22.05's ``src/common/read_config.c``
(``MaxTime`` / ``DefaultTime`` via ``time_str2mins``, ``State``, ``Priority`` vs
``PriorityJobFactor`` / ``PriorityTier``, ``OverSubscribe`` / its old name
``Shared``, ``PreemptMode``, ``AllowAccounts`` / ``AllowQos``, the memory and CPU
limits) and ``build_part_bitmap`` of ``src/slurmctld/read_config.c`` (``Nodes=``
resolved against the node table, ``ALL``, ``Invalid node names in partition``).
"""

from __future__ import annotations

import re
from typing import Any

from minislurm.common import hostlist
from minislurm.conf.parse_config import ConfLine, Rejected, time_str2mins
from minislurm.conf.records import PartitionConfig
from minislurm.conf.tables import INFINITE32, PREEMPT_MODES
from minislurm.errors import HostlistError

__all__ = ["build_partition", "preempt_mode_num"]


def preempt_mode_num(value: str) -> str:
    """``preempt_mode_num`` (``src/common/slurm_protocol_defs.c``).

    ``REQUEUE``, ``SUSPEND,GANG``, ... returned in upper case.
    """
    parts = [p.strip().upper() for p in value.split(",")]
    if not parts or any(p not in PREEMPT_MODES for p in parts):
        raise Rejected(f'Bad value "{value}" for PreemptMode')
    return ",".join(parts)


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
    raise Rejected(f'Bad value "{value}" for OverSubscribe')


def _part_time(opt: dict[str, Any], key: str, label: str) -> int | None:
    try:
        return time_str2mins(opt[key])
    except ValueError:
        raise Rejected(f'Bad value "{opt[key]}" for {label}') from None


def build_partition(
    item: ConfLine, node_names: tuple[str, ...], preempt_mode: str, notes: list[str]
) -> PartitionConfig:
    """``_parse_partitionname`` + ``build_part_bitmap``."""
    opt = item.options
    max_time = _part_time(opt, "maxtime", "MaxTime") if "maxtime" in opt else None
    default_time = _part_time(opt, "defaulttime", "DefaultTime") if "defaulttime" in opt else None
    state = str(opt.get("state", "UP")).upper()
    state = next((s for s in ("DOWN", "UP", "DRAIN", "INACTIVE") if state.startswith(s)), "")
    if not state:
        raise Rejected(f'Bad value "{opt["state"]}" for State')
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
            raise Rejected(detail, fatal=invalid) from None
        for name in wanted:
            if name not in node_names:
                raise Rejected(
                    f'_find_node_record: lookup failure for node "{name}"', fatal=invalid
                )
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
        preempt_mode=preempt_mode_num(opt["preemptmode"]) if "preemptmode" in opt else preempt_mode,
        qos=opt.get("qos"), max_cpus_per_node=limit("maxcpuspernode"),
        def_mem_per_cpu=limit("defmempercpu", 2**63), max_mem_per_cpu=limit("maxmempercpu", 2**63),
        allow_accounts=names("allowaccounts"), allow_qos=names("allowqos"),
        hidden=bool(opt.get("hidden", False)), exclusive_user=bool(opt.get("exclusiveuser", False)),
        nodes_expr=expr,
    )  # fmt: skip
