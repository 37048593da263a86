"""``python -m minislurm.slurmd.slurmstepd JOBDIR FD``: the step daemon of one batch job.

In Slurm the batch script is not a child of slurmctld, nor even of slurmd: slurmd
forks one ``slurmstepd`` per step, which starts the tasks, holds their output files,
waits for them and reports how they ended. That is why jobs keep running when
slurmctld is stopped or dies, and why a restarted slurmctld finds them again.

minislurm does the same. The local daemon's slurmd (`ProcessRunner`) writes what to
run in ``JOBDIR/launch.json`` (`minislurm.slurmd.spool`), opens the step's socket
(``<node>_<jobid>.4294967291``) and starts this program in a session of its own,
handing over the listening socket as file descriptor ``FD``. The step daemon:

* records its pid and process start time (``slurmstepd.json``);
* starts the batch script with `minislurm.slurmd.launch` (same environment, streams,
  execve errors and proctrack as before);
* answers ``signal`` requests on its socket: the whole process group of the script
  or only the shell (``--signal=B:SIG``); and ``terminate`` (scancel, time limit):
  ``*** JOB 5 ON n1 CANCELLED AT <time> [DUE TO TIME LIMIT] ***`` in the job's
  stderr, SIGCONT + SIGTERM, SIGKILL after KillWait;
* writes ``status.json`` (exit code, signal, end time) when the script is done, then
  exits; whoever runs the controller then, or later, collects it.

It ignores SIGHUP and SIGINT and passes SIGTERM on to the script, so that neither a
closed terminal nor a killed controller ends a job.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from minislurm.common import rpc
from minislurm.errors import SlurmError
from minislurm.slurmd.launch import RunningStep, launch_step
from minislurm.slurmd.spool import process_start_ticks, read_json, write_json
from minislurm.slurmd.stdio import StdioSpec
from minislurm.slurmd.tasks import StepIdentity, TaskSpec

__all__ = ["launch_record", "main"]


def launch_record(job_id: int, restart_count: int, identity: StepIdentity, task: TaskSpec,
                  stdio: StdioSpec, kill_wait: float, hostname: str) -> dict[str, Any]:
    """``launch.json``: everything the step daemon needs (plain JSON)."""
    return {
        "job_id": job_id, "restart_count": restart_count, "kill_wait": kill_wait,
        "hostname": hostname,
        "identity": {"job_id": identity.job_id, "step_id": identity.step_id,
                     "job_name": identity.job_name, "user": identity.user,
                     "array_job_id": identity.array_job_id,
                     "array_task_id": identity.array_task_id},
        "task": {"task_id": task.task_id, "node": task.node, "node_index": task.node_index,
                 "argv": list(task.argv), "env": dict(task.env), "cwd": task.cwd},
        "stdio": {"output": stdio.output, "error": stdio.error, "input": stdio.input,
                  "open_mode": stdio.open_mode, "label": stdio.label},
    }


class BatchStepd:
    """One batch step, started from its launch record."""

    def __init__(self, job_dir: Path, record: dict[str, Any]) -> None:
        self.dir = job_dir
        self.record = record
        self.running: RunningStep | None = None
        self.ready = threading.Event()

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        """A request of slurmd/slurmctld on the step's socket."""
        self.ready.wait(30)
        op = request["op"]
        if op == "ping":
            return {"pid": os.getpid(), "job_id": self.record["job_id"]}
        if op == "signal":
            if self.running is not None:
                self.running.signal(int(request["signal"]), tree=bool(request.get("tree", True)))
            return {}
        if op == "terminate":  # cancel / time limit: message, SIGCONT + SIGTERM, SIGKILL later
            if self.running is not None:
                self.running.terminate(request.get("reason") or None)
            return {}
        raise SlurmError(f"slurmstepd: error: unknown request '{op}'")

    def run(self, listening: socket.socket) -> int:
        rec = self.record
        me = os.getpid()
        base = {"restart_count": rec["restart_count"], "job_id": rec["job_id"], "pid": me,
                "start_ticks": process_start_ticks(me)}
        write_json(self.dir / "slurmstepd.json", base)
        sock_path = str(rec.get("socket") or listening.getsockname())
        server = rpc.Server(sock_path, self.handle, listening=listening)
        server.serve_in_thread()
        task = rec["task"]
        spec = TaskSpec(int(task["task_id"]), str(task["node"]), int(task["node_index"]),
                        tuple(task["argv"]), dict(task["env"]), str(task["cwd"]))
        ident = StepIdentity(**rec["identity"])
        stdio = StdioSpec(**rec["stdio"])
        start = time.time()
        hostname = str(rec.get("hostname") or socket.gethostname().split(".")[0])
        try:
            self.running = launch_step(ident, [spec], stdio, kill_wait=float(rec["kill_wait"]),
                                       hostname_of=lambda _node: hostname)
        finally:
            self.ready.set()
        kill_wait = float(rec["kill_wait"])
        self.running.before_cleanup = lambda codes: end_srun_steps(
            self.dir / "srun_ports.json", int(rec["restart_count"]),
            failed=bool(codes and codes[0]), kill_wait=kill_wait)
        pids = sorted(self.running.pids.values())
        write_json(self.dir / "slurmstepd.json", {**base, "task_pids": pids})
        results = self.running.wait()
        end = time.time()
        first = results[0] if results else None
        server.shutdown()
        server.server_close()
        if _superseded(self.dir, int(rec["restart_count"])):
            return 0  # requeued and relaunched meanwhile: the status and socket are its
        write_json(self.dir / "status.json", {
            "restart_count": rec["restart_count"], "job_id": rec["job_id"],
            "exit_code": first.exit_code if first else 1, "signal": first.signal if first else 0,
            "start_time": start, "end_time": end, "error": first.error if first else "",
        })
        with contextlib.suppress(OSError):
            os.unlink(sock_path)
        return 0

    def forward(self, signum: int, _frame: object) -> None:
        """SIGTERM to the step daemon reaches the script (as slurmstepd's proctrack would)."""
        if self.running is not None:
            self.running.signal(signum)


