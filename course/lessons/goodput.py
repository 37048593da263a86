"""Lesson 7's experiments: what a failure does to a job, and how often to checkpoint.

Three parts, each on minislurm's own controller and simulated clock:

* `FailureDrill`: a ``--requeue`` training job and a ``--no-requeue`` evaluation job
  run on the embedded default cluster; an administrator sets their nodes DOWN
  (``scontrol update nodename=... state=down reason=...``). The training job's attempt
  is logged ``NODE_FAIL`` and the job goes back to PENDING (``Restarts=1``,
  ``Reason=BeginTime``: slurmctld's 121 s requeue delay), then runs again once the
  nodes are resumed; the evaluation job stays ``NODE_FAIL``.
* `SignalDrill`: ``--signal=B:USR1@N`` warns the batch shell shortly before the time
  limit. A script that ignores it ends ``TIMEOUT`` (``ExitCode=0:15``: SIGTERM); one
  that traps it saves a checkpoint and runs ``scontrol requeue $SLURM_JOB_ID``
  (`TrapRunner`), so the job goes on in a new attempt with ``SLURM_RESTART_COUNT``.
* the checkpoint interval: the first-order model of the time wasted (`waste`, Young
  1974) and its optimum ``tau* = sqrt(2 C M)`` (`young_interval`), Daly's (2006)
  higher-order optimum (`daly_interval`) and exact expectation (`exact_goodput`),
  against goodput measured on minislurm with random node failures (`measure`, which
  runs lesson 8's `CheckpointRunner` through `course.lessons.scaling.simulate_run`).
  `goodput_figure` draws them; `GoodputExplorer` puts MTBF and checkpoint-cost
  sliders in front (each move re-measures at most seven runs, cached).

Durations are hours unless a name says otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Protocol

import ipywidgets as widgets
import plotly.graph_objects as go
import simpy

from course import i18n
from course.i18n import N_, widget_lang
from minislurm.ctld.runner import JobBody, Launch, SimulatedRunner
from minislurm.job import Allocation
from minislurm.sim.cluster import Cluster, CommandResult
from minislurm.sim.plots import UIREVISION
from minislurm.slurmd.context import JobContext
from minislurm.slurmd.env import batch_environment
from minislurm.states import JobState

from .collector import collector_paused
from .figure_words import decimal, localise
from .predict import BusyIndicator, NumberQuestion, PredictStep
from .scaling import REQUEUE_WAIT_HOURS, ScaleParams, expected_run, simulate_run, young_interval
from .script_builder import plotly_output

__all__ = [
    "CHECKPOINT_MINUTES",
    "EVAL_SCRIPT",
    "MTBF_HOURS",
    "PREDICT_CHECKPOINT_MINUTES",
    "SIGNALS",
    "TRAIN_SCRIPT",
    "TRAP_SCRIPT",
    "UNTRAPPED_SCRIPT",
    "DrillStep",
    "FailureDrill",
    "FailureModel",
    "GoodputExplorer",
    "JobStatus",
    "Measured",
    "SignalDrill",
    "TrapRunner",
    "best_interval",
    "daly_interval",
    "exact_goodput",
    "first_order_goodput",
    "goodput_figure",
    "interval_grid",
    "job_status",
    "measure",
    "measured_table",
    "restart_environment",
    "summary",
    "sweep",
    "waste",
    "waste_report",
    "young_interval",
]

# ------------------------------------------------------------------ the drills

#: The training job of the failure drill: two whole GPU nodes, may be requeued.
TRAIN_SCRIPT = """#!/bin/bash
#SBATCH --job-name=train
#SBATCH --nodes=2 --gres=gpu:8 --exclusive
#SBATCH --time=6:00:00
#SBATCH --requeue
#MINISLURM runtime=3:00:00
srun python train.py --resume latest
"""

#: The evaluation job of the failure drill: one node, must not be requeued.
EVAL_SCRIPT = """#!/bin/bash
#SBATCH --job-name=eval
#SBATCH --nodes=1 --gres=gpu:8 --exclusive
#SBATCH --time=4:00:00
#SBATCH --no-requeue
#MINISLURM runtime=2:00:00
srun python evaluate.py
"""

#: Signal numbers on Linux, by the names ``--signal`` and ``kill -l`` use.
SIGNALS = {9: "KILL", 10: "USR1", 12: "USR2", 15: "TERM"}


class PrettyPrinter(Protocol):
    """What IPython's ``_repr_pretty_`` hook is given (``IPython.lib.pretty``): the text
    it prints."""

    def text(self, obj: str) -> None: ...


@dataclass(frozen=True, slots=True)
class DrillStep:
    """Commands a learner would type at one step of a drill, with what they printed."""

    title: str
    results: tuple[CommandResult, ...]

    def __str__(self) -> str:
        parts = []
        for r in self.results:
            parts.append(f"$ {r.command}\n{r.stdout}{r.stderr}".rstrip("\n"))
        return "\n\n".join(parts) + "\n"

    def _repr_pretty_(self, printer: PrettyPrinter, cycle: bool) -> None:  # IPython display
        printer.text(str(self).rstrip("\n"))


@dataclass(frozen=True, slots=True)
class JobStatus:
    """A job's state as ``scontrol show job`` prints it: JobState, Restarts, Reason."""

    state: str
    restarts: int
    reason: str
    nodes: str


