"""slurmd's side of one batch step daemon: start it, signal it, wait for it, adopt it.

A `StepdHandle` is what slurmd holds for a running ``slurmstepd``
(`minislurm.slurmd.slurmstepd`): the spool records of the attempt
(`minislurm.slurmd.spool.JobSpool`), the process (a child when this slurmd started
it, a stranger when it was found again after a restart), and its socket.

* `StepdHandle.launch` writes ``launch.json``, opens the step socket and starts the
  step daemon in a session of its own (so no signal meant for the controller's
  process group reaches it);
* `StepdHandle.adopt` finds the step daemon of an attempt again: its recorded pid
  must still run *and* have the recorded start time (a reused pid is not adopted);
* `signal` asks the step daemon (over its socket) to signal the script; when the
  step daemon is gone the recorded task process groups are signalled directly;
* `outcome` reads ``status.json``; a step daemon that died without writing it
  (SIGKILL) leaves its script orphaned: what is left of it is killed and the attempt
  ends as killed by SIGKILL.

Real slurmd forks its C ``slurmstepd`` in about a millisecond; a Python step daemon
needs ~60 ms of interpreter start and imports. `SpareStepd` pays that ahead of time:
one step daemon is started before it is needed and waits, imports done, until a
launch hands it its spool directory, listening socket and log (``SCM_RIGHTS``).
"""

from __future__ import annotations

import contextlib
import os
import select
import signal as signals
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from minislurm.common import rpc
from minislurm.errors import SlurmError
from minislurm.slurmd.spool import (
    JobSpool,
    process_start_ticks,
    read_json,
    write_json,
)

__all__ = ["Outcome", "SpareStepd", "StepdHandle"]

#: How long a request to a step daemon may take (seconds).
REQUEST_TIMEOUT = 5.0
#: How long a restarted slurmd waits for a just-started step daemon to record itself.
STARTING_GRACE = 5.0


@dataclass(frozen=True, slots=True)
class Outcome:
    """How an attempt's batch script ended: ``(exit_code, signal)`` and when (epoch s)."""

    exit_code: int
    signal: int
    end_time: float | None


def _stepd_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "minislurm.slurmd.slurmstepd", *args]


class SpareStepd:
    """A step daemon started ahead of need, waiting for the launch it will serve.

    It holds one end of a socket pair; `hand_over` sends it the job's spool directory
    with the listening step socket and the log file descriptor, after which it is an
    ordinary step daemon. When the other end closes (slurmd stops, even by SIGKILL)
    a waiting spare exits.
    """

    def __init__(self) -> None:
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.proc = subprocess.Popen(
                _stepd_command("--spare", str(theirs.fileno())), pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True, cwd="/",
            )
        except OSError:
            mine.close()
            raise
        finally:
            theirs.close()
        self.sock = mine

    def hand_over(self, job_dir: str, listening_fd: int, log_fd: int) -> bool:
        """Give the spare its launch; False if it is no longer there to take it."""
        try:
            if self.proc.poll() is not None:
                return False
            socket.send_fds(self.sock, [job_dir.encode()], [listening_fd, log_fd])
            return True
        except OSError:
            return False
        finally:
            self.sock.close()

    def discard(self) -> None:
        """Stop a spare that will not be used (slurmd is stopping)."""
        self.sock.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=2.0)
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


