"""Job accounting (``AccountingStorageType``/slurmdbd as sacct sees it).

Every *attempt* of a job is kept: a batch job requeued after a node failure
shows once as ``NODE_FAIL`` (the attempt that died) and once more for the run
that followed, as ``sacct -D`` lists them.  Each ended attempt carries its steps
(``JOBID.batch``; ``JOBID.0`` ... for srun steps reported by slurmd) and adds its
allocated TRES x elapsed seconds to the usage of its user and account (what
priority/multifactor's fair share decays with PriorityDecayHalfLife).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import replace
from typing import Protocol

from minislurm.job import Allocation, JobRecord, StepRecord
from minislurm.states import LAUNCH_FAILED_STATUS, JobState

#: What the batch step of an ended job shows (sacct, capture c2 25_sacct_default).
_BATCH_STATE = {
    JobState.COMPLETED: JobState.COMPLETED,
    JobState.FAILED: JobState.FAILED,
    JobState.OUT_OF_MEMORY: JobState.OUT_OF_MEMORY,
    JobState.NODE_FAIL: JobState.NODE_FAIL,
}


class Attempt(Protocol):
    """What `batch_step` reads of an attempt: a ``JobRecord``, or the controller's
    ``Job`` itself (its attributes of these names mean the same for a started job)."""

    @property
    def state(self) -> JobState: ...
    @property
    def start_time(self) -> int | None: ...
    @property
    def allocation(self) -> Allocation | None: ...
    @property
    def batch_flag(self) -> bool: ...


def batch_step(
    job: Attempt, end: int | None, exit_code: int, signal: int
) -> StepRecord | None:
    """The ``JOBID.batch`` step of an attempt (``None`` if it never started); ``end=None``:
    the attempt still runs, and so does its batch step (sacct lists it ``RUNNING``).
    The ending job is read directly, without a snapshot of it (a whole ``JobRecord``
    per job end only for these four fields)."""
    if job.start_time is None or job.allocation is None or not job.batch_flag:
        return None
    first = job.allocation.nodes[0]
    state = _BATCH_STATE.get(job.state, JobState.CANCELLED)
    if end is None:
        state = JobState.RUNNING
    elif exit_code == 0 and signal == LAUNCH_FAILED_STATUS:  # its IO could not be set up
        state = JobState.CANCELLED
    elif state is JobState.CANCELLED:
        exit_code, signal = 0, signal or 15
    tres = {"cpu": first.cpus, "mem": first.mem_mb, "node": 1}
    if first.gpus:
        tres["gres/gpu"] = len(first.gpus)
    return StepRecord(
        step_id="batch", name="batch", state=state, nodelist=first.node, num_nodes=1,
        ntasks=1, num_cpus=first.cpus, start_time=job.start_time, end_time=end,
        exit_code=exit_code, signal=signal, tres_alloc=tres,
    )  # fmt: skip


def tres_seconds(job: JobRecord, end: int) -> dict[str, float]:
    """Allocated TRES x elapsed seconds of an attempt (``cpu``, ``mem``, ``gres/gpu``...).

    ``billing`` is the job's ``billable_tres`` (a double: ``TRESBillingWeights`` may give
    fractions) x seconds, what priority/multifactor's ``_apply_new_usage`` adds to the
    association's ``usage_raw``."""
    if job.start_time is None:
        return {}
    elapsed = max(0, end - job.start_time)
    used = {k: float(v) * elapsed for k, v in job.tres_alloc.items()}
    if job.billable_tres is not None and "billing" in used:
        used["billing"] = job.billable_tres * elapsed
    return used


class Accounting:
    """The store behind sacct: ended attempts plus TRES usage per (user, account)."""

    def __init__(
        self, on_usage: Callable[[str, str, dict[str, float], int], None] | None = None
    ) -> None:
        self.attempts: list[JobRecord] = []
        self.usage: dict[tuple[str, str], dict[str, float]] = defaultdict(
            lambda: defaultdict(float)
        )
        self._on_usage = on_usage

    def record(self, job: JobRecord, now: int) -> None:
        """Keep an ended attempt (or a rejected submission) and add its usage."""
        self.attempts.append(job)
        used = tres_seconds(job, job.end_time if job.end_time is not None else now)
        if used:
            acc = self.usage[(job.user, job.account)]
            for k, v in used.items():
                acc[k] += v
            if self._on_usage is not None:
                self._on_usage(job.user, job.account, used, now)

    def add_step(self, job_id: int, step: StepRecord) -> None:
        """Add a late step to the last recorded attempt of ``job_id`` (if it started)."""
        for i in range(len(self.attempts) - 1, -1, -1):
            rec = self.attempts[i]
            if rec.job_id == job_id:
                if rec.start_time is not None and all(s.step_id != step.step_id
                                                      for s in rec.steps):
                    self.attempts[i] = replace(rec, steps=(*rec.steps, step))
                return

    def total(self, tres: str) -> float:
        """Sum of one TRES over all usage (``cpu`` seconds, ``gres/gpu`` seconds...)."""
        return sum(u.get(tres, 0.0) for u in self.usage.values())


__all__ = ["Accounting", "Attempt", "batch_step", "tres_seconds"]
