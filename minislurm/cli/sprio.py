"""``sprio``: the priority factors of pending jobs (src/sprio/opts.c, sprio.c).

Options (``-h -j -l -n -o -p -u -w -S -v -V``) -> the priority plugin's
factors for every pending job (``slurm_load_job_prio``) -> filters by job,
partition and user -> `minislurm.priority.report.format_sprio`.  Under
``priority/basic`` sprio refuses, as in Slurm: ``You are not running a
supported priority plugin (priority/basic). Only 'priority/multifactor' is
supported.`` (exit 1).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from minislurm.cli.common import (
    Context,
    connect,
    fail,
    info_table,
    option_table,
    parse_or_exit,
    parse_permuted,
    unreachable,
)
from minislurm.cli.squeue import known_jobs
from minislurm.cli.transport import run_command
from minislurm.errors import SlurmError
from minislurm.options.getopt import HasArg
from minislurm.priority.factors import PriorityFactors
from minislurm.priority.multifactor import MultifactorPriority
from minislurm.priority.report import format_sprio, sort_sprio_rows
from minislurm.states import JobState

if TYPE_CHECKING:
    from minislurm.ctld.controller import Controller

PROG = "sprio"

SHORTS, LONGS = option_table("hj::lM:no:S:p:u:vVw", [
    ("noheader", HasArg.NO, "h"), ("jobs", HasArg.OPTIONAL, "j"), ("long", HasArg.NO, "l"),
    ("cluster", HasArg.REQUIRED, "M"), ("clusters", HasArg.REQUIRED, "M"),
    ("norm", HasArg.NO, "n"), ("format", HasArg.REQUIRED, "o"), ("sort", HasArg.REQUIRED, "S"),
    ("partition", HasArg.REQUIRED, "p"), ("user", HasArg.REQUIRED, "u"),
    ("users", HasArg.REQUIRED, "u"), ("verbose", HasArg.NO, "v"), ("version", HasArg.NO, "V"),
    ("weights", HasArg.NO, "w"), ("federation", HasArg.NO, "federation"),
    ("help", HasArg.NO, "help"), ("local", HasArg.NO, "local"), ("sib", HasArg.NO, "sibling"),
    ("sibling", HasArg.NO, "sibling"), ("usage", HasArg.NO, "usage"),
])

USAGE = """\
Usage: sprio [-j jid[s]] [-u user_name[s]] [-o format] [-p partitions]
        [--federation] [--local] [--sibling] [--usage] [-hlnvVw]
"""

HELP = """\
Usage: sprio [OPTIONS]
  -h, --noheader                  no headers on output
  -j, --jobs                      comma separated list of jobs
                                  to view, default is all
      --local                     display jobs on local cluster only
  -l, --long                      long report
  -M, --cluster=cluster_name      cluster to issue commands to.  Default is
                                  current cluster.  cluster with no name will
                                  reset to default.
  -n, --norm                      display normalized values
  -o, --format=format             format specification
  -p, --partition=partition_name  comma separated list of partitions
  -S, --sort=sort_list            comma separated list of fields to sort on
  -u, --user=user_name            comma separated list of users to view
  -v, --verbose                   verbosity level
  -V, --version                   output version information and exit
  -w, --weights                   show the weights for each priority factor

Help options:
  --help                          show this help message
  --usage                         display a brief summary of sprio options
"""

#: ``--help``, ``--usage``, ``-V``: the text each prints.
INFO = info_table(HELP, USAGE)


@dataclass(frozen=True, slots=True)
class SprioOptions:
    """sprio's ``params``."""

    fmt: str | None = None
    long: bool = False
    norm: bool = False
    noheader: bool = False
    weights: bool = False
    jobs: tuple[int, ...] | None = None
    partitions: tuple[str, ...] | None = None
    users: tuple[str, ...] | None = None
    info: str | None = None


def _ids(text: str) -> tuple[int, ...]:
    out = []
    for item in (t for t in text.split(",") if t):
        head = item.partition("_")[0].partition("+")[0]
        if not head.isdigit() or int(head) <= 0:
            raise SlurmError(f"{PROG}: error: Invalid job id: {item}", 1)
        out.append(int(head))
    return tuple(out)


