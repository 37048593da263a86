"""slurmd on the wall clock: batch jobs as real local processes.

`ProcessRunner` implements the controller's ``JobRunner`` seam
(`minislurm.ctld.runner`): when slurmctld starts a job, the batch script is
spooled and run on the job's first node (``REQUEST_BATCH_JOB_LAUNCH``) with
the batch environment of `minislurm.slurmd.env`; when the script ends, its
exit status goes back to the controller as the SimPy event's value. Signals
(``scancel``, time limits, ``--signal``, a node going down) reach the batch
script's process group and every srun step registered for the job.

What a job is comes with its `ProcessBody`: the parsed options, the script's
arguments and the environment exported at submission (``--export``).
"""

from __future__ import annotations

import contextlib
import os
import signal as signals
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import simpy

from minislurm.config import SlurmConfig
from minislurm.ctld.runner import JobBody
from minislurm.errors import SlurmError
from minislurm.job import Allocation, JobRecord
from minislurm.jobarray import parse_array
from minislurm.options import JobOptions
from minislurm.slurmd.context import ArrayContext, JobContext, job_context, working_cluster
from minislurm.slurmd.env import exported_environment
from minislurm.slurmd.launch import RunningStep, TaskResult
from minislurm.slurmd.stdio import StdioSpec
from minislurm.slurmd.stepd import start_batch_job

Post = Callable[[Callable[[], Any]], Any]


@dataclass(frozen=True, slots=True)
class ProcessBody(JobBody):
    """A job that runs for real: what sbatch/srun sent besides the script."""

    options: JobOptions = field(default_factory=JobOptions)
    script_args: tuple[str, ...] = ()
    submit_env: Mapping[str, str] = field(default_factory=dict)
    submit_host: str = field(default_factory=socket.gethostname)
    submit_dir: str = "/"
    interactive: bool = False
    """srun/salloc's allocation: no batch script; it ends when the client says so."""


def node_hostname(node: str) -> str:
    """What ``%N`` prints: the short host name of the node. Every minislurm node is this
    host, as on the single-host reference cluster where Slurm printed ``vm``."""
    return socket.gethostname().split(".")[0]


def controller_address(config: SlurmConfig) -> tuple[str, int]:
    """``SlurmctldHost`` (without its ``(addr)``) and ``SlurmctldPort`` (default 6817)."""
    value = config.extra.get("SlurmctldHost") or "localhost"
    host = str(value[0] if isinstance(value, list) else value)
    port = str(config.extra.get("SlurmctldPort") or "6817").split("-")[0]
    return host.split("(")[0], int(port) if port.isdigit() else 6817


def batch_exit(results: tuple[TaskResult, ...]) -> tuple[int, int]:
    """The batch step's ``(exit_code, signal)`` as slurmctld records it."""
    if not results:
        return 1, 0
    task = results[0]
    return task.exit_code, task.signal


class ProcessRunner:
    """Starts batch scripts as processes; ``post`` runs a callable on the controller's clock."""

    def __init__(
        self,
        env: simpy.Environment,
        config: SlurmConfig,
        spool_dir: str | Path,
        post: Post,
        *,
        conf_path: str = "",
    ) -> None:
        self.env = env
        self.config = config
        self.spool_dir = str(spool_dir)
        self.post = post
        self.conf_path = conf_path
        self._batch: dict[int, RunningStep] = {}
        self._interactive: dict[int, simpy.Event] = {}
        self._step_pids: dict[int, set[int]] = {}
        self.bodies: dict[int, ProcessBody] = {}
        self.allocations: dict[int, Allocation] = {}

    # ---- JobRunner ----------------------------------------------------------------
    def start(self, job: JobRecord, allocation: Allocation, body: JobBody) -> simpy.Event:
        """Launch the batch script of ``job`` (or hold an srun/salloc allocation)."""
        done = self.env.event()
        self.allocations[job.job_id] = allocation
        if isinstance(body, ProcessBody):
            self.bodies[job.job_id] = body
        if not isinstance(body, ProcessBody) or body.interactive:
            self._interactive[job.job_id] = done
            return done
        ctx = self.job_context(job, body)
        try:
            running = start_batch_job(
                ctx,
                allocation,
                job.script,
                spool_dir=self.spool_dir,
                base_env=exported_environment(body.submit_env, body.options.export),
                stdio=StdioSpec(
                    output=body.options.output,
                    error=body.options.error,
                    input=body.options.input,
                    open_mode=body.options.open_mode or "truncate",
                ),
                script_args=body.script_args,
                kill_wait=float(self.config.kill_wait),
                hostname_of=node_hostname,
            )
        except OSError as exc:  # the spool directory itself failed: the job fails
            done.succeed((1, 0))
            raise SlurmError(f"slurmd: error: launch of job {job.job_id} failed: {exc}") from exc
        self._batch[job.job_id] = running

        def ended(results: tuple[TaskResult, ...], job_id: int = job.job_id) -> None:
            def deliver() -> None:
                self._batch.pop(job_id, None)
                if not done.triggered:
                    done.succeed(batch_exit(results))

            self.post(deliver)

        running.add_done_callback(ended)
        return done

    def kill(self, job_id: int, signal: int) -> None:
        """Deliver ``signal`` to the job's batch script and its srun steps."""
        running = self._batch.get(job_id)
        if running is not None:
            running.signal(signal)
        for pid in self._step_pids.get(job_id, ()):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal)
        waiting = self._interactive.get(job_id)
        stopping = signal in (signals.SIGTERM, signals.SIGKILL)
        if waiting is not None and stopping and not self._step_pids.get(job_id):
            self.finish(job_id, 0, signal)

    # ---- srun / salloc ------------------------------------------------------------
    def register_step_pids(self, job_id: int, pids: set[int]) -> None:
        """srun tells slurmd which process groups belong to a step of ``job_id``."""
        self._step_pids.setdefault(job_id, set()).update(pids)

    def unregister_step_pids(self, job_id: int, pids: set[int]) -> None:
        self._step_pids.get(job_id, set()).difference_update(pids)

    def finish(self, job_id: int, exit_code: int, signal: int = 0) -> None:
        """srun/salloc's allocation ended (``REQUEST_COMPLETE_JOB_ALLOCATION``)."""
        done = self._interactive.pop(job_id, None)
        if done is not None and not done.triggered:
            done.succeed((exit_code, signal))

    def job_context(self, job: JobRecord, body: ProcessBody) -> JobContext:
        """What slurmd's environment needs to know about ``job``."""
        array = None
        if job.array_job_id is not None and job.array_task_id is not None and body.options.array:
            indices = parse_array(body.options.array, self.config.max_array_size).indices
            array = ArrayContext.from_indices(job.array_job_id, job.array_task_id, indices,
                                              body.options.array)
        return job_context(
            body.options,
            job_id=job.job_id,
            name=job.name,
            partition=job.partition,
            cluster_name=self.config.cluster_name,
            mem_per_cpu=job.mem_per_cpu,
            user=job.user,
            uid=job.uid,
            gid=job.gid,
            account=job.account,
            qos=job.qos,
            submit_dir=body.submit_dir,
            submit_host=body.submit_host,
            array=array,
            restart_count=job.restart_count,
            conf_path=self.conf_path,
            working_cluster=working_cluster(
                self.config.cluster_name, *controller_address(self.config)
            ),
        )