def job_status(cluster: Cluster, job_id: int) -> JobStatus:
    """``JobState=``, ``Restarts=``, ``Reason=`` and ``NodeList=`` of one job."""
    job = cluster.controller.job(job_id)
    return JobStatus(job.state.value, job.restart_count, job.reason.value, job.nodelist)


def restart_environment(cluster: Cluster, job_id: int) -> dict[str, str]:
    """The batch script's ``SLURM_JOB_ID`` and ``SLURM_RESTART_COUNT`` of a running job.

    Built by minislurm's slurmd (`minislurm.slurmd.env.batch_environment`), which sets
    ``SLURM_RESTART_COUNT`` only once the job has been requeued, as Slurm's setup_env.
    """
    job = cluster.controller.job(job_id)
    if job.allocation is None:
        raise ValueError(f"job {job_id} is not running: it has no batch environment")
    ctx = JobContext(job_id=job.job_id, name=job.name, partition=job.partition,
                     cluster_name=cluster.config.cluster_name, user=job.user,
                     restart_count=job.restart_count)
    env = batch_environment(ctx, job.allocation, base_env={})
    return {k: env[k] for k in ("SLURM_JOB_ID", "SLURM_RESTART_COUNT") if k in env}


class FailureDrill:
    """Fail the nodes of a ``--requeue`` and a ``--no-requeue`` job; watch Slurm react.

    Call the steps in order: `start`, `fail`, `inspect`, `resume`, `finish`. Each
    returns the commands (`DrillStep`) a learner would type; ``train`` and ``evaluation``
    are the two job ids.
    """

    def __init__(self, cluster: Cluster | None = None,
                 reason: str = "GPU Xid 79: fell off the bus") -> None:
        self.cluster = cluster if cluster is not None else Cluster()
        self.reason = reason
        self.train = self.cluster.sbatch(TRAIN_SCRIPT)
        self.evaluation = self.cluster.sbatch(EVAL_SCRIPT)
        self.failed: str = ""

    def _run(self, *commands: str) -> tuple[CommandResult, ...]:
        return tuple(self.cluster.run(c) for c in commands)

    def start(self, minutes: int = 60) -> DrillStep:
        """Both jobs run for ``minutes``."""
        self.cluster.advance(minutes * 60)
        return DrillStep("both jobs run", self._run("squeue"))

    def fail(self) -> DrillStep:
        """Set one node of each job DOWN, as an administrator does when a GPU dies."""
        train = self.cluster.controller.job(self.train)
        ev = self.cluster.controller.job(self.evaluation)
        if train.allocation is None or ev.allocation is None:
            raise RuntimeError("both jobs must be running before their nodes fail")
        nodes = [train.allocation.nodes[-1].node, ev.allocation.nodes[0].node]
        self.failed = ",".join(nodes)
        down = self.cluster.run(
            f"scontrol update nodename={self.failed} state=down reason='{self.reason}'")
        self.cluster.advance(1)
        return DrillStep("the nodes go down", (down, *self._run("sinfo -R", "squeue")))

    def inspect(self) -> DrillStep:
        """The requeued job (PENDING, Restarts=1) and both jobs' accounting."""
        show = self.cluster.run(f"scontrol show job {self.train}")
        lines = [ln for ln in show.stdout.splitlines()
                 if any(k in ln for k in ("JobState=", "Requeue=", "EligibleTime="))]
        brief = CommandResult(f"scontrol show job {self.train}  # (3 of its lines)",
                              "\n".join(lines) + "\n", show.stderr, show.returncode)
        return DrillStep("requeued or failed", (brief, *self._run(
            "sacct -D -X --format=JobID,JobName,State,ExitCode,Start,End,Elapsed,NodeList")))

    def resume(self) -> DrillStep:
        """The nodes are repaired (``state=resume``); the training job starts again."""
        if not self.failed:
            raise RuntimeError("call fail() first")
        up = self.cluster.run(f"scontrol update nodename={self.failed} state=resume")
        self.cluster.wait(lambda: job_status(self.cluster, self.train).state != "PENDING",
                          limit=3600)
        return DrillStep("the nodes come back", (up, *self._run("sinfo", "squeue")))

    def finish(self) -> DrillStep:
        """The training job completes; accounting keeps one record per attempt."""
        self.cluster.wait_job(self.train)
        return DrillStep("the end", self._run(
            "sacct -D -X --format=JobID,JobName,State,ExitCode,Start,End,Elapsed,NodeList"))


