"""``python -m minislurm cluster up|status|down [--conf slurm.conf]``: the local cluster.

``up`` starts the controller daemon (`minislurm.slurmctld`, with its node
daemons) in the background and waits until it answers; ``status`` says
whether it runs; ``down`` stops it. The configuration is ``--conf``, else
``$SLURM_CONF``, else the embedded default, as for every command.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from minislurm import rpc
from minislurm.cli.transport import state_dir
from minislurm.errors import ControllerUnavailable, SlurmError

USAGE = "usage: python -m minislurm cluster up|status|down [--conf slurm.conf]"

#: How long ``up`` waits for the daemon to answer (seconds).
START_TIMEOUT = 30.0


def _ping(sock: Path) -> dict[str, Any] | None:
    try:
        return rpc.call(sock, {"op": "ping"}, timeout=5)
    except (ControllerUnavailable, OSError):
        return None


def up(env: dict[str, str], conf: str | None) -> int:
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


def down(env: dict[str, str]) -> int:
    state = state_dir(env)
    sock = state / "slurmctld.sock"
    if _ping(sock) is None:
        print("minislurm: no cluster is running")
        return 0
    pid = int(answer["pid"]) if (answer := _ping(sock)) else None
    rpc.call(sock, {"op": "shutdown"}, timeout=10)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and (sock.exists() or _alive(pid)):
        time.sleep(0.05)
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
    """``cluster up|status|down [--conf FILE]``."""
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
    if len(args) != 1 or args[0] not in ("up", "status", "down"):
        print(USAGE, file=sys.stderr)
        return 1
    try:
        if args[0] == "up":
            return up(env, conf)
        return status(env) if args[0] == "status" else down(env)
    except SlurmError as exc:
        print(exc.message, file=sys.stderr)
        return exc.exit_code
