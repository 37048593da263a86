"""sinfo's output: default, ``-o``, ``-l``, ``-N``, ``-R``, ``-h``.

Mirrors ``src/sinfo/sinfo.c`` (``_build_sinfo_data``: records grouped into
lines), ``src/sinfo/opts.c`` (default formats, which fields force grouping to
match) and ``src/sinfo/print.c`` (what each field prints, ``%#P``/``%#N``
widths).

Grouping (``_match_node_data``): in partition mode a line gathers the nodes of
one partition whose *matched* fields are equal: the state when ``%t``/``%T``
is printed, GRES for ``%G``, features for ``%f``, the reason for ``%E``, ...;
CPUs, memory, disk and weight never split a line (without ``-e``) and print as
``min+`` (``-l``: ``min-max``).  Lines are ordered ``#P,-t``: partitions in
configuration order, then node state (Slurm's numeric code, flags included)
descending; ``-N`` orders by node name.  With ``-N`` a node appears once per
partition, in the order the partitions are given: real sinfo builds those
lines in one thread per partition, so their order for one node varies.
"""

from __future__ import annotations

import dataclasses
import time as _time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from minislurm.cli.format.fields import (
    MIN_HASH_FIELD_SIZE,
    FieldSpec,
    FormatSpec,
    parse_long_format,
    parse_percent_format,
    print_str,
)
from minislurm.cli.format.fields import print_secs as _secs
from minislurm.cli.format.hostinfo import NodeHost
from minislurm.common import hostlist
from minislurm.common.timespec import format_timestamp
from minislurm.node import NodeRecord, PartitionRecord
from minislurm.states import NodeBase, NodeFlag, NodeState

DEFAULT_FORMAT = "%#P %.5a %.10l %.6D %.6t %N"
LONG_FORMAT = "%#P %.5a %.10l %.10s %.4r %.8h %.10g %.6D %.11T %N"
#: ``-N``/``-N -l``: the man page says ``%#P`` and ``%.4c``, but 22.05 prints the
#: partition right-justified and the CPU count left-justified (capture
#: c2/11_sinfo_node_long), so the formats here are what it really uses.
NODE_FORMAT = "%#N %.6D %.#P %6t"
NODE_LONG_FORMAT = "%#N %.6D %.#P %.11T %4c %.8z %.6m %.8d %.6w %.8f %20E"
REASONS_FORMAT = "%20E %9u %19H %N"
REASONS_LONG_FORMAT = "%20E %12U %19H %6t %N"


@dataclass(frozen=True, slots=True)
class SinfoLine:
    """One output line (``sinfo_data_t``): a partition (or none) and its nodes."""

    partition: PartitionRecord | None
    nodes: tuple[NodeRecord, ...]


@dataclass(frozen=True, slots=True)
class _Ctx:
    long: bool
    hosts: Mapping[str, NodeHost]

    def host(self, node: NodeRecord) -> NodeHost:
        return self.hosts.get(node.name) or NodeHost.simulated(node)


_Value = Callable[[SinfoLine, _Ctx], "str | None"]


def _min_max(values: Sequence[int], long: bool) -> str:
    """``_build_min_max_32_string``: ``4``, ``4+`` or (``-l``) ``4-8``."""
    lo, hi = min(values), max(values)
    if lo == hi:
        return str(hi)
    return f"{lo}-{hi}" if long else f"{lo}+"


def _part(f: Callable[[PartitionRecord], str]) -> _Value:
    return lambda line, ctx: "n/a" if line.partition is None else f(line.partition)


def _nodes_num(f: Callable[[NodeRecord], int]) -> _Value:
    return lambda line, ctx: _min_max([f(n) for n in line.nodes] or [0], ctx.long)