class TrapRunner(SimulatedRunner):
    """Simulated batch scripts, some of which trap ``--signal``'s warning.

    A trapped job (`plan`) needs ``work`` seconds of training in all. When its batch
    shell gets the warning signal it forwards it to the training program, which saves
    a checkpoint (``save`` seconds), then the shell runs ``scontrol requeue
    $SLURM_JOB_ID`` (the ``requeue`` callback: the controller's ``requeue``). The next
    attempt resumes: it runs only the work not yet saved. Other jobs behave as in
    `SimulatedRunner` (the warning is only logged).
    """

    def __init__(self, env: simpy.Environment) -> None:
        super().__init__(env)
        self.requeue: Callable[[int], None] | None = None
        self._plans: dict[int, tuple[int, int]] = {}  # job id -> (work, save) seconds
        self._saved: dict[int, int] = {}  # job id -> seconds of work checkpointed
        self._started: dict[int, int] = {}  # job id -> env time the attempt started

    def plan(self, job_id: int, *, work: int, save: int = 60) -> None:
        """Job ``job_id`` traps the warning; it needs ``work`` s, a checkpoint ``save`` s."""
        self._plans[job_id] = (work, save)
        self._saved.setdefault(job_id, 0)

    def saved(self, job_id: int) -> int:
        """Seconds of work of ``job_id`` that reached a checkpoint."""
        return self._saved.get(job_id, 0)

    def start(self, job: Launch, allocation: Allocation, body: JobBody) -> simpy.Event:
        """A trapped job runs only what is left of its work (``--resume latest``)."""
        plan = self._plans.get(job.job_id)
        if plan is not None:
            self._started[job.job_id] = int(self.env.now)
            body = JobBody(run_time=plan[0] - self._saved[job.job_id], exit_code=0)
        return super().start(job, allocation, body)

    def _finish(self, job_id: int, done: simpy.Event, exit_code: int) -> None:
        if job_id in self._plans and not done.triggered:
            self._saved[job_id] = self._plans[job_id][0]  # the last attempt saves the rest
        super()._finish(job_id, done, exit_code)

    def warn_signal(self, job_id: int, signal: int) -> None:
        """``--signal=B:SIG@T`` reached the batch shell: checkpoint, then requeue."""
        self.signals.append((int(self.env.now), job_id, signal))
        plan = self._plans.get(job_id)
        done = self._running.get(job_id)
        if plan is None or done is None:
            return
        work, save = plan
        started = self._started[job_id]

        def requeue(_ev: object) -> None:
            if done.triggered or self._running.get(job_id) is not done:
                return  # the attempt ended meanwhile (finished, timed out)
            ran = int(self.env.now) - started - save
            self._saved[job_id] = min(work, self._saved[job_id] + max(0, ran))
            if self.requeue is not None:
                self.requeue(job_id)

        self.env.timeout(save).callbacks.append(requeue)


#: The signal drill's job that ignores the warning (the time limit kills it).
UNTRAPPED_SCRIPT = """#!/bin/bash
#SBATCH --job-name=no-trap
#SBATCH --nodes=1 --gres=gpu:8
#SBATCH --time=10:00
#SBATCH --signal=B:USR1@120
srun python train.py --resume latest   # 20 minutes of work
#MINISLURM runtime=20:00
"""

