"""``scontrol``'s options and command dispatch (src/scontrol/scontrol.c).

Options (``-a -d -h -M -F -o -Q -u -v -V``) -> one command, or, without a
command, one command per line of standard input (interactive mode) ->
``_process_command``: ``show``, ``update``, ``hold``/``uhold``/``release``,
``requeue``/``requeuehold``, ``create``/``delete reservation``, ``version``,
``help``, ``oneliner``, ``details``, ``quit``.  Commands and entities may be
abbreviated as Slurm allows (``xstrncasecmp(tag, name, MAX(len, n))``).

``show hostnames``/``hostlist``/``hostlistsorted`` need no controller (as in
Slurm); ``show hostnames`` without a list reads ``SLURM_NODELIST`` (not
``SLURM_JOB_NODELIST``: capture c1_hostlist/09 prints
``scontrol: error: host list is empty`` and exits 0).  The exit code is 1
when any command failed (scontrol's global ``exit_code``).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence

from minislurm.cli.common import VERSION, Context, option_table, parse_permuted, usage_error
from minislurm.cli.scontrol.create_res import create_reservation, update_reservation
from minislurm.cli.scontrol.info_job import encode_hostlist, print_hosts, show_job
from minislurm.cli.scontrol.info_node import show_nodes
from minislurm.cli.scontrol.info_part import show_partitions
from minislurm.cli.scontrol.info_res import show_reservations
from minislurm.cli.scontrol.session import (
    PROG,
    Session,
    pairs_of,
    require_operator,
    tag_is,
)
from minislurm.cli.scontrol.update_job import hold, requeue, update_job
from minislurm.cli.scontrol.update_node import update_node
from minislurm.cli.scontrol.update_part import update_partition
from minislurm.cli.transport import run_command
from minislurm.errors import ControllerUnavailable, SlurmError
from minislurm.options.getopt import GetoptError, HasArg

SHORTS, LONGS = option_table("adhM:FoQu:vV", [
    ("all", HasArg.NO, "a"), ("cluster", HasArg.REQUIRED, "M"),
    ("clusters", HasArg.REQUIRED, "M"), ("details", HasArg.NO, "d"),
    ("federation", HasArg.NO, "federation"), ("future", HasArg.NO, "F"),
    ("help", HasArg.NO, "h"), ("hide", HasArg.NO, "hide"), ("local", HasArg.NO, "local"),
    ("oneliner", HasArg.NO, "o"), ("quiet", HasArg.NO, "Q"),
    ("sibling", HasArg.NO, "sibling"), ("uid", HasArg.REQUIRED, "u"),
    ("usage", HasArg.NO, "h"), ("verbose", HasArg.NO, "v"), ("version", HasArg.NO, "V"),
])
USAGE = """\
scontrol [<OPTION>] [<COMMAND>]
    Valid <OPTION> values are:
     -a, --all      Equivalent to "all" command
     -d, --details  Equivalent to "details" command
     -h, --help     Equivalent to "help" command
     -o, --oneliner Equivalent to "oneliner" command
     -Q, --quiet    Equivalent to "quiet" command
     -v, --verbose  Equivalent to "verbose" command
     -V, --version  Equivalent to "version" command

    Valid <COMMAND> values are (those minislurm implements):
     create <SPECIFICATIONS>  create a new reservation
     delete <SPECIFICATIONS>  delete the specified reservation
     details                  evokes additional details from the "show" command
     exit                     terminate scontrol
     help                     print this description of use.
     hold <job_list>          prevent specified job from starting.
     oneliner                 report output one record per line.
     quit                     terminate this command.
     release <job_list>       permit specified job to start (see hold)
     requeue <job_id>         re-queue a batch job
     requeuehold <job_id>     re-queue and hold a batch
     show <ENTITY> [<ID>]     display state of identified entity, default
                              is all records.
     uhold <jobid_list>       place user hold on specified job (see hold)
     update <SPECIFICATIONS>  update job, node or partition
     version                  display tool version number.

  <ENTITY> may be "hostnames", "hostlist", "hostlistsorted", "job", "node",
  "partition" or "reservation".
