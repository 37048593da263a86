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

import contextlib
import json
import os
import queue
import signal
import socket
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from minislurm.cli.common import Context, fail, parse_or_info
from minislurm.cli.transport import socket_path
from minislurm.common import rpc
from minislurm.common.hostlist import compress
from minislurm.common.wire import MAX_MESSAGE
from minislurm.errors import ControllerUnavailable, Errno, SlurmError
from minislurm.options.gres_names import check_command_gres
from minislurm.options.model import SrunInvocation
from minislurm.options.srun import parse_srun
from minislurm.slurmd.launch import (
    RunningStep,
    StepIdentity,
    TaskResult,
    TaskSpec,
    launch_step,
    launcher_socket,
)
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
        ctx.err(f"{PROG}: {Errno.ESLURM_REQUESTED_PART_CONFIG_UNAVAILABLE}")
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


def _create_step(sock: Path, ctx: Context, argv: Sequence[str], job_id: int, inside: bool,
                 port: int) -> dict[str, Any] | None:
    """``launch_common_create_job_step``: ask for the step until slurmctld gives it.

    While the job's running steps hold what the step needs, slurmctld answers busy
    and srun waits for one of them to end (or ``MAX(60, SlurmctldTimeout)`` s plus
    pid % 10; 60 here), then says so and asks again, as 22.05.8 does; a signal
    meanwhile gives the step up (None, after srun's two lines).
    """
    waits = 0
    signals = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
    old: dict[signal.Signals, Any] = {}
    try:
        while True:
            plan = _request(sock, "step_create", job_id=job_id, argv=list(argv),
                            env=dict(ctx.env), cwd=ctx.cwd, launcher_port=port, inside=inside)
            if "busy" not in plan:
                if waits:
                    ctx.err(f"{PROG}: Step created for job {job_id}")
                return plan
            if not waits:
                old = {s: signal.signal(s, _interrupt) for s in signals}
            # step_ctx_create_timeout: the answer comes after the wait, so the line
            # shows when a step ended (measured: after the busy step's output)
            deadline = time.monotonic() + STEP_WAIT + os.getpid() % 10
            while time.monotonic() < deadline and not _request(
                    sock, "step_wait", job_id=job_id, ended=plan["ended"], timeout=1.0)["over"]:
                pass
            how = "still" if waits else "temporarily"
            ctx.err(f"{PROG}: Job {job_id} step creation {how} disabled, retrying "
                    f"({plan['busy']})")
            waits += 1
    except _Interrupted as exc:
        ctx.err(f"{PROG}: Cancelled pending job step with signal {exc.args[0]}")
        ctx.err(f"{PROG}: error: Unable to create step for job {job_id}: "
                f"{Errno.ESLURM_ALREADY_DONE}")
        return None
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)


#: Signals srun handles while its step runs (the rest keep their default action).
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGCONT,
             signal.SIGUSR1, signal.SIGUSR2)


class StepTasks(Protocol):
    """What srun's signal forwarding needs of its step's tasks (`RunningStep`)."""

    def signal(self, sig: int, *, tree: bool = True) -> None: ...


def _forward_signal(ctx: Context, running: StepTasks, signum: int) -> None:
    """srun's ``_forward_signal``: SIGTERM/SIGHUP (and SIGQUIT, after ``Quit``) end the
    step at once with SIGKILL, SIGCONT is only reported, others go to every task."""
    if signum == signal.SIGCONT:
        ctx.err(f"{PROG}: got SIGCONT")
    elif signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        if signum == signal.SIGQUIT:
            ctx.err(f"{PROG}: Quit")
        ctx.err(f"{PROG}: forcing job termination")
        running.signal(signal.SIGKILL)
    else:
        running.signal(signum)


class SignalForwarder:
    """srun's signal handling while its step runs, off the signal handler.

    The handler only queues the signal (``queue.SimpleQueue.put`` may be called from a
    handler); a thread of its own forwards it (`_forward_signal`: report, kill or pass
    on). A handler that wrote to stderr itself could run *inside* a write of srun's to
    stderr (a write interrupted by the signal runs the handler before it returns), and
    Python refuses that: ``RuntimeError: reentrant call inside <_io.BufferedWriter
    name='<stderr>'>`` (seen once when a cancelled job's SIGCONT reached srun).
    """

    def __init__(self, ctx: Context, running: StepTasks) -> None:
        self.ctx, self.running = ctx, running
        self.pending: queue.SimpleQueue[int | None] = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._forward, daemon=True)
        self.thread.start()

    def handler(self, signum: int, _frame: object) -> None:
        self.pending.put(signum)

    def _forward(self) -> None:
        while (signum := self.pending.get()) is not None:
            _forward_signal(self.ctx, self.running, signum)

    def stop(self, timeout: float = 5.0) -> None:
        """Forward what is queued, then end the thread."""
        self.pending.put(None)
        self.thread.join(timeout)


