"""sinfo's output, compared byte for byte with captures of real Slurm 22.05.

The cluster of the captures: n[1-4] with 4 CPUs, 4000 MB and ``gpu:a100:4``;
partitions debug* (n[1-4], 1:00:00), gpu (n[1-4], 2:00:00), short (n[1-2], 5:00).
"""

from __future__ import annotations

import calendar
import dataclasses
from typing import Any

from captures import REF, needs_captures

from minislurm.cli.format.hostinfo import NodeHost
from minislurm.cli.format.sinfo import format_sinfo
from minislurm.node import NodeRecord, PartitionRecord
from minislurm.states import NodeBase, NodeFlag, NodeState

CASE = "c2_formats_and_reasons"


def capture(name: str) -> str:
    return (REF / CASE / f"{name}.out").read_text()


def ts(hms: str) -> int:
    hh, mm, ss = (int(x) for x in hms.split(":"))
    return calendar.timegm((2026, 12, 2, hh, mm, ss, 0, 0, 0))


PARTS = {
    "debug": PartitionRecord(
        "debug", ("n1", "n2", "n3", "n4"), default=True, max_time=60, default_time=10
    ),
    "gpu": PartitionRecord("gpu", ("n1", "n2", "n3", "n4"), max_time=120),
    "short": PartitionRecord("short", ("n1", "n2"), max_time=5, default_time=1),
}
CONFIG_ORDER = [PARTS["debug"], PARTS["gpu"], PARTS["short"]]
#: The order the captured ``sinfo -N`` listed each node's partitions in (thread order).
NODE_VIEW_ORDER = [PARTS["gpu"], PARTS["short"], PARTS["debug"]]
HOSTS = {f"n{i}": NodeHost(cpu_load=2.17, free_mem=23204) for i in range(1, 5)}


def node(
    i: int, base: NodeBase, alloc: int, flags: NodeFlag = NodeFlag.NONE, **kw: Any
) -> NodeRecord:
    parts = ("debug", "gpu", "short") if i <= 2 else ("debug", "gpu")
    return NodeRecord(
        name=f"n{i}",
        state=NodeState(base, flags),
        cpus=4,
        alloc_cpus=alloc,
        real_memory=4000,
        alloc_mem=alloc * 1000,
        cores_per_socket=4,
        gres="gpu:a100:4",
        gpus_total=4,
        partitions=parts,
        **kw,
    )


def idle_nodes() -> list[NodeRecord]:
    return [node(i, NodeBase.IDLE, 0) for i in range(1, 5)]


def busy_nodes() -> list[NodeRecord]:
    """After ``scontrol update nodename=n4 state=drain reason=maintenance``."""
    return [
        node(1, NodeBase.MIXED, 2),
        node(2, NodeBase.ALLOCATED, 4),
        node(3, NodeBase.ALLOCATED, 4),
        node(
            4,
            NodeBase.ALLOCATED,
            4,
            NodeFlag.DRAIN,
            reason="maintenance",
            reason_user="root",
            reason_time=ts("13:27:43"),
        ),
    ]


@needs_captures
def test_default_sinfo_on_an_idle_cluster() -> None:
    expected = capture("00_idle_views").split("\n\n")[0] + "\n"
    assert format_sinfo(idle_nodes(), CONFIG_ORDER, now=0) == expected


@needs_captures
def test_node_long_view_on_an_idle_cluster() -> None:
    expected = capture("00_idle_views").split("\n\n")[1] + "\n"
    out = format_sinfo(idle_nodes(), NODE_VIEW_ORDER, node_oriented=True, long=True, now=0)
    assert "".join(out.splitlines(keepends=True)[1:]) == expected  # the capture drops the date


@needs_captures
def test_node_long_view_with_a_draining_node() -> None:
    expected = capture("11_sinfo_node_long")
    out = format_sinfo(
        busy_nodes(), NODE_VIEW_ORDER, node_oriented=True, long=True, now=ts("13:27:47")
    )
    assert out == expected


