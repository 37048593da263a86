"""``scancel``: cancel jobs (src/scancel/opt.c, scancel.c).

Two paths, as in scancel.c ``_proc_cluster``:

* only job ids (no filter, no ``--signal``): each id goes to slurmctld as is
  (``_signal_job_by_str``); an unknown or finished id is *not* an error: no
  output, exit 0 (capture b_sbatch_errors/52), unless ``-v`` asks for
  ``scancel: error: Kill job error on job id 999999: Invalid job id specified``;
* with filters (``-u``, ``-t``, ``-n``, ``-p``, ``-A``, ``-q``, ``-R``,
  ``-w``, ``-i``, ``-b``, ``-s``): the job table is loaded, the ids are verified
  (``_verify_job_ids``: an unknown id is reported and exits 1) and every active
  job passing all filters is cancelled, pending jobs first.
"""

from __future__ import annotations

import signal as _signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from minislurm.cli.common import (
    Context,
    connect,
    info_table,
    option_table,
    parse_or_exit,
    parse_permuted,
)
from minislurm.cli.squeue import job_state_num, known_jobs, pending_tasks
from minislurm.cli.transport import run_command
from minislurm.common import hostlist
from minislurm.common.rpc import unavailable
from minislurm.errors import Errno, SlurmError
from minislurm.job import JobRecord
from minislurm.options.getopt import HasArg
from minislurm.states import JobState

if TYPE_CHECKING:
    from minislurm.ctld.controller import Controller

PROG = "scancel"
INVALID_JOB_ID = Errno.ESLURM_INVALID_JOB_ID
ALREADY_DONE = Errno.ESLURM_ALREADY_DONE

SHORTS, LONGS = option_table("A:bfHiM:n:p:Qq:R:s:t:u:vVw:", [
    ("account", HasArg.REQUIRED, "A"), ("batch", HasArg.NO, "b"), ("ctld", HasArg.NO, "ctld"),
    ("full", HasArg.NO, "f"), ("help", HasArg.NO, "help"), ("hurry", HasArg.NO, "H"),
    ("interactive", HasArg.NO, "i"), ("cluster", HasArg.REQUIRED, "M"),
    ("clusters", HasArg.REQUIRED, "M"), ("jobname", HasArg.REQUIRED, "n"),
    ("me", HasArg.NO, "me"), ("name", HasArg.REQUIRED, "n"),
    ("nodelist", HasArg.REQUIRED, "w"), ("partition", HasArg.REQUIRED, "p"),
    ("qos", HasArg.REQUIRED, "q"), ("quiet", HasArg.NO, "Q"),
    ("reservation", HasArg.REQUIRED, "R"), ("sibling", HasArg.REQUIRED, "sibling"),
    ("signal", HasArg.REQUIRED, "s"), ("state", HasArg.REQUIRED, "t"),
    ("usage", HasArg.NO, "usage"), ("user", HasArg.REQUIRED, "u"),
    ("verbose", HasArg.NO, "v"), ("version", HasArg.NO, "V"),
    ("wckey", HasArg.REQUIRED, "wckey"),
])

USAGE = """\
Usage: scancel [-A account] [--batch] [--full] [--interactive] [-n job_name]
               [-p partition] [-Q] [-q qos] [-R reservation] [-s signal | integer]
               [-t PENDING | RUNNING | SUSPENDED] [--usage] [-u user_name]
               [--hurry] [-V] [-v] [-w hosts...] [--wckey=wckey]
               [job_id[_array_id][.step_id]]
"""

HELP = """\
Usage: scancel [OPTIONS] [job_id[_array_id][.step_id]]
  -A, --account=account           act only on jobs charging this account
  -b, --batch                     signal batch shell for specified job
  -f, --full                      signal batch shell and all steps for specified job
  -H, --hurry                     avoid burst buffer stage out
  -i, --interactive               require response from user for each job
  -M, --clusters                  clusters to issue commands to.
                                  NOTE: SlurmDBD must be up.
  -n, --name=job_name             act only on jobs with this name
  -p, --partition=partition       act only on jobs in this partition
  -Q, --quiet                     disable warnings
  -q, --qos=qos                   act only on jobs with this quality of service
  -R, --reservation=reservation   act only on jobs with this reservation
      --sibling=cluster_name      remove an active sibling job from a federated job
  -s, --signal=name | integer     signal to send to job, default is SIGKILL
  -t, --state=states              act only on jobs in this state.  Valid job
                                  states are PENDING, RUNNING and SUSPENDED
  -u, --user=user_name            act only on jobs of this user
  -V, --version                   output version information and exit
  -v, --verbose                   verbosity level
  -w, --nodelist                  act only on jobs on these nodes
      --wckey=wckey               act only on jobs with this workload
                                  charactization key

Help options:
  --help                          show this help message
  --usage                         display brief usage message
"""