def _serve_aborts(listener: socket.socket, ctx: Context, running: RunningStep) -> None:
    """srun's message port: slurmctld ends the job (scancel, time limit, requeue...),
    ends the step at its own time limit (``srun -t`` inside a job: the step's line
    ``DUE TO TIME LIMIT``, no "aborted" line, ``Force Terminated StepId=J.S`` after
    the task lines) or says that a node of the step went DOWN (``Node failure on n2``).

    srun says it waits KillWait + 2 s, the step's slurmstepd writes its ``*** STEP
    ... CANCELLED AT`` line and stops the tasks (SIGCONT, SIGTERM, SIGKILL after
    KillWait), as real 22.05.8 does for a batch job's step and a standalone srun.
    """
    aborted = False
    while True:
        try:
            conn, _ = listener.accept()
        except OSError:
            return  # the step is over: run_step closed the port
        with conn:
            try:
                message = json.loads(conn.makefile("rb").readline(MAX_MESSAGE) or b"{}")
            except (OSError, ValueError):
                continue
            if message.get("op") == "node_fail":  # srun_node_fail: the job's end follows
                ctx.err(f"{PROG}: error: Node failure on {message.get('nodes', '')}")
                if message.get("kill"):  # --no-kill job: only this step is killed
                    running.force_terminated = True
            if message.get("op") == "step_timeout" and not aborted:  # srun -t ran out
                aborted = True
                running.timed_out = True
                running.terminate("TIME LIMIT")
            if message.get("op") == "abort" and not aborted:  # once, from whoever is first
                aborted = True
                ctx.err(f"{PROG}: Job step aborted: Waiting up to "
                        f"{int(running.kill_wait) + 2} seconds for job step to finish.")
                running.terminate(message.get("reason") or None,
                                  failed=bool(message.get("failed")))
            with contextlib.suppress(OSError):
                conn.sendall(b"{}\n")


#: srun's wait for a busy step before it asks again (``MAX(60, SlurmctldTimeout)``, s).
STEP_WAIT = 60


def run_step(sock: Path, ctx: Context, argv: Sequence[str], job_id: int, inside: bool) -> int:
    """Create the step, run its tasks here, report how they ended."""
    listener = launcher_socket()
    old: dict[int, Any] = {}
    forwarder: SignalForwarder | None = None
    try:
        plan = _create_step(sock, ctx, argv, job_id, inside, listener.getsockname()[1])
        if plan is None:
            return 1
        tasks = [TaskSpec(t["task_id"], t["node"], t["node_index"], tuple(t["argv"]),
                          t["env"], t["cwd"]) for t in plan["tasks"]]
        identity = StepIdentity(**plan["identity"])
        started = time.time()
        running = launch_step(identity, tasks, StdioSpec(**plan["stdio"]),
                              kill_wait=float(plan["kill_wait"]),
                              stdin_fd=0 if plan.get("stdin_all") else None,
                              hostname_of=node_hostname)
        # srun's signal handling lasts until it exits: a job's end sends the batch
        # shell's process group SIGCONT + SIGTERM, often just after the step ended
        forwarder = SignalForwarder(ctx, running)
        old = {s: signal.signal(s, forwarder.handler) for s in FORWARDED}
        step = {"job_id": job_id, "step_id": plan["step_id"]}
        _request(sock, "step_pids", **step, pids=list(running.pids.values()),
                 port=listener.getsockname()[1])
        threading.Thread(target=_serve_aborts, args=(listener, ctx, running),
                         daemon=True).start()
        results = running.wait()
        ended = time.time()
        for line in failure_lines(results):  # as the tasks' exit messages come in
            ctx.err(line)
        # the step's own time limit, or its node lost under --no-kill (22.05.8: both
        # after the task lines)
        if running.timed_out or running.force_terminated:
            ctx.err(f"{PROG}: Force Terminated StepId={job_id}.{plan['step_id']}")
        _request(sock, "step_complete", **step, start=started, end=ended,
                 pids=list(running.pids.values()), aborted=running.cancelled,
                 timed_out=running.timed_out,
                 results=[{"task_id": r.task_id, "node": r.node, "exit_code": r.exit_code,
                           "signal": r.signal} for r in results])
        return step_exit_code(results)
    finally:
        with contextlib.suppress(OSError):
            listener.shutdown(socket.SHUT_RDWR)  # wakes _serve_aborts' accept
        listener.close()
        for s, handler in old.items():
            signal.signal(s, handler)
        if forwarder is not None:
            forwarder.stop()


def parse_invocation(argv: Sequence[str], ctx: Context) -> SrunInvocation | int:
    """srun's options as ``ctx`` reads them (its env, directory and clock); an
    ``int`` is the exit code to return at once."""
    return parse_or_info(ctx, lambda: parse_srun(argv, env=ctx.env, cwd=ctx.cwd, now=ctx.now()))


def run(argv: Sequence[str], ctx: Context, sock: Path | None = None) -> int:
    """``srun argv``: parse, then allocate (if needed), run the step, release."""
    inv = parse_invocation(argv, ctx)
    if isinstance(inv, int):
        return inv
    for line in inv.warnings:
        ctx.err(line)
    try:
        check_command_gres(inv.options.gres, PROG, ctx.env)
    except SlurmError as exc:
        return fail(ctx, exc)
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
