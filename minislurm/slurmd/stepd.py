"""One slurmstepd per step: from (job, allocation, step) to running processes.

This is the glue a node daemon calls; it only combines the pieces:
the environment (`minislurm.slurmd.env`), the layout of the step's tasks
(`minislurm.common.layout`) and the launcher (`minislurm.slurmd.launch`).

* `start_batch_job` is ``REQUEST_BATCH_JOB_LAUNCH``: the script is spooled
  (``job%05u/slurm_script``), run on the job's first node in the job's working
  directory (``-D`` or the submit directory) with the batch environment,
  stdout to ``-o`` (default ``slurm-%j.out``, ``slurm-%A_%a.out`` for arrays)
  and stderr to ``-e`` or the same file, stdin ``/dev/null``;
* `start_step` is ``REQUEST_LAUNCH_TASKS`` for all the nodes of an srun step.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from minislurm.common.filenames import default_output_pattern
from minislurm.job import Allocation
from minislurm.slurmd.context import JobContext, StepContext
from minislurm.slurmd.env import batch_environment, step_task_environment
from minislurm.slurmd.launch import (
    RunningStep,
    StepIdentity,
    TaskSpec,
    launch_step,
    write_batch_script,
)
from minislurm.slurmd.stdio import StdioSpec

__all__ = [
    "batch_launch", "batch_task", "start_batch_job", "start_step", "step_identity", "step_tasks",
]


def step_identity(job: JobContext, step_id: int | str) -> StepIdentity:
    """The names of a step used by ``-o`` patterns and slurmstepd's messages."""
    return StepIdentity(
        job_id=job.job_id,
        step_id=step_id,
        job_name=job.name,
        user=job.user,
        array_job_id=job.array.array_job_id if job.array else None,
        array_task_id=job.array.task_id if job.array else None,
    )


def batch_task(
    job: JobContext,
    allocation: Allocation,
    script_path: str,
    *,
    base_env: Mapping[str, str],
    script_args: Sequence[str] = (),
) -> TaskSpec:
    """The batch step's single task: the spooled script with its arguments."""
    env = batch_environment(job, allocation, base_env=base_env)
    return TaskSpec(0, allocation.nodes[0].node, 0, (script_path, *script_args), env, job.cwd)


def step_tasks(
    job: JobContext,
    allocation: Allocation,
    step: StepContext,
    argv: Sequence[str],
    *,
    base_env: Mapping[str, str],
    cwd: str | None = None,
) -> list[TaskSpec]:
    """One `TaskSpec` per task of an srun step, in task id order."""
    layout = step.layout
    specs = []
    for task_id in range(layout.ntasks):
        index = layout.node_index(task_id)
        env = step_task_environment(job, allocation, step, task_id, base_env=base_env)
        specs.append(
            TaskSpec(task_id, layout.nodes[index], index, tuple(argv), env, cwd or job.cwd)
        )
    return specs


def batch_launch(
    job: JobContext,
    allocation: Allocation,
    script_text: str,
    *,
    spool_dir: str,
    base_env: Mapping[str, str],
    stdio: StdioSpec | None = None,
    script_args: Sequence[str] = (),
) -> tuple[StepIdentity, TaskSpec, StdioSpec]:
    """Spool the batch script of ``job`` and describe its launch (``%s`` = ``batch``).

    ``stdio`` holds ``-o/-e/-i/--open-mode``; without ``-o`` the output goes to
    ``slurm-%j.out`` (``slurm-%A_%a.out`` for an array task) in the job's
    working directory.
    """
    path = write_batch_script(spool_dir, job.job_id, script_text)
    spec = stdio or StdioSpec()
    if spec.output is None:
        spec = StdioSpec(
            output=default_output_pattern(job.array is not None),
            error=spec.error,
            input=spec.input,
            open_mode=spec.open_mode,
        )
    task = batch_task(job, allocation, path, base_env=base_env, script_args=script_args)
    return step_identity(job, "batch"), task, spec


def start_batch_job(
    job: JobContext,
    allocation: Allocation,
    script_text: str,
    *,
    spool_dir: str,
    base_env: Mapping[str, str],
    stdio: StdioSpec | None = None,
    script_args: Sequence[str] = (),
    kill_wait: float = 30.0,
    time_limit: float | None = None,
    hostname_of: Callable[[str], str] | None = None,
) -> RunningStep:
    """Spool and start the batch script of ``job`` in this process (see `batch_launch`;
    the local daemon runs it in a step daemon of its own, `minislurm.slurmd.slurmstepd`).
    ``time_limit`` is in seconds.
    """
    identity, task, spec = batch_launch(job, allocation, script_text, spool_dir=spool_dir,
                                        base_env=base_env, stdio=stdio,
                                        script_args=script_args)
    return launch_step(
        identity,
        [task],
        spec,
        kill_wait=kill_wait,
        time_limit=time_limit,
        hostname_of=hostname_of,
    )


def start_step(
    job: JobContext,
    allocation: Allocation,
    step: StepContext,
    argv: Sequence[str],
    *,
    base_env: Mapping[str, str],
    stdio: StdioSpec | None = None,
    cwd: str | None = None,
    kill_wait: float = 30.0,
    time_limit: float | None = None,
    stdin_fd: int | None = None,
    stdout_fd: int = 1,
    stderr_fd: int = 2,
    hostname_of: Callable[[str], str] | None = None,
) -> RunningStep:
    """Start every task of an srun step (``base_env`` is srun's own environment)."""
    tasks = step_tasks(job, allocation, step, argv, base_env=base_env, cwd=cwd)
    spec = stdio or StdioSpec(label=step.label)
    return launch_step(
        step_identity(job, step.step_id),
        tasks,
        spec,
        kill_wait=kill_wait,
        time_limit=time_limit,
        stdin_fd=stdin_fd,
        stdout_fd=stdout_fd,
        stderr_fd=stderr_fd,
        hostname_of=hostname_of,
    )