#: The signal drill's job that traps the warning: checkpoint, then requeue itself.
TRAP_SCRIPT = """#!/bin/bash
#SBATCH --job-name=trap
#SBATCH --nodes=1 --gres=gpu:8
#SBATCH --time=10:00
#SBATCH --signal=B:USR1@120
#SBATCH --requeue
on_usr1() {
    echo "USR1: saving a checkpoint, then requeueing (restart ${SLURM_RESTART_COUNT:-0})"
    kill -USR1 "$train"        # the training loop saves at the end of its step
    wait "$train"
    scontrol requeue "$SLURM_JOB_ID"
}
trap on_usr1 USR1
srun python train.py --resume latest &   # 20 minutes of work
train=$!
wait "$train"
"""

TRAP_WORK = 20 * 60  # seconds of training the signal drill's jobs need
TRAP_SAVE = 60  # seconds a checkpoint takes to write


class SignalDrill:
    """Two 20-minute trainings with ``--time=10:00 --signal=B:USR1@120``.

    ``untrapped`` ignores the warning and ends TIMEOUT; ``trapped`` checkpoints and
    requeues itself (`TrapRunner`) until its work is done.
    """

    def __init__(self) -> None:
        self.cluster = Cluster()
        ctl = self.cluster.controller
        self.runner = TrapRunner(self.cluster.env)
        self.runner.requeue = ctl.requeue
        ctl.runner = self.runner
        self.start = self.cluster.now
        self.untrapped = self.cluster.sbatch(UNTRAPPED_SCRIPT)
        self.trapped = self.cluster.sbatch(TRAP_SCRIPT)
        self.runner.plan(self.trapped, work=TRAP_WORK, save=TRAP_SAVE)
        self.restart_env: list[dict[str, str]] = []  # each attempt's, as it starts
        #: ``scontrol show job`` of the untrapped job just after it ended (slurmctld
        #: forgets ended jobs after MinJobAge, 300 s; sacct keeps them)
        self.timed_out: CommandResult | None = None

    def run(self) -> None:
        """Play the clock until both jobs have ended."""
        ctl = self.cluster.controller
        seen = -1
        while not (ctl.job(self.untrapped).state.is_terminal
                   and ctl.job(self.trapped).state.is_terminal):
            if self.timed_out is None and ctl.job(self.untrapped).state.is_terminal:
                self.timed_out = self.cluster.run(f"scontrol show job {self.untrapped}")
            job = ctl.job(self.trapped)
            if job.state is JobState.RUNNING and job.restart_count != seen:
                seen = job.restart_count
                self.restart_env.append(restart_environment(self.cluster, self.trapped))
            self.cluster.env.step()

    def signal_log(self) -> str:
        """Which signal reached which job when (minutes:seconds after the submission)."""
        names = {self.untrapped: "no-trap", self.trapped: "trap"}
        lines = [f"{'time':>6}  {'job':<12} signal"]
        epoch0 = self.cluster.now - int(self.cluster.env.now)
        for t, job_id, sig in self.runner.signals:
            m, s = divmod(epoch0 + t - self.start, 60)
            lines.append(f"{m:>3}:{s:02d}  {job_id} {names.get(job_id, ''):<9} "
                         f"SIG{SIGNALS.get(sig, str(sig))}")
        return "\n".join(lines) + "\n"

    def timeout_fields(self) -> str:
        """The ``JobState`` and ``ExitCode`` lines of the untrapped job's ``scontrol show
        job`` just after it ended (TIMEOUT, ``ExitCode=0:15``)."""
        if self.timed_out is None:
            raise RuntimeError("run() the drill first")
        return "\n".join(line for line in self.timed_out.stdout.splitlines()
                         if "JobState" in line or "ExitCode" in line)

    def accounting(self) -> CommandResult:
        """sacct's record of every attempt (ExitCode 0:15 = killed by SIGTERM)."""
        return self.cluster.run("sacct -D --format=JobID,JobName,State,ExitCode,Start,End,Elapsed")


# ------------------------------------------------------------ the analytic model


