"""Start the tasks of a step as real local processes, like slurmstepd does.

Several logical nodes share this host: every task of every node is a local
process with its own environment (built by `minislurm.slurmd.env`), its own
working directory and its streams wired to the ``-o/-e/-i`` files
(`minislurm.slurmd.stdio`).  What slurmstepd does, and so does `launch_step`
(every message checked against real Slurm in tests/minislurm/slurmd/test_launch_realslurm.py):

* the command is looked up in the *task's* ``PATH`` (`minislurm.slurmd.execve`);
  when ``execve`` fails the task's stderr gets
  ``slurmstepd-n1: error: execve(): <cmd>: <strerror>`` (or
  ``execve(): bad interpreter(<#! line>): <strerror>``) and the task exits
  with ``errno`` (``No such file or directory`` -> 2, ``Permission denied`` -> 13);
* a working directory that does not exist:
  ``couldn't chdir to `<dir>': No such file or directory: going to /tmp instead``;
* an output file that cannot be opened: the task does not start and exits 1;
  a batch job then leaves no file at all (capture f4 05), srun says
  ``srun: error: Could not open stdout file: <strerror>`` (one file for all
  tasks) or ``srun: error: task 0 launch failed: Slurmd could not connect IO``;
* ``SLURM_TASK_PID`` is the task's real pid; each task leads its own session
  (``setsid``) so that a signal reaches its whole process tree;
* cancel / time limit (`RunningStep.terminate`): ``slurmstepd-n1: error: ***
  JOB <id> ON n1 CANCELLED AT <time> [DUE TO TIME LIMIT] ***`` once per step
  (``STEP <id>.<step>`` for srun steps), SIGCONT + SIGTERM to every task,
  SIGKILL after ``KillWait``;
* when the tasks are done, what is left of their process groups is killed
  (proctrack) and every child is reaped: no zombies.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from minislurm.common.timespec import format_timestamp
from minislurm.slurmd.execve import (
    exec_error_message,
    resolve_command,
    spawn,
    stepd_error,
    write_batch_script,
    write_line,
)
from minislurm.slurmd.stdio import (
    LabelPump,
    OutputFiles,
    StdioSpec,
    label_pipe,
    label_width,
    open_streams,
)
from minislurm.slurmd.tasks import StepIdentity, TaskResult, TaskSpec
from minislurm.states import LAUNCH_FAILED_STATUS

__all__ = [
    "DUE_TO",
    "NODE_FAILURE",
    "RunningStep",
    "StepIdentity",
    "TaskResult",
    "TaskSpec",
    "exec_error_message",
    "launch_step",
    "launcher_socket",
    "resolve_command",
    "write_batch_script",
]

#: slurmstepd's reason for a job or step that ends because one of its nodes went DOWN
NODE_FAILURE = "NODE FAILURE"
#: the words slurmstepd's ``*** ... CANCELLED AT <time> DUE TO ... ***`` line uses
#: (src/slurmd/slurmstepd/req.c), where they are not the reason itself
DUE_TO = {NODE_FAILURE: "NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS"}


def launcher_socket(host: str = "127.0.0.1") -> socket.socket:
    """srun's listening socket: its port is ``SLURM_SRUN_COMM_PORT`` and
    ``SLURM_STEP_LAUNCHER_PORT`` (an ephemeral port, e.g. 34479 in capture a1).
    Keep it open while the step runs; close it afterwards."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((host, 0))
    sock.listen()
    return sock


@dataclass(slots=True)
class _Task:
    """A started (or failed) task, mutable bookkeeping of `RunningStep`."""

    spec: TaskSpec
    proc: subprocess.Popen[bytes] | None
    stderr_fd: int | None
    result: TaskResult | None = None


