"""``sacct``: accounting data of jobs and steps (src/sacct/options.c, sacct.c).

Options -> a job condition (``slurmdb_job_cond_t``: users, job ids, names,
partitions, accounts, states, a time window) -> the records of
``Controller.accounting()`` that satisfy it -> `minislurm.cli.format.format_sacct`.

Defaults as in 22.05's ``parse_command_line``: without ``-S`` and ``-j`` the
window starts at midnight of the current day (``now`` when ``-s`` is given),
``-E`` defaults to now; root sees every user's jobs, anyone else only their
own unless ``-a``, ``-u``, ``-j`` or ``-N`` widen it.  getopt's errors are
glibc's line only (``getopt() has explained it``), exit 1.
"""

from __future__ import annotations

import calendar
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from minislurm.cli.common import Context, fail, info_table, option_table, parse_permuted
from minislurm.cli.format.sacct import LONG_FIELDS, format_sacct, parse_fields
from minislurm.cli.squeue import job_state_num
from minislurm.cli.transport import run_command
from minislurm.common import hostlist
from minislurm.common.rpc import CONNECT_HINT
from minislurm.common.timespec import parse_begin
from minislurm.errors import ControllerUnavailable, SlurmError
from minislurm.job import JobRecord
from minislurm.options.getopt import GetoptError, HasArg
from minislurm.states import JobState

PROG = "sacct"
BRIEF_FIELDS = "jobid,state,exitcode"

SHORTS, LONGS = option_table("aA:bcC:DeE:f:F:g:hi:I:j:k:K:lLM:nN:o:pPq:r:s:S:Ttu:UvVW:x:X", [
    ("allusers", HasArg.NO, "a"), ("accounts", HasArg.REQUIRED, "A"),
    ("allocations", HasArg.NO, "X"), ("brief", HasArg.NO, "b"),
    ("completion", HasArg.NO, "c"), ("constraints", HasArg.REQUIRED, "C"),
    ("delimiter", HasArg.REQUIRED, "delimiter"), ("duplicates", HasArg.NO, "D"),
    ("federation", HasArg.NO, "federation"), ("helpformat", HasArg.NO, "e"),
    ("help-fields", HasArg.NO, "e"), ("endtime", HasArg.REQUIRED, "E"),
    ("file", HasArg.REQUIRED, "f"), ("flags", HasArg.REQUIRED, "F"),
    ("gid", HasArg.REQUIRED, "g"), ("group", HasArg.REQUIRED, "g"),
    ("help", HasArg.NO, "h"), ("local", HasArg.NO, "local"),
    ("name", HasArg.REQUIRED, "name"), ("nnodes", HasArg.REQUIRED, "i"),
    ("ncpus", HasArg.REQUIRED, "I"), ("jobs", HasArg.REQUIRED, "j"),
    ("timelimit-min", HasArg.REQUIRED, "k"), ("timelimit-max", HasArg.REQUIRED, "K"),
    ("long", HasArg.NO, "l"), ("allclusters", HasArg.NO, "L"),
    ("cluster", HasArg.REQUIRED, "M"), ("clusters", HasArg.REQUIRED, "M"),
    ("nodelist", HasArg.REQUIRED, "N"), ("noconvert", HasArg.NO, "noconvert"),
    ("units", HasArg.REQUIRED, "units"), ("noheader", HasArg.NO, "n"),
    ("fields", HasArg.REQUIRED, "o"), ("format", HasArg.REQUIRED, "o"),
    ("parsable", HasArg.NO, "p"), ("parsable2", HasArg.NO, "P"),
    ("qos", HasArg.REQUIRED, "q"), ("partition", HasArg.REQUIRED, "r"),
    ("reason", HasArg.REQUIRED, "R"), ("state", HasArg.REQUIRED, "s"),
    ("starttime", HasArg.REQUIRED, "S"), ("truncate", HasArg.NO, "T"),
    ("uid", HasArg.REQUIRED, "u"), ("usage", HasArg.NO, "U"),
    ("user", HasArg.REQUIRED, "u"), ("verbose", HasArg.NO, "v"),
    ("version", HasArg.NO, "V"), ("wckeys", HasArg.REQUIRED, "W"),
    ("whole-hetjob", HasArg.OPTIONAL, "whole-hetjob"), ("associations", HasArg.REQUIRED, "x"),
])