@dataclass(frozen=True, slots=True)
class FailureModel:
    """A training job that fails every ``mtbf`` hours on average (the job's MTBF, M).

    ``checkpoint`` (C) is the time to write one checkpoint, ``restart`` the time to
    reload it and re-form the process group, ``requeue`` Slurm's wait before the
    requeued job may start again (BeginTime = now + 121 s). R = restart + requeue.
    """

    mtbf: float
    checkpoint: float
    restart: float = 10 / 60
    requeue: float = REQUEUE_WAIT_HOURS

    def __post_init__(self) -> None:
        if self.mtbf <= 0 or self.checkpoint <= 0:
            raise ValueError("the MTBF and the checkpoint cost must be positive")
        if self.restart < 0 or self.requeue < 0:
            raise ValueError("restart and requeue times cannot be negative")

    @property
    def downtime(self) -> float:
        """R: what each failure costs besides the lost work (requeue wait + restart)."""
        return self.restart + self.requeue

    @property
    def optimum(self) -> float:
        """Young's optimum interval ``tau* = sqrt(2 C M)``."""
        return young_interval(self.checkpoint, self.mtbf)


def waste(m: FailureModel, tau: float) -> float:
    """First-order share of the wall time wasted with a checkpoint every ``tau`` hours.

        waste(tau) = C / tau  +  tau / (2 M)  +  R / M

    ``C / tau``: one checkpoint write per ``tau`` of work; ``tau / (2 M)``: a failure
    every M hours loses on average half an interval of work; ``R / M``: each failure
    also costs the requeue wait and the restart. It holds while tau, C and R are small
    against M; its minimum, where ``C / tau**2 = 1 / (2 M)``, is Young's
    ``tau* = sqrt(2 C M)`` (J. W. Young, "A first order approximation to the optimum
    checkpoint interval", CACM 17(9), 1974), where the first two terms are equal.
    """
    if tau <= 0:
        raise ValueError("the checkpoint interval must be positive")
    return m.checkpoint / tau + tau / (2 * m.mtbf) + m.downtime / m.mtbf


def first_order_goodput(m: FailureModel, tau: float) -> float:
    """``1 - waste(tau)``, floored at 0 (useful work / wall time, first order)."""
    return max(0.0, 1.0 - waste(m, tau))


def daly_interval(checkpoint: float, mtbf: float) -> float:
    """Daly's higher-order optimum interval (J. T. Daly, "A higher order estimate of the
    optimum checkpoint interval for restart dumps", FGCS 22(3), 2006)::

        tau = sqrt(2 C M) [1 + sqrt(C / 2M) / 3 + (C / 2M) / 9] - C   if C < 2M, else M
    """
    if checkpoint <= 0 or mtbf <= 0:
        raise ValueError("the checkpoint cost and the MTBF must be positive")
    if checkpoint >= 2 * mtbf:
        return mtbf
    x = checkpoint / (2 * mtbf)
    return math.sqrt(2 * checkpoint * mtbf) * (1 + math.sqrt(x) / 3 + x / 9) - checkpoint


def exact_goodput(m: FailureModel, tau: float, work: float | None = None) -> float:
    """Expected goodput for exponential failures (Daly 2006, lesson 8's `expected_run`).

    ``work`` defaults to a whole number of intervals (so no short last segment).
    """
    w = work if work is not None else 100 * tau
    return expected_run(_scale_params(m, tau), w).goodput


def waste_report(m: FailureModel, taus: Sequence[float] | None = None) -> str:
    """Young's first-order waste, term by term, at each interval of ``taus`` (hours;
    default τ*/4, τ*, 4τ*), with the exact goodput, then Young's and Daly's optimum."""
    lines = []
    for tau in taus if taus is not None else (m.optimum / 4, m.optimum, 4 * m.optimum):
        lines.append(f"tau = {tau * 60:4.0f} min: waste {waste(m, tau):.1%} "
                     f"(checkpoints {m.checkpoint / tau:.1%}, lost work {tau / (2 * m.mtbf):.1%}, "
                     f"restarts {m.downtime / m.mtbf:.1%}); exact goodput "
                     f"{exact_goodput(m, tau):.1%}")
    lines.append(f"Young: {m.optimum * 60:.0f} min, "
                 f"Daly: {daly_interval(m.checkpoint, m.mtbf) * 60:.0f} min")
    return "\n".join(lines)


def _scale_params(m: FailureModel, tau: float, nodes: int = 1) -> ScaleParams:
    """Lesson 8's job description for ``m`` on ``nodes`` nodes (node MTBF = M x nodes)."""
    return ScaleParams(8 * nodes, node_mtbf=m.mtbf * nodes, checkpoint=m.checkpoint,
                       restart=m.restart, interval=tau, requeue=m.requeue)


