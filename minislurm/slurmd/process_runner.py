"""slurmd on the wall clock: batch jobs as real local processes.

`ProcessRunner` implements the controller's ``JobRunner`` seam
(`minislurm.ctld.runner`): when slurmctld starts a job, the batch script is
spooled and run on the job's first node (``REQUEST_BATCH_JOB_LAUNCH``) with
the batch environment of `minislurm.slurmd.env`, by a step daemon of its own
(`minislurm.slurmd.slurmstepd`) that outlives the controller; when the script
ends, its exit status goes back to the controller as the SimPy event's value.
Signals (``scancel``, time limits, ``--signal``, a node going down) reach the
batch script through its step daemon and every srun step registered for the job.
A restarted controller finds its running jobs again with `ProcessRunner.recover`.

What a job is comes with its `ProcessBody`: the parsed options, the script's
arguments and the environment exported at submission (``--export``).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal as signals
import socket
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import simpy

from minislurm.common.jobacct import EXIT_POLL, JobAcctGather, gather_frequency
from minislurm.common.jobarray import parse_array
from minislurm.conf import SlurmConfig
from minislurm.ctld.runner import JobBody, Launch, Recovery
from minislurm.job import Allocation, JobRecord
from minislurm.options import JobOptions
from minislurm.slurmd.context import ArrayContext, JobContext, job_context, working_cluster
from minislurm.slurmd.env import exported_environment
from minislurm.slurmd.launch import NODE_FAILURE
from minislurm.slurmd.slurmstepd import launch_record
from minislurm.slurmd.spool import JobSpool, read_json, write_json
from minislurm.slurmd.stdio import StdioSpec
from minislurm.slurmd.stepd import batch_launch
from minislurm.slurmd.stepd_handle import Outcome, SpareStepd, StepdHandle
from minislurm.slurmd.tasks import node_hostname
from minislurm.slurmd.userenv import with_user_env

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


def controller_address(config: SlurmConfig) -> tuple[str, int]:
    """``SlurmctldHost`` (without its ``(addr)``) and ``SlurmctldPort`` (default 6817)."""
    value = config.extra.get("SlurmctldHost") or "localhost"
    host = str(value[0] if isinstance(value, list) else value)
    port = str(config.extra.get("SlurmctldPort") or "6817").split("-")[0]
    return host.split("(")[0], int(port) if port.isdigit() else 6817


@dataclass(slots=True)
class _Queued:
    job: JobRecord
    allocation: Allocation
    body: ProcessBody
    done: simpy.Event


class ProcessRunner:
    """Starts batch scripts in step daemons; ``post`` runs a callable on the controller's clock.

    ``before_launch`` (set by slurmctld) runs once before the step daemons of an instant
    are started: slurmctld saves its state there, so a job is on disk as RUNNING before
    its script can run. ``termination(job_id)`` (set by slurmctld) says why a SIGTERM is
    sent: ``'TIME LIMIT'``, ``''`` for scancel (slurmstepd then writes its ``*** JOB ...
    CANCELLED AT ...`` line), None for a bare signal.
    """

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
        gather = str(config.extra.get("JobAcctGatherType", "jobacct_gather/none"))
        #: jobacct_gather/linux (None with jobacct_gather/none: sstat has no data)
        self.jobacct: JobAcctGather | None = None
        if gather.endswith(("/linux", "/cgroup")):
            freq = gather_frequency(config.extra.get("JobAcctGatherFrequency"))
            self.jobacct = JobAcctGather(min(freq, EXIT_POLL) if freq else EXIT_POLL,
                                         conf=conf_path)
        self.before_launch: Callable[[], None] | None = None
        self.termination: Callable[[int], str | None] = lambda _job_id: None
        #: seconds between a requeue/preemption and its SIGTERM (slurmctld's agent sends
        #: the kill after replying, so a job requeueing itself sees scontrol succeed)
        self.agent_delay = 0.25
        self._queued: dict[int, _Queued] = {}
        self._stepds: dict[int, StepdHandle] = {}
        self._interactive: dict[int, simpy.Event] = {}
        self._step_pids: dict[int, set[int]] = {}
        self._step_ports: dict[int, dict[int, int]] = {}  # job -> step -> srun's port
        self._pids_of_step: dict[tuple[int, int], set[int]] = {}  # (job, step) -> pgids
        #: (job, step) created but not yet reported by its srun -> the step signals sent
        #: meanwhile, delivered when it reports its tasks (`step_created`)
        self._launching: dict[tuple[int, int], list[int]] = {}
        self.warned: dict[int, int] = {}  # job id -> restart count whose --signal was sent
        self.bodies: dict[int, ProcessBody] = {}
        self.allocations: dict[int, Allocation] = {}
        self._spare: SpareStepd | None = None
        self._spare_lock = threading.Lock()
        self._spares_wanted = False

    # ---- spare step daemons -------------------------------------------------------
    def keep_spare(self) -> None:
        """Keep one step daemon started ahead of need (`SpareStepd`), from now on."""
        self._spares_wanted = True
        threading.Thread(target=self._prime, name="spare-stepd", daemon=True).start()

    def _prime(self) -> None:
        with self._spare_lock:
            if self._spare is not None or not self._spares_wanted:
                return
            with contextlib.suppress(OSError):
                self._spare = SpareStepd()

    def _take_spare(self) -> SpareStepd | None:
        with self._spare_lock:
            spare, self._spare = self._spare, None
        if self._spares_wanted:
            threading.Thread(target=self._prime, name="spare-stepd", daemon=True).start()
        return spare

    def drop_spare(self) -> None:
        """slurmd stops: the waiting spare exits."""
        with self._spare_lock:
            self._spares_wanted = False
            spare, self._spare = self._spare, None
        if spare is not None:
            spare.discard()

    # ---- JobRunner ----------------------------------------------------------------
    def start(self, job: Launch, allocation: Allocation, body: JobBody) -> simpy.Event:
        """Launch the batch script of ``job`` (or hold an srun/salloc allocation).

        The step daemon starts at the end of this instant (after ``before_launch``).
        """
        done = self.env.event()
        self.allocations[job.job_id] = allocation
        if isinstance(body, ProcessBody):
            self.bodies[job.job_id] = body
        if not isinstance(body, ProcessBody) or body.interactive:
            self._interactive[job.job_id] = done
            return done
        if not self._queued:
            self.env.timeout(0).callbacks.append(self._launch_queued)
        self._queued[job.job_id] = _Queued(job.snapshot(), allocation, body, done)
        return done

    def _launch_queued(self, _ev: object = None) -> None:
        queued, self._queued = self._queued, {}
        if not queued:
            return
        if self.before_launch is not None:
            self.before_launch()
        for item in queued.values():
            self._launch(item)

    def _launch(self, item: _Queued) -> None:
        job, allocation, body, done = item.job, item.allocation, item.body, item.done
        if self.jobacct is not None:  # the batch step's tasks (a new attempt starts afresh)
            self.jobacct.forget(job.job_id, "batch")
            self.jobacct.watch(job.job_id, "batch")
            self.jobacct.start()
        ctx = self.job_context(job, body)
        spool = JobSpool(self.spool_dir, job.job_id, allocation.nodes[0].node, job.restart_count)
        try:
            identity, task, stdio = batch_launch(
                ctx, allocation, job.script, spool_dir=self.spool_dir,
                base_env=with_user_env(exported_environment(body.submit_env, body.options.export),
                                       body.options.export, ctx.user),
                stdio=StdioSpec(output=body.options.output, error=body.options.error,
                                input=body.options.input,
                                open_mode=body.options.open_mode or "truncate"),
                script_args=body.script_args,
            )
            record = launch_record(job.job_id, job.restart_count, identity, task, stdio,
                                   float(self.config.kill_wait),
                                   node_hostname(allocation.nodes[0].node))
            handle = StepdHandle.launch(spool, record, os.path.join(self.spool_dir,
                                                                    "slurmd.log"),
                                        self._take_spare())
        except OSError as exc:  # the spool directory itself failed: the job fails
            print(f"slurmd: error: launch of job {job.job_id} failed: {exc}", file=sys.stderr)
            done.succeed((1, 0))
            return
        self._watch(job.job_id, handle, done)

    def _watch(self, job_id: int, handle: StepdHandle, done: simpy.Event) -> None:
        self._stepds[job_id] = handle

        def ended(outcome: Outcome) -> None:
            def deliver() -> None:
                if self._stepds.get(job_id) is handle:
                    del self._stepds[job_id]
                    # proctrack: tasks of sruns that are gone do not outlive their job
                    # (not when a later attempt runs already: its steps are its own)
                    for pid in self._step_pids.pop(job_id, set()):
                        with contextlib.suppress(ProcessLookupError, PermissionError):
                            os.killpg(pid, signals.SIGKILL)
                    self._step_ports.pop(job_id, None)
                    self._forget_launching(job_id)
                if not done.triggered:
                    done.succeed((outcome.exit_code, outcome.signal))

            self.post(deliver)

        handle.watch(ended)

    def kill(self, job_id: int, signal: int) -> None:
        """Deliver ``signal`` to the job (``scancel``, time limit, a node going down).

        SIGTERM, SIGKILL and SIGCONT reach the batch script's process group and every
        srun step; any other signal only the srun steps (``scancel --signal=USR1``
        without ``--batch``, checked on 22.05: the batch shell does not get it).
        """
        queued = self._queued.get(job_id)
        stopping = signal in (signals.SIGTERM, signals.SIGKILL)
        if queued is not None:  # not started yet: nothing to signal
            if stopping:
                del self._queued[job_id]
                queued.done.succeed((0, signal))
            return
        why = self.termination(job_id) if signal == signals.SIGTERM else None
        if why is not None:
            self._terminate(job_id, why)
            return
        self._signal_steps(job_id, signal)
        handle = self._stepds.get(job_id)
        if handle is not None and (stopping or signal == signals.SIGCONT):
            handle.signal(signal)
        self._interactive_ended(job_id, signal)

    def node_failed(self, job_id: int, failed: Mapping[int, str]) -> None:
        """Nodes of the job went DOWN (``scontrol update state=down``, an injected
        failure): as 22.05.8 does with the job's surviving slurmds, each srun whose step
        spans a DOWN node hears ``srun_node_fail`` (``srun: error: Node failure on
        n2``), then the job stops like a cancelled one ``DUE TO NODE FAILURE, SEE
        SLURMCTLD LOG FOR DETAILS`` (the STEP and JOB lines, SIGCONT + SIGTERM, SIGKILL
        after KillWait)."""
        if job_id in self._queued:
            self.kill(job_id, signals.SIGKILL)
            return
        for step_id, port in self._step_ports.get(job_id, {}).items():
            nodes = failed.get(step_id)
            if nodes:
                self._tell_srun(port, {"op": "node_fail", "nodes": nodes})
        self._terminate(job_id, NODE_FAILURE)

    def node_lost(self, job_id: int, allocation: Allocation, failed: Mapping[int, str]) -> None:
        """A ``--no-kill`` job runs on ``allocation`` without its DOWN nodes: each srun
        whose step spanned one hears ``srun_node_fail`` (``Node failure on n2``) and the
        step's tasks get SIGKILL on every node (``kill_step_on_node``: srun then reports
        ``task N: Killed`` and exits 137, measured on 22.05.8); the batch script and the
        other steps run on."""
        self.allocations[job_id] = allocation
        ports = self._step_ports.get(job_id, {})
        for step_id, nodes in failed.items():
            port = ports.get(step_id)
            if port is not None:  # "kill": this step alone ends (srun: Force Terminated)
                self._tell_srun(port, {"op": "node_fail", "nodes": nodes, "kill": True})
            for pid in self._pids_of_step.get((job_id, step_id), ()):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(pid, signals.SIGKILL)

    def step_timed_out(self, job_id: int, step_id: int) -> bool:
        """A step's own time limit (``srun -t`` inside a job) ran out: its srun stops it
        ``DUE TO TIME LIMIT``.  False if no srun of that step listens."""
        port = self._step_ports.get(job_id, {}).get(step_id)
        return port is not None and self._tell_srun(port, {"op": "step_timeout"})

    def _terminate(self, job_id: int, why: str) -> None:
        """The job ends (``why``: slurmstepd's ``DUE TO`` words, ``''`` for scancel)."""
        # the steps first: their sruns stop them as slurmstepd would (their lines),
        # before the batch shell's SIGTERM reaches the sruns themselves
        if not self._abort_steps(job_id, why or None):
            self._signal_steps(job_id, signals.SIGTERM)
        handle = self._stepds.get(job_id)
        if handle is not None:
            handle.terminate(why or None)
        self._interactive_ended(job_id, signals.SIGTERM)

    def _interactive_ended(self, job_id: int, signal: int) -> None:
        waiting = self._interactive.get(job_id)
        if (waiting is not None and signal in (signals.SIGTERM, signals.SIGKILL)
                and not self._step_pids.get(job_id)):
            self.finish(job_id, 0, signal)

    def warn_signal(self, job_id: int, signal: int) -> None:
        """``--signal=[B:]SIG@TIME`` is due: ``B:`` signals the batch shell alone (not its
        children), without it every srun step and not the batch shell (22.05)."""
        body = self.bodies.get(job_id)
        spec = body.options.signal if body is not None else None
        handle = self._stepds.get(job_id)
        if handle is not None:
            self.warned[job_id] = handle.spool.restart_count
        if spec is not None and spec.batch_only:
            if handle is not None:
                handle.signal(signal, tree=False)
            return
        self._signal_steps(job_id, signal)

    def signal_steps(self, job_id: int, signal: int) -> None:
        """``scancel --signal=SIG`` (not KILL): every srun step of the job, never the batch
        shell (22.05 without ``--batch``). A step created whose tasks srun has not reported
        yet gets it once it does (`step_created`)."""
        self._signal_steps(job_id, signal)
        for (job, _step), held in self._launching.items():
            if job == job_id:
                held.append(signal)

    def step_created(self, job_id: int, step_id: int) -> None:
        """slurmctld created step ``step_id`` of ``job_id``: from now on it is one of the
        job's steps, which a step signal reaches. Its tasks start in srun before srun
        reports their process groups (`register_step_pids`); a signal sent in between is
        held and delivered then, as slurmstepd holds a step signal until the step runs
        (slurmd/slurmstepd/req.c ``_handle_signal_container`` -> ``_wait_for_job_running``)
        instead of dropping it."""
        self._launching[(job_id, step_id)] = []

    def _forget_launching(self, job_id: int) -> None:
        for key in [k for k in self._launching if k[0] == job_id]:
            del self._launching[key]

    def _abort_steps(self, job_id: int, reason: str | None) -> bool:
        """Tell every srun of the job that its step ends (``srun_step_complete``): each
        stops its tasks the way a step's slurmstepd does. False if one did not answer (or
        steps run whose srun left no port): then their process groups get the signal."""
        ports = self._step_ports.get(job_id, {})
        ok = bool(ports) or not self._step_pids.get(job_id)  # pids without a port: signal
        for port in ports.values():
            ok = self._tell_srun(port, {"op": "abort", "reason": reason}) and ok
        return ok

    @staticmethod
    def _tell_srun(port: int, message: dict[str, Any]) -> bool:
        """One message to an srun's port (``SLURM_SRUN_COMM_PORT``); False if unheard."""
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1.0) as conn:
                conn.sendall((json.dumps(message) + "\n").encode())
                conn.makefile("rb").readline()
        except OSError:
            return False
        return True

    def _signal_steps(self, job_id: int, signal: int) -> None:
        for pid in self._step_pids.get(job_id, ()):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal)

    # ---- a restarted controller -----------------------------------------------------
    def recover(self, job: JobRecord, allocation: Allocation, body: JobBody) -> Recovery:
        """Find a job that was running when the controller stopped (see `Recovery`)."""
        done = self.env.event()
        self.allocations[job.job_id] = allocation
        if isinstance(body, ProcessBody):
            self.bodies[job.job_id] = body
        if not isinstance(body, ProcessBody) or body.interactive:
            self._interactive[job.job_id] = done  # srun/salloc will say when it is over
            return Recovery(done)
        spool = JobSpool(self.spool_dir, job.job_id, allocation.nodes[0].node, job.restart_count)
        handle = StepdHandle.adopt(spool)
        if handle is not None:
            self._watch(job.job_id, handle, done)
            return Recovery(done)
        if spool.mine(read_json(spool.launch)) is None:
            return Recovery(done, lost=True)
        outcome = StepdHandle(spool, 0).outcome()
        end = None if outcome.end_time is None else int(outcome.end_time)
        return Recovery(done, ended=(outcome.exit_code, outcome.signal), end_time=end)

    def export_state(self) -> dict[str, Any]:
        """What slurmd must remember across a restart: srun steps' process groups and
        the ports their sruns listen on (so a job's end still reaches them)."""
        return {"step_pids": {str(k): sorted(v) for k, v in self._step_pids.items() if v},
                "step_ports": {str(k): {str(s): p for s, p in v.items()}
                               for k, v in self._step_ports.items() if v},
                "warned": {str(k): v for k, v in self.warned.items()}}

    def import_state(self, data: Mapping[str, Any]) -> None:
        for key, pids in dict(data.get("step_pids") or {}).items():
            self._step_pids[int(key)] = {int(p) for p in pids}
        for key, ports in dict(data.get("step_ports") or {}).items():
            self._step_ports[int(key)] = {int(s): int(p) for s, p in dict(ports).items()}
        for key, count in dict(data.get("warned") or {}).items():
            self.warned[int(key)] = int(count)

    # ---- srun / salloc ------------------------------------------------------------
    def register_step_pids(self, job_id: int, pids: set[int], step_id: int | None = None,
                           port: int | None = None) -> None:
        """srun tells slurmd which process groups belong to a step of ``job_id`` (and the
        port it listens on for the step's end)."""
        self._step_pids.setdefault(job_id, set()).update(pids)
        if step_id is not None:
            self._pids_of_step.setdefault((job_id, step_id), set()).update(pids)
            for signal in self._launching.pop((job_id, step_id), []):
                for pid in pids:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(pid, signal)
        if step_id is not None and port:
            self._step_ports.setdefault(job_id, {})[step_id] = port
            self._write_ports(job_id)

    def unregister_step_pids(self, job_id: int, pids: set[int],
                             step_id: int | None = None) -> None:
        self._step_pids.get(job_id, set()).difference_update(pids)
        if step_id is not None:
            self._pids_of_step.pop((job_id, step_id), None)
            self._launching.pop((job_id, step_id), None)
        ports = self._step_ports.get(job_id, {})
        if step_id is not None and ports.pop(step_id, None) is not None:
            self._write_ports(job_id)
        if not ports:
            self._step_ports.pop(job_id, None)

    def _write_ports(self, job_id: int) -> None:
        """Tell the job's batch step daemon which sruns to end with the script."""
        handle = self._stepds.get(job_id)
        if handle is not None:
            with contextlib.suppress(OSError):
                write_json(handle.spool.srun_ports,
                           {"restart_count": handle.spool.restart_count,
                            "ports": sorted(self._step_ports.get(job_id, {}).values())})

    def finish(self, job_id: int, exit_code: int, signal: int = 0) -> None:
        """srun/salloc's allocation ended (``REQUEST_COMPLETE_JOB_ALLOCATION``)."""
        done = self._interactive.pop(job_id, None)
        self._forget_launching(job_id)
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
            local_device_index=self.config.use_local_device_index,
            working_cluster=working_cluster(
                self.config.cluster_name, *controller_address(self.config)
            ),
        )
