"""``srun``: run a parallel step, inside an allocation or in a job of its own.

As in Slurm (src/srun/srun.c): inside a batch script or salloc
(``SLURM_JOB_ID`` set, or ``--jobid``) srun asks slurmctld for a *step* of that
job; otherwise it first creates a job (``srun: job N queued and waiting for
resources`` while it waits) and releases it when the step ends. slurmctld
answers with each task's node, environment and working directory; the tasks
start here as real processes (all of minislurm's nodes are this host), their
output comes back to srun's own stdout/stderr (``-l`` labels each line with
the task id) or to ``-o``/``-e`` files. srun exits with the largest task exit
code and reports failed tasks like ``srun: error: n1: task 0: Exited with exit
code 3``.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from minislurm import rpc
from minislurm.cli.common import Context, fail, parse_or_info
from minislurm.cli.transport import socket_path
from minislurm.errors import ControllerUnavailable, SlurmError
from minislurm.hostlist import compress
from minislurm.options.srun import parse_srun
from minislurm.slurmd.launch import StepIdentity, TaskResult, TaskSpec, launch_step, launcher_socket
from minislurm.slurmd.stdio import StdioSpec
from minislurm.slurmd.tasks import node_hostname

PROG = "srun"


def _task_ranges(ids: Sequence[int]) -> str:
    """``0``, ``0-1``, ``0,2-3``: srun's way of naming several tasks."""
    return compress(f"t{i}" for i in sorted(ids)).replace("t", "").strip("[]")


def failure_lines(results: Sequence[TaskResult]) -> list[str]:
    """srun's ``error:`` lines for the tasks that did not exit 0 (grouped per node and cause)."""
    groups: dict[tuple[str, str], list[int]] = {}
    for res in results:
        if res.signal:
            try:
                why = signal.strsignal(res.signal) or f"Signal {res.signal}"
            except ValueError:
                why = f"Signal {res.signal}"
        elif res.exit_code:
            why = f"Exited with exit code {res.exit_code}"
        else:
            continue
        groups.setdefault((res.node, why), []).append(res.task_id)
    lines = []
    for (node, why), ids in groups.items():
        noun = "task" if len(ids) == 1 else "tasks"
        lines.append(f"{PROG}: error: {node}: {noun} {_task_ranges(ids)}: {why}")
    return lines


def step_exit_code(results: Sequence[TaskResult]) -> int:
    """srun's exit code (``_task_finish``): once a task was killed by a signal, 128 + that
    signal; otherwise the largest task exit code."""
    for res in results:
        if res.signal:
            return 128 + res.signal
    return max((r.exit_code for r in results), default=0)


def _request(sock: Path, op: str, **fields: Any) -> dict[str, Any]:
    return rpc.call(sock, {"op": op, **fields}, timeout=None)


#: Pending reasons for which srun first says the partition cannot take the job now.
PARTITION_REASONS = ("PartitionNodeLimit", "PartitionTimeLimit", "PartitionConfig")


class _Interrupted(Exception):
    """A signal arrived while srun waited for its allocation."""


def _interrupt(signum: int, _frame: object) -> None:
    raise _Interrupted(signum)


def _allocate(sock: Path, ctx: Context, argv: Sequence[str]) -> int | None:
    """Create srun's own job and wait until it runs (``_signal_while_allocating``: a
    signal meanwhile revokes the pending job: then None)."""
    answer = _request(sock, "allocate", prog=PROG, argv=list(argv), env=dict(ctx.env),
                      cwd=ctx.cwd, user=ctx.user, uid=ctx.uid, group=ctx.group, gid=ctx.gid)
    job_id = int(answer["job_id"])
    if answer.get("state") != "PENDING":
        return job_id
    if answer.get("reason") in PARTITION_REASONS:
        ctx.err(f"{PROG}: Requested partition configuration not available now")
    ctx.err(f"{PROG}: job {job_id} queued and waiting for resources")
    signals = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
    old = {s: signal.signal(s, _interrupt) for s in signals}
    try:
        while _request(sock, "wait_start", job_id=job_id, timeout=1.0).get("state") == "PENDING":
            pass
    except _Interrupted:
        ctx.err(f"{PROG}: Job allocation {job_id} has been revoked")
        _request(sock, "command", name="scancel", argv=[str(job_id)], env=dict(ctx.env),
                 cwd=ctx.cwd, stdin=None, user=ctx.user, uid=ctx.uid, group=ctx.group,
                 gid=ctx.gid)
        return None
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)
    ctx.err(f"{PROG}: job {job_id} has been allocated resources")
    return job_id


def run_step(sock: Path, ctx: Context, argv: Sequence[str], job_id: int, inside: bool) -> int:
    """Create the step, run its tasks here, report how they ended."""
    listener = launcher_socket()
    try:
        plan = _request(sock, "step_create", job_id=job_id, argv=list(argv), env=dict(ctx.env),
                        cwd=ctx.cwd, launcher_port=listener.getsockname()[1], inside=inside)
        tasks = [TaskSpec(t["task_id"], t["node"], t["node_index"], tuple(t["argv"]),
                          t["env"], t["cwd"]) for t in plan["tasks"]]
        identity = StepIdentity(**plan["identity"])
        started = time.time()
        running = launch_step(identity, tasks, StdioSpec(**plan["stdio"]),
                              kill_wait=float(plan["kill_wait"]),
                              stdin_fd=0 if plan.get("stdin_all") else None,
                              hostname_of=node_hostname)
        step = {"job_id": job_id, "step_id": plan["step_id"]}
        _request(sock, "step_pids", **step, pids=list(running.pids.values()))

        def forward(signum: int, _frame: object) -> None:
            running.signal(signum)

        old = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            results = running.wait()
        finally:
            for s, handler in old.items():
                signal.signal(s, handler)
        _request(sock, "step_complete", **step, start=started, end=time.time(),
                 results=[{"task_id": r.task_id, "node": r.node, "exit_code": r.exit_code,
                           "signal": r.signal} for r in results])
    finally:
        listener.close()
    for line in failure_lines(results):
        ctx.err(line)
    return step_exit_code(results)


def run(argv: Sequence[str], ctx: Context, sock: Path | None = None) -> int:
    """``srun argv``: parse, then allocate (if needed), run the step, release."""
    inv = parse_or_info(ctx, lambda: parse_srun(argv, env=ctx.env, cwd=ctx.cwd))
    if isinstance(inv, int):
        return inv
    for line in inv.warnings:
        ctx.err(line)
    try:
        sock = sock or socket_path(dict(ctx.env))
        inside = inv.options.jobid is not None or "SLURM_JOB_ID" in ctx.env
        try:
            if inside:
                job_id = int(inv.options.jobid or ctx.env["SLURM_JOB_ID"])
            else:
                _request(sock, "ping")
                allocated = _allocate(sock, ctx, argv)
                if allocated is None:
                    return 1
                job_id = allocated
        except ControllerUnavailable:
            ctx.err(rpc.unavailable(PROG, "Unable to allocate resources").message)
            return 1
        rc = 1
        try:
            rc = run_step(sock, ctx, argv, job_id, inside)
        finally:
            if not inside:
                _request(sock, "allocation_complete", job_id=job_id, exit_code=rc)
        return rc
    except SlurmError as exc:
        return fail(ctx, exc)


def main(argv: Sequence[str]) -> int:
    """``python -m minislurm srun ...``."""
    return run(argv, Context.from_process())


__all__ = ["failure_lines", "main", "run", "step_exit_code"]