def interval_grid(m: FailureModel, points: int = 7, low: float = 0.25,
                  high: float = 4.0) -> tuple[float, ...]:
    """``points`` intervals from ``low`` x tau* to ``high`` x tau*, evenly on a log scale."""
    if points < 2 or not 0 < low < 1 < high:
        raise ValueError("need at least 2 points and low < 1 < high")
    step = math.log(high / low) / (points - 1)
    return tuple(m.optimum * low * math.exp(i * step) for i in range(points))


# ------------------------------------------------------------ measured on minislurm

#: Failures one measured run sees on average: the run does FAILURES x MTBF of work.
FAILURES = 100
#: Nodes of the measured job (the node MTBF is the job MTBF x NODES), spare nodes
#: beside it, and hours a failed node is out for repair.
NODES, SPARES, REPAIR = 4, 4, 0.5


@dataclass(frozen=True, slots=True)
class Measured:
    """One run on minislurm with a checkpoint every ``tau`` hours."""

    tau: float
    goodput: float
    failures: int  # interruptions of the job (NODE_FAIL attempts)
    wall: float  # hours from the first start to the end
    work: float  # hours of useful work


def measure(m: FailureModel, tau: float, *, seed: int = 0,
            failures: int = FAILURES) -> Measured:
    """Goodput of one training run on a minislurm cluster with random node failures.

    The job (`NODES` whole nodes, ``--requeue``) does ``failures`` x MTBF hours of work,
    saving a checkpoint every ``tau``; minislurm's controller fails nodes at random
    (``random_failures``, exponential) and requeues the job; lesson 8's
    `CheckpointRunner` keeps the work that reached a checkpoint.
    """
    run = simulate_run(_scale_params(m, tau, NODES), failures * m.mtbf, seed=seed,
                       spares=SPARES, repair=REPAIR)
    b = run.breakdown
    return Measured(tau, b.goodput, int(b.failures), b.wall, b.useful)


@lru_cache(maxsize=256)
def sweep(m: FailureModel, taus: tuple[float, ...], seed: int = 0) -> tuple[Measured, ...]:
    """`measure` at each interval (same seed for all: common failure draws); cached.

    The collector stays paused until every run's cluster is garbage
    (`course.lessons.collector`: one young collection frees them all)."""
    with collector_paused():
        return tuple(measure(m, t, seed=seed) for t in taus)


# ------------------------------------------------------------ the figure and widget


def _minutes(h: float, lang: str = "en") -> str:
    return f"{h * 60:.0f} min" if h < 2 else f"{decimal(h, '.1f', lang)} h"


def summary(m: FailureModel, lang: str = "en") -> str:
    """One line: the optimum interval and the goodput there (in ``lang``)."""
    t = m.optimum
    return i18n.t(lang, "job MTBF {mtbf}, checkpoint {write}: τ* = √(2CM) = {tau} → goodput "
                        "{first} (first order), {exact} (exact)").format(
        mtbf=_minutes(m.mtbf, lang), write=_minutes(m.checkpoint, lang),
        tau=_minutes(t, lang), first=decimal(first_order_goodput(m, t), ".1%", lang),
        exact=decimal(exact_goodput(m, t), ".1%", lang))


def _goodput_data(m: FailureModel, points: Sequence[Measured],
                  lang: str) -> list[dict[str, Any]]:
    """What changes between two `goodput_figure`s: each trace's data and legend name
    (first order, exact, measured if any, Young's line, Daly's optimum)."""
    grid = interval_grid(m, 61, 0.125, 8.0)
    xs = [t * 60 for t in grid]
    traces: list[dict[str, Any]] = [
        {"x": xs, "y": [round(first_order_goodput(m, t), 5) for t in grid]},
        {"x": xs, "y": [round(exact_goodput(m, t), 5) for t in grid]}]
    if points:
        traces.append({
            "x": [p.tau * 60 for p in points], "y": [round(p.goodput, 5) for p in points],
            "text": [i18n.t(lang, "{failures} failures in {wall} h").format(
                failures=p.failures, wall=f"{p.wall:.0f}") for p in points]})
    t = m.optimum
    traces.append({"x": [t * 60, t * 60], "y": [0, 1],
                   "name": i18n.t(lang, "Young τ* = {tau}").format(tau=_minutes(t, lang))})
    d = daly_interval(m.checkpoint, m.mtbf)
    traces.append({"x": [d * 60], "y": [round(exact_goodput(m, d), 5)],
                   "name": i18n.t(lang, "Daly optimum {tau}").format(tau=_minutes(d, lang))})
    return traces


