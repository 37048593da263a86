"""Lesson 2: a sweep as a job array, a pipeline as dependencies, and how to watch both.

Everything runs on minislurm's simulated clock (:class:`minislurm.sim.cluster.Cluster`), with
the commands and output formats of Slurm 22.05:

* ``sbatch --array=0-7%2`` (``sbatch(1)`` ``-a, --array``; the ``%`` throttle leaves the
  other tasks pending with reason ``JobArrayTaskLimit``), output files ``%A_%a``;
* ``sbatch --dependency=afterok:N`` / ``afternotok:N`` / ``afterany:N`` (``-d``), reasons
  ``Dependency`` and ``DependencyNeverSatisfied``;
* ``squeue -o`` (``--format``) with ``%E`` (dependency) and ``%R`` (nodes or reason),
  and ``sacct -o`` (``--format``) with ``State``, ``ExitCode`` and ``Elapsed``.

The notebook calls these functions; they hold no state of their own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from minislurm.sim import Cluster

__all__ = [
    "PIPELINE_SACCT",
    "PIPELINE_SQUEUE",
    "SWEEP_SQUEUE",
    "Pipeline",
    "Snapshot",
    "submit_pipeline",
    "submit_sweep",
    "watch",
]

#: ``squeue -o`` columns for a sweep: id, name, state, time used, nodes or reason.
SWEEP_SQUEUE = 'squeue -o "%.12i %.8j %.2t %.8M %R"'
#: ``squeue -o`` columns for a pipeline: the dependency (``%E``) and the reason.
PIPELINE_SQUEUE = 'squeue -o "%.6i %.8j %.2t %.26E %R"'
#: ``sacct -o`` fields for a pipeline: how each job ended and how long it ran.
PIPELINE_SACCT = "sacct -X -o JobID,JobName,State,ExitCode,Elapsed"


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What one command printed at one minute of simulated time."""

    minute: int
    command: str
    output: str

    def __str__(self) -> str:
        return f"--- minute {self.minute}: $ {self.command}\n{self.output.rstrip()}"


@dataclass(frozen=True, slots=True)
class Pipeline:
    """The job ids of a prep -> train -> eval pipeline with a failure notifier."""

    prep: int
    train: int
    evaluate: int
    notify: int


def _job_id(message: str) -> int:
    """The id in ``Submitted batch job N``; sbatch's own error text otherwise."""
    prefix = "Submitted batch job "
    if not message.startswith(prefix):
        raise ValueError(message.strip())
    return int(message[len(prefix):].split()[0])


def submit_sweep(cluster: Cluster, tasks: int = 8, throttle: int = 2,
                 minutes: int = 20) -> int:
    """Submit a learning-rate sweep: ``sbatch --array=0-<tasks-1>%<throttle>``.

    Each task holds one GPU for ``minutes`` and writes ``sweep_%A_%a.out``.
    Returns the array's job id (``SLURM_ARRAY_JOB_ID``).
    """
    if tasks < 1 or throttle < 1 or minutes < 1:
        raise ValueError("tasks, throttle and minutes must be at least 1")
    command = (f"sbatch -J sweep --array=0-{tasks - 1}%{throttle} --gres=gpu:1 -t {minutes + 10}"
               f' -o "sweep_%A_%a.out" --wrap="sleep {minutes * 60}"')
    return _job_id(str(cluster.run(command)))


def submit_pipeline(cluster: Cluster, prep_exit: int = 0) -> Pipeline:
    """Submit prep, train ``afterok:prep``, eval ``afterok:train`` and notify
    ``afternotok:train``.

    Each job runs ten minutes; with ``prep_exit`` other than 0 prep fails at once
    with that exit code (a script's ``exit N``), so train can never start.
    """
    body = "sleep 600" if prep_exit == 0 else f"exit {prep_exit}"  # a failure ends at once
    prep = _job_id(str(cluster.run(f'sbatch -J prep -p cpu -t 15 --wrap="{body}"')))
    train = _job_id(str(cluster.run(
        f'sbatch -J train -d afterok:{prep} -N1 --gres=gpu:8 -t 15 --wrap="sleep 600"')))
    evaluate = _job_id(str(cluster.run(
        f'sbatch -J eval -d afterok:{train} --gres=gpu:1 -t 15 --wrap="sleep 600"')))
    notify = _job_id(str(cluster.run(
        f'sbatch -J notify -d afternotok:{train} -p cpu -t 5 --wrap="sleep 10"')))
    return Pipeline(prep, train, evaluate, notify)


def watch(cluster: Cluster, minutes: Sequence[int], commands: Sequence[str]) -> list[Snapshot]:
    """Advance the clock to each minute (from now, increasing) and run ``commands`` there."""
    snapshots: list[Snapshot] = []
    now = 0
    for minute in minutes:
        if minute < now:
            raise ValueError(f"minutes must increase: {minute} after {now}")
        cluster.advance((minute - now) * 60)
        now = minute
        snapshots.extend(Snapshot(minute, command, str(cluster.run(command)))
                         for command in commands)
    return snapshots