USAGE = "Usage: sacct [options]\n\tUse --help for help\n"

HELP = """\
sacct [<OPTION>]
    Valid <OPTION> values are:
     -a, --allusers:    Display jobs for all users.
     -A, --accounts:    Use this comma separated list of accounts to select jobs.
     -b, --brief:       Equivalent to '--format=jobstep,state,error'.
     -e, --helpformat:  Print a list of fields that can be specified with the
                        '--format' option
     -E, --endtime:     Select jobs eligible before this time.  Default is now.
     -h, --help:        Print this description of use.
     -j, --jobs:        Format is <job(.step)>. Display information about this
                        job or comma-separated list of jobs.
     -l, --long:        Equivalent to specifying '--format=' the long field list.
     -n, --noheader:    No header will be added to the beginning of output.
     -N, --nodelist:    Display jobs that ran on any of these nodes.
     --name:            Display jobs that have any of these name(s).
     -o, --format:      Comma separated list of fields. (use "--helpformat"
                        for a list of available fields).
     -p, --parsable:    output will be '|' delimited with a '|' at the end
     -P, --parsable2:   output will be '|' delimited without a '|' at the end
     -q, --qos:         Only send data about jobs using these qos.
     -r, --partition:   Comma separated list of partitions to select jobs and
                        job steps from. The default is all partitions.
     -s, --state:       Select jobs based on their current state or the state
                        they were in during the time period given.
     -S, --starttime:   Select jobs eligible after this time.  Default is
                        00:00:00 of the current day, unless '-s' is set then
                        the default is 'now'.
     -u, --uid, --user: Use this comma separated list of uids or user names
                        to select jobs to display.
     --usage:           Display brief usage message.
     -V, --version:     Print version.
     -X, --allocations: Only show statistics relevant to the job allocation
                        itself, not taking steps into consideration.
"""

#: ``-h``/``--help``, ``-U``/``--usage``, ``-V``: the text each prints.
INFO = info_table(HELP, USAGE, help_key="h", usage_key="U")


@dataclass(frozen=True, slots=True)
class SacctOptions:
    """``params`` and its ``job_cond`` after ``parse_command_line``."""

    fields: str = ""
    parsable: bool = False
    parsable2: bool = False
    noheader: bool = False
    allocations: bool = False
    all_users: bool = False
    users: tuple[str, ...] | None = None
    jobs: tuple[tuple[int, int | None], ...] | None = None
    job_steps: tuple[tuple[int, int | None, str | None], ...] = ()  # -j with any .step
    names: tuple[str, ...] | None = None
    partitions: tuple[str, ...] | None = None
    accounts: tuple[str, ...] | None = None
    qos: tuple[str, ...] | None = None
    nodes: tuple[str, ...] | None = None
    states: frozenset[JobState] | None = None
    start: int | None = None
    end: int | None = None
    duplicates: bool = False
    info: str | None = None


def _strs(text: str) -> tuple[str, ...]:
    return tuple(t.strip() for t in text.split(",") if t.strip())


def _jobs(text: str) -> list[tuple[int, int | None, str | None]]:
    """``slurm_addto_step_list``: ``5``, ``108_3``, ``5.0``, ``5.batch`` (a step: only
    its line is printed; measured on 22.05.8, ``5.0.1`` is ``5.0`` and ``5.x`` is
    ``sacct: fatal: Bad step specified: 5``)."""
    out: list[tuple[int, int | None, str | None]] = []
    for item in _strs(text):
        item, dot, rest = item.partition(".")
        head, _, task = item.partition("_")
        step = rest.split(".")[0] if dot else None
        if step is not None and not (step.isdigit() or step in ("batch", "extern")):
            raise SlurmError(f"{PROG}: fatal: Bad step specified: {item}", 1)
        if not head.isdigit() or (task and not task.isdigit()):
            raise SlurmError(f"{PROG}: fatal: Bad job/step specified: {item}", 1)
        out.append((int(head), int(task) if task else None,
                    str(int(step)) if step is not None and step.isdigit() else step))
    return out


