"""``scontrol show node`` (src/scontrol/info_node.c ``scontrol_print_node_list``)."""

from __future__ import annotations

from minislurm.cli.format.scontrol import format_scontrol_node
from minislurm.cli.scontrol.session import Session
from minislurm.common import hostlist
from minislurm.errors import HostlistError


def show_nodes(s: Session, val: str | None) -> None:
    """``scontrol_print_node_list``: every node, or each node of a hostlist in turn
    (``Node n9 not found`` for an unknown one)."""
    ctl = s.controller("slurm_load_node error")
    nodes = ctl.nodes()
    now = int(ctl.now)
    if val is None:
        if not nodes and not s.quiet:
            s.ctx.out("No nodes in the system")
        s.ctx.stdout.write("".join(format_scontrol_node(n, now=now, oneliner=s.oneliner)
                                   for n in nodes))
        return
    try:
        wanted = hostlist.expand(val)
    except HostlistError:
        s.error(f"unable to parse node list {val}")
        return
    by_name = {n.name: n for n in nodes}
    for name in wanted:
        if name in by_name:
            s.ctx.stdout.write(format_scontrol_node(by_name[name], now=now,
                                                    oneliner=s.oneliner))
        else:
            s.exit_code = 1
            if not s.quiet:
                s.ctx.out(f"Node {name} not found")
