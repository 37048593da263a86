"""``squeue``: view the jobs in the queue (src/squeue/opts.c, squeue.c, print.c).

Options -> one ``slurm_load_job``/``slurm_load_jobs`` request -> the filters of
print.c ``_filter_job`` -> `minislurm.cli.format.format_squeue`.  Option
errors are glibc's line plus ``Try "squeue --help" for more information``
(exit 1); ``squeue -j 999999`` (a single unknown id) fails like Slurm with
``slurm_load_jobs error: Invalid job id specified`` (exit 1).

Job-state names, ``-j`` lists and the "has slurmctld forgotten this job yet"
rule (``MinJobAge``) are shared with scancel and scontrol, which import them
from here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from minislurm.cli.common import VERSION as VERSION  # scancel, sinfo, ... import it from here
from minislurm.cli.common import (
    Context,
    connect,
    fail,
    info_table,
    option_table,
    parse_or_exit,
    parse_permuted,
)
from minislurm.cli.format.squeue import format_squeue, invalid_fields
from minislurm.cli.format.squeue_steps import (
    format_steps,
    invalid_step_fields,
    running_steps,
    select_steps,
)
from minislurm.cli.transport import run_command
from minislurm.common import hostlist
from minislurm.common.rpc import unavailable
from minislurm.errors import Errno, SlurmError
from minislurm.job import JobRecord
from minislurm.options.getopt import HasArg
from minislurm.states import JobState

if TYPE_CHECKING:
    from minislurm.ctld.controller import Controller

PROG = "squeue"
INVALID_JOB_ID = Errno.ESLURM_INVALID_JOB_ID

#: ``job_state_string(0..JOB_END)`` then the flag states squeue lists (``_parse_state``).
VALID_STATES = (
    "PENDING,RUNNING,SUSPENDED,COMPLETED,CANCELLED,FAILED,TIMEOUT,NODE_FAIL,PREEMPTED,"
    "BOOT_FAIL,DEADLINE,OUT_OF_MEMORY,COMPLETING,CONFIGURING,RESIZING,RESV_DEL_HOLD,"
    "REQUEUED,REQUEUE_FED,REQUEUE_HOLD,REVOKED,SIGNALING,SPECIAL_EXIT,STAGE_OUT,STOPPED"
)
#: State flags ``-t`` also takes (name and compact code; measured on 22.05.8); no
#: minislurm job carries them, so they select nothing.
_FLAG_STATES = frozenset({"RESV_DEL_HOLD", "RD", "REQUEUE_FED", "RF", "SIGNALING", "SI",
                          "STAGE_OUT", "SO"})

#: Names ``job_state_num`` accepts besides the enum values and compact codes.
_STATE_ALIASES = {"CANCELED": JobState.CANCELLED, "OOM": JobState.OUT_OF_MEMORY}

SHORTS, LONGS = option_table("A:ahi:j::lL:n:M:O:o:p:Pq:R:rs::S:t:u:U:vVw:", [
    ("accounts", HasArg.REQUIRED, "A"), ("all", HasArg.NO, "a"), ("array", HasArg.NO, "r"),
    ("array-unique", HasArg.NO, "array-unique"), ("Format", HasArg.REQUIRED, "O"),
    ("format", HasArg.REQUIRED, "o"), ("federation", HasArg.NO, "federation"),
    ("help", HasArg.NO, "help"), ("hide", HasArg.NO, "hide"),
    ("iterate", HasArg.REQUIRED, "i"), ("jobs", HasArg.OPTIONAL, "j"),
    ("local", HasArg.NO, "local"), ("long", HasArg.NO, "l"),
    ("licenses", HasArg.REQUIRED, "L"), ("cluster", HasArg.REQUIRED, "M"),
    ("clusters", HasArg.REQUIRED, "M"), ("me", HasArg.NO, "me"),
    ("name", HasArg.REQUIRED, "n"), ("noconvert", HasArg.NO, "noconvert"),
    ("node", HasArg.REQUIRED, "w"), ("nodes", HasArg.REQUIRED, "w"),
    ("nodelist", HasArg.REQUIRED, "w"), ("noheader", HasArg.NO, "h"),
    ("partitions", HasArg.REQUIRED, "p"), ("priority", HasArg.NO, "P"),
    ("qos", HasArg.REQUIRED, "q"), ("reservation", HasArg.REQUIRED, "R"),
    ("sib", HasArg.NO, "sibling"), ("sibling", HasArg.NO, "sibling"),
    ("sort", HasArg.REQUIRED, "S"), ("start", HasArg.NO, "start"),
    ("steps", HasArg.OPTIONAL, "s"), ("states", HasArg.REQUIRED, "t"),
    ("usage", HasArg.NO, "usage"), ("user", HasArg.REQUIRED, "u"),
    ("users", HasArg.REQUIRED, "u"), ("verbose", HasArg.NO, "v"),
    ("version", HasArg.NO, "V"),
])

USAGE = """\
Usage: squeue [-A account] [--clusters names] [-i seconds] [--job jobid]
              [-n name] [-o format] [-p partitions] [--qos qos]
              [--reservation reservation] [--sort fields] [--start]
              [--step step_id] [-t states] [-u user_name] [--usage]
              [-L licenses] [-w nodes] [--federation] [--local] [--sibling]