def _states(text: str) -> frozenset[JobState]:
    """``_addto_state_char_list``: names or codes; anything else is fatal."""
    states = set()
    for item in _strs(text):
        state = job_state_num(item)
        if state is None:
            raise SlurmError(f"{PROG}: fatal: unrecognized job state value '{item}'", 1)
        states.add(state)
    return frozenset(states)


def _time(text: str, now: int) -> int:
    """``parse_time(optarg, 1)``; a bad time exits 1 after parse_time's message."""
    try:
        return parse_begin(text, now)
    except SlurmError as exc:
        raise SlurmError(f"{PROG}: error: {exc.message}", 1) from None


def midnight(now: int) -> int:
    """00:00:00 of the day of ``now`` (minislurm keeps its clocks in UTC)."""
    tm = time.gmtime(now)
    return calendar.timegm((tm.tm_year, tm.tm_mon, tm.tm_mday, 0, 0, 0))


def parse_sacct(argv: Sequence[str], env: Mapping[str, str], *, uid: int,
                now: int) -> SacctOptions:
    """Parse ``argv`` like sacct's ``parse_command_line`` (times relative to ``now``)."""
    opts, operands = parse_permuted(argv, SHORTS, LONGS, PROG)
    got = SacctOptions()
    fields: list[str] = []
    brief = long = False
    start_text = end_text = None
    for o in opts:
        k, arg = o.key, o.arg or ""
        if k in INFO:
            return SacctOptions(info=INFO[k])
        if k == "e":
            return SacctOptions(info=help_fields())
        if k == "a":
            got = replace(got, all_users=True)
        elif k == "A":
            got = replace(got, accounts=_strs(arg))
        elif k == "b":
            brief = True
        elif k == "D":
            got = replace(got, duplicates=True)
        elif k == "E":
            end_text = arg
        elif k == "j":
            picked = _jobs(arg)
            got = replace(got, jobs=(got.jobs or ()) + tuple((j, t) for j, t, _s in picked),
                          job_steps=got.job_steps + tuple(picked))
        elif k == "l":
            long = True
        elif k == "n":
            got = replace(got, noheader=True)
        elif k == "N":
            got = replace(got, nodes=tuple(hostlist.expand(arg)))
        elif k == "name":
            got = replace(got, names=_strs(arg))
        elif k == "o":
            fields.append(arg)
        elif k == "p":
            got = replace(got, parsable=True, parsable2=False)
        elif k == "P":
            got = replace(got, parsable2=True, parsable=False)
        elif k == "q":
            got = replace(got, qos=_strs(arg))
        elif k == "r":
            got = replace(got, partitions=_strs(arg))
        elif k == "s":
            got = replace(got, states=_states(arg))
        elif k == "S":
            start_text = arg
        elif k == "u":
            if arg == "-1":
                got = replace(got, all_users=True)
            else:
                got = replace(got, all_users=False)
                got = replace(got, users=_strs(arg))
        elif k in ("t", "X"):
            got = replace(got, allocations=True)
    start = _time(start_text, now) if start_text is not None else None
    end = _time(end_text, now) if end_text is not None else None
    if start is None and got.jobs is None:
        start = now if got.states else midnight(now)
    got = replace(got, start=start, end=end)
    if got.users is None and (got.jobs is not None or got.nodes is not None):
        got = replace(got, all_users=True)
    if got.users is None and uid == 0:
        got = replace(got, all_users=True)
    if brief:
        fields.append(BRIEF_FIELDS)
    if long:
        fields.append(LONG_FIELDS)
    if not fields:
        fields.append(env.get("SACCT_FORMAT") or "")
    got = replace(got, fields=",".join(f for f in fields if f))
    if operands:
        lines = [f"{PROG}: error: Unknown arguments:"] + [f"{PROG}: error:  {a}" for a in operands]
        raise SlurmError("\n".join(lines), 1)
    return got


def help_fields() -> str:
    """``_help_fields_msg``: the field names, four per line, 20 columns each."""
    from minislurm.cli.format.sacct import _WIDTHS

    names = list(_WIDTHS)
    lines = ["".join(f"{n:<20}" for n in names[i:i + 4]).rstrip() for i in range(0, len(names), 4)]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- selection