def end_srun_steps(ports_file: Path, restart_count: int, *, failed: bool,
                   kill_wait: float) -> None:
    """The script ended while srun steps of its job run (``srun ... &`` not waited for):
    each srun ends its step as real 22.05.8 does (``Job step aborted``, the step's
    ``CANCELLED AT`` or, after a non-zero exit, ``FAILED (non-zero exit code or other
    failure mode)`` line, SIGTERM), and the script's leftovers are killed only once
    those sruns are done (or KillWait + 2 s passed)."""
    record = read_json(ports_file) or {}
    if record.get("restart_count") != restart_count:
        return  # none, or a later attempt's sruns: not this script's to end
    ports = [int(p) for p in record.get("ports", [])]
    live = []
    for port in ports:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1.0) as conn:
                conn.sendall((json.dumps({"op": "abort", "reason": None, "failed": failed})
                              + "\n").encode())
                conn.makefile("rb").readline()
            live.append(port)
        except OSError:
            continue
    deadline = time.monotonic() + kill_wait + 2
    while live and time.monotonic() < deadline:
        time.sleep(0.05)
        live = [p for p in live if _listening(p)]


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True  # srun closes its port once its step is over
    except OSError:
        return False


def _superseded(job_dir: Path, restart_count: int) -> bool:
    """A later attempt of the job has been launched in ``job_dir`` (``JobSpool.superseded``)."""
    rec = read_json(job_dir / "launch.json")
    return rec is not None and int(rec.get("restart_count", -1)) > restart_count


def _ignore(_signum: int, _frame: object) -> None:
    """SIGHUP/SIGINT reach the step daemon of a closed terminal: it goes on."""


def _wait_as_spare(fd: int) -> tuple[str, int] | None:
    """``slurmstepd --spare FD``: wait (imports done) for slurmd to hand over a launch:
    the job directory, its listening socket and the log (`SpareStepd`); None when
    slurmd closed its end instead."""
    for sig in (signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, _ignore)
    with socket.socket(fileno=fd) as pair:
        try:
            msg, fds, _flags, _addr = socket.recv_fds(pair, 4096, 2)
        except OSError:
            return None
    if not msg or len(fds) != 2:
        for extra in fds:
            os.close(extra)
        return None
    listening_fd, log_fd = fds
    os.dup2(log_fd, 1)
    os.dup2(log_fd, 2)
    os.close(log_fd)
    return msg.decode(), listening_fd


def main(argv: Sequence[str]) -> int:
    """``slurmstepd JOBDIR FD`` (or ``slurmstepd --spare FD``, see `_wait_as_spare`)."""
    if len(argv) == 2 and argv[0] == "--spare":
        handed = _wait_as_spare(int(argv[1]))
        if handed is None:
            return 0
        argv = [handed[0], str(handed[1])]
    if len(argv) != 2:
        print("usage: python -m minislurm.slurmd.slurmstepd JOBDIR FD", file=sys.stderr)
        return 1
    job_dir, fd = Path(argv[0]), int(argv[1])
    record = read_json(job_dir / "launch.json")
    if record is None:
        print(f"slurmstepd: error: no launch record in {job_dir}", file=sys.stderr)
        return 1
    listening = socket.socket(fileno=fd)
    stepd = BatchStepd(job_dir, record)
    for sig in (signal.SIGHUP, signal.SIGINT):  # a handler, not SIG_IGN: tasks inherit that
        signal.signal(sig, _ignore)
    signal.signal(signal.SIGTERM, stepd.forward)
    return stepd.run(listening)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
