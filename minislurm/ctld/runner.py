"""How a job's body runs: the ``JobRunner`` seam between slurmctld and slurmd.

In Slurm the controller never runs a job; it asks slurmd on the batch host to
launch the script and hears back the exit status.  ``JobRunner`` is that seam:

* ``SimulatedRunner`` (simulation): the job "runs" for ``JobBody.run_time``
  seconds of the SimPy clock and ends with ``JobBody.exit_code``.  SIGTERM and
  SIGKILL end it at once; other signals (``--signal=USR1@60``) are only logged,
  as by a script that does not trap them.
* a real launcher (``minislurm.slurmd``) starts processes and triggers the event
  with the exit status when they end (``simpy.rt.RealtimeEnvironment``).

``start`` returns a SimPy event whose value is ``(exit_code, signal)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import simpy

from minislurm.common.jobacct import JobAcctGather
from minislurm.job import Allocation, JobRecord

SIGTERM = 15
SIGKILL = 9


@dataclass(frozen=True, slots=True)
class SimStep:
    """One ``srun`` line of a script: it starts ``offset`` seconds into the job and
    runs ``duration`` seconds, or until the job ends (``None``); `minislurm.ctld.sim_steps`
    plays it."""

    offset: int
    duration: int | None
    argv: tuple[str, ...]  # srun's arguments: options, then the command


@dataclass(frozen=True, slots=True)
class JobBody:
    """What a simulated job does: run ``run_time`` seconds, then exit ``exit_code``.

    ``run_time=None`` runs until killed (a job that always hits its time limit);
    ``steps``: the script's srun steps, shown by sacct as ``JOBID.0``, ``JOBID.1``...
    """

    run_time: int | None = 60
    exit_code: int = 0
    steps: tuple[SimStep, ...] = ()


class Launch(Protocol):
    """The job slurmctld launches (``REQUEST_BATCH_JOB_LAUNCH``): its id, and its whole
    record for a runner that needs more (`minislurm.ctld.job_mgr.Job` is one). A runner
    that only times the body reads ``job_id`` and never pays for the record."""

    @property
    def job_id(self) -> int: ...

    def snapshot(self) -> JobRecord: ...


class JobRunner(Protocol):
    """Launches job bodies (slurmd's side of ``REQUEST_BATCH_JOB_LAUNCH``)."""

    def start(self, job: Launch, allocation: Allocation, body: JobBody) -> simpy.Event:
        """Start the job; the event succeeds with ``(exit_code, signal)`` when it ends."""
        ...

    def kill(self, job_id: int, signal: int) -> None:
        """Deliver ``signal`` to the job (``scancel``, time limit, ``--signal``)."""
        ...

    def node_failed(self, job_id: int, failed: Mapping[int, str]) -> None:
        """Nodes of the job went DOWN: stop it ``DUE TO NODE FAILURE`` (``failed``: the
        DOWN nodes of each srun step that spans one, as a hostlist)."""
        ...


@runtime_checkable
class NodeLossRunner(Protocol):
    """A runner that can keep a ``--no-kill`` job going after a node failure (runners
    without it leave the body running untouched)."""

    def node_lost(self, job_id: int, allocation: Allocation, failed: Mapping[int, str]) -> None:
        """The job lost nodes and runs on ``allocation``: only the steps in ``failed``
        (step id -> its DOWN nodes) are killed."""
        ...


@runtime_checkable
class WarnsBatch(Protocol):
    """A runner that delivers ``--signal=[B:]SIG@TIME`` itself: with ``B:`` to the batch
    shell only, else to the job's srun steps (slurmd's ``_rpc_signal_tasks``); runners
    without it get the warning as a plain ``kill``."""

    def warn_signal(self, job_id: int, signal: int) -> None: ...


@runtime_checkable
class SignalsSteps(Protocol):
    """slurmd with real steps: ``scancel -s SIG`` without ``-b``/``-f`` reaches the job's
    steps only (``signal_steps``), and slurmctld's agent sends its RPCs
    ``agent_delay`` seconds after the reply (a job that requeues itself sees the
    command succeed before the SIGTERM)."""

    agent_delay: float

    def signal_steps(self, job_id: int, signal: int) -> None: ...


@runtime_checkable
class GathersUsage(Protocol):
    """A runner with real processes whose tasks' usage is sampled from /proc
    (``JobAcctGatherType``; ``jobacct`` is None under ``jobacct_gather/none``): sstat
    reads it live and a step's accounting row keeps its last sample."""

    jobacct: JobAcctGather | None


@dataclass(frozen=True, slots=True)
class Recovery:
    """What a restarted slurmd found of a job that was running (``RecoversJobs.recover``).

    ``event`` succeeds with ``(exit_code, signal)`` when the job ends from now on;
    ``ended`` is set instead when it ended while no controller ran (``end_time``: when,
    epoch seconds, None if unknown); ``lost``: no trace of its launch (it never started).
    """

    event: simpy.Event
    ended: tuple[int, int] | None = None
    end_time: int | None = None
    lost: bool = False


@runtime_checkable
class RecoversJobs(Protocol):
    """A runner whose jobs outlive slurmctld (their slurmstepd does not depend on it): a
    restarted controller finds each running job again (``recover``), and learns which
    jobs' ``--signal`` warning was already sent (``warned``: job id -> restart count)."""

    warned: dict[int, int]

    def recover(self, job: JobRecord, allocation: Allocation, body: JobBody) -> Recovery: ...


class SimulatedRunner:
    """Bodies that only pass simulated time (``JobBody``); SIGTERM/SIGKILL end them at once."""

    def __init__(self, env: simpy.Environment) -> None:
        self.env = env
        self._running: dict[int, simpy.Event] = {}
        self.signals: list[tuple[int, int, int]] = []  # (env time, job_id, signal) delivered

    def start(self, job: Launch, allocation: Allocation, body: JobBody) -> simpy.Event:
        """Schedule the end of the body after ``body.run_time`` seconds."""
        done = self.env.event()
        self._running[job.job_id] = done
        if body.run_time is not None:
            timer = self.env.timeout(max(0, body.run_time))
            job_id, code = job.job_id, body.exit_code
            timer.callbacks.append(lambda _ev: self._finish(job_id, done, code))
        return done

    def _finish(self, job_id: int, done: simpy.Event, exit_code: int) -> None:
        if not done.triggered:
            done.succeed((exit_code, 0))
        if self._running.get(job_id) is done:
            del self._running[job_id]

    def kill(self, job_id: int, signal: int) -> None:
        """SIGKILL/SIGTERM end the body with that signal; other signals are only logged."""
        self.signals.append((int(self.env.now), job_id, signal))
        done = self._running.get(job_id)
        if done is None or signal not in (SIGKILL, SIGTERM):
            return
        del self._running[job_id]
        if not done.triggered:
            done.succeed((0, signal))

    def node_failed(self, job_id: int, failed: Mapping[int, str]) -> None:
        """A simulated body just ends (SIGKILL)."""
        self.kill(job_id, SIGKILL)

    def node_lost(self, job_id: int, allocation: Allocation, failed: Mapping[int, str]) -> None:
        """The simulated body runs on (its steps are the controller's, sim_steps.py)."""


__all__ = [
    "SIGKILL",
    "SIGTERM",
    "GathersUsage",
    "JobBody",
    "JobRunner",
    "Launch",
    "NodeLossRunner",
    "RecoversJobs",
    "Recovery",
    "SignalsSteps",
    "SimStep",
    "SimulatedRunner",
    "WarnsBatch",
]
