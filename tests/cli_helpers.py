"""Helpers for the command tests (tests/minislurm/cli/): a controller on a simulated clock
built from the reference slurm.conf, ``sbatch``-like submissions and a way to run a
command in-process and get ``(rc, stdout, stderr)`` back.
"""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
import simpy
from captures import capture_root

from minislurm.cli.common import Context
from minislurm.conf import load_config, parse_config
from minislurm.ctld.controller import Controller
from minislurm.ctld.runner import JobBody
from minislurm.options.sbatch import parse_sbatch

#: A small cluster like the reference one, for tests that must run without the captures.
SMALL_CONF = """\
ClusterName=mini
SlurmctldHost=localhost
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=1,bf_resolution=1
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1000
NodeName=n[1-4] CPUs=4 Boards=1 SocketsPerBoard=1 CoresPerSocket=4 ThreadsPerCore=1 RealMemory=4000
PartitionName=debug Nodes=n[1-4] Default=YES MaxTime=1:00:00 DefaultTime=10:00 State=UP
PartitionName=short Nodes=n[1-2] MaxTime=5:00 DefaultTime=1:00 State=UP
"""


def reference_conf() -> Path:
    """The captured cluster's slurm.conf (skips when the captures are absent)."""
    root = capture_root()
    if root is None:
        pytest.skip("slurm-reference captures not found (../shared/slurm-reference)")
    return root / "slurm.conf"


def make_controller(*, reference: bool = True, **overrides: Any) -> Controller:
    """A fresh controller on a simulated clock (``overrides`` replace config fields)."""
    if reference:
        config = load_config(str(reference_conf()))
    else:
        config = parse_config(SMALL_CONF, "slurm.conf")
    if overrides:
        config = dataclasses.replace(config, **overrides)
    return Controller(config, simpy.Environment())


def submit(ctl: Controller, *argv: str, user: str = "root", uid: int = 0, cwd: str = "/tmp",
           run_time: int | None = 60, exit_code: int = 0) -> int:
    """``sbatch argv`` straight to the controller; the job runs ``run_time`` seconds."""
    inv = parse_sbatch(list(argv), env={}, cwd=cwd)
    return ctl.submit_invocation(inv, user=user, uid=uid, group=user, gid=uid, cwd=cwd,
                                 body=JobBody(run_time=run_time, exit_code=exit_code))


def run(command: Callable[[Sequence[str], Context], int], argv: Sequence[str],
        ctl: Controller | None = None, **ctx: Any) -> tuple[int, str, str]:
    """Run ``command(argv)`` in-process; returns ``(rc, stdout, stderr)``."""
    out, err = io.StringIO(), io.StringIO()
    if ctl is not None:
        ctx["controller"] = lambda: ctl
        ctx.setdefault("clock", lambda: ctl.now)  # the command's time(NULL): the simulation's
    rc = command(list(argv), Context(stdout=out, stderr=err, **ctx))
    return rc, out.getvalue(), err.getvalue()