def goodput_figure(m: FailureModel, points: Sequence[Measured] = (), *,
                   lang: str = "en") -> go.Figure:
    """Goodput versus checkpoint interval: first-order model, exact model, minislurm.

    A vertical line marks Young's tau*, a diamond Daly's optimum.  ``lang``: the language
    of the title, axes, legend and hover words (MTBF, goodput, minislurm stay).
    """
    first, exact, *rest = _goodput_data(m, points, lang)
    young, daly = rest[-2:]
    fig = go.Figure()
    fig.add_trace(go.Scatter(
        x=first["x"], y=first["y"], mode="lines",
        name=i18n.t(lang, "first order: 1 − C/τ − τ/2M − R/M"),
        line={"color": "#1f77b4", "width": 3}))
    fig.add_trace(go.Scatter(
        x=exact["x"], y=exact["y"], mode="lines",
        name=i18n.t(lang, "exact, exponential failures (Daly)"),
        line={"color": "#7f7f7f", "dash": "dot"}))
    if points:
        measured = rest[0]
        fig.add_trace(go.Scatter(
            x=measured["x"], y=measured["y"],
            mode="markers", name=i18n.t(lang, "measured on minislurm"),
            marker={"symbol": "circle", "size": 11, "color": "#d62728",
                    "line": {"width": 1, "color": "black"}},
            text=measured["text"],
            hovertemplate="τ = %{x:.0f} min: goodput %{y:.1%}<br>%{text}<extra></extra>"))
    fig.add_trace(go.Scatter(
        x=young["x"], y=young["y"], mode="lines", name=young["name"],
        line={"color": "black", "dash": "dash", "width": 1}))
    fig.add_trace(go.Scatter(
        x=daly["x"], y=daly["y"], mode="markers", name=daly["name"],
        marker={"symbol": "diamond", "size": 12, "color": "#ff7f0e"}))
    fig.update_layout(
        template="plotly_white", uirevision=UIREVISION, height=430,
        title={"text": summary(m, lang), "font": {"size": 14}},
        xaxis={"title": i18n.t(lang, "checkpoint interval τ (minutes of work, log scale)"),
               "type": "log"},
        yaxis={"title": i18n.t(lang, "goodput (useful / wall)"), "range": [0, 1],
               "tickformat": ".0%"},
        legend={"orientation": "h", "y": -0.25}, margin={"t": 60, "b": 120})
    return localise(fig, lang)


def update_goodput_figure(fig: go.Figure, m: FailureModel, points: Sequence[Measured], *,
                          lang: str = "en") -> go.Figure:
    """``fig`` (a `goodput_figure` with measured points) redrawn in place for ``m`` and
    ``points``: the traces' data, the two optima's names and the title change in one
    ``batch_update``, so a slider move does not build a new figure (plotly validates its
    template again for each: ~10 ms).  The result equals ``goodput_figure(m, points)``."""
    data = _goodput_data(m, points, lang)
    if not points or len(fig.data) != len(data):
        raise ValueError("not a goodput figure with measured points")
    with fig.batch_update():
        for trace, values in zip(fig.data, data, strict=True):
            trace.update(values)
        fig.layout.title.text = summary(m, lang)
    return fig


def best_interval(points: Sequence[Measured]) -> Measured:
    """The measured run with the highest goodput (the first of equals)."""
    if not points:
        raise ValueError("no measured run")
    return max(points, key=lambda p: p.goodput)


#: The explorer's prediction: the best interval with this checkpoint cost (minutes).
PREDICT_CHECKPOINT_MINUTES = 30


#: The sliders' values: the job's MTBF (hours) and the checkpoint cost (minutes).
MTBF_HOURS = (1, 2, 3, 4, 6, 8, 12, 16, 24)
CHECKPOINT_MINUTES = (1, 2, 5, 10, 15, 20, 30)