\t      [-ahjlrsv]
"""

HELP = """\
Usage: squeue [OPTIONS]
  -A, --account=account(s)        comma separated list of accounts
\t\t\t\t  to view, default is all accounts
  -a, --all                       display jobs in hidden partitions
      --array-unique              display one unique pending job array
                                  element per line
      --federation                Report federated information if a member
                                  of one
  -h, --noheader                  no headers on output
      --hide                      do not display jobs in hidden partitions
  -i, --iterate=seconds           specify an interation period
  -j, --job=job(s)                comma separated list of jobs IDs
                                  to view, default is all
      --local                     Report information only about jobs on the
                                  local cluster. Overrides --federation.
  -l, --long                      long report
  -L, --licenses=(license names)  comma separated list of license names to view
  -M, --clusters=cluster_name     cluster to issue commands to.  Default is
                                  current cluster.  cluster with no name will
                                  reset to default. Implies --local.
  -n, --name=job_name(s)          comma separated list of job names to view
      --noconvert                 don't convert units from their original type
                                  (e.g. 2048M won't be converted to 2G).
  -o, --format=format             format specification
  -O, --Format=format             format specification
  -p, --partition=partition(s)    comma separated list of partitions
\t\t\t\t  to view, default is all partitions
  -q, --qos=qos(s)                comma separated list of qos's
\t\t\t\t  to view, default is all qos's
  -R, --reservation=name          reservation to view, default is all
  -r, --array                     display one job array element per line
      --sibling                   Report information about all sibling jobs
                                  on a federated cluster. Implies --federation.
  -s, --step=step(s)              comma separated list of job steps
\t\t\t\t  to view, default is all
  -S, --sort=fields               comma separated list of fields to sort on
      --start                     print expected start times of pending jobs
  -t, --states=states             comma separated list of states to view,
\t\t\t\t  default is pending and running,
\t\t\t\t  '--states=all' reports all states
  -u, --user=user_name(s)         comma separated list of users to view
      --name=job_name(s)          comma separated list of job names to view
  -v, --verbose                   verbosity level
  -V, --version                   output version information and exit
  -w, --nodelist=hostlist         list of nodes to view, default is
\t\t\t\t  all nodes

Help options:
  --help                          show this help message
  --usage                         display a brief summary of squeue options
"""

#: ``--help``, ``--usage``, ``-V``: the text each prints.
INFO = info_table(HELP, USAGE)


# ---------------------------------------------------------------- shared pieces
@dataclass(frozen=True, slots=True)
class JobSelector:
    """One element of a ``-j`` list: ``108`` (``task=None``) or ``108_3``."""

    job_id: int
    task: int | None = None

    def __str__(self) -> str:
        return str(self.job_id) if self.task is None else f"{self.job_id}_{self.task}"


def _strtol(text: str) -> tuple[int, str]:
    """C ``strtol(text, &end, 10)``: the leading integer (0 if none) and the rest."""
    i = 0
    if i < len(text) and text[i] in "+-":
        i += 1
    j = i
    while j < len(text) and text[j].isdigit():
        j += 1
    if j == i:
        return 0, text
    return int(text[:j]), text[j:]


def parse_job_list(text: str, prog: str = PROG) -> list[JobSelector]:
    """squeue's ``_build_job_list``: ``108,109_3``; ``Invalid job id: X`` exits 1."""
    out: list[JobSelector] = []
    for item in (t for t in text.split(",") if t):
        job_id, rest = _strtol(item)
        task: int | None = None
        if rest.startswith("_"):
            task, rest = _strtol(rest[1:])
        if job_id <= 0:
            raise SlurmError(f"{prog}: error: Invalid job id: {item}", 1)
        out.append(JobSelector(job_id, task))
    return out


def job_state_num(name: str) -> JobState | None:
    """``job_state_num``: a state by full name or compact code, case-insensitive."""
    upper = name.upper()
    for state in JobState:
        if upper in (state.value, state.short):
            return state
    return _STATE_ALIASES.get(upper)


def parse_states(text: str, prog: str = PROG) -> frozenset[JobState] | None:
    """``-t/--states``: ``None`` for ``all``; unknown names fail like ``_parse_state``."""
    if text.lower() == "all":
        return None
    states: set[JobState] = set()
    for item in (t for t in text.split(",") if t):
        if item.upper() in _FLAG_STATES:
            continue
        state = job_state_num(item)
        if state is None:  # squeue's message ends with an empty line (measured)
            raise SlurmError(f"{prog}: error: Invalid job state specified: {item}\n"
                             f"{prog}: error: Valid job states include: {VALID_STATES}\n\n",
                             1)
        states.add(state)
    return frozenset(states)


def min_job_age(controller: Controller) -> int:
    """``MinJobAge`` (default 300 s): how long slurmctld keeps an ended job."""
    return controller.config.min_job_age


def is_remembered(job: JobRecord, now: int, age: int) -> bool:
    """True while slurmctld still holds ``job`` (ended jobs go after ``MinJobAge``)."""
    if not job.state.is_terminal or job.end_time is None:
        return True
    return job.end_time + age > now


def known_jobs(controller: Controller, *, expand_arrays: bool = False) -> list[JobRecord]:
    """The job records slurmctld would answer ``slurm_load_jobs`` with."""
    now = controller.now
    age = min_job_age(controller)
    jobs = controller.jobs(expand_arrays=expand_arrays)
    return [j for j in jobs if is_remembered(j, now, age)]


def job_matches(job: JobRecord, sel: JobSelector) -> bool:
    """``_filter_job``'s id test: the job, its array, or one task of it."""
    if sel.task is None:
        return sel.job_id in (job.job_id, job.array_job_id)
    if job.array_job_id != sel.job_id:
        return False
    if job.array_task_id == sel.task:
        return True
    return job.array_task_str is not None and sel.task in pending_tasks(job)


def pending_tasks(job: JobRecord) -> list[int]:
    """The task ids of a pending array remainder (``2-7%2`` -> 2..7)."""
    spec = (job.array_task_str or "").split("%", 1)[0]
    if not spec:
        return []
    return [int(t[1:]) for t in hostlist.expand(f"t[{spec}]")]


# ---------------------------------------------------------------- options
@dataclass(frozen=True, slots=True)
class SqueueOptions:
    """What ``parse_command_line`` leaves in ``params``."""

    fmt: str | None = None
    Format: str | None = None
    long: bool = False
    noheader: bool = False
    array: bool = False
    start: bool = False
    sort: str | None = None
    jobs: tuple[JobSelector, ...] | None = None
    states: frozenset[JobState] | None = None
    all_states: bool = False
    users: tuple[str, ...] | None = None
    accounts: tuple[str, ...] | None = None
    names: tuple[str, ...] | None = None
    partitions: tuple[str, ...] | None = None
    qos: tuple[str, ...] | None = None
    reservation: str | None = None
    nodes: frozenset[str] | None = None
    licenses: tuple[str, ...] | None = None
    steps: bool = False  # -s/--steps: list job steps instead of jobs
    step_list: frozenset[tuple[int, str]] | None = None
    verbose: int = 0
    info: str | None = None  # --help/--usage/--version text: print it and exit 0


def _strs(text: str) -> tuple[str, ...]:
    return tuple(t for t in text.split(",") if t)


def _step_list(text: str) -> frozenset[tuple[int, str]]:
    """``--steps=J.S[,...]`` (``_build_step_list``): a job id that is not a number is
    ``Invalid job_step id``; a step that is not a number matches no step."""
    out = set()
    for item in _strs(text):
        job, _, step = item.partition(".")
        if not job.isdigit():
            raise SlurmError(f"{PROG}: error: Invalid job_step id: {item}", 1)
        out.add((int(job), step if step.isdigit() else "-"))
    return frozenset(out)


def parse_squeue(argv: Sequence[str], env: Mapping[str, str], user: str) -> SqueueOptions:
    """Parse ``argv`` and the ``SQUEUE_*`` variables like ``parse_command_line``.

    Raises `GetoptError` for glibc's errors and `SlurmError` for squeue's own.
    """
    opts, operands = parse_permuted(argv, SHORTS, LONGS, PROG)
    got = SqueueOptions(array=bool(env.get("SQUEUE_ARRAY")), sort=env.get("SQUEUE_SORT") or None)
    states_text: str | None = None
    job_flag = override_format = False
    for o in opts:
        k, arg = o.key, o.arg or ""
        if k in INFO:
            return SqueueOptions(info=INFO[k])
        if k in ("A", "U"):
            got = replace(got, accounts=_strs(arg))
        elif k == "h":
            got = replace(got, noheader=True)
        elif k == "i":
            if _strtol(arg)[0] <= 0:
                raise SlurmError(f"{PROG}: error: --iterate={arg}\n", 1)
            raise SlurmError(f"{PROG}: error: minislurm: --iterate is not supported "
                             "(run squeue again instead)", 1)
        elif k == "j":
            if o.arg is not None:
                got = replace(got, jobs=tuple(parse_job_list(arg)))
            job_flag = True
        elif k == "l":
            got = replace(got, long=True)
            override_format = True
        elif k == "L":
            got = replace(got, licenses=_strs(arg))
        elif k == "n":
            got = replace(got, names=_strs(arg))
        elif k == "O":
            if got.fmt is not None:
                raise SlurmError(
                    f"{PROG}: error: -O (--Format) is incompatible with -o (--format)", 1)
            got = replace(got, Format=arg)
            override_format = True
        elif k == "o":
            if got.Format is not None:
                raise SlurmError(
                    f"{PROG}: error: -o (--format) is incompatible with -O (--Format)", 1)
            got = replace(got, fmt=arg)
            override_format = True
        elif k == "p":
            got = replace(got, partitions=_strs(arg))
        elif k == "q":
            got = replace(got, qos=_strs(arg))
        elif k == "R":
            got = replace(got, reservation=arg)
        elif k == "r":
            got = replace(got, array=True)
        elif k == "s":
            got = replace(got, steps=True)
            if o.arg is not None:
                got = replace(got, step_list=_step_list(arg))
        elif k == "S":
            got = replace(got, sort=arg)
        elif k == "t":
            states_text = arg
        elif k == "u":
            got = replace(got, users=_strs(arg))
        elif k == "me":
            got = replace(got, users=(user,))
        elif k == "v":
            got = replace(got, verbose=got.verbose + 1)
        elif k == "w":
            got = replace(got, nodes=frozenset(hostlist.expand(arg)))
        elif k == "start":
            got = replace(got, start=True)
            override_format = True
    if got.long and got.fmt is not None:
        raise SlurmError(f"{PROG}: fatal: Options -o(--format) and -l(--long) are mutually "
                         "exclusive. Please remove one and retry.", 1)
    if not override_format:
        if env.get("SQUEUE_FORMAT"):
            got = replace(got, fmt=env["SQUEUE_FORMAT"])
        elif env.get("SQUEUE_FORMAT2"):
            got = replace(got, Format=env["SQUEUE_FORMAT2"])
    if operands:
        if job_flag:
            got = replace(got, jobs=tuple(parse_job_list(operands[0])))
            operands = operands[1:]
        elif got.steps:
            got = replace(got, step_list=_step_list(operands[0]))
            operands = operands[1:]
        if operands:
            raise SlurmError(f"{PROG}: error: Unrecognized option: {operands[0]}\n{USAGE}", 1)
    def from_env(value: tuple[str, ...] | None, var: str) -> tuple[str, ...] | None:
        return _strs(env[var]) if value is None and env.get(var) else value

    got = replace(got, accounts=from_env(got.accounts, "SQUEUE_ACCOUNT"),
                  names=from_env(got.names, "SQUEUE_NAMES"),
                  licenses=from_env(got.licenses, "SQUEUE_LICENSES"),
                  partitions=from_env(got.partitions, "SQUEUE_PARTITION"),
                  qos=from_env(got.qos, "SQUEUE_QOS"), users=from_env(got.users, "SQUEUE_USERS"))
    if states_text is None and env.get("SQUEUE_STATES"):
        states_text = env["SQUEUE_STATES"]
    if got.start and states_text is None:
        states_text = "PD"
    if states_text is not None:
        states = parse_states(states_text)
        got = replace(got, states=states, all_states=states is None)
    return got


# ---------------------------------------------------------------- filtering
def _narrow_array(job: JobRecord, sels: Iterable[JobSelector]) -> JobRecord:
    """``partial_array``: keep only the requested tasks of a pending remainder."""
    if job.array_task_str is None:
        return job
    wanted = {s.task for s in sels if s.task is not None and s.job_id == job.array_job_id}
    if not wanted or any(s.task is None and s.job_id == job.array_job_id for s in sels):
        return job
    keep = sorted(wanted & set(pending_tasks(job)))
    if len(keep) == 1:
        return dataclasses.replace(job, array_task_id=keep[0], array_task_str=None)
    return dataclasses.replace(job, array_task_str=bit_fmt(keep))


def bit_fmt(ids: Iterable[int]) -> str:
    """Slurm's ``bit_fmt`` of task ids: ``2-4,7``."""
    runs: list[list[int]] = []
    for i in sorted(set(ids)):
        if runs and i == runs[-1][-1] + 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    return ",".join(f"{r[0]}-{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs)


def _shown_by_default(state: JobState) -> bool:
    return state in (JobState.PENDING, JobState.RUNNING, JobState.SUSPENDED,
                     JobState.COMPLETING, JobState.CONFIGURING)


def filter_jobs(jobs: Iterable[JobRecord], o: SqueueOptions) -> list[JobRecord]:
    """print.c ``_filter_job`` + ``_filter_job_part`` for every record."""
    out: list[JobRecord] = []
    for job in jobs:
        if o.jobs is not None:
            if not any(job_matches(job, s) for s in o.jobs):
                continue
            job = _narrow_array(job, o.jobs)
        if o.licenses is not None:  # minislurm jobs hold no licenses: none matches
            continue
        if o.accounts is not None and job.account.lower() not in {a.lower() for a in o.accounts}:
            continue
        if o.qos is not None and job.qos.lower() not in {q.lower() for q in o.qos}:
            continue
        if o.all_states:
            pass
        elif o.states is not None:
            if job.state not in o.states:
                continue
        elif not _shown_by_default(job.state):
            continue
        if o.nodes is not None and not (set(hostlist.expand(job.nodelist)) & o.nodes
                                        if job.nodelist else False):
            continue
        if o.users is not None and job.user not in o.users and str(job.uid) not in o.users:
            continue
        if o.reservation is not None and job.reservation != o.reservation:
            continue
        if o.names is not None and job.name.lower() not in {n.lower() for n in o.names}:
            continue
        if o.partitions is not None and not set(job.partition.split(",")) & set(o.partitions):
            continue
        out.append(job)
    return out


def _load(controller: Controller, o: SqueueOptions) -> list[JobRecord]:
    """``slurm_load_job`` for a single ``-j`` id (unknown: error), else ``slurm_load_jobs``."""
    jobs = known_jobs(controller, expand_arrays=o.array)
    if o.jobs is not None and len(o.jobs) == 1:
        wanted = o.jobs[0].job_id
        if not any(wanted in (j.job_id, j.array_job_id) for j in jobs):
            raise SlurmError(f"slurm_load_jobs error: {INVALID_JOB_ID}", 1)
    return jobs


def run(argv: Sequence[str], ctx: Context) -> int:
    """Run ``squeue argv`` in ``ctx``; returns the exit code."""
    o = parse_or_exit(ctx, PROG, lambda: parse_squeue(argv, ctx.env, ctx.user))
    if isinstance(o, int):
        return o
    if o.steps:
        return _run_steps(ctx, o)
    for line in invalid_fields(o.fmt, o.Format):
        ctx.err(line)
    controller = connect(ctx, unavailable(PROG, "slurm_load_jobs error"))
    if isinstance(controller, int):
        return controller
    try:
        jobs = filter_jobs(_load(controller, o), o)
    except SlurmError as exc:
        return fail(ctx, exc)
    ctx.stdout.write(format_squeue(
        jobs, fmt=o.fmt, Format=o.Format, long=o.long, start=o.start, noheader=o.noheader,
        now=int(controller.now), array_unpack=o.array, sort=o.sort,
        cluster_name=controller.config.cluster_name,
    ))
    return 0


def _run_steps(ctx: Context, o: SqueueOptions) -> int:
    """``squeue -s``: the running steps (`minislurm.cli.format.squeue_steps`)."""
    for line in invalid_step_fields(o.fmt, o.Format):
        ctx.err(line)
    controller = connect(ctx, unavailable(PROG, "slurm_load_job_steps error"))
    if isinstance(controller, int):
        return controller
    rows = select_steps(
        running_steps(known_jobs(controller, expand_arrays=False)),
        jobs=None if o.jobs is None else {s.job_id for s in o.jobs},
        steps=None if o.step_list is None else set(o.step_list),
        users=None if o.users is None else set(o.users),
        partitions=None if o.partitions is None else set(o.partitions))
    ctx.stdout.write(format_steps(
        rows, fmt=o.fmt, Format=o.Format, noheader=o.noheader, long=o.long,
        now=int(controller.now),
        cluster_name=controller.config.cluster_name))
    return 0


def main(argv: Sequence[str]) -> int:
    """``python -m minislurm squeue ...``."""
    return run_command(PROG, argv)