#: ``--help``, ``--usage``, ``-V``: the text each prints.
INFO = info_table(HELP, USAGE)

#: What ``scancel`` without ``--signal`` sends (``NO_VAL16`` -> SIGKILL): a cancel.
_KILL = int(_signal.SIGKILL)


@dataclass(frozen=True, slots=True)
class JobSpec:
    """One operand: ``5``, ``108_3``, ``108_*`` (``task=-1``), ``5.0`` (``step``)."""

    text: str
    job_id: int
    task: int | None = None
    step: int | None = None


@dataclass(frozen=True, slots=True)
class ScancelOptions:
    """``opt`` of scancel after ``initialize_and_process_args``."""

    jobs: tuple[JobSpec, ...] = ()
    account: str | None = None
    name: str | None = None
    partition: str | None = None
    qos: str | None = None
    reservation: str | None = None
    state: JobState | None = None
    user: str | None = None
    nodelist: str | None = None
    signal: int | None = None
    batch: bool = False
    interactive: bool = False
    verbose: int = 0
    info: str | None = None

    @property
    def default(self) -> bool:
        """``has_default_opt``: nothing but job ids was given."""
        return not (self.account or self.batch or self.interactive or self.name
                    or self.partition or self.qos or self.reservation
                    or self.signal is not None or self.state is not None or self.user
                    or self.nodelist)


def sig_name2num(text: str) -> int:
    """``sig_name2num``: ``KILL``, ``SIGUSR1``, ``9`` -> the number (0 when unknown)."""
    if text.isdigit():
        return int(text)
    name = text.upper()
    name = name if name.startswith("SIG") else "SIG" + name
    try:
        return int(_signal.Signals[name])
    except KeyError:
        return 0


def _invalid(text: str) -> SlurmError:
    return SlurmError(f"{PROG}: error: Invalid job id {text}", 1)


def parse_job_ids(operands: Sequence[str]) -> list[JobSpec]:
    """``_xlate_job_step_ids``: ``5 6,7 108_[1-3] 108_* 5.0``."""
    queue = list(operands)
    out: list[JobSpec] = []
    while queue:
        text = queue.pop(0)
        digits = len(text) - len(text.lstrip("0123456789"))
        if digits == 0 or int(text[:digits]) <= 0:
            raise _invalid(text)
        job_id, rest = int(text[:digits]), text[digits:]
        if rest.startswith("_["):
            if not rest.endswith("]"):
                raise _invalid(text)
            try:
                tasks = [int(t[1:]) for t in hostlist.expand("t" + rest[1:])]
            except (SlurmError, ValueError):
                raise _invalid(text) from None
            out += [JobSpec(f"{job_id}_{t}", job_id, t) for t in tasks]
            continue
        task: int | None = None
        if rest.startswith("_*"):
            task, rest = -1, rest[2:]
        elif rest.startswith("_"):
            n = len(rest[1:]) - len(rest[1:].lstrip("0123456789"))
            if n == 0:
                raise _invalid(text)
            task, rest = int(rest[1:1 + n]), rest[1 + n:]
        step: int | None = None
        if rest.startswith("."):
            n = len(rest[1:]) - len(rest[1:].lstrip("0123456789"))
            if n == 0:
                raise _invalid(text)
            step, rest = int(rest[1:1 + n]), rest[1 + n:]
        if rest.startswith(","):
            queue.insert(0, rest[1:])
        elif rest:
            raise _invalid(text)
        shown = text if not rest.startswith(",") else text[: len(text) - len(rest)]
        out.append(JobSpec(shown, job_id, task, step))
    return out