@needs_captures
def test_custom_formats_group_by_partition_and_state() -> None:
    expected = capture("13_sinfo_custom")
    out = format_sinfo(busy_nodes(), CONFIG_ORDER, fmt="%P %a %l %D %t %N %G %C", now=0)
    out += format_sinfo(
        busy_nodes(),
        NODE_VIEW_ORDER,
        fmt="%N %t %C %G %m %e",
        node_oriented=True,
        now=0,
        hosts=HOSTS,
    )
    assert out == expected


def test_default_view_of_the_busy_cluster() -> None:
    assert format_sinfo(busy_nodes(), CONFIG_ORDER, now=0) == (
        "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
        "debug*       up    1:00:00      1   drng n4\n"
        "debug*       up    1:00:00      1    mix n1\n"
        "debug*       up    1:00:00      2  alloc n[2-3]\n"
        "gpu          up    2:00:00      1   drng n4\n"
        "gpu          up    2:00:00      1    mix n1\n"
        "gpu          up    2:00:00      2  alloc n[2-3]\n"
        "short        up       5:00      1    mix n1\n"
        "short        up       5:00      1  alloc n2\n"
    )


def test_list_reasons_shows_each_unavailable_node_once() -> None:
    out = format_sinfo(busy_nodes(), CONFIG_ORDER, reasons=True, now=0)
    assert out == (
        "REASON               USER      TIMESTAMP           NODELIST\n"
        "maintenance          root      2026-12-02T13:27:43 n4\n"
    )


def test_hash_width_grows_with_the_longest_partition_name() -> None:
    long_name = PartitionRecord("verylongpartition", ("n1",), max_time=None)
    out = format_sinfo(idle_nodes()[:1], [long_name], now=0).splitlines()
    assert out[0].startswith("PARTITION         AVAIL")
    assert out[1] == "verylongpartition    up   infinite      1   idle n1"


def test_without_state_in_the_format_nodes_of_all_states_share_a_line() -> None:
    out = format_sinfo(busy_nodes(), CONFIG_ORDER, fmt="%R %D %c %N", noheader=True, now=0)
    assert out.splitlines() == ["debug 4 4 n[1-4]", "gpu 4 4 n[1-4]", "short 2 4 n[1-2]"]


def test_cpu_counts_that_differ_print_min_plus_or_a_range_with_long() -> None:
    small = NodeRecord(
        "n9", NodeState(NodeBase.IDLE), cpus=2, alloc_cpus=0, real_memory=1000, alloc_mem=0
    )
    nodes = [*idle_nodes(), small]
    part = [PartitionRecord("all", ("n1", "n2", "n3", "n4", "n9"), max_time=None)]
    assert format_sinfo(nodes, part, fmt="%c|%m|%N", noheader=True, now=0) == "2+|1000+|n[1-4,9]\n"
    # -l: ranges; with -h not even the date line is printed
    assert format_sinfo(nodes, part, fmt="%c|%m", noheader=True, long=True, now=0) == (
        "2-4|1000-4000\n"
    )


def test_Format_uses_20_column_fields_without_separators() -> None:
    n1 = dataclasses.replace(busy_nodes()[0], gres_used="gpu:a100:0(IDX:N/A)")
    out = format_sinfo(
        [n1],
        [PARTS["short"]],
        Format="NodeList,StateCompact,GresUsed:.25",
        node_oriented=True,
        now=0,
    )
    assert out == (
        "NODELIST".ljust(20)
        + "STATE".ljust(20)
        + "GRES_USED".rjust(25)
        + "\n"
        + "n1".ljust(20)
        + "mix".ljust(20)
        + "gpu:a100:0(IDX:N/A)".rjust(25)
        + "\n"
    )


def test_a_partition_without_nodes_still_prints_a_line() -> None:
    empty = PartitionRecord("empty", (), max_time=30)
    out = format_sinfo(idle_nodes(), [PARTS["debug"], empty], now=0)
    assert out.splitlines()[-1] == "empty        up      30:00      0    n/a "