def parse_sprio(argv: Sequence[str], env: Mapping[str, str]) -> SprioOptions:
    """Parse like sprio's ``parse_command_line`` (``SPRIO_FORMAT`` included)."""
    opts, operands = parse_permuted(argv, SHORTS, LONGS, PROG)
    got = SprioOptions()
    job_flag = override = False
    for o in opts:
        k, arg = o.key, o.arg or ""
        if k in INFO:
            return SprioOptions(info=INFO[k])
        if k == "h":
            got = replace(got, noheader=True)
        elif k == "j":
            job_flag = True
            if o.arg is not None:
                got = replace(got, jobs=_ids(arg))
        elif k == "l":
            got = replace(got, long=True)
            override = True
        elif k == "n":
            got = replace(got, norm=True)
        elif k == "o":
            got = replace(got, fmt=arg)
            override = True
        elif k == "p":
            got = replace(got, partitions=tuple(t for t in arg.split(",") if t))
        elif k == "u":
            got = replace(got, users=tuple(t for t in arg.split(",") if t))
        elif k == "w":
            got = replace(got, weights=True)
    if got.long and got.fmt is not None:
        raise SlurmError(f"{PROG}: fatal: Options -o(--format) and -l(--long) are mutually "
                         "exclusive. Please remove one and retry.", 1)
    if not override and env.get("SPRIO_FORMAT"):
        got = replace(got, fmt=env["SPRIO_FORMAT"])
    if operands and job_flag:
        got = replace(got, jobs=_ids(operands.pop(0)))
    if operands:
        raise SlurmError(f"{PROG}: error: Unrecognized option: {operands[0]}\n{USAGE}", 1)
    return got


def factor_rows(controller: Controller, plugin: MultifactorPriority,
                o: SprioOptions) -> list[PriorityFactors]:
    """The factors of the pending jobs that pass ``-j``, ``-p`` and ``-u``."""
    now = controller.now
    rows = []
    for job in known_jobs(controller):
        if job.state is not JobState.PENDING or job.hold:
            continue
        if o.jobs is not None and job.job_id not in o.jobs and job.array_job_id not in o.jobs:
            continue
        if o.partitions is not None and job.partition not in o.partitions:
            continue
        if o.users is not None and job.user not in o.users and str(job.uid) not in o.users:
            continue
        rows.append(plugin.factors(job, now))
    return sort_sprio_rows(rows)


def _tres_spec(controller: Controller) -> str:
    weights = controller.config.priority.weight_tres
    return ",".join(f"{k}={v:g}" for k, v in weights.items())


def run(argv: Sequence[str], ctx: Context) -> int:
    """Run ``sprio argv`` in ``ctx``; returns the exit code."""
    o = parse_or_exit(ctx, PROG, lambda: parse_sprio(argv, ctx.env))
    if isinstance(o, int):
        return o
    controller = connect(ctx, unreachable("Couldn't get priority factors from controller"))
    if isinstance(controller, int):
        return controller
    plugin = controller.priority_plugin
    if not isinstance(plugin, MultifactorPriority):  # sprio.c checks PriorityType first
        return fail(ctx, SlurmError(
            "You are not running a supported priority plugin\n"
            f"({plugin.name}).\n"
            "Only 'priority/multifactor' is supported.", 1))
    try:
        rows = factor_rows(controller, plugin, o)
        text = format_sprio(rows, weights=plugin.params.weights, fmt=o.fmt, long=o.long,
                            norm=o.norm, users=o.users is not None, noheader=o.noheader,
                            show_weights=o.weights, tres_weights_spec=_tres_spec(controller))
    except SlurmError as exc:
        return fail(ctx, exc)
    except ValueError as exc:  # an unknown %-letter
        return fail(ctx, SlurmError(f"{PROG}: error: {exc}", 1))
    ctx.stdout.write(text)
    return 0


def main(argv: Sequence[str]) -> int:
    """``python -m minislurm sprio ...``."""
    return run_command(PROG, argv)
