"""``sstat``: the usage of a *running* job step (src/sstat/sstat.c, options.c).

``sstat -j JOB[.STEP][,...]`` asks each step's slurmstepd for what jobacct_gather
saw of its tasks. Without a step it shows the job's first running srun step
(``-a/--allsteps``: every running step, the batch step too); ``-o/--format`` picks
columns (``Name[%width]``), ``-n`` drops the header, ``-p``/``-P`` print ``|``-separated
values (with / without a trailing ``|``), ``--noconvert`` prints memory in bytes,
``-i/--pidformat`` is ``-o JobID,Nodelist,Pids``, ``-e/--helpformat`` lists the fields.

Words and exit codes measured on 22.05.8: no ``-j``: ``sstat: error: You didn't give me
any jobs to stat.`` (1); ``-j abc``: ``sstat: fatal: Bad job/step specified: abc`` (1);
a bad field: ``sstat: error: Invalid field requested: "Bogus"`` (1); after the header,
an unknown job ``sstat: error: couldn't get steps for job 999``, a job without running
steps ``sstat: error: No steps running for job 7``, a step that is not running
``sstat: error: StepId=6.7 not found running.`` (all exit 0).

On the wall clock the numbers come from the processes themselves (`minislurm.common.jobacct`,
jobacct_gather/linux on /proc). On the simulated clock no process runs: each step shows
its tasks and nodes with zero usage, what sstat shows of a step before its first poll.
"""

from __future__ import annotations

from collections.abc import Sequence

from minislurm.cli.common import Context, fail, info_table, option_table, parse_permuted
from minislurm.cli.format.sstat import (
    DEFAULT_FIELDS,
    SstatField,
    helpformat,
    parse_fields,
    usage_value,
)
from minislurm.cli.transport import run_command
from minislurm.common.hostlist import expand
from minislurm.common.jobacct import Extremes, StepStat
from minislurm.ctld.runner import GathersUsage
from minislurm.errors import SlurmError
from minislurm.job import JobRecord, StepRecord
from minislurm.options.getopt import GetoptError, HasArg
from minislurm.states import JobState

PROG = "sstat"
PID_FIELDS = "jobid,nodelist,pids"

SHORTS, LONGS = option_table("aehij:no:pPvV", [
    ("allsteps", HasArg.NO, "a"), ("helpformat", HasArg.NO, "e"), ("help", HasArg.NO, "h"),
    ("jobs", HasArg.REQUIRED, "j"), ("noconvert", HasArg.NO, "noconvert"),
    ("noheader", HasArg.NO, "n"), ("fields", HasArg.REQUIRED, "o"),
    ("format", HasArg.REQUIRED, "o"), ("parsable", HasArg.NO, "p"),
    ("parsable2", HasArg.NO, "P"), ("pidformat", HasArg.NO, "i"),
    ("usage", HasArg.NO, "usage"), ("verbose", HasArg.NO, "v"), ("version", HasArg.NO, "V"),
])  # fmt: skip

USAGE = "Usage: sstat [options] -j <job(.stepid)>\n\tUse --help for help\n"

HELP = (  # sstat --help of 22.05.8, byte for byte (tabs and trailing blanks included)
    'sstat [<OPTION>] -j <job(.stepid)>                                          \n'
    '    Valid <OPTION> values are:                                              \n'
    '      -a, --allsteps:                                                       \n'
    '                   Print all steps for the given job(s) when no step is     \n'
    '                   specified.                                               \n'
    '      -e, --helpformat:                                                     \n'
    '\t           Print a list of fields that can be specified with the    \n'
    "\t           '--format' option                                        \n"
    '     -h, --help:   Print this description of use.                           \n'
    '     -i, --pidformat:                                                       \n'
    '                   Predefined format to list the pids running for each      \n'
    '                   job step.  (JobId,Nodes,Pids)                            \n'
    '     -j, --jobs:                                                            \n'
    '\t           Format is <job(.step)>. Stat this job step               \n'
    '                   or comma-separated list of job steps. This option is     \n'
    '                   required.  The step portion will default to the lowest   \n'
    '                   numbered (not batch, extern, etc) step running if not    \n'
    '                   specified, unless the --allsteps flag is set where not   \n'
    '                   specifying a step will result in all running steps       \n'
    "                   to be displayed. A step id of 'batch' will display the   \n"
    "                   information about the batch step. A step id of 'extern'  \n"
    '                   will display the information about the extern step       \n'
    '                   when using PrologFlags=contain.                          \n'
    '     -n, --noheader:                                                        \n'
    '\t           No header will be added to the beginning of output.      \n'
    '                   The default is to print a header.                        \n'
    "     --noconvert:  Don't convert units from their original type             \n"
    "\t\t   (e.g. 2048M won't be converted to 2G).                   \n"
    '     -o, --format:                                                          \n'
    '\t           Comma separated list of fields. (use "--helpformat"    \n'
    '                   for a list of available fields).                         \n'
    "     -p, --parsable: output will be '|' delimited with a '|' at the end     \n"
    "     -P, --parsable2: output will be '|' delimited without a '|' at the end \n"
    '     --usage:      Display brief usage message.                             \n'
    '     -v, --verbose:                                                         \n'
    '\t           Primarily for debugging purposes, report the state of    \n'
    '                   various variables during processing.                     \n'
    '     -V, --version: Print version.                                          \n'
    '\n'
)

#: ``--help``, ``--usage``, ``-V``: the text each prints.
INFO = info_table(HELP, USAGE, help_key="h")


