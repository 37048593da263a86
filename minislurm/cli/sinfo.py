"""``sinfo``: view nodes and partitions (src/sinfo/opts.c, sinfo.c).

Options -> ``slurm_load_partitions`` + ``slurm_load_node`` -> the filters of
sinfo.c ``_filter_out`` (``-p``, ``-n``, ``-t``, ``-r``, ``-d``) ->
`minislurm.cli.format.format_sinfo`.  With slurmctld down sinfo prints
``slurm_load_partitions: Unable to contact slurm controller (connect failure)``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from minislurm.cli.common import (
    Context,
    connect,
    info_table,
    option_table,
    parse_or_exit,
    parse_permuted,
    unreachable,
)
from minislurm.cli.format.sinfo import format_sinfo, invalid_fields
from minislurm.cli.transport import run_command
from minislurm.common import hostlist
from minislurm.errors import SlurmError
from minislurm.node import NodeRecord, PartitionRecord
from minislurm.options.getopt import HasArg
from minislurm.states import NodeBase, NodeFlag, NodeState

PROG = "sinfo"

#: ``-s/--summarize`` (opts.c; ``%9P`` with the partition width computed later = ``%#P``).
SUMMARIZE_FORMAT = "%#P %.5a %.10l %.16F %N"  # one blank before NODELIST (22.05.8)

SHORTS, LONGS = option_table("adehi:lM:n:No:O:p:rRsS:t:TvV", [
    ("all", HasArg.NO, "a"), ("dead", HasArg.NO, "d"), ("exact", HasArg.NO, "e"),
    ("federation", HasArg.NO, "federation"), ("help", HasArg.NO, "help"),
    ("hide", HasArg.NO, "hide"), ("iterate", HasArg.REQUIRED, "i"),
    ("local", HasArg.NO, "local"), ("long", HasArg.NO, "l"),
    ("cluster", HasArg.REQUIRED, "M"), ("clusters", HasArg.REQUIRED, "M"),
    ("nodes", HasArg.REQUIRED, "n"), ("noconvert", HasArg.NO, "noconvert"),
    ("noheader", HasArg.NO, "h"), ("Node", HasArg.NO, "N"),
    ("format", HasArg.REQUIRED, "o"), ("Format", HasArg.REQUIRED, "O"),
    ("partition", HasArg.REQUIRED, "p"), ("responding", HasArg.NO, "r"),
    ("list-reasons", HasArg.NO, "R"), ("summarize", HasArg.NO, "s"),
    ("sort", HasArg.REQUIRED, "S"), ("states", HasArg.REQUIRED, "t"),
    ("reservation", HasArg.NO, "T"), ("usage", HasArg.NO, "usage"),
    ("verbose", HasArg.NO, "v"), ("version", HasArg.NO, "V"),
])

USAGE = """\
Usage: sinfo [-adelNRrsTv] [-i seconds] [-t states] [-p partition] [-n nodes]
             [-S fields] [-o format] [-O Format] [--federation] [--local]
"""

HELP = """\
Usage: sinfo [OPTIONS]
  -a, --all                  show all partitions (including hidden and those
\t\t\t     not accessible)
  -d, --dead                 show only non-responding nodes
  -e, --exact                group nodes only on exact match of configuration
      --federation           Report federated information if a member of one
  -h, --noheader             no headers on output
  --hide                     do not show hidden or non-accessible partitions
  -i, --iterate=seconds      specify an iteration period
      --local                show only local cluster in a federation.
                             Overrides --federation.
  -l, --long                 long output - displays more information
  -M, --clusters=names       clusters to issue commands to. Implies --local.
                             NOTE: SlurmDBD must be up.
  -n, --nodes=NODES          report on specific node(s)
  --noconvert                don't convert units from their original type