class RunningStep:
    """The processes of one step on this host; use `launch_step` to create it."""

    def __init__(self, identity: StepIdentity, kill_wait: float) -> None:
        self.identity = identity
        self.kill_wait = kill_wait
        self.timed_out = False
        self.cancelled = False
        #: slurmctld killed this step alone (a --no-kill job lost a node of it): srun
        #: ends with ``Force Terminated StepId=J.S`` after the task lines
        self.force_terminated = False
        self._tasks: list[_Task] = []
        self._pumps: list[LabelPump] = []
        self._lock = threading.Lock()
        self._timers: list[threading.Timer] = []
        self._keep_fds: list[int] = []
        self._results: tuple[TaskResult, ...] | None = None
        self._callbacks: list[Callable[[tuple[TaskResult, ...]], None]] = []
        self._watcher: threading.Thread | None = None
        #: called with the exit statuses once every task ended, before what is left of
        #: their process groups is killed (the batch step ends its job's srun steps)
        self.before_cleanup: Callable[[list[int | None]], None] | None = None

    @property
    def pids(self) -> dict[int, int]:
        """Task id -> pid of the tasks that started."""
        return {t.spec.task_id: t.proc.pid for t in self._tasks if t.proc is not None}

    def poll(self) -> bool:
        """Whether every task has ended (reaps those that did)."""
        return all(t.proc is None or t.proc.poll() is not None for t in self._tasks)

    def signal(self, sig: int, *, tree: bool = True) -> None:
        """Send ``sig`` to every task's process group (``scancel --signal``).

        ``tree=False`` signals only the task processes themselves, what
        ``--signal=B:SIG`` / ``scancel --batch`` do to the batch shell.
        """
        for task in self._tasks:
            if task.proc is not None and (tree or task.proc.returncode is None):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    if tree:
                        os.killpg(task.proc.pid, sig)
                    else:
                        os.kill(task.proc.pid, sig)

    def terminate(self, reason: str | None = None, *, now: Callable[[], float] = time.time,
                  failed: bool = False) -> None:
        """Cancel the step: message, SIGCONT + SIGTERM, SIGKILL after KillWait.

        ``reason`` ``'TIME LIMIT'``, ``'JOB REQUEUE'`` (seen on real Slurm after
        ``scontrol requeue``), ``'PREEMPTION'`` or ``'NODE FAILURE'`` appends
        ``DUE TO <reason>`` to slurmstepd's message (``DUE TO NODE FAILURE, SEE
        SLURMCTLD LOG FOR DETAILS``, as 22.05's slurmstepd words it); ``None`` is
        scancel.  ``failed``: the job's batch script ended with a non-zero status
        while the step ran (real 22.05.8 then says ``*** STEP N.0 ON n1 FAILED
        (non-zero exit code or other failure mode) ***``).
        """
        with self._lock:
            if self.cancelled or self._results is not None:
                return
            self.cancelled = True
            stamp = format_timestamp(int(now()))
            due = f" DUE TO {DUE_TO.get(reason, reason)}" if reason else ""
            # one message per step, from the step daemon of its first node (real
            # Slurm: a 2-node step shows only "*** STEP 5.0 ON n1 CANCELLED AT ...")
            first = next((t for t in self._tasks if t.stderr_fd is not None), None)
            if first is not None and first.stderr_fd is not None:
                node = first.spec.node
                what = f"{self.identity.entity} ON {node}"
                how = ("FAILED (non-zero exit code or other failure mode)" if failed
                       else f"CANCELLED AT {stamp}{due}")
                write_line(first.stderr_fd, f"{stepd_error(node)}*** {what} {how} ***")
        self.signal(signal.SIGCONT)
        self.signal(signal.SIGTERM)
        timer = threading.Timer(self.kill_wait, self.signal, args=(signal.SIGKILL,))
        timer.daemon = True
        self._timers.append(timer)
        timer.start()

    def _time_limit(self) -> None:
        if not self.poll():
            self.timed_out = True
            self.terminate("TIME LIMIT")

    def wait(self, timeout: float | None = None) -> tuple[TaskResult, ...]:
        """Wait for every task; their results in task order (raises TimeoutError)."""
        if self._results is not None:
            return self._results
        deadline = None if timeout is None else time.monotonic() + timeout
        for task in self._tasks:
            if task.proc is None:
                continue
            left = None if deadline is None else max(deadline - time.monotonic(), 0.0)
            try:
                task.proc.wait(left)
            except subprocess.TimeoutExpired:
                raise TimeoutError(f"step {self.identity.entity} still running") from None
        with self._lock:
            if self._results is None:
                self._results = self._finish()
        return self._results

    def _finish(self) -> tuple[TaskResult, ...]:
        """After the last task: kill leftovers, drain the pumps, close files, collect."""
        if self.before_cleanup is not None:
            self.before_cleanup([t.proc.returncode if t.proc is not None else None
                                 for t in self._tasks])
        self.signal(signal.SIGKILL)  # proctrack: nothing of the step outlives it
        for pump in self._pumps:
            pump.join(5.0)
        for timer in self._timers:
            timer.cancel()
        for fd in self._keep_fds:
            os.close(fd)
        self._keep_fds.clear()
        results = []
        for task in self._tasks:
            task.stderr_fd = None
            if task.result is None:
                assert task.proc is not None
                rc = task.proc.returncode
                task.result = TaskResult(
                    task_id=task.spec.task_id,
                    node=task.spec.node,
                    pid=task.proc.pid,
                    exit_code=rc if rc >= 0 else 0,
                    signal=-rc if rc < 0 else 0,
                )
            results.append(task.result)
        ordered = tuple(sorted(results, key=lambda r: r.task_id))
        for callback in self._callbacks:
            threading.Thread(target=callback, args=(ordered,), daemon=True).start()
        return ordered

    def add_done_callback(self, callback: Callable[[tuple[TaskResult, ...]], None]) -> None:
        """Call ``callback(results)`` once every task has ended (slurmstepd's
        ``REQUEST_COMPLETE_BATCH_SCRIPT`` / step completion message).

        A watcher thread waits for the step, so the caller need not poll.
        """
        with self._lock:
            done = self._results
            if done is None:
                self._callbacks.append(callback)
        if done is not None:
            callback(done)
            return
        if self._watcher is None:
            self._watcher = threading.Thread(target=self.wait, daemon=True)
            self._watcher.start()

    # --- starting --------------------------------------------------------------------------

    def _start(
        self, spec: TaskSpec, stdin: int, stdout: int, stderr: int, first_on_node: bool
    ) -> _Task:
        """Fork/exec one task; a failed execve becomes a task with slurmstepd's message."""
        proc = spawn(
            spec.argv,
            spec.env,
            spec.cwd,
            stdin,
            stdout,
            stderr,
            node=spec.node,
            first_on_node=first_on_node,
        )
        if isinstance(proc, tuple):
            code, message = proc
            return _Task(
                spec, None, stderr, TaskResult(spec.task_id, spec.node, None, code, 0, message)
            )
        return _Task(spec, proc, stderr)