def _in_window(job: JobRecord, o: SacctOptions, now: int) -> bool:
    """The job condition's time window; with ``-s`` a job must have been in one of
    the states during the window."""
    lo = o.start if o.start is not None else 0
    hi = o.end if o.end is not None else now
    eligible = job.eligible_time or job.submit_time
    if o.states is None:
        return eligible <= hi and (job.end_time is None or job.end_time >= lo)
    if job.state not in o.states:
        return False
    if job.state is JobState.PENDING:
        return job.submit_time <= hi
    if job.state is JobState.RUNNING:
        return (job.start_time or 0) <= hi
    return job.end_time is not None and lo <= job.end_time <= hi


def select_jobs(records: Iterable[JobRecord], o: SacctOptions, *, user: str, uid: int,
                now: int) -> list[JobRecord]:
    """The accounting records sacct prints, in job id (then array task) order."""
    out = []
    for job in records:
        if o.jobs is not None and not any(
                j in (job.job_id, job.array_job_id) if t is None
                else (job.array_job_id == j and job.array_task_id == t)
                for j, t in o.jobs):
            continue
        if not o.all_users:
            wanted = o.users if o.users is not None else (str(uid),)
            if job.user not in wanted and str(job.uid) not in wanted:
                continue
        if o.names is not None and job.name not in o.names:
            continue
        if o.partitions is not None and job.partition not in o.partitions:
            continue
        if o.accounts is not None and job.account not in o.accounts:
            continue
        if o.qos is not None and job.qos not in o.qos:
            continue
        if o.nodes is not None and not (job.nodelist and set(hostlist.expand(job.nodelist))
                                        & set(o.nodes)):
            continue
        if not _in_window(job, o, now):
            continue
        out.append(job)
    out.sort(key=lambda j: (j.array_job_id or j.job_id,
                            -1 if j.array_task_id is None else j.array_task_id,
                            j.restart_count))
    if not o.duplicates:  # only the latest attempt of a requeued job (-D: every one)
        latest = {j.job_id: j.restart_count for j in out}
        out = [j for j in out if j.restart_count == latest[j.job_id]]
    return out


def _steps_of(jobs: Iterable[JobRecord], picked: Iterable[tuple[int, int | None, str | None]]
              ) -> dict[tuple[int, int | None], frozenset[str]]:
    """Records named only with steps (``-j 5.0``): which step lines they print."""
    whole = {(j, t) for j, t, s in picked if s is None}
    out: dict[tuple[int, int | None], set[str]] = {}
    for j, t, s in picked:
        if s is not None and (j, t) not in whole:
            out.setdefault((j, t), set()).add(s)
    shown: dict[tuple[int, int | None], frozenset[str]] = {}
    for job in jobs:
        for key in ((job.job_id, None), (job.array_job_id or job.job_id, job.array_task_id)):
            if key in out:
                shown[(job.job_id, job.array_task_id)] = frozenset(out[key])
    return shown


def run(argv: Sequence[str], ctx: Context) -> int:
    """Run ``sacct argv`` in ``ctx``; returns the exit code."""
    try:
        controller = ctx.controller()
    except ControllerUnavailable:
        controller = None
    now = ctx.now()
    try:
        o = parse_sacct(argv, ctx.env, uid=ctx.uid, now=now)
        if o.info is None:
            parse_fields(o.fields or "JobID")
    except GetoptError as exc:
        ctx.err(exc.message)  # "getopt() has explained it": no Try line
        return 1
    except SlurmError as exc:
        return fail(ctx, exc)
    if o.info is not None:
        ctx.stdout.write(o.info)
        return 0
    if controller is None:
        return fail(ctx, ControllerUnavailable(
            f"{PROG}: error: Problem talking to the database: Connection refused\n"
            + CONNECT_HINT, 1))
    jobs = select_jobs(controller.accounting(), o, user=ctx.user, uid=ctx.uid, now=now)
    try:
        text = format_sacct(jobs, fields=o.fields or None, parsable=o.parsable,
                            parsable2=o.parsable2, noheader=o.noheader,
                            allocations_only=o.allocations, now=now,
                            steps_of=_steps_of(jobs, o.job_steps))
    except SlurmError as exc:
        return fail(ctx, exc)
    ctx.stdout.write(text)
    return 0


def main(argv: Sequence[str]) -> int:
    """``python -m minislurm sacct ...``."""
    return run_command(PROG, argv)
