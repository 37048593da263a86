"""Playing a lab answer on a fresh minislurm cluster, on the simulated clock.

`play` makes a new `minislurm.sim.cluster.Cluster` whose working directory is a
scratch folder holding the lab's starting files and the learner's file, runs
the answer there (a batch script is submitted as ``sbatch <file>``; command
lines go through the interpreted shell of `quizzes.labs.shell`), lets the clock
run, injects the lab's event, and records **what Slurm did** in a `Trial`:

* every command line with what it printed and its exit code;
* per job: the request as sbatch parsed it (`JobOptions`), its record when it
  first ran and at the end (``scontrol show job`` fields), its accounting
  attempts (``sacct``: states, exit codes, restarts), the record right after the
  injected event, and the environment of each task of its first ``srun`` step
  (``SLURM_PROCID``, ``SLURM_LOCALID``, ``CUDA_VISIBLE_DEVICES`` from minislurm's
  slurmd, and ``RANK``/``LOCAL_RANK``/``WORLD_SIZE``/``MASTER_ADDR`` derived by
  `course.ddp.wiring` from them).

Nothing the learner wrote runs as a process: scripts are read by
`minislurm.sim.simscript` (their ``sleep``/``srun``/``exit`` lines), snippets by the
interpreter.  Limits keep a hostile answer small (`LabLimit`): the answer's
size, array tasks, ``srun`` lines, commands; the clock never runs past the lab's
horizon.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import re
import shlex
import tempfile
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from minislurm.common.accounts import AssociationSet, load_associations
from minislurm.conf import SlurmConfig, default_config
from minislurm.errors import Errno, SlurmError
from minislurm.job import JobRecord
from minislurm.options import JobOptions, SbatchInvocation
from minislurm.sim import Cluster
from minislurm.sim.simscript import script_body
from quizzes.i18n import M, Msg
from quizzes.labs.model import MAX_ANSWER_BYTES, Lab, Refusal
from quizzes.labs.shell import Interpreter, ShellError

#: Commands a lab answer may run (read-only ones, and sbatch/scancel for the learner's jobs).
ALLOWED = ("sbatch", "squeue", "sacct", "scontrol", "sinfo", "sprio", "sshare", "scancel",
           "echo", "cat", "true")
#: What scontrol prints when a plain user runs an operator's command (measured on
#: 22.05.8 as a non-root user; ``{arg}`` is the verb's first argument).
_NOT_OPERATOR = Errno.ESLURM_USER_ID_MISSING
ADMIN_REFUSALS = {
    "update": f"slurm_update error: {_NOT_OPERATOR}",
    "update reservation": f"Error updating the reservation: {_NOT_OPERATOR}\n"
                          f"slurm_update error: {_NOT_OPERATOR}",
    "create": f"Error creating the reservation: {_NOT_OPERATOR}",
    "delete": f"delete_reservation {{arg}}: {_NOT_OPERATOR}",
    "reconfigure": f"slurm_reconfigure error: {_NOT_OPERATOR}",
    "shutdown": f"slurm_shutdown error: {_NOT_OPERATOR}",
    "setdebug": "slurm_set_debug_level error: Permission denied",
    "setdebugflags": "slurm_set_debug_flags error: Permission denied",
}
#: Most array tasks a lab plays, srun lines per script, and command lines per snippet.
MAX_ARRAY_TASKS = 128
MAX_SRUN_LINES = 64
MAX_COMMANDS = 32
MAX_JOBS = 16
#: A format field width a lab does not print (``squeue -o %999999999i`` builds a GB line).
_WIDE = re.compile(r"%[-.]?\d{5,}")
#: Most output kept per command (what a terminal would show is far less).
MAX_OUTPUT = 256 * 1024
SUBMITTED = re.compile(r"^(?:Submitted batch job )?(\d+)(?:;\S+)?\s*$")


class LabLimit(Refusal):
    """The answer goes beyond what a lab plays (its message says which limit)."""


@dataclass(frozen=True, slots=True)
class Command:
    """One command line the answer ran, and what it printed."""

    argv: tuple[str, ...]
    stdout: str
    stderr: str
    returncode: int

    @property
    def line(self) -> str:
        return shlex.join(self.argv)


@dataclass(frozen=True, slots=True)
class TaskEnv:
    """One task of a job's first srun step: where it ran and what it saw."""

    task: int
    node: str
    env: tuple[tuple[str, str], ...]

    def get(self, name: str, default: str = "(unset)") -> str:
        return dict(self.env).get(name, default)


