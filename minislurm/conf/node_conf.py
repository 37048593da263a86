"""``NodeName=`` lines into nodes, and gres.conf's device files merged into them.

Mirrors Slurm 22.05's reading of node lines: ``_parse_nodename`` in
``src/common/read_config.c`` (with ``_register_conf_node_aliases`` for
``NodeHostname`` / ``NodeAddr`` / ``Port`` lists, one value per node or one for
all), ``_build_single_nodeline_info`` in ``src/common/node_conf.c`` (the
``CPUs`` / ``Boards`` / ``Sockets`` / ``SocketsPerBoard`` / ``CoresPerSocket`` /
``ThreadsPerCore`` arithmetic, node ``State=``), and the part of
``src/common/gres.c`` that checks a node's ``Gres=`` against ``GresTypes`` and
the device files gres.conf lists for it (``File=``), giving each GRES its indices.
"""

from __future__ import annotations

import re
from dataclasses import replace

from minislurm.common import hostlist
from minislurm.common.gres import INVALID_GRES, NodeGres, parse_node_gres
from minislurm.conf.gres_conf import parse_gres_conf
from minislurm.conf.parse_config import ConfLine, Rejected
from minislurm.conf.records import NodeConfig
from minislurm.conf.tables import NODE_STATES
from minislurm.errors import GresError, HostlistError

__all__ = ["build_nodes", "merge_gres"]


def _per_node(values: str, count: int, what: str) -> list[str]:
    """NodeAddr/NodeHostname/Port lists: one value for all nodes, or one per node.

    Slurm (``_register_conf_node_aliases``) insists on equal counts for ``Port`` and
    ``NodeAddr``; it accepts any count of ``NodeHostname`` (minislurm then repeats the
    last one).
    """
    try:
        items = hostlist.expand(values)
    except HostlistError:
        raise Rejected(f"Unable to create {what} list from {values}") from None
    if len(items) == 1:
        return items * count
    if len(items) != count:
        if what == "Port":
            raise Rejected(
                "",
                fatal="fatal: Port count must equal that of NodeName records or there must be "
                f"no more than one ({len(items)} != {count})",
            )
        if what == "NodeAddr":
            raise Rejected(
                "",
                fatal="fatal: NodeAddr count must equal that of NodeName records of there "
                "must be no more than one",
            )
        items = (items + [items[-1]] * count)[:count]
    return items


def build_nodes(
    item: ConfLine, slurmd_port: int, gres_types: tuple[str, ...], notes: list[str]
) -> list[NodeConfig]:
    """``_parse_nodename`` + ``_register_conf_node_aliases``: one NodeConfig per name."""
    opt = item.options
    try:
        names = hostlist.expand(item.name)
    except HostlistError:
        raise Rejected(f"Unable to create NodeName list from {item.name}") from None
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
    if state.upper() not in NODE_STATES:
        raise Rejected(
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
            raise Rejected(f"Invalid Port {opt['port']} for NodeName={item.name}")
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


# ---- gres.conf merge ---------------------------------------------------------------------------


def merge_gres(
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
