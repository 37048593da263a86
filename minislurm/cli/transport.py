"""How a command started from a shell reaches the controller.

A running controller (``python -m minislurm slurmctld``, started by
``python -m minislurm cluster up``) listens on a Unix socket in its state
directory. A command forwards its arguments, environment, working directory,
standard input and the caller's identity there; the controller runs the very
same ``run(argv, ctx)`` against its live state and sends back what to print.

With no controller listening, the command runs here with a context whose
``controller()`` raises `ControllerUnavailable`: option errors are reported
exactly as without a controller in Slurm, and anything that needs slurmctld
fails with Slurm's "Unable to contact slurm controller" text plus a hint.
"""

from __future__ import annotations

import importlib
import os
import select
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from minislurm import rpc
from minislurm.cli.common import Context
from minislurm.errors import ControllerUnavailable, SlurmError


def state_dir(env: dict[str, str] | None = None) -> Path:
    """Where the controller of the current configuration keeps its state and socket.

    ``$MINISLURM_STATE_DIR`` if set, else ``StateSaveLocation`` of the active
    slurm.conf (``$SLURM_CONF`` or the embedded default) when it names an
    absolute path we may use, else ``~/.local/state/minislurm/<ClusterName>``.
    """
    env = dict(os.environ) if env is None else env
    if env.get("MINISLURM_STATE_DIR"):
        return Path(env["MINISLURM_STATE_DIR"])
    from minislurm.config import load_config

    config = load_config(env.get("SLURM_CONF") or None)
    base = Path(env.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    return base / "minislurm" / (config.cluster_name or "cluster")


def socket_path(env: dict[str, str] | None = None) -> Path:
    """The controller's Unix socket."""
    return state_dir(env) / "slurmctld.sock"


def forward(name: str, argv: Sequence[str], ctx: Context, sock: Path) -> dict[str, Any]:
    """Send one command to the controller at ``sock``; returns its answer."""
    request = {
        "op": "command", "name": name, "argv": list(argv), "env": dict(ctx.env),
        "cwd": ctx.cwd, "stdin": ctx.stdin, "user": ctx.user, "uid": ctx.uid,
        "group": ctx.group, "gid": ctx.gid,
    }
    return rpc.call(sock, request, timeout=None)


def _read_stdin_if_needed(name: str, argv: Sequence[str]) -> str | None:
    """sbatch reads its script from standard input when no script is named.

    A terminal is never read; a pipe or file is read when it has data (or is at
    its end) within a moment, so an idle inherited pipe does not hang sbatch.
    """
    if name != "sbatch" or sys.stdin is None or sys.stdin.closed:
        return None
    if any(a == "--wrap" or a.startswith("--wrap=") for a in argv):
        return None  # sbatch --wrap never reads standard input
    try:
        if sys.stdin.isatty():
            return None
        ready, _, _ = select.select([sys.stdin], [], [], 0.2)
    except (OSError, ValueError):
        return None
    return sys.stdin.read() if ready else None


def run_command(name: str, argv: Sequence[str]) -> int:
    """Entry point of ``python -m minislurm <name> ...``: forward or run offline.

    The command's module (which imports the whole controller: ~175 ms) is imported
    only when no controller answers; a forwarded command needs none of it.
    """
    ctx = Context.from_process()
    ctx.stdin = _read_stdin_if_needed(name, argv)
    try:
        sock = socket_path(dict(ctx.env))
    except SlurmError as exc:  # a broken slurm.conf: Slurm's own fatal text
        ctx.err(exc.message)
        return exc.exit_code
    if sock.exists():
        try:
            answer = forward(name, argv, ctx, sock)
        except ControllerUnavailable:
            pass  # stale socket: behave as with no controller
        except SlurmError as exc:
            ctx.err(exc.message)
            return exc.exit_code
        else:
            sys.stdout.write(answer.get("stdout", ""))
            sys.stderr.write(answer.get("stderr", ""))
            return int(answer.get("rc", 0))
    module = importlib.import_module(f"minislurm.cli.{name}")
    result: int = module.run(argv, ctx)
    return result