def parse_scancel(argv: Sequence[str], env: Mapping[str, str], user: str) -> ScancelOptions:
    """Options, ``SCANCEL_*`` variables and job ids, as ``initialize_and_process_args``."""
    got = ScancelOptions(
        account=env.get("SCANCEL_ACCOUNT") or None, name=env.get("SCANCEL_NAME") or None,
        partition=env.get("SCANCEL_PARTITION") or None, qos=env.get("SCANCEL_QOS") or None,
        user=env.get("SCANCEL_USER") or None)
    if env.get("SCANCEL_STATE"):
        got = replace(got, state=_state(env["SCANCEL_STATE"], env_var=True))
    if env.get("SCANCEL_INTERACTIVE", "").lower() in ("true", "t"):
        got = replace(got, interactive=True)
    if env.get("SCANCEL_VERBOSE", "").lower() in ("true", "t"):
        got = replace(got, verbose=1)
    opts, operands = parse_permuted(argv, SHORTS, LONGS, PROG)
    for o in opts:
        k, arg = o.key, o.arg or ""
        if k in INFO:
            return ScancelOptions(info=INFO[k])
        if k == "A":
            got = replace(got, account=arg.lower())
        elif k == "b":
            got = replace(got, batch=True)
        elif k == "i":
            got = replace(got, interactive=True)
        elif k == "me":
            got = replace(got, user=user)
        elif k == "n":
            got = replace(got, name=arg)
        elif k == "p":
            got = replace(got, partition=arg)
        elif k == "Q":
            got = replace(got, verbose=-1)
        elif k == "q":
            got = replace(got, qos=arg.lower())
        elif k == "R":
            got = replace(got, reservation=arg)
        elif k == "s":
            number = sig_name2num(arg)
            if not number:
                raise SlurmError(f"Unknown job signal: {arg}", 1)
            got = replace(got, signal=number)
        elif k == "t":
            got = replace(got, state=_state(arg, env_var=False))
        elif k == "u":
            got = replace(got, user=arg)
        elif k == "v":
            got = replace(got, verbose=max(0, got.verbose) + 1)
        elif k == "w":
            got = replace(got, nodelist=arg)
    got = replace(got, jobs=tuple(parse_job_ids(operands)))
    if not got.jobs and got.default:
        raise SlurmError(f"{PROG}: error: No job identification provided", 1)
    return got


def _state(text: str, *, env_var: bool) -> JobState:
    """``_xlate_state_name``: its errors go to stderr without a prefix."""
    state = job_state_num(text)
    if state is not None:
        return state
    first = (f"Unrecognized SCANCEL_STATE value: {text}" if env_var
             else f"Invalid job state specified: {text}")
    raise SlurmError(f"{first}\nValid job states are PENDING, RUNNING, and SUSPENDED", 1)


# ---------------------------------------------------------------- cancelling
def _targets(jobs: Sequence[JobRecord], spec: JobSpec) -> list[JobRecord]:
    """The active records ``spec`` names: a job, a whole array, or one task."""
    active = [j for j in jobs if not j.state.is_terminal]
    if spec.task is None or spec.task == -1:
        return [j for j in active if spec.job_id in (j.job_id, j.array_job_id)
                and (spec.task is None or j.array_job_id is not None)]
    return [j for j in active if j.array_job_id == spec.job_id
            and (j.array_task_id == spec.task
                 or (j.array_task_str is not None and spec.task in pending_tasks(j)))]


def _cancel(controller: Controller, job: JobRecord, spec_task: int | None, uid: int) -> None:
    """One ``REQUEST_KILL_JOB`` with SIGKILL."""
    task = spec_task if spec_task is not None and spec_task >= 0 else None
    if task is not None and job.array_task_str is not None:
        controller.cancel(job.job_id, task=task, uid=uid)
    else:
        controller.cancel(job.job_id, uid=uid)


def _verbose_line(ctx: Context, o: ScancelOptions, text: str) -> None:
    if o.verbose > 0:
        ctx.err(f"{PROG}: {text}")


def _by_str(ctx: Context, controller: Controller, o: ScancelOptions) -> int:
    """``_signal_job_by_str``: each id as given; done/unknown ids are quiet."""
    jobs = known_jobs(controller)
    for spec in o.jobs:
        _verbose_line(ctx, o, f"Terminating job {spec.text}")
        if spec.step is not None:
            ctx.err(f"{PROG}: error: minislurm: cancelling job steps ({spec.text}) "
                    "is not supported")
            return 1
        hits = _targets(jobs, spec)
        if not hits:
            known = any(spec.job_id in (j.job_id, j.array_job_id) for j in jobs)
            if o.verbose > 0:
                why = ALREADY_DONE if known and spec.task is None else INVALID_JOB_ID
                ctx.err(f"{PROG}: error: Kill job error on job id {spec.text}: {why}")
            continue
        for job in sorted(hits, key=lambda j: j.state is not JobState.PENDING):
            _cancel(controller, job, spec.task, ctx.uid)
    return 0