class GoodputExplorer:
    """MTBF and checkpoint-cost sliders; the figure re-measures and redraws.

    `refresh` (what each slider move calls) runs at most seven measured runs on
    minislurm (results are cached), then redraws, with a busy label meanwhile. Before
    it opens, the learner predicts the best checkpoint interval with a
    `PREDICT_CHECKPOINT_MINUTES` write (`best_interval` of that sweep); the check moves
    the slider there.
    """

    def __init__(self, mtbf: float = 4, checkpoint_minutes: float = 5,
                 restart_minutes: float = 10, seed: int = 0, lang: str | None = None) -> None:
        self.lang = lang = widget_lang(lang)
        self.restart, self.seed = restart_minutes / 60, seed
        wide = {"description_width": "170px"}
        self.mtbf = widgets.SelectionSlider(
            options=list(MTBF_HOURS), value=mtbf, description=i18n.t(lang, "job MTBF M (hours)"),
            continuous_update=False, style=wide, layout=widgets.Layout(width="480px"))
        self.checkpoint = widgets.SelectionSlider(
            options=list(CHECKPOINT_MINUTES), value=checkpoint_minutes,
            description=i18n.t(lang, "checkpoint write C (min)"), continuous_update=False,
            style=wide, layout=widgets.Layout(width="480px"))
        self.table = widgets.HTML()
        self.figure_view = widgets.Output()
        self.busy = BusyIndicator(lang)
        for s in (self.mtbf, self.checkpoint):
            s.observe(lambda _c: self.refresh(), names="value")
        body = widgets.VBox([self.mtbf, widgets.HBox([self.checkpoint, self.busy.view]),
                             self.figure_view, self.table])
        question = NumberQuestion(
            i18n.t(lang, "Make the checkpoint write {write} minutes (job MTBF {mtbf} h, restart "
              "{restart} min). Which checkpoint interval τ gives the best goodput measured "
              "on minislurm? (minutes of work)").format(
                write=PREDICT_CHECKPOINT_MINUTES, mtbf=f"{mtbf:g}",
                restart=f"{restart_minutes:g}"),
            self.predicted_interval, unit="min", rel_tolerance=0.25, digits=0,
            low=N_("short"), high=N_("long"))
        self.predict = PredictStep(question, body, on_checked=self._show_prediction,
                                   busy=self.busy)
        self.box = widgets.VBox([self.predict.view, body])
        self.points: tuple[Measured, ...] = ()
        self.figure = go.Figure()
        self.refresh()

    @property
    def model(self) -> FailureModel:
        """The job the sliders describe."""
        return FailureModel(float(self.mtbf.value), float(self.checkpoint.value) / 60,
                            restart=self.restart)

    def predicted_interval(self) -> float:
        """Minutes: the best measured interval (`best_interval` of `sweep`, as `refresh`
        measures it) with a `PREDICT_CHECKPOINT_MINUTES` write at the starting MTBF."""
        m = FailureModel(float(self.mtbf.value), PREDICT_CHECKPOINT_MINUTES / 60,
                         restart=self.restart)
        return best_interval(sweep(m, interval_grid(m), self.seed)).tau * 60

    def _show_prediction(self) -> None:
        self.checkpoint.value = PREDICT_CHECKPOINT_MINUTES

    def refresh(self) -> None:
        """Measure the grid of intervals for the sliders' values and redraw."""
        m = self.model
        with self.busy.working("measuring {n} runs on minislurm…", n=len(interval_grid(m))):
            self.points = sweep(m, interval_grid(m), self.seed)
            if self.figure.data:  # drawn before: update its data in place
                update_goodput_figure(self.figure, m, self.points, lang=self.lang)
            else:
                self.figure = goodput_figure(m, self.points, lang=self.lang)
            self.figure_view.outputs = (plotly_output(self.figure),)
            self.table.value = f"<pre>{measured_table(m, self.points, lang=self.lang)}</pre>"

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.box)


def measured_table(m: FailureModel, points: Sequence[Measured], *, lang: str = "en") -> str:
    """The measured runs beside both models, one line per interval (``lang``: the
    headers' language, a column widening to its header, and the decimal comma in pt-BR)."""
    heads = ["tau", i18n.t(lang, "failures"), i18n.t(lang, "measured"),
             i18n.t(lang, "1st order"), i18n.t(lang, "exact")]
    w = [max(len(h), n) for h, n in zip(heads, (8, 8, 9, 9, 6), strict=True)]
    rows = [" ".join(f"{h:>{n}}" for h, n in zip(heads, w, strict=True))]
    for p in points:
        cells = (_minutes(p.tau, lang), str(p.failures), decimal(p.goodput, ".1%", lang),
                 decimal(first_order_goodput(m, p.tau), ".1%", lang),
                 decimal(exact_goodput(m, p.tau), ".1%", lang))
        rows.append(" ".join(f"{c:>{n}}" for c, n in zip(cells, w, strict=True)))
    return "\n".join(rows) + "\n"