def _selected(text: str) -> list[tuple[int, int | str | None]]:
    """``slurm_addto_step_list``: ``6``, ``6.0``, ``6.batch`` (comma-separated)."""
    out: list[tuple[int, int | str | None]] = []
    for item in (t.strip() for t in text.split(",")):
        if not item:
            continue
        job, dot, step = item.partition(".")
        step = step.partition(".")[0]
        if not job.isdigit() or (dot and not (step.isdigit() or step in ("batch", "extern"))):
            raise SlurmError(f"{PROG}: fatal: Bad job/step specified: {item}", 1)
        out.append((int(job), (int(step) if step.isdigit() else step) if dot else None))
    return out


def _line(values: list[str], cols: list[SstatField], parsable: bool, parsable2: bool) -> str:
    """``print_fields``: a column cut with ``+``, justified, then a blank; ``-p``/``-P``."""
    if parsable2:
        return "|".join(values)
    if parsable:
        return "".join(v + "|" for v in values)
    cells = []
    for value, col in zip(values, cols, strict=True):
        size = abs(col.width)
        text = value or " "
        if len(text) > size:
            text = text[: size - 1] + "+"
        cells.append((text.rjust(size) if col.width > 0 else text.ljust(size)) + " ")
    return "".join(cells)


def _header(cols: list[SstatField], parsable: bool, parsable2: bool) -> list[str]:
    names = [c.name for c in cols]
    if parsable or parsable2:
        return [_line(names, cols, parsable, parsable2)]
    title = "".join((n[: abs(c.width)].rjust(abs(c.width)) if c.width > 0
                     else n[: abs(c.width)].ljust(abs(c.width))) + " "
                    for n, c in zip(names, cols, strict=True))
    return [title, "".join("-" * abs(c.width) + " " for c in cols)]


def no_data(step: StepRecord) -> StepStat:
    """A step nobody polled (the simulated clock): its tasks and nodes, zero usage."""
    first = expand(step.nodelist)[0] if step.nodelist else ""
    zero = Extremes(max_node=first, min_node=first)
    return StepStat(ntasks=step.ntasks, nodelist=step.nodelist, cpu=zero, rss=zero,
                    vsize=zero, pages=zero, read=zero, write=zero)


def _running_steps(job: JobRecord) -> list[StepRecord]:
    """slurm_get_job_steps: the batch step first (a running batch job), then the srun
    steps that run, by id."""
    if job.state is not JobState.RUNNING:
        return []
    steps = sorted((s for s in job.steps if s.state is JobState.RUNNING
                    and isinstance(s.step_id, int)), key=lambda s: int(s.step_id))
    if job.batch_flag and job.allocation is not None:
        first = job.allocation.nodes[0]
        batch = StepRecord(step_id="batch", name="batch", state=JobState.RUNNING,
                           nodelist=first.node, num_nodes=1, ntasks=1, num_cpus=first.cpus,
                           start_time=job.start_time, end_time=None)
        steps.insert(0, batch)
    return steps


def run(argv: Sequence[str], ctx: Context) -> int:
    """``sstat argv`` against the live controller."""
    try:
        opts, operands = parse_permuted(argv, SHORTS, LONGS, PROG)
    except GetoptError as exc:
        ctx.err(exc.message)  # getopt's line only (22.05.8: no "Try" line), exit 1
        return 1
    fields, selected = DEFAULT_FIELDS, []
    all_steps = noheader = parsable = parsable2 = noconvert = False
    try:
        for opt in opts:
            key, value = opt.key, opt.arg or ""
            if key in INFO:
                ctx.stdout.write(INFO[key])
                return 0
            if key == "e":
                ctx.stdout.write(helpformat())
                return 0
            if key == "a":
                all_steps = True
            elif key == "j":
                selected.extend(_selected(value))
            elif key == "o":
                fields = value
            elif key == "i":
                fields = PID_FIELDS
            elif key == "n":
                noheader = True
            elif key == "p":
                parsable = True
            elif key == "P":
                parsable2 = True
            elif key == "noconvert":
                noconvert = True
        for operand in operands:  # sstat takes the job list as operands too
            selected.extend(_selected(operand))
        cols = parse_fields(fields, PROG)
    except SlurmError as exc:
        return fail(ctx, exc)
    if not selected:
        ctx.err(f"{PROG}: error: You didn't give me any jobs to stat.")
        return 1
    try:
        ctl = ctx.controller()
    except SlurmError as exc:
        return fail(ctx, exc)
    if not noheader:
        for line in _header(cols, parsable, parsable2):
            ctx.out(line)
    gather = ctl.runner.jobacct if isinstance(ctl.runner, GathersUsage) else None
    for job_id, step_id in selected:
        try:
            job = ctl.job(job_id)
        except (KeyError, SlurmError):
            ctx.err(f"{PROG}: error: couldn't get steps for job {job_id}")
            continue
        running = _running_steps(job)
        if step_id is not None:
            running = [s for s in running if s.step_id == step_id]
        elif not all_steps:
            running = [s for s in running if isinstance(s.step_id, int)][:1]
        if not running:
            ctx.err(f"{PROG}: error: No steps running for job {job_id}" if step_id is None
                    else f"{PROG}: error: StepId={job_id}.{step_id} not found running.")
            continue
        for step in running:
            stat = gather.poll(job_id, step.step_id) if gather is not None else no_data(step)
            if stat.ntasks == 0:
                stat = no_data(step)
            values = [f"{job_id}.{step.step_id}" if c.name == "JobID" else
                      usage_value(stat, c.name, step.step_id, noconvert=noconvert)
                      for c in cols]
            ctx.out(_line(values, cols, parsable, parsable2))
    return 0


def main(argv: Sequence[str]) -> int:
    """``python -m minislurm sstat ...``."""
    return run_command(PROG, argv)
