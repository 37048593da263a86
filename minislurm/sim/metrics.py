"""Scheduling metrics over finished simulations: pure functions of ``JobRecord`` lists.

- utilisation: allocated GPU-seconds (node-seconds) inside a window / capacity;
- wait time: ``start - submit`` of every job that started;
- bounded slowdown (Feitelson): ``max(1, (wait + run) / max(run, tau))``, tau = 10 s,
  so that very short jobs do not dominate the mean;
- GPU-hours lost to failures: GPU-hours of attempts that ended NODE_FAIL, BOOT_FAIL,
  FAILED or OUT_OF_MEMORY (a requeued job's failed attempts are records of their own
  in accounting, so they count too);
- goodput: the share of allocated GPU-hours spent in attempts that COMPLETED.

A job's GPUs and nodes come from ``tres_alloc`` (``gres/gpu``, ``node``), else its
``allocation``, else the request (``num_nodes``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from minislurm.states import JobState

#: Feitelson's threshold for bounded slowdown (seconds).
TAU = 10

#: End states counted as lost work by ``gpu_hours_lost``.
FAILURE_STATES = frozenset(
    {JobState.NODE_FAIL, JobState.BOOT_FAIL, JobState.FAILED, JobState.OUT_OF_MEMORY}
)


def job_gpus(job: Any) -> int:
    """GPUs allocated to a job (``gres/gpu`` of AllocTRES)."""
    alloc = job.tres_alloc or {}
    if "gres/gpu" in alloc:
        return int(alloc["gres/gpu"])
    if job.allocation is not None:
        return int(job.allocation.num_gpus)
    return 0


def job_nodes(job: Any) -> int:
    """Nodes allocated to a job."""
    alloc = job.tres_alloc or {}
    if "node" in alloc:
        return int(alloc["node"])
    if job.allocation is not None:
        return len(job.allocation.nodes)
    return int(job.num_nodes)


def _ran(job: Any) -> bool:
    return job.start_time is not None and job.end_time is not None


def _overlap(job: Any, start: int, end: int) -> int:
    return max(0, min(job.end_time, end) - max(job.start_time, start))


def _window(jobs: Sequence[Any], start: int | None, end: int | None) -> tuple[int, int]:
    ran = [j for j in jobs if _ran(j)]
    lo = start if start is not None else min((j.submit_time for j in jobs), default=0)
    hi = end if end is not None else max((j.end_time for j in ran), default=lo)
    return lo, hi


@dataclass(frozen=True, slots=True)
class Utilization:
    """Fractions of capacity used inside ``[start, end)``."""

    gpu: float
    node: float
    start: int
    end: int


def utilization(
    jobs: Iterable[Any],
    *,
    total_gpus: int,
    total_nodes: int,
    start: int | None = None,
    end: int | None = None,
) -> Utilization:
    """GPU and node utilisation over the window (default: first submit .. last end)."""
    js = list(jobs)
    lo, hi = _window(js, start, end)
    span = hi - lo
    if span <= 0:
        return Utilization(0.0, 0.0, lo, hi)
    gpu_s = sum(job_gpus(j) * _overlap(j, lo, hi) for j in js if _ran(j))
    node_s = sum(job_nodes(j) * _overlap(j, lo, hi) for j in js if _ran(j))
    return Utilization(
        gpu=gpu_s / (total_gpus * span) if total_gpus else 0.0,
        node=node_s / (total_nodes * span) if total_nodes else 0.0,
        start=lo,
        end=hi,
    )


def wait_times(jobs: Iterable[Any]) -> list[int]:
    """``start - submit`` (seconds) of every job that started."""
    return [j.start_time - j.submit_time for j in jobs if j.start_time is not None]


def bounded_slowdown(job: Any, tau: int = TAU) -> float:
    """``max(1, (wait + run) / max(run, tau))`` of one job that ran."""
    if not _ran(job):
        raise ValueError(f"job {job.job_id} did not run")
    wait = job.start_time - job.submit_time
    run = job.end_time - job.start_time
    return max(1.0, (wait + run) / max(run, tau))


def mean(values: Sequence[float]) -> float:
    """Arithmetic mean (0 for no values)."""
    return sum(values) / len(values) if values else 0.0


def mean_bounded_slowdown(jobs: Iterable[Any], tau: int = TAU) -> float:
    """Mean bounded slowdown over the jobs that ran."""
    return mean([bounded_slowdown(j, tau) for j in jobs if _ran(j)])


def gpu_hours(jobs: Iterable[Any], states: Iterable[JobState] | None = None) -> float:
    """Allocated GPU-hours of the jobs (only those ending in ``states`` if given)."""
    wanted = frozenset(states) if states is not None else None
    total = 0
    for j in jobs:
        if _ran(j) and (wanted is None or j.state in wanted):
            total += job_gpus(j) * (j.end_time - j.start_time)
    return total / 3600


def gpu_hours_lost(jobs: Iterable[Any], states: Iterable[JobState] = FAILURE_STATES) -> float:
    """GPU-hours of attempts that ended in a failure state."""
    return gpu_hours(jobs, states)


def goodput(jobs: Iterable[Any]) -> float:
    """Share of allocated GPU-hours spent in attempts that completed (1.0 when none ran)."""
    js = list(jobs)
    total = gpu_hours(js)
    if total == 0:
        return 1.0
    return gpu_hours(js, (JobState.COMPLETED,)) / total


@dataclass(frozen=True, slots=True)
class Summary:
    """The headline numbers of a simulation."""

    jobs: int
    started: int
    gpu_utilization: float
    node_utilization: float
    mean_wait: float
    max_wait: int
    mean_bounded_slowdown: float
    gpu_hours: float
    gpu_hours_lost: float
    goodput: float


def summarize(jobs: Iterable[Any], *, total_gpus: int, total_nodes: int) -> Summary:
    """All metrics at once (window: first submit .. last end)."""
    js = list(jobs)
    u = utilization(js, total_gpus=total_gpus, total_nodes=total_nodes)
    waits = wait_times(js)
    return Summary(
        jobs=len(js),
        started=len(waits),
        gpu_utilization=u.gpu,
        node_utilization=u.node,
        mean_wait=mean([float(w) for w in waits]),
        max_wait=max(waits, default=0),
        mean_bounded_slowdown=mean_bounded_slowdown(js),
        gpu_hours=gpu_hours(js),
        gpu_hours_lost=gpu_hours_lost(js),
        goodput=goodput(js),
    )


def format_summary(s: Summary) -> str:
    """A few aligned lines for a terminal (``minislurm simulate`` prints them)."""
    rows = [
        ("jobs", f"{s.jobs} ({s.started} started)"),
        ("GPU utilisation", f"{s.gpu_utilization:.1%}"),
        ("node utilisation", f"{s.node_utilization:.1%}"),
        ("mean wait", f"{s.mean_wait:.0f} s (max {s.max_wait} s)"),
        ("mean bounded slowdown", f"{s.mean_bounded_slowdown:.2f} (tau = {TAU} s)"),
        ("GPU-hours", f"{s.gpu_hours:.1f}"),
        ("GPU-hours lost to failures", f"{s.gpu_hours_lost:.1f}"),
        ("goodput", f"{s.goodput:.1%}"),
    ]
    width = max(len(k) for k, _ in rows)
    return "".join(f"{k.ljust(width)}  {v}\n" for k, v in rows)


__all__ = [
    "FAILURE_STATES",
    "TAU",
    "Summary",
    "Utilization",
    "bounded_slowdown",
    "format_summary",
    "goodput",
    "gpu_hours",
    "gpu_hours_lost",
    "job_gpus",
    "job_nodes",
    "mean",
    "mean_bounded_slowdown",
    "summarize",
    "utilization",
    "wait_times",
]