def _state_number(state: NodeState) -> int:
    """Slurm's ``node_state`` code: base (IDLE=2, ALLOCATED=3, MIXED=5, ...) | flags."""
    base = {NodeBase.UNKNOWN: 0, NodeBase.DOWN: 1, NodeBase.IDLE: 2, NodeBase.ALLOCATED: 3,
            NodeBase.ERROR: 4, NodeBase.MIXED: 5, NodeBase.FUTURE: 6}[state.base]
    bits = {NodeFlag.RESERVED: 0x20, NodeFlag.CLOUD: 0x80, NodeFlag.DRAIN: 0x200,
            NodeFlag.COMPLETING: 0x400, NodeFlag.NOT_RESPONDING: 0x800,
            NodeFlag.POWERED_DOWN: 0x1000, NodeFlag.FAIL: 0x2000, NodeFlag.POWER_UP: 0x4000,
            NodeFlag.MAINTENANCE: 0x8000, NodeFlag.REBOOT_REQUESTED: 0x10000,
            NodeFlag.POWER_DOWN: 0x40000, NodeFlag.REBOOT_ISSUED: 0x100000,
            NodeFlag.PLANNED: 0x200000, NodeFlag.INVALID_REG: 0x400000}
    return base | sum(bit for flag, bit in bits.items() if state.has(flag))


def _cpus_aiot(line: SinfoLine, ctx: _Ctx) -> str:
    a = sum(n.alloc_cpus for n in line.nodes)
    i = sum(n.idle_cpus for n in line.nodes)
    o = sum(n.other_cpus for n in line.nodes)
    t = sum(n.cpus for n in line.nodes)
    return f"{a}/{i}/{o}/{t}"


def _nodes_aiot(line: SinfoLine, ctx: _Ctx) -> str:
    other = sum(n.is_unavailable for n in line.nodes)
    alloc = sum(not n.is_unavailable and n.alloc_cpus > 0 for n in line.nodes)
    idle = len(line.nodes) - other - alloc
    return f"{alloc}/{idle}/{other}/{len(line.nodes)}"


def _nodes_ai(line: SinfoLine, ctx: _Ctx) -> str:
    return "/".join(_nodes_aiot(line, ctx).split("/")[:2])


def _first(f: Callable[[NodeRecord], str | None], empty: str | None = "") -> _Value:
    """A value of the line's first node (``empty`` for a partition without nodes)."""
    return lambda line, ctx: f(line.nodes[0]) if line.nodes else empty


def _host(f: Callable[[NodeHost], str]) -> _Value:
    return lambda line, ctx: f(ctx.host(line.nodes[0])) if line.nodes else "N/A"


def _time_limit(minutes: int | None) -> str:
    return "infinite" if minutes is None else _secs(minutes * 60)


def _part_name(p: PartitionRecord) -> str:
    return p.name + ("*" if p.default else "")


def _part_name_in(p: PartitionRecord, width: int) -> str:
    """``_print_partition``: the default partition's ``*`` is appended when the name
    is narrower than the width, else it replaces the last column (``%5P``: ``debu*``,
    measured on 22.05.8)."""
    if not p.default:
        return p.name
    if width <= 0 or len(p.name) < width:
        return p.name + "*"
    return p.name[:width - 1] + "*"


def _user_long(name: str) -> str:
    """``%U``: ``root(0)``."""
    import pwd

    try:
        return f"{name}({pwd.getpwnam(name).pw_uid})"
    except KeyError:
        return name


def _uniq(names: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(names))


