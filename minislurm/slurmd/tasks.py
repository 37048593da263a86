"""The data of a step launch: which task runs where, how it is named, how it ended."""

from __future__ import annotations

import socket
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["StepIdentity", "TaskResult", "TaskSpec", "node_hostname"]


@dataclass(frozen=True, slots=True)
class TaskSpec:
    """One task to start: its id (``SLURM_PROCID``), node, argv, environment, cwd."""

    task_id: int
    node: str
    node_index: int
    argv: tuple[str, ...]
    env: Mapping[str, str]
    cwd: str


@dataclass(frozen=True, slots=True)
class StepIdentity:
    """What names a step in file patterns and messages (``%j %x %u %A %a %s``).

    ``step_id`` is ``'batch'`` for the batch step, else the step number.
    """

    job_id: int
    step_id: int | str
    job_name: str = ""
    user: str = ""
    array_job_id: int | None = None
    array_task_id: int | None = None

    @property
    def entity(self) -> str:
        """``JOB 12`` (batch step) or ``STEP 12.0`` as slurmstepd names it."""
        if self.step_id == "batch":
            return f"JOB {self.job_id}"
        return f"STEP {self.job_id}.{self.step_id}"


@dataclass(frozen=True, slots=True)
class TaskResult:
    """How one task ended: ``exit_code`` 0-255 and ``signal`` (sacct's ``code:signal``).

    ``error`` is slurmstepd's message when the task could not start.
    """

    task_id: int
    node: str
    pid: int | None
    exit_code: int
    signal: int = 0
    error: str = ""


def node_hostname(node: str) -> str:
    """What ``%N`` prints: the short host name of the node. Every minislurm node is this
    host, as on the single-host reference cluster where Slurm printed ``vm``."""
    return socket.gethostname().split(".")[0]
