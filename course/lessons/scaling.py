"""Lesson 8: what failures cost a training job as it grows from 8 to 100,000 GPUs.

Two views of the same question, meant to agree:

* **the model** (`expected_run`): nodes fail independently with a mean time between
  failures ``node_mtbf``, so a job on ``n`` nodes fails every ``node_mtbf / n`` on
  average. The job saves a checkpoint every ``interval`` of work (cost ``checkpoint``),
  and after a failure it waits for Slurm to requeue it (``requeue``: the 121 s BeginTime
  delay slurmctld sets, ``--requeue``) and then reloads the last checkpoint
  (``restart``). With exponential failures the expected wall time is exact
  (Daly 2006, plus the requeue wait)::

      T = segments * (M + Q) * e^(R/M) * (e^((tau + C)/M) - 1)

  and the interval defaults to Young's optimum ``tau = sqrt(2 C M)``.
* **the simulation** (`simulate_run`): the same job on a minislurm cluster of that
  size (plus hot spares). minislurm's controller injects exponential node failures
  (``Controller.random_failures``), requeues the job (NODE_FAIL, Restarts=n),
  reschedules it on healthy nodes; `CheckpointRunner`, the training program, keeps
  the progress that reached a checkpoint and loses the rest.

All durations are hours unless a name says otherwise.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import simpy

from minislurm.common.accounts import AssociationSet, load_associations
from minislurm.conf import SlurmConfig, parse_config
from minislurm.ctld.lifecycle import REQUEUE_DELAY
from minislurm.sim import Cluster

from .checkpointing import CheckpointRunner, RunBreakdown
from .collector import collector_paused

#: Slurm waits this long before a requeued job may start again (BeginTime = now + 121 s).
REQUEUE_WAIT_HOURS = (REQUEUE_DELAY + 1) / 3600

#: Per-node MTBF behind the defaults: Meta reported 419 unexpected interruptions in 54
#: days of Llama 3 pre-training on 16,384 H100s (2,048 nodes): one every ~3.1 h, so a
#: node fails about every 2,048 x 3.1 h ~ 6,300 h.
NODE_MTBF_HOURS = 6000.0


@dataclass(frozen=True, slots=True)
class ScaleParams:
    """One training job at one scale.

    ``interval=None`` uses Young's optimum; ``checkpoint`` and ``restart`` are hours.
    """

    gpus: int
    gpus_per_node: int = 8
    node_mtbf: float = NODE_MTBF_HOURS
    checkpoint: float = 5 / 60
    restart: float = 10 / 60
    interval: float | None = None
    requeue: float = REQUEUE_WAIT_HOURS

    def __post_init__(self) -> None:
        if self.gpus < 1 or self.gpus_per_node < 1:
            raise ValueError("a job needs at least one GPU and one GPU per node")
        if self.node_mtbf <= 0 or self.checkpoint < 0 or self.restart < 0 or self.requeue < 0:
            raise ValueError("MTBF must be positive; checkpoint, restart and requeue >= 0")
        if self.interval is not None and self.interval <= 0:
            raise ValueError("the checkpoint interval must be positive")

    @property
    def nodes(self) -> int:
        """Nodes the job occupies (whole nodes: ``--exclusive --gres=gpu:8``)."""
        return math.ceil(self.gpus / self.gpus_per_node)

    @property
    def job_mtbf(self) -> float:
        """Mean time between failures that hit the job: node MTBF / nodes."""
        return job_mtbf(self.node_mtbf, self.nodes)

    @property
    def tau(self) -> float:
        """The checkpoint interval in use (hours of work between two checkpoints)."""
        if self.interval is not None:
            return self.interval
        return young_interval(self.checkpoint, self.job_mtbf)


def job_mtbf(node_mtbf: float, nodes: int) -> float:
    """A job on ``nodes`` independent nodes fails ``nodes`` times as often as one node."""
    if nodes < 1:
        raise ValueError("a job runs on at least one node")
    return node_mtbf / nodes


def young_interval(checkpoint: float, mtbf: float) -> float:
    """Young's optimum checkpoint interval ``sqrt(2 C M)`` (1974); C=0 means 'never'."""
    return math.sqrt(2 * checkpoint * mtbf) if checkpoint > 0 else math.inf