# letter -> (header, value, match key or None)
_LETTERS: dict[str, tuple[str, _Value]] = {
    "a": ("AVAIL", _part(lambda p: p.state.lower())),
    "A": ("NODES(A/I)", _nodes_ai),
    "b": ("ACTIVE_FEATURES", _first(lambda n: ",".join(n.features) or None, None)),
    "B": ("MAX_CPUS_PER_NODE", _part(lambda p: "UNLIMITED")),
    "c": ("CPUS", _nodes_num(lambda n: n.cpus)),
    "C": ("CPUS(A/I/O/T)", _cpus_aiot),
    "d": ("TMP_DISK", _nodes_num(lambda n: n.tmp_disk)),
    "D": ("NODES", lambda line, ctx: str(len(line.nodes))),
    "e": ("FREE_MEM", lambda line, ctx: _min_max(
        [ctx.host(n).free_mem_of(n) for n in line.nodes] or [0], ctx.long)),
    "E": ("REASON", _first(lambda n: n.reason or "none")),
    "f": ("AVAIL_FEATURES", _first(lambda n: ",".join(n.features) or None, None)),
    "F": ("NODES(A/I/O/T)", _nodes_aiot),
    "g": ("GROUPS", _part(lambda p: "all")),
    "G": ("GRES", _first(lambda n: n.gres or "(null)")),
    "h": ("OVERSUBSCRIBE", _part(lambda p: p.over_subscribe)),
    "H": ("TIMESTAMP", _first(lambda n: format_timestamp(n.reason_time))),
    "I": ("PRIO_JOB_FACTOR", _part(lambda p: str(p.priority_job_factor))),
    "l": ("TIMELIMIT", _part(lambda p: _time_limit(p.max_time))),
    "L": ("DEFAULTTIME", _part(lambda p: "n/a" if p.default_time is None
                               else _secs(p.default_time * 60))),
    "m": ("MEMORY", _nodes_num(lambda n: n.real_memory)),
    "M": ("PREEMPT_MODE", _part(lambda p: p.preempt_mode)),
    "n": ("HOSTNAMES", lambda line, ctx: hostlist.compress(
        _uniq([n.node_hostname or n.name for n in line.nodes]))),
    "N": ("NODELIST", lambda line, ctx: hostlist.compress([n.name for n in line.nodes])),
    "o": ("NODE_ADDR", lambda line, ctx: hostlist.compress(
        _uniq([n.node_addr or n.name for n in line.nodes]))),
    "O": ("CPU_LOAD", _host(lambda h: f"{h.cpu_load:.2f}")),
    "p": ("PRIO_TIER", _part(lambda p: str(p.priority_tier))),
    "P": ("PARTITION", _part(_part_name)),
    "r": ("ROOT", _part(lambda p: "no")),
    "R": ("PARTITION", _part(lambda p: p.name)),
    "S": ("ALLOCNODES", _part(lambda p: "all")),
    "s": ("JOB_SIZE", _part(lambda p: f"{p.min_nodes or 1}-"
                            + ("infinite" if p.max_nodes is None else str(p.max_nodes)))),
    "t": ("STATE", _first(lambda n: n.state.short, "n/a")),
    "T": ("STATE", _first(lambda n: n.state.long, "n/a")),
    "u": ("USER", _first(lambda n: n.reason_user or "Unknown")),
    "U": ("USER", _first(lambda n: _user_long(n.reason_user) if n.reason_user else "Unknown")),
    "v": ("VERSION", _host(lambda h: h.version)),
    "V": ("CLUSTER", lambda line, ctx: "N/A"),
    "w": ("WEIGHT", _nodes_num(lambda n: n.weight)),
    "X": ("SOCKETS", _nodes_num(lambda n: n.sockets)),
    "Y": ("CORES", _nodes_num(lambda n: n.cores_per_socket)),
    "Z": ("THREADS", _nodes_num(lambda n: n.threads_per_core)),
    "NullComment": ("COMMENT", lambda line, ctx: None),
    "NullExtra": ("EXTRA", lambda line, ctx: None),
    "GresUsed": ("GRES_USED", _first(lambda n: n.gres_used or "(null)")),
    "z": ("S:C:T", lambda line, ctx: ":".join(
        _min_max(v, False) for v in (
            [n.sockets for n in line.nodes],
            [n.cores_per_socket for n in line.nodes],
            [n.threads_per_core for n in line.nodes]))),
}

#: ``-O/--Format`` names (case-insensitive) -> the letter (or key) printing the same.
_LONG_NAMES: dict[str, str] = {
    "allocnodes": "S", "cluster": "V", "comment": "NullComment", "extra": "NullExtra",
    "available": "a", "cores": "Y", "cpus": "c", "cpusload": "O", "cpusstate": "C",
    "defaulttime": "L", "disk": "d", "features": "f", "features_act": "b", "freemem": "e",
    "groups": "g", "gres": "G", "gresused": "GresUsed", "maxcpuspernode": "B", "memory": "m",
    "nodeai": "A", "nodeaiot": "F", "nodeaddr": "o", "nodehost": "n", "nodelist": "N",
    "nodes": "D", "oversubscribe": "h", "partition": "P", "partitionname": "R",
    "preemptmode": "M", "priorityjobfactor": "I", "prioritytier": "p", "reason": "E",
    "root": "r", "size": "s", "socketcorethread": "z", "sockets": "X", "statecompact": "t",
    "statelong": "T", "threads": "Z", "time": "l", "timestamp": "H", "user": "u",
    "userlong": "U", "version": "v", "weight": "w",
}