class StepdHandle:
    """One step daemon (see the module docstring)."""

    def __init__(self, spool: JobSpool, pid: int, proc: subprocess.Popen[bytes] | None = None,
                 ) -> None:
        self.spool = spool
        self.pid = pid
        self.proc = proc
        self._thread: threading.Thread | None = None

    # ---- starting and finding again ---------------------------------------------------
    @classmethod
    def launch(cls, spool: JobSpool, record: dict[str, Any], log_path: str,
               spare: SpareStepd | None = None) -> StepdHandle:
        """Write the launch record and start the step daemon (``OSError`` if it cannot):
        ``spare`` if it takes the launch, else a new process."""
        spool.clear()
        spool.dir.mkdir(parents=True, exist_ok=True)
        # the step daemon's socket path (``getsockname`` may be a /proc/self/fd/ alias)
        write_json(spool.launch, {**record, "socket": str(spool.socket)})
        spool.socket.parent.mkdir(parents=True, exist_ok=True)
        listening = rpc.listening_socket(spool.socket)
        try:
            with open(log_path, "ab") as log:
                if spare is not None and spare.hand_over(str(spool.dir), listening.fileno(),
                                                         log.fileno()):
                    return cls(spool, spare.proc.pid, spare.proc)
                proc = subprocess.Popen(
                    _stepd_command(str(spool.dir), str(listening.fileno())),
                    pass_fds=(listening.fileno(),), stdin=subprocess.DEVNULL, stdout=log,
                    stderr=log, start_new_session=True, cwd="/",
                )
        finally:
            listening.close()
        return cls(spool, proc.pid, proc)

    @classmethod
    def adopt(cls, spool: JobSpool) -> StepdHandle | None:
        """The still running step daemon of ``spool``'s attempt, or None."""
        deadline = time.monotonic() + STARTING_GRACE
        while True:
            pid = spool.stepd_alive()
            if pid is not None:
                return cls(spool, pid)
            starting = spool.mine(read_json(spool.launch)) is not None and (
                spool.mine(read_json(spool.stepd)) is None)
            if not starting or time.monotonic() >= deadline or spool.result() is not None:
                return None
            time.sleep(0.05)  # launched, but not yet recorded its pid

    # ---- using it ---------------------------------------------------------------------
    def alive(self) -> bool:
        if self.proc is not None:
            return self.proc.poll() is None
        return process_start_ticks(self.pid) is not None

    def terminate(self, reason: str | None) -> None:
        """Cancel the script (slurmstepd's message, SIGCONT + SIGTERM, SIGKILL after
        KillWait); ``reason`` ``'TIME LIMIT'`` ... or None (scancel)."""
        if not self._request({"op": "terminate", "reason": reason}):
            self._signal_tasks(signals.SIGTERM, tree=True)

    def signal(self, sig: int, *, tree: bool = True) -> None:
        """Signal the script: its process group (``tree``) or the shell alone."""
        if not self._request({"op": "signal", "signal": sig, "tree": tree}):
            self._signal_tasks(sig, tree=tree)

    def _request(self, request: dict[str, Any]) -> bool:
        try:
            rpc.call(self.spool.socket, request, timeout=REQUEST_TIMEOUT)
            return True
        except (SlurmError, OSError, ValueError):
            return False  # the step daemon is gone (or hung)

    def _signal_tasks(self, sig: int, *, tree: bool) -> None:
        """What a step daemon that is gone left behind gets the signal directly."""
        for pid in self.task_pids():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, sig) if tree else os.kill(pid, sig)

    def task_pids(self) -> list[int]:
        rec = self.spool.mine(read_json(self.spool.stepd)) or {}
        return [int(p) for p in rec.get("task_pids", [])]

    def wait(self) -> None:
        """Block until the step daemon has exited."""
        if self.proc is not None:
            self.proc.wait()
            return
        try:
            fd = os.pidfd_open(self.pid)
        except (OSError, AttributeError):
            fd = None
        if fd is None:
            while self.alive():
                time.sleep(0.2)
            return
        try:
            while self.alive():
                select.select([fd], [], [], 1.0)
        finally:
            os.close(fd)

    def outcome(self) -> Outcome:
        """How the attempt ended (after `wait`)."""
        result = self.spool.result()
        if result is not None:
            return Outcome(int(result["exit_code"]), int(result["signal"]),
                           float(result["end_time"]))
        for pid in self.task_pids():  # proctrack: nothing of a dead step daemon's job stays
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signals.SIGKILL)
        if self.spool.superseded():  # requeued and relaunched: the directory is not ours
            return Outcome(0, int(signals.SIGKILL), None)
        write_json(self.spool.status, {
            "restart_count": self.spool.restart_count, "job_id": self.spool.job_id,
            "exit_code": 0, "signal": int(signals.SIGKILL), "end_time": time.time(),
            "error": "slurmstepd ended without a status",
        })
        return Outcome(0, int(signals.SIGKILL), None)

    def watch(self, ended: Callable[[Outcome], None]) -> None:
        """Call ``ended(outcome)`` from a thread once the step daemon has exited."""
        def run() -> None:
            self.wait()
            ended(self.outcome())

        self._thread = threading.Thread(target=run, name=f"stepd-{self.spool.job_id}",
                                        daemon=True)
        self._thread.start()