def size_table(gpus: Sequence[int] = (8, 1024, 16384, 100000)) -> str:
    """For each job size (default `ScaleParams` otherwise): nodes, how often a failure
    hits the job, and Young's checkpoint interval."""
    lines = []
    for n in gpus:
        p = ScaleParams(n)
        lines.append(f"{n:>7,} GPUs = {p.nodes:>6,} nodes: a failure every {p.job_mtbf:8.2f} h, "
                     f"checkpoint every {p.tau * 60:6.0f} min of work")
    return "\n".join(lines)


def segments(work: float, tau: float) -> list[float]:
    """The work between checkpoints: full intervals, then the remainder (each saved)."""
    if work <= 0:
        raise ValueError("the run needs some work to do")
    if math.isinf(tau) or tau >= work:
        return [work]
    full = int(work // tau)
    rest = work - full * tau
    return [tau] * full + ([rest] if rest > 1e-9 else [])


def expected_run(p: ScaleParams, work: float) -> RunBreakdown:
    """The expected breakdown of a run doing ``work`` hours of training (see module doc)."""
    m, q, r, c = p.job_mtbf, p.requeue, p.restart, p.checkpoint
    useful = ckpt = lost = restart = requeue = failures = 0.0
    # what a segment adds depends only on its length: computed once per length (every
    # segment but the last is one interval), then added segment after segment as before
    terms: dict[float, tuple[float, float, float, float]] = {}
    for seg in segments(work, p.tau):
        term = terms.get(seg)
        if term is None:
            s = seg + c
            fails = math.expm1(s / m)  # expected failed tries of this segment
            # each failure: requeue wait, then the restart (which may itself be interrupted)
            term = terms[seg] = (m * math.expm1(s / m) - s, fails * q * math.exp(r / m),
                                 fails * m * math.expm1(r / m), fails * math.exp(r / m))
        useful += seg
        ckpt += c
        lost += term[0]
        requeue += term[1]
        restart += term[2]
        failures += term[3]
    return RunBreakdown(useful, ckpt, lost, restart, requeue, failures)


@lru_cache(maxsize=16)
def frontier_config(nodes: int, gpus_per_node: int = 8) -> SlurmConfig:
    """A cluster of ``nodes`` GPU nodes in one partition ``train`` (no time limit).

    Parsed once per size (a frozen record): a second run of the same size, as the
    explorer's Simulate button makes, does not parse 2,000 node lines again."""
    width = max(5, len(str(nodes)))
    names = f"g[{'1'.zfill(width)}-{str(nodes).zfill(width)}]"
    text = (
        "ClusterName=frontier\nSlurmctldHost=localhost\nSchedulerType=sched/backfill\n"
        "SchedulerParameters=bf_interval=30\nSelectType=select/cons_tres\n"
        "SelectTypeParameters=CR_Core_Memory\nGresTypes=gpu\nPriorityType=priority/basic\n"
        "ReturnToService=1\nKillWait=30\n"
        f"NodeName={names} CPUs=96 RealMemory=1000000 Gres=gpu:h100:{gpus_per_node} "
        "State=UNKNOWN\n"
        f"PartitionName=train Nodes={names} Default=YES MaxTime=UNLIMITED State=UP\n"
    )
    gres = f"NodeName={names} Name=gpu Type=h100 File=/dev/nvidia[0-{gpus_per_node - 1}]\n"
    return parse_config(text, "<frontier>", gres_text=gres)


@lru_cache(maxsize=1)
def _default_associations() -> AssociationSet:
    """The embedded associations (a frozen record), read once, not on every run."""
    return load_associations()


@dataclass(frozen=True, slots=True)
class SimulatedRun:
    """What minislurm measured for one run: the breakdown, node failures, the cluster."""

    params: ScaleParams
    work: float
    breakdown: RunBreakdown
    node_failures: int
    spares: int
    job_id: int


@dataclass(frozen=True, slots=True)
class StudyPoint:
    """Several simulated runs of the same job (different failure draws), averaged."""

    runs: tuple[SimulatedRun, ...]

    def __post_init__(self) -> None:
        if not self.runs or len({r.params for r in self.runs}) != 1:
            raise ValueError("a study point needs runs of one and the same job")

    @property
    def params(self) -> ScaleParams:
        """The job simulated."""
        return self.runs[0].params

    @property
    def work(self) -> float:
        """Hours of training work per run."""
        return self.runs[0].work

    @property
    def breakdown(self) -> RunBreakdown:
        """The mean breakdown over the runs."""
        return mean_breakdown([r.breakdown for r in self.runs])

    @property
    def goodputs(self) -> list[float]:
        """Each run's goodput."""
        return [r.breakdown.goodput for r in self.runs]


def mean_breakdown(items: list[RunBreakdown]) -> RunBreakdown:
    """The field-by-field mean of several breakdowns."""
    if not items:
        raise ValueError("no runs to average")
    n = len(items)
    return RunBreakdown(*(sum(getattr(b, f) for b in items) / n for f in (
        "useful", "checkpoint", "lost", "restart", "requeue", "failures")))


def default_spares(nodes: int) -> int:
    """Hot spares kept beside the job: 2% of its nodes, at least one."""
    return max(1, math.ceil(nodes * 0.02))


def simulate_run(
    p: ScaleParams, work: float, *, seed: int = 0, spares: int | None = None,
    repair: float = 24.0, cluster: Cluster | None = None,
) -> SimulatedRun:
    """Run the job on a minislurm cluster with exponential node failures.

    The cluster has the job's nodes plus ``spares``; a failed node comes back after
    ``repair`` hours (ReturnToService=1). Pass ``cluster`` (from `frontier_cluster`)
    to inspect it afterwards with ``sacct``/``sinfo``.
    """
    spares = default_spares(p.nodes) if spares is None else spares
    c = cluster if cluster is not None else frontier_cluster(p, spares=spares)
    ctl = c.controller
    runner = ctl.runner
    if not isinstance(runner, CheckpointRunner):
        raise TypeError("the cluster must run jobs with a CheckpointRunner (frontier_cluster)")
    runner.plan(segments(work, p.tau), checkpoint=p.checkpoint * 3600, restart=p.restart * 3600)
    job_id = c.sbatch(
        "#!/bin/bash\nsrun python train.py --resume latest\n", f"-N{p.nodes}",
        f"--gres=gpu:{p.gpus_per_node}", "--exclusive", "--requeue", "-t", "UNLIMITED",
        "-J", "pretrain",
    )
    rng = random.Random(seed)
    node_failures = 0
    chunk = int(max(6 * 3600, 3 * expected_run(p, work).wall * 3600))
    with collector_paused():  # see course.lessons.collector
        while not runner.finished.triggered:
            plan = ctl.random_failures(p.node_mtbf, int(repair * 3600),
                                       seed=rng.randrange(2**31), until=ctl.now + chunk)
            node_failures += len(plan)
            c.env.run(until=simpy.AnyOf(c.env, [runner.finished, c.env.timeout(chunk)]))
    b = runner.breakdown()
    return SimulatedRun(p, work, b, node_failures, spares, job_id)


def frontier_cluster(p: ScaleParams, *, spares: int | None = None) -> Cluster:
    """An embedded minislurm cluster for ``p``: job nodes + spares, a `CheckpointRunner`."""
    spares = default_spares(p.nodes) if spares is None else spares
    c = Cluster(frontier_config(p.nodes + spares, p.gpus_per_node),
                associations=_default_associations())
    c.controller.runner = CheckpointRunner(c.env)
    return c


__all__ = [
    "NODE_MTBF_HOURS",
    "REQUEUE_WAIT_HOURS",
    "RunBreakdown",
    "ScaleParams",
    "SimulatedRun",
    "StudyPoint",
    "default_spares",
    "expected_run",
    "frontier_cluster",
    "frontier_config",
    "job_mtbf",
    "mean_breakdown",
    "segments",
    "simulate_run",
    "size_table",
    "young_interval",
]