def launch_step(
    identity: StepIdentity,
    tasks: Sequence[TaskSpec],
    stdio: StdioSpec,
    *,
    kill_wait: float = 30.0,
    time_limit: float | None = None,
    stdin_fd: int | None = None,
    stdout_fd: int = 1,
    stderr_fd: int = 2,
    hostname_of: Callable[[str], str] | None = None,
) -> RunningStep:
    """Start all ``tasks`` of a step now and return the running step.

    ``stdout_fd``/``stderr_fd`` receive the streams when no ``-o``/``-e`` is
    given (srun's own terminal); ``stdin_fd`` is fed to every task when no
    ``-i`` is given (else ``/dev/null``).  ``time_limit`` (seconds) cancels the
    step ``DUE TO TIME LIMIT``; ``kill_wait`` is slurm.conf's ``KillWait``.
    ``hostname_of`` maps a node name to what ``%N`` prints (default: the node
    name; on the single-host reference cluster Slurm printed the host's name,
    ``vm``, capture f4 01).
    """
    step = RunningStep(identity, kill_wait)
    files = OutputFiles(stdio.open_mode)
    width = label_width(len(tasks))
    dest_locks: dict[int, threading.Lock] = {}
    reported: set[str] = set()
    nodes_seen: set[str] = set()
    devnull = os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)
    try:
        for spec in tasks:
            std = (stdin_fd if stdin_fd is not None else devnull, stdout_fd, stderr_fd)
            stdin, out_fd, err_fd, failure = open_streams(
                identity, spec, stdio, files, std, step._keep_fds, hostname_of
            )
            if failure:
                if failure not in reported:  # srun reports a shared file once
                    write_line(err_fd, failure)
                    reported.add(failure)
                if identity.step_id == "batch":  # the job fails: FAILED 0:53, JobLaunchFailure
                    result = TaskResult(spec.task_id, spec.node, None, 0, LAUNCH_FAILED_STATUS,
                                        failure)
                else:
                    result = TaskResult(spec.task_id, spec.node, None, 1, 0, failure)
                step._tasks.append(_Task(spec, None, None, result))
                continue
            child_out, child_err = out_fd, err_fd
            if stdio.label:
                prefix = f"{spec.task_id:>{width}}: ".encode()
                child_out = _pump(step, out_fd, prefix, dest_locks)
                child_err = _pump(step, err_fd, prefix, dest_locks)
            try:
                task = step._start(spec, stdin, child_out, child_err, spec.node not in nodes_seen)
                nodes_seen.add(spec.node)
            finally:
                if stdio.label:
                    os.close(child_out)
                    os.close(child_err)
            task.stderr_fd = err_fd
            step._tasks.append(task)
    finally:
        os.close(devnull)
        step._keep_fds.extend(files.take())  # kept for slurmstepd's messages, closed by wait()
    if time_limit is not None:
        timer = threading.Timer(time_limit, step._time_limit)
        timer.daemon = True
        step._timers.append(timer)
        timer.start()
    return step


def _pump(step: RunningStep, dest: int, prefix: bytes, locks: dict[int, threading.Lock]) -> int:
    """Label a task stream: the write end goes to the task, the pump to the step."""
    write_fd, pump = label_pipe(dest, prefix, locks.setdefault(dest, threading.Lock()))
    step._pumps.append(pump)
    return write_fd