"""


class Stop(Exception):
    """``exit``/``quit``: leave interactive mode."""


def show(s: Session, args: Sequence[str]) -> None:
    """``_show_it``: ``show ENTITY [ID]`` or ``show ENTITY=ID``."""
    if len(args) < 2:
        s.error(f"too few arguments for keyword:{args[0]}")
        return
    if len(args) > 3:
        s.error(f"too many arguments for keyword:{args[0]}")
        return
    tag, eq, val = args[1].partition("=")
    value: str | None = val if eq else (args[2] if len(args) == 3 else None)
    if tag_is(tag, "hostnames", 5):
        print_hosts(s, value if value is not None else s.ctx.env.get("SLURM_NODELIST"))
    elif tag_is(tag, "hostlist", 5) or tag_is(tag, "hostlistsorted", 9):
        if value is None:
            s.error("invalid encode argument")
            s.ctx.stdout.write(USAGE)
        else:
            encode_hostlist(s, value, sorted_=len(tag) > len("hostlist"))
    elif tag_is(tag, "jobs", 1) or tag_is(tag, "jobid", 1):
        show_job(s, value)
    elif tag_is(tag, "nodes", 1):
        show_nodes(s, value)
    elif tag_is(tag, "partitions", 2) or tag_is(tag, "partitionname", 2):
        show_partitions(s, value)
    elif tag_is(tag, "reservations", 1) or tag_is(tag, "reservationname", 1):
        show_reservations(s, value)
    else:
        s.error(f"invalid entity:{tag} for keyword:{args[0]} ")


def update(s: Session, args: Sequence[str]) -> None:
    """``_update_it``: the entity is whichever of JobId/NodeName/PartitionName appears."""
    pairs = pairs_of(s, args[1:])
    if pairs is None:
        return
    tags = [t for t, _ in pairs]
    if any(tag_is(t, "JobId", 3) or tag_is(t, "JobName", 3) for t in tags):
        update_job(s, pairs)
    elif any(tag_is(t, "ReservationName", 3) for t in tags):
        update_reservation(s, pairs)
    elif any(tag_is(t, "NodeName", 3) for t in tags):
        update_node(s, pairs)
    elif any(tag_is(t, "PartitionName", 3) for t in tags):
        update_partition(s, pairs)
    else:
        s.error('No valid entity in update command\nInput line must include "NodeName", '
                '"PartitionName", "Reservation", "JobId", or "SlurmctldDebug"')


def delete(s: Session, args: Sequence[str]) -> None:
    """``_delete_it``: ``delete ReservationName=X`` or ``delete reservation X``."""
    if len(args) == 2 and "=" in args[1]:
        tag, _, val = args[1].partition("=")
    elif len(args) == 3:
        tag, val = args[1], args[2]
    else:
        s.error(f"{PROG}: error: Proper format is 'delete <ENTITY>=<ID>' or "
                "'delete <ENTITY> <ID>'")
        return
    if not tag_is(tag, "ReservationName", 3):
        s.error(f"Invalid deletion entity: {args[1]}")
        return
    ctl = s.controller(f"delete_reservation {args[1]}")
    if not require_operator(s, ctl, f"delete_reservation {args[1]}: "):
        return
    try:
        ctl.delete_reservation(val)
    except SlurmError as exc:
        s.error(f"delete_reservation {args[1]}: {exc.message}")


def process(s: Session, args: Sequence[str]) -> None:
    """``_process_command`` for one command line."""
    if not args:
        return
    tag = args[0]
    commands: list[tuple[str, int, Callable[[], None]]] = [
        ("show", 3, lambda: show(s, args)),
        ("update", 1, lambda: update(s, args)),
        ("create", 2, lambda: _create(s, args)),
        ("delete", 3, lambda: delete(s, args)),
        ("requeue", 3, lambda: requeue(s, args, then_hold=False)),
        ("release", 3, lambda: hold(s, args)),
        ("version", 4, lambda: _print(s, VERSION + "\n")),
        ("help", 2, lambda: _print(s, USAGE)),
        ("oneliner", 1, lambda: setattr(s, "oneliner", True)),
        ("details", 1, lambda: setattr(s, "details", True)),
        ("quiet", 4, lambda: setattr(s, "quiet", True)),
    ]
    low = tag.lower()
    if low == "requeuehold":
        requeue(s, args, then_hold=True)
        return
    if low in ("hold", "holdu", "uhold"):
        hold(s, args)
        return
    if tag_is(tag, "exit", 2) or tag_is(tag, "quit", 4):
        raise Stop
    for name, minimum, action in commands:
        if tag_is(tag, name, minimum):
            action()
            return
    s.error(f"invalid keyword: {tag}")


def _print(s: Session, text: str) -> None:
    s.ctx.stdout.write(text)


def _create(s: Session, args: Sequence[str]) -> None:
    if len(args) < 2:
        s.error(f"too few arguments for {args[0]} keyword")
        return
    entity = args[1].partition("=")[0]
    if tag_is(entity, "ReservationName", 3):
        create_reservation(s, args[1:])
    elif tag_is(entity, "PartitionName", 3) or tag_is(entity, "NodeName", 3):
        s.error(f"{PROG}: error: minislurm: creating {entity} is not supported")
    else:
        s.error(f"{PROG}: error: Invalid creation entity: {args[1]}")


def run(argv: Sequence[str], ctx: Context) -> int:
    """Run ``scontrol argv`` in ``ctx``; returns the exit code."""
    try:
        opts, operands = parse_permuted(argv, SHORTS, LONGS, PROG)
    except GetoptError as exc:
        return usage_error(ctx, PROG, exc)
    s = Session(ctx)
    for o in opts:
        if o.key == "h":
            ctx.stdout.write(USAGE)
            return 0
        if o.key == "V":
            ctx.out(VERSION)
            return 0
        if o.key == "o":
            s.oneliner = True
        elif o.key == "d":
            s.details = True
        elif o.key == "Q":
            s.quiet = True
    lines = [operands] if operands else [_words(ln) for ln in (ctx.stdin or "").splitlines()]
    try:
        for words in lines:
            if not operands:
                ctx.stdout.write(f"{PROG}: ")
            try:
                process(s, words)
            except ControllerUnavailable as exc:
                s.error(exc.message)
        if not operands:  # the prompt before end of input, then putchar('\n')
            ctx.stdout.write(f"{PROG}: \n")
    except Stop:
        pass
    return s.exit_code


def _words(line: str) -> list[str]:
    """``_get_command``: blank-separated words, quotes keep blanks."""
    try:
        return shlex.split(line)
    except ValueError:
        return line.split()


def main(argv: Sequence[str]) -> int:
    """``python -m minislurm scontrol ...``."""
    return run_command(PROG, argv)