@dataclass(frozen=True, slots=True)
class JobFacts:
    """What Slurm recorded about one submitted job."""

    job_id: int
    options: JobOptions
    script: str
    first: JobRecord | None  # when it first ran (None: it never ran)
    final: JobRecord
    attempts: tuple[JobRecord, ...]  # sacct's records of this job (all attempts, tasks)
    after_event: JobRecord | None = None
    tasks: tuple[TaskEnv, ...] = ()
    task_error: str = ""  # srun's refusal of the first step, if any
    step_argv: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Trial:
    """Everything a checker reads."""

    commands: tuple[Command, ...]
    jobs: tuple[JobFacts, ...]
    start: int
    event: str = ""
    refused: str = ""  # a shell or lab-limit refusal (nothing was run past it)
    alternate: Trial | None = None  # the same answer with the lab's alternate files
    queue: tuple[JobRecord, ...] = ()  # every job, 1 s after the answer ran (squeue)
    said: Msg | None = None  # ``refused`` as a message (said in the learner's language)

    @property
    def errors(self) -> tuple[Command, ...]:
        """Command lines Slurm refused (non-zero exit)."""
        return tuple(c for c in self.commands if c.returncode != 0)

    def job(self, name: str) -> JobFacts | None:
        for facts in self.jobs:
            if facts.final.name == name:
                return facts
        return None


@lru_cache(maxsize=1)
def _base() -> tuple[SlurmConfig, AssociationSet]:
    """The course cluster's configuration and associations, read once per process."""
    return default_config(), load_associations(None)


@lru_cache(maxsize=8)
def _associations(grants: tuple[tuple[str, str], ...]) -> AssociationSet:
    """The course's associations with the lab's extra QOS granted (``sacctmgr modify user
    NAME set qos+=QOS``): each association of the user gets the QOS added."""
    assoc = _base()[1]
    if not grants:
        return assoc
    extra: dict[str, tuple[str, ...]] = {}
    for user, qos in grants:
        extra[user] = (*extra.get(user, ()), qos)
    rows = tuple(replace(a, qos=(*a.qos, *(q for q in extra[a.user] if q not in a.qos)))
                 if a.user is not None and a.user in extra else a
                 for a in assoc.associations)
    return replace(assoc, associations=rows)


def looks_like_script(text: str) -> bool:
    """A batch script starts with ``#!`` or ``#SBATCH`` (first non-blank line)."""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped:
            return stripped.startswith("#!") or stripped.upper().startswith("#SBATCH")
    return False