#: Letters that print partition attributes (``_match_part_data``): partitions equal
#: in the ones printed share lines; ``%P``/``%R`` make lines per partition.
_PARTITION_LETTERS = frozenset("aBghIlLMpPrRsS")
_PARTITION_NAME_LETTERS = frozenset("PR")
#: Right-justified headers ``_print_str`` does not cut (measured on 22.05.8).
_HEADER_UNCUT = frozenset("Nno")


def invalid_fields(fmt: str | None = None, Format: str | None = None) -> list[str]:
    """What sinfo prints on stderr for unknown types: ``Invalid node format
    specification: i`` for ``-o`` (no prefix), ``sinfo: error: Invalid job format
    specification: NAME`` for ``-O`` (sic, measured on 22.05.8)."""
    errors = []
    if fmt is not None:
        for f in parse_percent_format(fmt, allow_hash=True).fields:
            if f.key not in _LETTERS or len(f.key) > 1:
                errors.append(f"Invalid node format specification: {f.key or chr(0)}")
    elif Format is not None:
        for f in parse_long_format(Format).fields:
            if f.key.lower() not in _LONG_NAMES:
                errors.append(f"sinfo: error: Invalid job format specification: {f.key}")
    return errors

#: Letters that force nodes of one line to agree on a value (``MATCH_FLAG_*``).
_MATCH: dict[str, Callable[[NodeRecord], object]] = {
    "t": lambda n: n.state.long,
    "T": lambda n: n.state.long,
    "G": lambda n: n.gres,
    "f": lambda n: n.features,
    "b": lambda n: n.features,
    "E": lambda n: n.reason,
    "H": lambda n: n.reason_time,
    "u": lambda n: n.reason_user,
    "U": lambda n: n.reason_user,
}


def _build_lines(
    fields: Sequence[FieldSpec],
    nodes: Sequence[NodeRecord],
    partitions: Sequence[PartitionRecord],
    node_oriented: bool,
) -> list[SinfoLine]:
    by_name = {n.name: n for n in nodes}
    order = {n.name: i for i, n in enumerate(nodes)}
    letters = {f.key for f in fields}
    if node_oriented:
        pairs = [(p, by_name[name]) for p in partitions for name in p.nodes if name in by_name]
        pairs.sort(key=lambda pn: order[pn[1].name])
        return [SinfoLine(p, (n,)) for p, n in pairs]
    per_partition = bool(letters & _PARTITION_NAME_LETTERS)
    part_letters = sorted(letters & _PARTITION_LETTERS)
    ctx0 = _Ctx(long=False, hosts={})
    matchers = [m for key, m in _MATCH.items() if key in letters]
    groups: list[tuple[object, PartitionRecord | None, list[NodeRecord]]] = []
    for p in partitions:
        members = sorted((by_name[x] for x in p.nodes if x in by_name), key=lambda n: order[n.name])
        owner: object = p.name if per_partition else tuple(
            _LETTERS[k][1](SinfoLine(p, ()), ctx0) for k in part_letters)
        for node in members:
            for g_key, _g_part, g_nodes in groups:
                if g_key == owner and all(m(g_nodes[0]) == m(node) for m in matchers):
                    if all(n.name != node.name for n in g_nodes):
                        g_nodes.append(node)
                    break
            else:
                groups.append((owner, p if part_letters else None, [node]))
        if per_partition and not members:  # a partition without (matching) nodes
            groups.append((owner, p, []))  # still gets a line: 0 nodes, state n/a
    lines = [SinfoLine(p, tuple(ns)) for _key, p, ns in groups]
    part_index = {p.name: i for i, p in enumerate(partitions)}
    lines.sort(key=lambda ln: -_state_number(ln.nodes[0].state) if ln.nodes else 0)
    lines.sort(key=lambda ln: part_index[ln.partition.name] if ln.partition else 0)
    return lines


