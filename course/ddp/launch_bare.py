"""A bare launcher: start N tasks with the ``SLURM_*`` variables ``srun`` would set.

No controller, no daemons, no agent process: the baseline the benchmark compares
``srun`` and ``torchrun`` with, and the launcher the DDP tests use. Tasks are laid
out in ``srun``'s default *block* distribution (``-m block``): tasks 0..k-1 on the
first node, and so on, each node getting ``ntasks // nnodes`` tasks (the first
``ntasks % nnodes`` nodes one more). Every task gets, as in the capture of
``srun -N2 --ntasks-per-node=2`` (``slurm-reference/a1_srun_env``):

``SLURM_JOB_ID``/``SLURM_JOBID``, ``SLURM_JOB_NODELIST``/``SLURM_NODELIST``/
``SLURM_STEP_NODELIST``, ``SLURM_JOB_NUM_NODES``/``SLURM_NNODES``/
``SLURM_STEP_NUM_NODES``, ``SLURM_NTASKS``/``SLURM_NPROCS``/``SLURM_STEP_NUM_TASKS``,
``SLURM_TASKS_PER_NODE``/``SLURM_STEP_TASKS_PER_NODE`` (``2(x2)``), ``SLURM_PROCID``,
``SLURM_LOCALID``, ``SLURM_NODEID``, ``SLURM_GTIDS``, ``SLURM_STEP_ID``/``SLURM_STEPID``,
``SLURMD_NODENAME``, ``SLURM_TOPOLOGY_ADDR``, and ``SLURM_RESTART_COUNT`` when
``--restart-count`` > 0 (Slurm sets it only in a requeued job).

All "nodes" are this host. Usage (like ``srun``, options before the command)::

    python -m course.ddp.launch_bare -n 4 -N 2 --job-id 7 -- python -m course.ddp.train

``-o PATTERN`` writes each task's stdout+stderr to PATTERN with ``%t`` (task id)
and ``%j`` (job id) replaced (srun's ``-o task%t.out``); ``-t SECONDS`` is a
wall-clock limit (SIGTERM, then SIGKILL 2 s later); ``-K`` kills the other tasks
when one exits non-zero (srun's ``--kill-on-bad-exit``). The exit code is the
highest task exit code (``128 + signal`` for a task killed by a signal).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from minislurm.common.hostlist import compress, expand
from minislurm.common.layout import tasks_per_node_string

__all__ = ["Placement", "block_layout", "start_tasks", "task_environment", "wait_tasks"]

KILL_WAIT = 2.0  # seconds between SIGTERM and SIGKILL (slurm.conf KillWait, shortened)


@dataclass(frozen=True, slots=True)
class Placement:
    """Task ``rank`` runs on node ``nodes[node_index]`` as its ``local_id``-th task."""

    rank: int
    node_index: int
    local_id: int


def block_layout(ntasks: int, nnodes: int) -> tuple[Placement, ...]:
    """``srun -m block``: consecutive ranks fill a node before the next one."""
    if ntasks < 1 or nnodes < 1 or nnodes > ntasks:
        raise ValueError(f"cannot lay out {ntasks} tasks on {nnodes} nodes")
    per_node = [ntasks // nnodes + (1 if i < ntasks % nnodes else 0) for i in range(nnodes)]
    placements: list[Placement] = []
    for node_index, count in enumerate(per_node):
        for local_id in range(count):
            placements.append(Placement(len(placements), node_index, local_id))
    return tuple(placements)


def task_environment(
    base: Mapping[str, str],
    placement: Placement,
    layout: Sequence[Placement],
    nodes: Sequence[str],
    *,
    job_id: int,
    restart_count: int = 0,
) -> dict[str, str]:
    """``base`` plus the ``SLURM_*`` variables of task ``placement`` of step 0."""
    per_node = [sum(1 for p in layout if p.node_index == i) for i in range(len(nodes))]
    nodelist = compress(nodes)
    node = nodes[placement.node_index]
    gtids = ",".join(str(p.rank) for p in layout if p.node_index == placement.node_index)
    env = {key: value for key, value in base.items() if not key.startswith("SLURM_")}
    env.update(
        {
            "SLURM_JOB_ID": str(job_id),
            "SLURM_JOBID": str(job_id),
            "SLURM_JOB_NODELIST": nodelist,
            "SLURM_NODELIST": nodelist,
            "SLURM_STEP_NODELIST": nodelist,
            "SLURM_JOB_NUM_NODES": str(len(nodes)),
            "SLURM_NNODES": str(len(nodes)),
            "SLURM_STEP_NUM_NODES": str(len(nodes)),
            "SLURM_NTASKS": str(len(layout)),
            "SLURM_NPROCS": str(len(layout)),
            "SLURM_STEP_NUM_TASKS": str(len(layout)),
            "SLURM_TASKS_PER_NODE": tasks_per_node_string(per_node),
            "SLURM_STEP_TASKS_PER_NODE": tasks_per_node_string(per_node),
            "SLURM_PROCID": str(placement.rank),
            "SLURM_LOCALID": str(placement.local_id),
            "SLURM_NODEID": str(placement.node_index),
            "SLURM_GTIDS": gtids,
            "SLURM_STEP_ID": "0",
            "SLURM_STEPID": "0",
            "SLURMD_NODENAME": node,
            "SLURM_TOPOLOGY_ADDR": node,
        }
    )
    if restart_count > 0:
        env["SLURM_RESTART_COUNT"] = str(restart_count)
    return env


def _output(pattern: str | None, rank: int, job_id: int) -> IO[bytes] | None:
    if pattern is None:
        return None
    path = pattern.replace("%%", "\0").replace("%t", str(rank)).replace("%j", str(job_id))
    return Path(path.replace("\0", "%")).open("wb")


def start_tasks(
    command: Sequence[str],
    *,
    ntasks: int,
    nodes: Sequence[str] = ("localhost",),
    job_id: int,
    restart_count: int = 0,
    env: Mapping[str, str] | None = None,
    output: str | None = None,
    cwd: str | os.PathLike[str] | None = None,
    session_per_task: bool = False,
) -> list[subprocess.Popen[bytes]]:
    """Start ``ntasks`` copies of ``command``, all in one new process group (the
    first task's pid, like slurmstepd's step process group), so ``os.killpg``
    reaches every task. Returns them in rank order.

    ``session_per_task`` instead gives each task its own session, as torchrun does
    (``start_new_session=True``): with the kernel's ``sched_autogroup`` each session
    is one scheduling group, so on a machine busy with other sessions N tasks then
    get N shares of CPU instead of one. Only the benchmark uses it, to show that.
    """
    layout = block_layout(ntasks, len(nodes))
    base = dict(os.environ if env is None else env)
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for placement in layout:
            stream = _output(output, placement.rank, job_id)
            try:
                procs.append(
                    subprocess.Popen(
                        list(command),
                        env=task_environment(base, placement, layout, nodes, job_id=job_id,
                                             restart_count=restart_count),
                        stdout=stream,
                        stderr=subprocess.STDOUT if stream else None,
                        cwd=cwd,
                        start_new_session=session_per_task,
                        process_group=None if session_per_task else (procs[0].pid if procs else 0),
                    )
                )
            finally:
                if stream is not None:
                    stream.close()
    except BaseException:
        for proc in procs:
            proc.kill()
            proc.wait()
        raise
    return procs


def _signal_all(procs: Sequence[subprocess.Popen[bytes]], sig: int) -> None:
    for proc in procs:
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(sig)


def wait_tasks(
    procs: Sequence[subprocess.Popen[bytes]],
    *,
    time_limit: float | None = None,
    kill_on_bad_exit: bool = False,
) -> list[int]:
    """Wait for every task; past ``time_limit`` seconds (or, with ``kill_on_bad_exit``,
    after a task failed) SIGTERM the rest, then SIGKILL after :data:`KILL_WAIT`.
    Returns ``Popen.returncode`` of each task (negative: killed by that signal)."""
    deadline = None if time_limit is None else time.monotonic() + time_limit
    terminated_at: float | None = None
    while any(proc.poll() is None for proc in procs):
        now = time.monotonic()
        failed = any(proc.returncode not in (None, 0) for proc in procs)
        if terminated_at is None and (
            (deadline is not None and now >= deadline) or (kill_on_bad_exit and failed)
        ):
            _signal_all(procs, signal.SIGTERM)
            terminated_at = now
        elif terminated_at is not None and now - terminated_at >= KILL_WAIT:
            _signal_all(procs, signal.SIGKILL)
        time.sleep(0.02)
    return [int(proc.returncode) for proc in procs]


def exit_code(returncodes: Sequence[int]) -> int:
    """srun's exit code: the highest task exit code (``128 + signal`` if killed)."""
    return max((128 - rc if rc < 0 else rc) for rc in returncodes)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m course.ddp.launch_bare [options] [--] command ...``"""
    p = argparse.ArgumentParser(prog="launch_bare", description=__doc__.split("\n")[0])
    p.add_argument("-n", "--ntasks", type=int, default=1)
    p.add_argument("-N", "--nodes", type=int, default=None,
                   help="number of (local) nodes; default: 1, or the nodelist's length")
    p.add_argument("-w", "--nodelist", default=None, help="node names (hostlist); default n[1-N]")
    p.add_argument("--job-id", type=int, default=None, help="SLURM_JOB_ID (default: pid)")
    p.add_argument("--restart-count", type=int, default=0, help="SLURM_RESTART_COUNT")
    p.add_argument("-o", "--output", default=None, help="per-task output file pattern (%%t, %%j)")
    p.add_argument("-t", "--time", type=float, default=None, help="wall-clock limit, seconds")
    p.add_argument("-K", "--kill-on-bad-exit", nargs="?", type=int, const=1, default=0,
                   metavar="0|1", help="srun's -K[0|1]: a failed task ends the others")
    p.add_argument("--session-per-task", action="store_true",
                   help="each task in its own session, like torchrun (see start_tasks)")
    p.add_argument("command", nargs=argparse.REMAINDER)
    args = p.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        p.error("no command given")
    if args.nodelist:
        nodes = expand(args.nodelist)
    else:
        nodes = [f"n{i}" for i in range(1, (args.nodes or 1) + 1)] if args.nodes else ["localhost"]
    if args.nodes is not None and args.nodes != len(nodes):
        p.error(f"--nodes={args.nodes} but the nodelist has {len(nodes)} nodes")
    try:
        procs = start_tasks(command, ntasks=args.ntasks, nodes=nodes,
                            job_id=args.job_id if args.job_id is not None else os.getpid(),
                            restart_count=args.restart_count, output=args.output,
                            session_per_task=args.session_per_task)
    except (ValueError, OSError) as exc:
        print(f"launch_bare: error: {exc}", file=sys.stderr)
        return 1
    try:
        codes = wait_tasks(procs, time_limit=args.time,
                           kill_on_bad_exit=bool(args.kill_on_bad_exit))
    except KeyboardInterrupt:
        _signal_all(procs, signal.SIGKILL)
        codes = [proc.wait() for proc in procs]
    return exit_code(codes)


if __name__ == "__main__":
    sys.exit(main())