def _filters_pass(job: JobRecord, o: ScancelOptions) -> bool:
    """``_filter_job_records``: pending/running/suspended jobs matching every filter."""
    if job.state not in (JobState.PENDING, JobState.RUNNING, JobState.SUSPENDED):
        return False
    if o.account and job.account != o.account:
        return False
    if o.name and job.name != o.name:
        return False
    if o.partition and job.partition != o.partition:
        return False
    if o.qos and job.qos != o.qos:
        return False
    if o.reservation and job.reservation != o.reservation:
        return False
    if o.state is not None and job.state is not o.state:
        return False
    if o.user and o.user not in (job.user, str(job.uid)):
        return False
    if o.nodelist:
        on = set(hostlist.expand(job.nodelist)) if job.nodelist else set()
        return bool(on & set(hostlist.expand(o.nodelist)))
    return True


def _no_match_text(o: ScancelOptions) -> str:
    parts = []
    for label, value in (("account", o.account), ("job_name", o.name),
                         ("nodelist", o.nodelist), ("partition", o.partition),
                         ("qos", o.qos), ("reservation", o.reservation),
                         ("state", o.state.value if o.state else None),
                         ("user_name", o.user)):
        if value:
            parts.append(f"{label}={value} ")
    return "".join(parts)


def _confirm(ctx: Context, job: JobRecord, answers: list[str]) -> bool:
    """``_confirmation``: ``Cancel job_id=5 name=x partition=debug [y/n]? ``."""
    while answers:
        ctx.stdout.write(f"Cancel job_id={job.job_id_str} name={job.name} "
                         f"partition={job.partition} [y/n]? ")
        answer = answers.pop(0)[:1]
        if answer in ("y", "Y"):
            return True
        if answer in ("n", "N"):
            return False
    return False


def _filtered(ctx: Context, controller: Controller, o: ScancelOptions) -> int:
    """``_load_job_records`` + ``_verify_job_ids`` + ``_filter_job_records`` + cancel."""
    signum = o.signal if o.signal != _KILL else None  # None: cancel (SIGKILL)
    if any(spec.step is not None for spec in o.jobs):
        ctx.err(f"{PROG}: error: minislurm: cancelling job steps is not supported")
        return 1
    jobs = known_jobs(controller)
    rc = 0
    chosen: list[tuple[JobRecord, int | None]] = []
    for spec in o.jobs:
        hits = _targets(jobs, spec)
        if not hits:
            rc = 1
            if o.verbose >= 0:
                ctx.err(f"{PROG}: error: Kill job error on job id {spec.text}: {INVALID_JOB_ID}")
            continue
        chosen += [(j, spec.task) for j in hits]
    if not o.jobs:
        chosen = [(j, None) for j in jobs]
    if _has_filters(o):
        picked = [(j, t) for j, t in chosen if _filters_pass(j, o)]
    else:
        picked = [(j, t) for j, t in chosen if not j.state.is_terminal]
    if _has_filters(o) and not picked and o.verbose > 0:
        ctx.err(f"{PROG}: error: No active jobs match ALL job filters, including: "
                f"{_no_match_text(o)}")
    answers = (ctx.stdin or "").splitlines()
    picked.sort(key=lambda jt: jt[0].state is not JobState.PENDING)
    for job, task in picked:
        if o.interactive and not _confirm(ctx, job, answers):
            continue
        if signum is not None:
            _verbose_line(ctx, o, f"Signal {signum} to job {job.job_id_str}")
            try:
                controller.signal_job(job.job_id, signum, uid=ctx.uid)
            except SlurmError as exc:
                ctx.err(f"{PROG}: error: Kill job error on job id {job.job_id_str}: "
                        f"{exc.message}")
                rc = 1
            continue
        _verbose_line(ctx, o, f"Terminating job {job.job_id_str}")
        _cancel(controller, job, task, ctx.uid)
    return rc


def _has_filters(o: ScancelOptions) -> bool:
    return bool(o.account or o.name or o.nodelist or o.partition or o.qos or o.reservation
                or o.state is not None or o.user)


def run(argv: Sequence[str], ctx: Context) -> int:
    """Run ``scancel argv`` in ``ctx``; returns the exit code."""
    o = parse_or_exit(ctx, PROG, lambda: parse_scancel(argv, ctx.env, ctx.user))
    if isinstance(o, int):
        return o
    controller = connect(ctx, unavailable(PROG, f"Kill job error on job id {o.jobs[0].text}")
                         if o.default and o.jobs else unavailable(PROG, "slurm_load_jobs error"))
    if isinstance(controller, int):
        return controller
    if o.default:
        return _by_str(ctx, controller, o)
    return _filtered(ctx, controller, o)


def main(argv: Sequence[str]) -> int:
    """``python -m minislurm scancel ...``."""
    return run_command(PROG, argv)
