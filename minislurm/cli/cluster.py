"""``python -m minislurm cluster up|status|down [--conf slurm.conf]``: the local cluster.

``up`` starts the controller daemon (`minislurm.daemon.slurmctld`, with its node
daemons) in the background and waits until it answers; it picks up the saved
state (jobs, nodes, accounting) and the jobs that kept running. ``status`` says
whether it runs. ``down`` shuts the cluster down: running jobs are cancelled
(SIGTERM, SIGKILL after KillWait) and end CANCELLED, pending jobs stay queued for
the next ``up``. ``down --keep-jobs`` stops only the controller, like
``systemctl stop slurmctld``: running jobs go on and the next ``up`` finds them
again (so does a controller that was killed). ``up -i`` starts despite unreadable
state files (slurmctld ``-i``). The configuration is ``--conf``, else
``$SLURM_CONF``, else the embedded default, as for every command.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from minislurm.cli.transport import state_dir
from minislurm.common import rpc
from minislurm.errors import ControllerUnavailable, SlurmError

USAGE = "usage: python -m minislurm cluster up|status|down [--conf slurm.conf]"
HELP = (f"{USAGE}\n"
        "  up -i           start despite unreadable state files (uses the previous save)\n"
        "  down            cancel the running jobs and stop the cluster\n"
        "  down --keep-jobs  stop the controller only; running jobs go on\n")

#: How long ``up`` waits for the daemon to answer (seconds).
START_TIMEOUT = 30.0
#: How long ``down`` waits for the daemon to exit (cancelled jobs get KillWait first).
DOWN_TIMEOUT = 120.0


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


def down(env: dict[str, str], *, keep_jobs: bool = False) -> int:
    state = state_dir(env)
    sock = state / "slurmctld.sock"
    try:  # a busy daemon is slow to answer, not gone: only "nothing listens" means down
        answer = rpc.call(sock, {"op": "ping"}, timeout=DOWN_TIMEOUT)
    except ControllerUnavailable:
        print("minislurm: no cluster is running")
        return 0
    except TimeoutError:
        print(f"minislurm: slurmctld did not answer in {DOWN_TIMEOUT:.0f} s", file=sys.stderr)
        return 1
    pid = int(answer["pid"])
    with contextlib.suppress(ControllerUnavailable):  # it may close as it goes down
        rpc.call(sock, {"op": "shutdown", "kill_jobs": not keep_jobs}, timeout=DOWN_TIMEOUT)
    deadline = time.monotonic() + DOWN_TIMEOUT
    while time.monotonic() < deadline and (sock.exists() or _alive(pid)):
        time.sleep(0.05)
    if keep_jobs:
        print("minislurm: cluster is down (running jobs go on; 'cluster up' finds them again)")
    else:
        print("minislurm: cluster is down")
    return 0


def _alive(pid: int | None) -> bool:
    """Whether process ``pid`` still exists (the daemon has not exited yet)."""
    if pid is None:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


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
