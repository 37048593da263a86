"""``salloc``: get an allocation, run a command (or a shell) in it, release it.

As in Slurm (src/salloc/salloc.c): the job is queued like any other; once it
runs, the command runs *here* (the submit host) with the allocation's
environment (``SLURM_JOB_ID``, ``SLURM_JOB_NODELIST``, ...), so ``srun``
inside it starts steps of that job. When the command ends the allocation is
relinquished and salloc exits with the command's exit code.
"""

from __future__ import annotations

import signal
import subprocess
from collections.abc import Sequence
from pathlib import Path

from minislurm.cli.common import Context, fail, parse_or_info
from minislurm.cli.transport import socket_path
from minislurm.common import rpc
from minislurm.errors import ControllerUnavailable, SlurmError
from minislurm.options.gres_names import check_command_gres
from minislurm.options.model import SallocInvocation
from minislurm.options.srun import parse_salloc

PROG = "salloc"


def parse_invocation(argv: Sequence[str], ctx: Context) -> SallocInvocation | int:
    """salloc's options as ``ctx`` reads them (its env, directory and clock); an
    ``int`` is the exit code to return at once."""
    return parse_or_info(ctx, lambda: parse_salloc(argv, env=ctx.env, cwd=ctx.cwd,
                                                   now=ctx.now()))


def run(argv: Sequence[str], ctx: Context, sock: Path | None = None) -> int:
    """``salloc argv``."""
    inv = parse_invocation(argv, ctx)
    if isinstance(inv, int):
        return inv
    for line in inv.warnings:
        ctx.err(line)
    try:
        check_command_gres(inv.options.gres, PROG, ctx.env)
    except SlurmError as exc:
        return fail(ctx, exc)
    command = list(inv.command) or [ctx.env.get("SHELL") or "/bin/sh"]
    try:
        sock = sock or socket_path(dict(ctx.env))
        try:
            answer = rpc.call(sock, {"op": "allocate", "prog": PROG, "argv": list(argv),
                                     "env": dict(ctx.env), "cwd": ctx.cwd, "user": ctx.user,
                                     "uid": ctx.uid, "group": ctx.group, "gid": ctx.gid},
                              timeout=None)
        except ControllerUnavailable:
            ctx.err(rpc.unavailable(PROG, "Job submit/allocate failed").message)
            return 1
        job_id = int(answer["job_id"])
        if answer.get("state") == "PENDING":
            ctx.err(f"{PROG}: Pending job allocation {job_id}")
            ctx.err(f"{PROG}: job {job_id} queued and waiting for resources")
            while rpc.call(sock, {"op": "wait_start", "job_id": job_id, "timeout": 1.0},
                           timeout=None).get("state") == "PENDING":
                pass
            ctx.err(f"{PROG}: job {job_id} has been allocated resources")
        ctx.err(f"{PROG}: Granted job allocation {job_id}")
        rc = 1
        try:
            env = rpc.call(sock, {"op": "allocation_env", "job_id": job_id,
                                  "env": dict(ctx.env)}, timeout=30)["env"]
            try:
                proc = subprocess.Popen(command, env=env, cwd=ctx.cwd)
            except OSError:
                ctx.err(f'{PROG}: error: Unable to exec command "{command[0]}"')
                rc = 1
            else:
                old = signal.signal(signal.SIGINT, signal.SIG_IGN)
                try:
                    rc = proc.wait()
                finally:
                    signal.signal(signal.SIGINT, old)
                rc = 128 - rc if rc < 0 else rc
        finally:
            ctx.err(f"{PROG}: Relinquishing job allocation {job_id}")
            rpc.call(sock, {"op": "allocation_complete", "job_id": job_id, "exit_code": rc},
                     timeout=30)
        return rc
    except SlurmError as exc:
        return fail(ctx, exc)


def main(argv: Sequence[str]) -> int:
    """``python -m minislurm salloc ...``."""
    return run(argv, Context.from_process())
