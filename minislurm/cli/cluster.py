"""``python -m minislurm cluster up|status|down [--conf slurm.conf]``: the local cluster.

``up`` starts the controller daemon (`minislurm.daemon.slurmctld`, with its node
daemons) in the background and waits until it answers; it picks up the saved
state (jobs, nodes, accounting) and the jobs that kept running. ``status`` says
whether it runs. ``down`` shuts the cluster down: running jobs are cancelled
(SIGTERM, SIGKILL after KillWait) and end CANCELLED, pending jobs stay queued for
the next ``up``; a controller that has not stopped within ``DOWN_TIMEOUT`` (frozen,
stuck) is killed, so ``down`` never leaves one behind. ``down --keep-jobs`` stops only
the controller, like ``systemctl stop slurmctld``: running jobs go on and the next
``up`` finds them again (so does a controller that was killed). ``up -i`` starts
despite unreadable state files (slurmctld ``-i``). The configuration is ``--conf``,
else ``$SLURM_CONF``, else the embedded default, as for every command.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from minislurm.cli.transport import state_dir
from minislurm.common import rpc
from minislurm.errors import ControllerUnavailable, SlurmError
from minislurm.slurmd.spool import process_start_ticks

USAGE = "usage: python -m minislurm cluster up|status|down [--conf slurm.conf]"
HELP = (f"{USAGE}\n"
        "  up -i           start despite unreadable state files (uses the previous save)\n"
        "  down            cancel the running jobs and stop the cluster\n"
        "  down --keep-jobs  stop the controller only; running jobs go on\n")

#: How long ``up`` waits for the daemon to answer (seconds).
START_TIMEOUT = 30.0
#: How long ``down`` waits in all for the daemon to stop by itself (cancelled jobs get
#: KillWait first); then it kills it.
DOWN_TIMEOUT = 120.0
#: How long ``down`` waits for a daemon it killed to be gone.
KILL_TIMEOUT = 10.0


def _ping(sock: Path) -> dict[str, Any] | None:
    try:
        return rpc.call(sock, {"op": "ping"}, timeout=5)
    except (ControllerUnavailable, OSError):
        return None


def up(env: dict[str, str], conf: str | None, *, ignore: bool = False) -> int:
    state = state_dir(env)
    sock = state / "slurmctld.sock"
    answer = _ping(sock) if sock.exists() else None
    if answer is not None:
        print(f"minislurm: cluster {answer['cluster']} is already up "
              f"(slurmctld pid {answer['pid']})")
        return 0
    state.mkdir(parents=True, exist_ok=True)
    log = state / "slurmctld.log"
    cmd = [sys.executable, "-m", "minislurm", "slurmctld", "-D"]
    if conf:
        cmd += ["-f", conf]
    if ignore:
        cmd.append("-i")
    with open(log, "ab") as out:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                env=env, start_new_session=True, cwd=str(state))
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = log.read_text(errors="replace").strip().splitlines()[-5:]
            print("minislurm: slurmctld failed to start:\n" + "\n".join(tail), file=sys.stderr)
            return 1
        answer = _ping(sock) if sock.exists() else None
        if answer is not None:
            print(f"minislurm: cluster {answer['cluster']} is up (slurmctld pid {answer['pid']}, "
                  f"state in {state})")
            return 0
        time.sleep(0.05)
    proc.terminate()
    print(f"minislurm: slurmctld did not answer within {START_TIMEOUT:.0f} s (log: {log})",
          file=sys.stderr)
    return 1


def status(env: dict[str, str]) -> int:
    state = state_dir(env)
    answer = _ping(state / "slurmctld.sock")
    if answer is None:
        print(f"minislurm: no cluster is running (state directory {state})")
        return 1
    print(f"minislurm: cluster {answer['cluster']} is up (slurmctld pid {answer['pid']}, "
          f"state in {state})")
    return 0


def down(env: dict[str, str], *, keep_jobs: bool = False, timeout: float = DOWN_TIMEOUT) -> int:
    """Stop the cluster within ``timeout`` seconds in all, whatever the daemon does.

    The daemon is asked to shut down (its running jobs cancelled unless ``keep_jobs``)
    and waited for. A daemon slow to answer is busy, not gone (a loaded machine): only
    "nothing listens on the socket" means no cluster. One deadline bounds the ping, the
    shutdown request and the wait, so a caller's clean-up (scripts/course) is bounded
    too. A daemon still there at the deadline (frozen, stuck) is killed with SIGKILL,
    as systemd kills a slurmctld that outlives its stop timeout, and its socket and pid
    file go: ``down`` never leaves a daemon behind. Its running jobs then go on under
    their step daemons, and the next ``up`` finds them again.
    """
    state = state_dir(env)
    sock, pid_file = state / "slurmctld.sock", state / "slurmctld.pid"
    deadline = time.monotonic() + timeout
    daemon = _from_pid_file(pid_file, state)  # known even if it never answers
    try:
        answer = rpc.call(sock, {"op": "ping"}, timeout=_left(deadline))
        daemon = _Daemon.of(int(answer["pid"])) or daemon
        with contextlib.suppress(ControllerUnavailable):  # it may close as it goes down
            rpc.call(sock, {"op": "shutdown", "kill_jobs": not keep_jobs},
                     timeout=_left(deadline))
    except ControllerUnavailable:
        if daemon is None:  # nothing listens and no daemon runs: a stale socket at most
            _remove(sock, pid_file)
            print("minislurm: no cluster is running")
            return 0
    except OSError:  # no answer in time (TimeoutError), or reset as it went down
        pass
    while time.monotonic() < deadline and (
            daemon.running() if daemon is not None else sock.exists()):
        time.sleep(0.05)
    if daemon is not None and daemon.running():
        daemon.kill()
        _remove(sock, pid_file)
        print(f"minislurm: slurmctld (pid {daemon.pid}) did not stop within {timeout:.0f} s: "
              "killed it (running jobs go on; 'cluster up' finds them again)", file=sys.stderr)
        return 1
    if daemon is None and sock.exists():
        print(f"minislurm: slurmctld did not answer within {timeout:.0f} s and its pid file "
              f"({pid_file}) names no slurmctld: stop it by hand", file=sys.stderr)
        return 1
    _remove(sock, pid_file)  # a daemon that died as it went down leaves them behind
    if keep_jobs:
        print("minislurm: cluster is down (running jobs go on; 'cluster up' finds them again)")
    else:
        print("minislurm: cluster is down")
    return 0


def _left(deadline: float) -> float:
    """Seconds until ``deadline``; never 0 (a socket timeout of 0 means non-blocking)."""
    return max(deadline - time.monotonic(), 0.01)


def _remove(*paths: Path) -> None:
    for path in paths:
        path.unlink(missing_ok=True)


@dataclass(frozen=True)
class _Daemon:
    """One slurmctld process: its pid and its start time (`process_start_ticks`).

    The start time tells the daemon from a process that got its pid after it exited (a
    loaded machine wraps its 32768 pids within minutes): that one is never waited for
    nor killed.
    """

    pid: int
    started: int

    @classmethod
    def of(cls, pid: int) -> _Daemon | None:
        """Process ``pid`` if it runs, else None (a zombie has exited: its parent, often
        init, may reap it late)."""
        started = process_start_ticks(pid)
        return None if started is None else cls(pid, started)

    def running(self) -> bool:
        """Whether this very process still runs."""
        return _Daemon.of(self.pid) == self

    def kill(self) -> None:
        """SIGKILL it (a stopped process dies too) and wait until it is gone."""
        if self.running():
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
        end = time.monotonic() + KILL_TIMEOUT
        while time.monotonic() < end and self.running():
            time.sleep(0.02)


def _from_pid_file(pid_file: Path, state: Path) -> _Daemon | None:
    """The daemon ``slurmctld.pid`` names, if that process is a minislurm slurmctld
    started in ``state`` (``up`` starts it there); else None (no file, a stale one)."""
    try:
        pid = int(pid_file.read_text().split()[0])
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        cwd = Path(os.readlink(f"/proc/{pid}/cwd"))
    except (OSError, ValueError, IndexError):
        return None
    if b"minislurm" not in argv or b"slurmctld" not in argv or cwd != state.resolve():
        return None
    return _Daemon.of(pid)


def main(argv: Sequence[str]) -> int:
    """``cluster up [-i]|status|down [--keep-jobs] [--conf FILE]``."""
    args = list(argv)
    conf = None
    if "--conf" in args:
        i = args.index("--conf")
        if i + 1 >= len(args):
            print(USAGE, file=sys.stderr)
            return 1
        conf = os.path.abspath(args[i + 1])
        del args[i:i + 2]
    env = dict(os.environ)
    if conf:
        env["SLURM_CONF"] = conf
    if args in (["-h"], ["--help"]):
        print(HELP, end="")
        return 0
    verb, flags = (args[0], args[1:]) if args else ("", [])
    allowed = {"up": {"-i"}, "status": set(), "down": {"--keep-jobs"}}.get(verb)
    if allowed is None or not set(flags) <= allowed or len(set(flags)) != len(flags):
        print(USAGE, file=sys.stderr)
        return 1
    try:
        if verb == "up":
            return up(env, conf, ignore="-i" in flags)
        if verb == "status":
            return status(env)
        return down(env, keep_jobs="--keep-jobs" in flags)
    except SlurmError as exc:
        print(exc.message, file=sys.stderr)
        return exc.exit_code
