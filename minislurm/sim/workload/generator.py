"""A seeded generator of an AI-cluster workload: the mix a GPU cluster for ML sees.

Four kinds of job, each with its own arrival rate and shape (all parameters live in
``JobKind`` so a notebook can change the mix):

- ``train``: multi-node training runs (2-16 nodes x all GPUs of a node), time limits of
  one to three days; some crash (exit 1), some run into their limit (TIMEOUT);
- ``eval``: evaluations of minutes on one node and a few GPUs;
- ``debug``: interactive debugging (``salloc``/``srun --pty`` style) on the debug
  partition, one or two GPUs, short limits;
- ``sweep``: hyper-parameter sweeps submitted as job arrays (``--array=0-N``), one GPU
  per task.

Arrivals are Poisson per kind, modulated by a day/night cycle (more submissions during
working hours).  Everything comes from one ``random.Random(seed)``: the same seed gives
the same jobs on every machine.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

#: Default epoch of simulated clocks (2026-01-05T08:00:00 UTC, a Monday).
DEFAULT_START = 1767600000


@dataclass(frozen=True, slots=True)
class WorkloadJob:
    """One submission of a workload (an array counts once, with ``array_size`` tasks).

    ``time_limit`` is in minutes (``--time``); ``run_time`` is the seconds the job
    would run if started (for an array: each task).  A ``run_time`` beyond the limit
    means the job ends in TIMEOUT; ``exit_code`` is what the program returns.
    ``limit_seconds``: the requested time to the second when the source has it (an SWF
    trace's field 9; ``time_limit`` is it rounded up to minutes); None: ``time_limit``
    minutes.  Only ``simulate --procs N --scheduler easy`` uses it (``limit_secs``).
    """

    job_id: int
    submit_time: int
    user: str
    account: str
    partition: str
    kind: str
    name: str
    nodes: int
    gpus_per_node: int
    cpus: int
    time_limit: int
    run_time: int
    exit_code: int = 0
    array_size: int | None = None
    qos: str = "normal"
    limit_seconds: int | None = None

    @property
    def limit_secs(self) -> int:
        """The time limit in seconds: ``limit_seconds``, else ``time_limit * 60``."""
        return self.limit_seconds if self.limit_seconds is not None else self.time_limit * 60

    @property
    def gpus(self) -> int:
        """GPUs of the whole job (of one task for an array)."""
        return self.nodes * self.gpus_per_node

    @property
    def times_out(self) -> bool:
        """True when the job would be killed at its time limit."""
        return self.run_time > self.time_limit * 60


@dataclass(frozen=True, slots=True)
class JobKind:
    """The shape and arrival rate of one kind of job."""

    name: str
    per_day: float  # mean submissions per day
    partition: str
    nodes: tuple[int, ...]  # choices, uniformly
    gpus_per_node: tuple[int, ...]
    cpus_per_gpu: int
    time_limit_min: tuple[int, int]  # minutes, inclusive range
    run_fraction: tuple[float, float]  # run time as a fraction of the limit
    fail_prob: float = 0.0  # exit 1 part-way
    timeout_prob: float = 0.0  # runs past its limit
    array_size: tuple[int, int] | None = None
    qos: str = "normal"


def default_kinds(max_nodes: int = 4, gpus_per_node: int = 8) -> tuple[JobKind, ...]:
    """The default mix for a cluster of ``max_nodes`` nodes with ``gpus_per_node`` GPUs."""
    train_nodes = tuple(n for n in (2, 4, 8, 16) if n <= max_nodes) or (1,)
    half = max(1, gpus_per_node // 2)
    return (
        JobKind("train", 3.0, "gpu", train_nodes, (gpus_per_node,), 8,
                (24 * 60, 3 * 24 * 60), (0.3, 0.95), fail_prob=0.1, timeout_prob=0.15),
        JobKind("eval", 40.0, "gpu", (1,), (1, 2, half), 8, (30, 60), (0.05, 0.5),
                fail_prob=0.03),
        JobKind("debug", 25.0, "debug", (1,), (1, 2), 4, (10, 30), (0.2, 1.0),
                fail_prob=0.2, timeout_prob=0.1),
        JobKind("sweep", 2.0, "gpu", (1,), (1,), 8, (120, 240), (0.25, 0.75),
                fail_prob=0.05, array_size=(4, 32)),
    )  # fmt: skip


@dataclass(frozen=True, slots=True)
class Member:
    """A user and the account it submits to."""

    user: str
    account: str


DEFAULT_MEMBERS = (
    Member("alice", "llm"),
    Member("bob", "llm"),
    Member("carol", "vision"),
    Member("dave", "eval"),
    Member("erin", "eval"),
    Member("student", "teaching"),
)


@dataclass(frozen=True, slots=True)
class WorkloadSpec:
    """What to generate: how long, for whom, which mix."""

    seed: int = 0
    days: float = 1.0
    start: int = DEFAULT_START
    kinds: tuple[JobKind, ...] = field(default_factory=default_kinds)
    members: tuple[Member, ...] = DEFAULT_MEMBERS
    diurnal: float = 0.5  # 0 = flat; 1 = no submissions at 04:00 local


def _diurnal_weight(t: int, amplitude: float) -> float:
    """Submission intensity at time ``t`` (UTC hour): peak at 14:00, trough at 02:00."""
    hour = (t % 86400) / 3600
    return 1.0 + amplitude * math.cos((hour - 14) / 24 * 2 * math.pi)


def _arrivals(rng: random.Random, kind: JobKind, spec: WorkloadSpec) -> list[int]:
    """Poisson arrivals of one kind, thinned by the day/night cycle."""
    end = spec.start + int(spec.days * 86400)
    peak = kind.per_day / 86400 * (1.0 + spec.diurnal)
    times: list[int] = []
    t = float(spec.start)
    if peak <= 0:
        return times
    while True:
        t += rng.expovariate(peak)
        if t >= end:
            return times
        if rng.random() * (1.0 + spec.diurnal) <= _diurnal_weight(int(t), spec.diurnal):
            times.append(int(t))


def _shape(
    rng: random.Random, kind: JobKind, member: Member, t: int, job_id: int, name: str
) -> WorkloadJob:
    nodes = rng.choice(kind.nodes)
    gpn = rng.choice(kind.gpus_per_node)
    lo, hi = kind.time_limit_min
    limit = rng.randint(lo, hi)
    frac = rng.uniform(*kind.run_fraction)
    run = max(1, int(limit * 60 * frac))
    exit_code = 0
    r = rng.random()
    if r < kind.timeout_prob:
        run = limit * 60 + rng.randint(1, 3600)
    elif r < kind.timeout_prob + kind.fail_prob:
        run = max(1, int(run * rng.uniform(0.01, 0.9)))
        exit_code = 1
    array = rng.randint(*kind.array_size) if kind.array_size else None
    return WorkloadJob(
        job_id=job_id, submit_time=t, user=member.user, account=member.account,
        partition=kind.partition, kind=kind.name, name=name, nodes=nodes, gpus_per_node=gpn,
        cpus=nodes * max(1, gpn) * kind.cpus_per_gpu, time_limit=limit, run_time=run,
        exit_code=exit_code, array_size=array, qos=kind.qos,
    )  # fmt: skip


def generate(spec: WorkloadSpec | None = None) -> Iterator[WorkloadJob]:
    """Yield the workload's jobs in submission order, ids from 1 (``WorkloadSpec()``: a day)."""
    spec = spec or WorkloadSpec()
    if not spec.members:
        raise ValueError("a workload needs at least one member (user, account)")
    rng = random.Random(spec.seed)
    events: list[tuple[int, int, JobKind]] = []
    for order, kind in enumerate(spec.kinds):
        events.extend((t, order, kind) for t in _arrivals(rng, kind, spec))
    events.sort(key=lambda e: (e[0], e[1]))
    counters: dict[str, int] = {}
    for job_id, (t, _, kind) in enumerate(events, start=1):
        member = rng.choice(spec.members)
        counters[kind.name] = counters.get(kind.name, 0) + 1
        yield _shape(rng, kind, member, t, job_id, f"{kind.name}-{counters[kind.name]}")


def total_gpu_hours(jobs: Sequence[WorkloadJob]) -> float:
    """GPU-hours the jobs would use if each ran to its end or its limit."""
    total = 0.0
    for j in jobs:
        secs = min(j.run_time, j.time_limit * 60)
        total += j.gpus * (j.array_size or 1) * secs / 3600
    return total


__all__ = [
    "DEFAULT_MEMBERS",
    "DEFAULT_START",
    "JobKind",
    "Member",
    "WorkloadJob",
    "WorkloadSpec",
    "default_kinds",
    "generate",
    "total_gpu_hours",
]