def decode_answer(data: bytes | str) -> str:
    """The answer as text; raises `LabLimit` for oversize or non-UTF-8 answers."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if len(raw) > MAX_ANSWER_BYTES:
        raise LabLimit(M("the answer is {n} bytes; a lab answer is at most {limit} bytes "
                         "(64 KiB)", n=len(raw), limit=MAX_ANSWER_BYTES))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LabLimit(M("the answer is not UTF-8 text (byte {n} cannot be decoded)",
                         n=exc.start)) from None
    if "\x00" in text:
        raise LabLimit(M("the answer is not text (it holds NUL bytes)"))
    return text


def _check_script(text: str) -> None:
    """Refuse scripts built to exhaust the simulator (too many srun lines)."""
    sruns = sum(1 for line in text.splitlines()
                if line.strip().split(" ", 1)[0] == "srun")
    if sruns > MAX_SRUN_LINES:
        raise LabLimit(M("the script has {n} srun lines; a lab plays at most {limit} job "
                         "steps per job", n=sruns, limit=MAX_SRUN_LINES))


def _array_tasks(options: JobOptions) -> int:
    spec = getattr(options, "array", None)
    if not spec:
        return 0
    from minislurm.common.jobarray import parse_array

    try:
        return len(parse_array(str(spec)).indices)
    except (SlurmError, ValueError, AttributeError):
        return 0


class _Session:
    """One play: the cluster, the jobs submitted so far, the transcript."""

    def __init__(self, lab: Lab, workdir: Path, first_job_id: int) -> None:
        config = replace(_base()[0], first_job_id=first_job_id)
        assoc = _associations(lab.grant_qos)
        self.lab = lab
        self.cluster = Cluster(config, associations=assoc, workdir=workdir)
        self.invocations: dict[int, SbatchInvocation] = {}
        self._last_inv: SbatchInvocation | None = None
        self.commands: list[Command] = []
        self.array_tasks = 0
        self.stop = self.cluster.now + lab.horizon  # set again once the setup ran
        #: Each learner job's record when first seen running, and its tasks' environments.
        self.firsts: dict[int, JobRecord] = {}
        self.tasks: dict[int, tuple[tuple[TaskEnv, ...], str, tuple[str, ...]]] = {}

    def capture(self) -> None:
        """Record the learner's jobs that run now and were not seen running before."""
        ctl = self.cluster.controller
        for jid, inv in list(self.invocations.items()) + self._waited():
            if jid in self.firsts:
                continue
            rec = ctl.job(jid)
            if rec.start_time is not None and rec.allocation is not None \
                    and rec.state.value == "RUNNING":
                self.firsts[jid] = rec
                self.tasks[jid] = task_environments(self.cluster, rec, inv)

    def _waited(self) -> list[tuple[int, SbatchInvocation]]:
        """The job ``sbatch --wait`` is waiting for (submitted, id not printed yet)."""
        if self._last_inv is None:
            return []
        ctl = self.cluster.controller
        mine = [r.job_id for r in ctl.jobs() if r.user == self.cluster.user
                and r.job_id not in self.invocations]
        return [(max(mine), self._last_inv)] if mine else []

    def wait(self, predicate: Any) -> None:
        """``sbatch --wait`` on the lab's clock: at most up to the lab's horizon; the
        job is observed while it runs, as the play does."""
        def seen() -> bool:
            self.capture()
            return bool(predicate())

        try:
            self.cluster.wait(seen, limit=max(0, self.stop - self.cluster.now))
        except SlurmError:
            raise LabLimit(M("sbatch --wait: the job had not ended after {hours} simulated "
                             "hours, the lab's horizon",
                             hours=self.lab.horizon // 3600)) from None

    def job_body(self, inv: SbatchInvocation, _ctx: Any) -> Any:
        _check_script(inv.script_text)
        tasks = _array_tasks(inv.options)
        if tasks > MAX_ARRAY_TASKS:
            raise LabLimit(M("the array has {n} tasks; a lab plays at most {limit}", n=tasks,
                             limit=MAX_ARRAY_TASKS))
        self.array_tasks += tasks
        if self.array_tasks > MAX_ARRAY_TASKS:
            raise LabLimit(M("the answer's arrays have {n} tasks in all; a lab plays at most "
                             "{limit}", n=self.array_tasks, limit=MAX_ARRAY_TASKS))
        if len(self.invocations) >= MAX_JOBS:
            raise LabLimit(M("more than {n} jobs submitted; a lab needs a few", n=MAX_JOBS))
        self._last_inv = inv
        return script_body(inv.script_text)

    def run(self, argv: list[str], env: dict[str, str]) -> tuple[str, str, int]:
        """One command line; ``env``: the snippet's exported variables (``SBATCH_*``...)."""
        name = argv[0]
        if name not in ALLOWED:
            msg = (f"{name}: command not interpreted in a lab (the lab runs "
                   f"{', '.join(ALLOWED)})\n")
            self.commands.append(Command(tuple(argv), "", msg, 127))
            return "", msg, 127
        if name in ("echo", "true", "cat"):
            out = " ".join(argv[1:]) + "\n" if name == "echo" else ""
            if name == "cat":
                out = "".join(self._read(a) for a in argv[1:])
            self.commands.append(Command(tuple(argv), out, "", 0))
            return out, "", 0
        wide = next((a for a in argv[1:] if _WIDE.search(a)), None)
        if wide is not None:
            raise LabLimit(M("{command}: a field width of 10000 characters or more is not "
                             "printed in a lab", command=name + " " + wide))
        refusal = _admin(argv[1:]) if name == "scontrol" else None
        if refusal is not None:
            msg = refusal + "\n"
            self.commands.append(Command(tuple(argv), "", msg, 1))
            return "", msg, 1
        import importlib

        module = importlib.import_module(f"minislurm.cli.{name}")
        ctx = self.cluster.context(env=env)
        ctx.job_body = self.job_body
        ctx.wait = self.wait
        self._last_inv = None
        try:
            rc = int(module.run(argv[1:], ctx))
        except LabLimit:
            raise
        except SlurmError as exc:  # a command's own failure: its message, exit 1
            ctx.stderr.write(exc.message.rstrip("\n") + "\n")
            rc = exc.exit_code or 1
        assert isinstance(ctx.stdout, io.StringIO) and isinstance(ctx.stderr, io.StringIO)
        out, err = ctx.stdout.getvalue()[:MAX_OUTPUT], ctx.stderr.getvalue()[:MAX_OUTPUT]
        if name == "sbatch" and self._last_inv is not None:  # --wait: rc is the job's
            match = SUBMITTED.match(out.strip())
            if match:
                self.invocations[int(match.group(1))] = self._last_inv
        self.commands.append(Command(tuple(argv), out, err, rc))
        return out, err, rc

    def _read(self, name: str) -> str:
        path = (self.cluster.workdir / name).resolve()
        if self.cluster.workdir.resolve() not in path.parents or not path.is_file():
            return ""
        return path.read_text(encoding="utf-8", errors="replace")[:MAX_ANSWER_BYTES]


def _admin(args: list[str]) -> str | None:
    """scontrol's refusal of an operator command by a plain user, or None (a user's own
    command: show, update jobid=..., hold, requeue...)."""
    if not args:
        return None
    verb = args[0].lower()
    arg = args[1] if len(args) > 1 else ""
    if verb == "update":
        keys = {a.split("=", 1)[0].lower() for a in args[1:]}
        if keys & {"jobid", "job"}:
            return None
        if keys & {"reservationname", "reservation"}:
            return ADMIN_REFUSALS["update reservation"]
        if keys & {"nodename", "node", "partitionname", "partition", "frontendname",
                   "powercap"}:
            return ADMIN_REFUSALS["update"]
        return None
    if verb in ADMIN_REFUSALS:
        return ADMIN_REFUSALS[verb].format(arg=arg)
    return None


def first_job_id(text: str, salt: int = 0) -> int:
    """The lab cluster's FirstJobId: 1000-9999, from the answer's text, so that job ids
    differ between answers (an answer cannot hard-code the id sbatch printed)."""
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
    return 1000 + (int.from_bytes(digest[:4], "big") + 7919 * salt) % 9000


def play(lab: Lab, text: str) -> Trial:
    """Run ``text`` as the answer to ``lab`` and record what Slurm did; with the lab's
    ``alternate_files`` (e.g. a preprocessing job that fails) it is played again there,
    on other job ids (`Trial.alternate`)."""
    trial = play_once(lab, text, lab.files, first_job_id(text))
    if lab.alternate_files and not trial.refused:
        files = dict(lab.files)
        files.update(dict(lab.alternate_files))
        alt = play_once(lab, text, tuple(files.items()), first_job_id(text, 1))
        trial = replace(trial, alternate=alt)
    return trial


def play_once(lab: Lab, text: str, files: tuple[tuple[str, str], ...],
              first_id: int) -> Trial:
    """One play of ``text`` on a fresh cluster whose scratch folder holds ``files``."""
    with tempfile.TemporaryDirectory(prefix=f"lab-{lab.id}-") as tmp:
        workdir = Path(tmp)
        for name, content in files:
            (workdir / name).write_text(content, encoding="utf-8")
        session = _Session(lab, workdir, first_id)
        cluster = session.cluster
        for user, args in lab.setup:  # in order: each is scheduled before the next comes
            cluster.run(["sbatch", *args], user=user)
            cluster.advance(10)
        if lab.setup:
            cluster.advance(60)
        start = cluster.now
        session.stop = start + lab.horizon
        shell = Interpreter(session.run, {"HOME": str(workdir), "USER": cluster.user},
                            max_commands=MAX_COMMANDS)
        refused, said = "", None
        try:
            if lab.kind == "script" and looks_like_script(text):
                _check_script(text)
                (workdir / lab.answer_file).write_text(text, encoding="utf-8")
                shell.run(f"sbatch {shlex.quote(lab.answer_file)}")
            else:
                shell.run(text)
        except (ShellError, LabLimit) as exc:
            refused, said = exc.message, exc.said
        queue: list[JobRecord] = []
        jobs = _observe(session, start, queue) if not refused else ()
        commands = tuple(session.commands)
        cluster.close()
        return Trial(commands, jobs, start, lab.event.kind if lab.event else "", refused,
                     queue=tuple(queue), said=said)


def _observe(session: _Session, start: int, queue: list[JobRecord]
             ) -> tuple[JobFacts, ...]:
    """Let the clock run: capture each job when it first runs, inject the event, end."""
    cluster, lab = session.cluster, session.lab
    ctl = cluster.controller
    ids = sorted(session.invocations)
    if not ids:
        return ()
    firsts, tasks = session.firsts, session.tasks
    after: dict[int, JobRecord] = {}
    stop = start + lab.horizon
    capture = session.capture

    def done() -> bool:
        return all(_settled(ctl.job(j)) for j in ids)

    cluster.advance(1)
    queue.extend(ctl.jobs())
    capture()
    event = lab.event
    if event is not None and event.kind in ("node_failure", "preemption"):
        target = _event_target(ctl, ids, event.job)
        if target is not None:
            _run_until(cluster, lambda: target in firsts or done(), stop, capture)
            if target in firsts:
                rec = firsts[target]
                when = min((rec.start_time or start) + event.at, stop)
                _run_until(cluster, lambda: ctl.job(target).state.is_terminal, when, capture)
                live = ctl.job(target)
                if live.state.value == "RUNNING" and live.allocation is not None:
                    node = live.allocation.nodes[0].node
                    if event.kind == "node_failure":
                        ctl.fail_node(node)
                    else:  # a preempting QOS's job that needs the job's node
                        user, args = event.submit
                        cluster.run(["sbatch", f"--nodelist={node}", *args], user=user)
                    cluster.advance(1)
                    after[target] = ctl.job(target)
    _run_until(cluster, done, stop, capture)
    accounting = ctl.accounting()
    out = []
    for jid in ids:
        inv = session.invocations[jid]
        env, err, argv = tasks.get(jid, ((), "", ()))
        out.append(JobFacts(
            job_id=jid, options=inv.options, script=inv.script_text, first=firsts.get(jid),
            final=ctl.job(jid),
            attempts=tuple(r for r in accounting
                           if r.job_id == jid or r.array_job_id == jid),
            after_event=after.get(jid), tasks=env, task_error=err, step_argv=argv))
    return tuple(out)


#: Pending reasons that never change by themselves: a play may stop there.
STUCK = ("DependencyNeverSatisfied", "JobHeldUser", "JobHeldAdmin")


def _settled(rec: JobRecord) -> bool:
    return rec.state.is_terminal or (rec.state.value == "PENDING"
                                     and rec.reason.value in STUCK)


def _event_target(ctl: Any, ids: list[int], name: str) -> int | None:
    for jid in ids:
        if not name or ctl.job(jid).name == name:
            return jid
    return None


def _run_until(cluster: Cluster, predicate: Any, stop: int, observe: Any) -> None:
    """Run the simulated clock until ``predicate()`` or ``stop``, observing on the way.

    Hops of at most 30 simulated seconds while a job is pending (``observe`` sees
    each job start within 30 s), of an hour otherwise.
    """
    while not predicate():
        now = cluster.now
        if now >= stop:
            return
        pending = any(r.state.value == "PENDING" for r in cluster.controller.jobs())
        cluster.advance(max(1, min(stop - now, 30 if pending else 3600)))
        observe()


_RESOLVE_BASE = "10.1.0."


def task_environments(cluster: Cluster, job: JobRecord, inv: SbatchInvocation
                      ) -> tuple[tuple[TaskEnv, ...], str, tuple[str, ...]]:
    """Each task's environment for the job's first ``srun`` line, as minislurm's slurmd
    builds it (and the DDP wiring `course.ddp.wiring` derives from it).

    Returns (tasks, srun's refusal, the srun arguments); no srun line: ((), "", ()).
    """
    from course.ddp.wiring import WiringError, wiring_from_env
    from minislurm.ctld.step_mgr import plan_step
    from minislurm.options.srun import parse_srun
    from minislurm.slurmd.context import StepContext, job_context
    from minislurm.slurmd.env import batch_environment, step_environments

    steps = script_body(inv.script_text).steps
    if not steps or job.allocation is None:
        return (), "", ()
    argv = steps[0].argv
    ctx = cluster.context()
    names = [n.name for n in cluster.controller.nodes()]
    address = {n: f"{_RESOLVE_BASE}{i + 1}" for i, n in enumerate(names)}

    def resolve(host: str) -> str:
        if host not in address:
            raise OSError(host)
        return address[host]

    try:
        job_ctx = job_context(inv.options, job_id=job.job_id, name=job.name,
                              partition=job.partition,
                              cluster_name=cluster.config.cluster_name,
                              mem_per_cpu=job.mem_per_cpu, user=job.user, uid=job.uid,
                              gid=job.gid, account=job.account, submit_dir=job.work_dir)
        batch = batch_environment(job_ctx, job.allocation, base_env=ctx.env)
        srun = parse_srun(list(argv), env=batch, cwd=ctx.cwd)
        plan = plan_step(job.job_id, job.allocation, srun.options, 0)
        step = StepContext(step_id=0, layout=plan.layout, launcher_port=40000,
                           cpus_on_node=plan.cpus_on_node, gpus=plan.gpus,
                           cpus_per_task=srun.options.cpus_per_task,
                           ntasks_per_node=srun.options.ntasks_per_node,
                           distribution=srun.options.distribution,
                           gpus_per_task=srun.options.gpus_per_task,
                           gpu_bind=dict(srun.options.other).get("gpu-bind"))
        envs = step_environments(job_ctx, job.allocation, step, base_env=batch)
    except SlurmError as exc:
        return (), exc.message, tuple(argv)
    keep = ("SLURM_PROCID", "SLURM_LOCALID", "SLURM_NODEID", "SLURM_NTASKS",
            "CUDA_VISIBLE_DEVICES", "SLURMD_NODENAME", "SLURM_JOB_NODELIST",
            "SLURM_STEP_GPUS", "SLURM_ARRAY_TASK_ID")
    out = []
    for env in envs:
        facts = {k: env[k] for k in keep if k in env}
        with contextlib.suppress(WiringError, OSError, ValueError):
            facts.update(wiring_from_env(
                {k: v for k, v in env.items() if k != "TORCHELASTIC_RUN_ID"},
                resolve=resolve).torch_env())
        out.append(TaskEnv(int(env["SLURM_PROCID"]), env.get("SLURMD_NODENAME", "?"),
                           tuple(sorted(facts.items()))))
    return tuple(out), "", tuple(argv)


__all__ = ["Command", "JobFacts", "LabLimit", "TaskEnv", "Trial", "decode_answer",
           "looks_like_script", "play", "task_environments"]