def _cell(spec: FieldSpec, line: SinfoLine | None, ctx: _Ctx, width: int,
          long_names: bool = False) -> str:
    entry = _LETTERS.get(spec.key)
    if entry is None:  # -o: the token verbatim; -O: only the suffix
        return spec.suffix if long_names else spec.raw
    header, value = entry
    if line is None:
        cut = not (spec.right and spec.key in _HEADER_UNCUT)
        return print_str(header, width, spec.right, cut) + spec.suffix
    if spec.key == "P" and line.partition is not None:
        text: str | None = _part_name_in(line.partition, width)
    else:
        text = value(line, ctx)
    return print_str(text, width, spec.right, True) + spec.suffix


def format_sinfo(
    nodes: Sequence[NodeRecord],
    partitions: Sequence[PartitionRecord],
    *,
    fmt: str | None = None,
    Format: str | None = None,  # sinfo's -O/--Format
    node_oriented: bool = False,
    long: bool = False,
    reasons: bool = False,
    noheader: bool = False,
    now: int,
    reasons_filter: bool | None = None,
    hosts: Mapping[str, NodeHost] | None = None,
) -> str:
    """What ``sinfo`` prints for these nodes and partitions (in configuration order).

    ``fmt`` is ``-o``, ``Format`` ``-O`` (names as in ``sinfo --helpformat``,
    default width 20); otherwise ``-N`` (``node_oriented``), ``-l`` and ``-R``
    (``reasons``: only DOWN/DRAINED/FAIL nodes) choose Slurm's default formats.
    ``-l`` prints the date first.  ``hosts`` gives each node's host facts
    (free memory, load; see `NodeHost`).  ``reasons_filter`` (default ``reasons``):
    keep only the unavailable nodes; sinfo passes False when ``-t`` was given, whose
    states replace -R's ``down,drain,fail`` (measured on 22.05.8: ``sinfo -t idle -R``
    lists the idle nodes too, as ``none  Unknown  Unknown  n3``).
    """
    if reasons_filter is None:
        reasons_filter = reasons
    if fmt is None and Format is None:
        if reasons:
            fmt = REASONS_LONG_FORMAT if long else REASONS_FORMAT
        elif node_oriented:
            fmt = NODE_LONG_FORMAT if long else NODE_FORMAT
        else:
            fmt = LONG_FORMAT if long else DEFAULT_FORMAT
    long_names = Format is not None and fmt is None
    if long_names:
        long_spec = parse_long_format(Format or "")
        spec = FormatSpec("", tuple(
            dataclasses.replace(f, key=_LONG_NAMES.get(f.key.lower(), "\0" + f.key))
            for f in long_spec.fields
        ))
    else:  # -o "" prints empty lines (measured on 22.05.8)
        spec = parse_percent_format(DEFAULT_FORMAT if fmt is None else fmt, allow_hash=True)
    shown = [n for n in nodes if n.is_unavailable] if reasons_filter else list(nodes)
    lines = _build_lines(spec.fields, shown, partitions, node_oriented and not reasons)
    ctx = _Ctx(long=long, hosts=hosts or {})

    widths: list[int] = []
    for f in spec.fields:
        width = f.width
        if f.hash_width and f.key == "P":
            names = [_part_name(ln.partition) for ln in lines if ln.partition]
            width = max([MIN_HASH_FIELD_SIZE, *map(len, names)])
        elif f.hash_width and f.key == "N":
            lists = [hostlist.compress([n.name for n in ln.nodes]) for ln in lines]
            width = max([MIN_HASH_FIELD_SIZE, *map(len, lists)])
        widths.append(width)

    out: list[str] = []
    if long and not noheader:  # sinfo.c prints the date with the header only
        out.append(_time.strftime("%a %b %d %H:%M:%S %Y", _time.gmtime(now)))
    rows: list[SinfoLine | None] = [] if noheader else [None]
    rows.extend(lines)
    for row in rows:
        cells = (_cell(f, row, ctx, w, long_names)
                 for f, w in zip(spec.fields, widths, strict=True))
        out.append(spec.prefix + "".join(cells))
    return "".join(line + "\n" for line in out)


__all__ = [
    "DEFAULT_FORMAT",
    "LONG_FORMAT",
    "NODE_FORMAT",
    "NODE_LONG_FORMAT",
    "REASONS_FORMAT",
    "REASONS_LONG_FORMAT",
    "SinfoLine",
    "format_sinfo",
    "invalid_fields",
]