\t\t\t     (e.g. 2048M won't be converted to 2G).
  -N, --Node                 Node-centric format
  -o, --format=format        format specification
  -O, --Format=format        long format specification
  -p, --partition=PARTITION  report on specific partition
  -r, --responding           report only responding nodes
  -R, --list-reasons         list reason nodes are down or drained
  -s, --summarize            report state summary only
  -S, --sort=fields          comma separated list of fields to sort on
  -t, --states=node_state    specify the what states of nodes to view
  -T, --reservation          show only reservation information
  -v, --verbose              verbosity level
  -V, --version              output version information and exit

Help options:
  --help                     show this help message
  --usage                    display brief usage message
"""

#: ``--help``, ``--usage``, ``-V``: the text each prints.
INFO = info_table(HELP, USAGE)

#: ``_node_state_list``: what ``valid states:`` lists after a bad ``-t``.
VALID_NODE_STATES = (  # measured on 22.05.8 ("?" and "unknown" twice included)
    "unknown,down,idle,allocated,?,mixed,future,drain,drained,draining,no_respond,"
    "reserved,perfctrs,cloud,completing,powering_down,powered_down,power_down,powering_up,"
    "fail,maint,reboot,reboot^,unknown"
)

_StateTest = Callable[[NodeState], bool]


def _base(base: NodeBase) -> _StateTest:
    return lambda s: s.base is base


def _flag(flag: NodeFlag) -> _StateTest:
    return lambda s: s.has(flag)


#: ``_node_state_id``: (full name, compact name, test) tried in this order, by prefix.
_NODE_STATES: tuple[tuple[str, str, _StateTest], ...] = (
    ("unknown", "unk", _base(NodeBase.UNKNOWN)),
    ("down", "down", _base(NodeBase.DOWN)),
    ("idle", "idle", _base(NodeBase.IDLE)),
    ("allocated", "alloc", lambda s: s.base in (NodeBase.ALLOCATED, NodeBase.MIXED)),
    ("error", "err", _base(NodeBase.ERROR)),
    ("mixed", "mix", _base(NodeBase.MIXED)),
    ("future", "futr", _base(NodeBase.FUTURE)),
    ("drain", "drain", _flag(NodeFlag.DRAIN)),
    ("drained", "drained", lambda s: s.has(NodeFlag.DRAIN) and s.base is NodeBase.IDLE),
    ("draining", "drng", lambda s: s.has(NodeFlag.DRAIN) and s.base is not NodeBase.IDLE),
    ("reserved", "resv", _flag(NodeFlag.RESERVED)),
    ("completing", "comp", _flag(NodeFlag.COMPLETING)),
    ("no_respond", "no_respond", _flag(NodeFlag.NOT_RESPONDING)),
    ("fail", "fail", _flag(NodeFlag.FAIL)),
    ("maint", "maint", _flag(NodeFlag.MAINTENANCE)),
)


def parse_node_states(text: str) -> list[_StateTest] | None:
    """``-t/--states``: tests for the named states (``None``: ``all``)."""
    if text.lower() == "all":
        return None
    tests: list[_StateTest] = []
    for item in (t for t in text.split(",") if t):
        low = item.lower()
        for full, compact, test in _NODE_STATES:
            if full.startswith(low) or compact.startswith(low):
                tests.append(test)
                break
        else:
            raise SlurmError(f'{PROG}: error: Bad state string: "{item}"\n'
                             f"{PROG}: error: valid states: {VALID_NODE_STATES}", 1)
    return tests


@dataclass(frozen=True, slots=True)
class SinfoOptions:
    """What sinfo's ``parse_command_line`` leaves in ``params``."""

    fmt: str | None = None
    Format: str | None = None
    node_oriented: bool = False
    long: bool = False
    reasons: bool = False
    summarize: bool = False
    noheader: bool = False
    responding: bool = False
    dead: bool = False
    partitions: tuple[str, ...] | None = None
    nodes: tuple[str, ...] | None = None
    states: tuple[_StateTest, ...] | None = None
    #: ``-t`` was given (even ``-t all``): it replaces ``-R``'s own down/drain/fail filter
    states_given: bool = False
    info: str | None = None


def parse_sinfo(argv: Sequence[str], env: Mapping[str, str]) -> SinfoOptions:
    """Parse ``argv`` and ``SINFO_*`` like sinfo's ``parse_command_line``."""
    opts, operands = parse_permuted(argv, SHORTS, LONGS, PROG)
    got = SinfoOptions()
    a_set = p_set = False
    if env.get("SINFO_PARTITION"):
        got = replace(got, partitions=tuple(t for t in env["SINFO_PARTITION"].split(",") if t))
    for o in opts:
        k, arg = o.key, o.arg or ""
        if k in INFO:
            return SinfoOptions(info=INFO[k])
        if k == "a":
            a_set = True
            got = replace(got, partitions=None)
        elif k == "d":
            got = replace(got, dead=True)
        elif k == "h":
            got = replace(got, noheader=True)
        elif k == "i":
            raise SlurmError(f"{PROG}: error: minislurm: --iterate is not supported "
                             "(run sinfo again instead)", 1)
        elif k == "l":
            got = replace(got, long=True)
        elif k == "n":
            got = replace(got, nodes=tuple(hostlist.expand(arg)))
        elif k == "N":
            got = replace(got, node_oriented=True)
        elif k == "o":
            got = replace(got, fmt=arg, Format=None)
        elif k == "O":
            got = replace(got, Format=arg, fmt=None)
        elif k == "p":
            p_set = True
            got = replace(got, partitions=tuple(t for t in arg.split(",") if t))
        elif k == "r":
            got = replace(got, responding=True)
        elif k == "R":
            got = replace(got, reasons=True)
        elif k == "s":
            got = replace(got, summarize=True)
        elif k == "t":
            tests = parse_node_states(arg)
            got = replace(got, states=None if tests is None else tuple(tests), states_given=True)
        elif k == "T":
            raise SlurmError(f"{PROG}: error: minislurm: --reservation is not supported "
                             "(use scontrol show reservation)", 1)
    if a_set and p_set:
        raise SlurmError(f"{PROG}: error: Conflicting options, -a and -p, specified. "
                         "Please choose one or the other.", 1)
    if operands:  # sinfo ignores stray operands silently, as getopt leaves them
        pass
    if got.summarize and got.fmt is None and got.Format is None:
        got = replace(got, fmt=SUMMARIZE_FORMAT)
    elif (got.fmt is None and got.Format is None and not got.node_oriented
          and not got.reasons and env.get("SINFO_FORMAT")):
        got = replace(got, fmt=env["SINFO_FORMAT"])
    return got


def _keep(node: NodeRecord, o: SinfoOptions) -> bool:
    """``_filter_out``: True when the node passes ``-n``, ``-t``, ``-r`` and ``-d``."""
    if o.nodes is not None and node.name not in o.nodes:
        return False
    responding = not node.state.has(NodeFlag.NOT_RESPONDING)
    if o.responding and not responding:
        return False
    if o.dead and responding:
        return False
    return o.states is None or any(test(node.state) for test in o.states)


def select(nodes: Sequence[NodeRecord], parts: Sequence[PartitionRecord],
           o: SinfoOptions) -> tuple[list[NodeRecord], list[PartitionRecord]]:
    """The nodes and partitions sinfo reports on after its filters."""
    shown = [n for n in nodes if _keep(n, o)]
    chosen = [p for p in parts if o.partitions is None or p.name in o.partitions]
    # a partition left without nodes by -n/-t still gets a line with %P/%R ("short up
    # 5:00 0 n/a", measured on 22.05.8): the formatter decides
    return shown, chosen


def run(argv: Sequence[str], ctx: Context) -> int:
    """Run ``sinfo argv`` in ``ctx``; returns the exit code."""
    o = parse_or_exit(ctx, PROG, lambda: parse_sinfo(argv, ctx.env))
    if isinstance(o, int):
        return o
    controller = connect(ctx, unreachable("slurm_load_partitions"))
    if isinstance(controller, int):
        return controller
    for line in invalid_fields(o.fmt, o.Format):
        ctx.err(line)
    nodes, parts = select(controller.nodes(), controller.partitions(), o)
    ctx.stdout.write(format_sinfo(
        nodes, parts, fmt=o.fmt, Format=o.Format, node_oriented=o.node_oriented,
        long=o.long, reasons=o.reasons, noheader=o.noheader, now=int(controller.now),
        reasons_filter=o.reasons and not o.states_given,
    ))
    return 0


def main(argv: Sequence[str]) -> int:
    """``python -m minislurm sinfo ...``."""
    return run_command(PROG, argv)
