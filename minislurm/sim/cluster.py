"""An embedded cluster for notebooks and experiments: Slurm's commands on a simulated clock.

    >>> from minislurm.sim import Cluster
    >>> c = Cluster()                       # the embedded default slurm.conf
    >>> print(c.run("sinfo"))               # exactly what Slurm's sinfo prints
    >>> job = c.sbatch("#!/bin/bash\\n#SBATCH -N2 --gres=gpu:8\\nsrun sleep 3600\\n")
    >>> c.advance(600); print(c.run("squeue"))

Commands run the same ``run(argv, ctx)`` functions as in a terminal, against an
in-process `minislurm.ctld.Controller` on a ``simpy.Environment``: nothing
waits for the wall clock, so a day of a busy cluster plays out in a moment.
Simulated jobs do not start processes; their run time and exit code come from
the script (`minislurm.sim.simscript`) or from ``sbatch(..., runtime=...)``.
"""

from __future__ import annotations

import importlib
import io
import shlex
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import simpy

from minislurm.cli.common import Context
from minislurm.cli.registry import FORWARDED
from minislurm.common.accounts import AssociationSet, load_associations
from minislurm.conf import SlurmConfig, load_config
from minislurm.ctld import DEFAULT_EPOCH, SIMULATED, Controller, JobBody
from minislurm.errors import SlurmError
from minislurm.job import JobRecord
from minislurm.sim.simscript import script_body

#: The commands a `Cluster` runs, by name.
COMMANDS = FORWARDED

#: Longest a `Cluster.wait` may run the simulated clock (seconds): 400 days.
MAX_WAIT = 400 * 86400


@dataclass(frozen=True, slots=True)
class CommandResult:
    """What a command printed and its exit code; prints like a terminal."""

    command: str
    stdout: str
    stderr: str
    returncode: int

    def __str__(self) -> str:
        return self.stdout + self.stderr

    def _repr_pretty_(self, printer: _PrettyPrinter, cycle: bool) -> None:  # IPython display
        printer.text(str(self).rstrip("\n"))


class _PrettyPrinter(Protocol):
    """What IPython's pretty printer offers ``_repr_pretty_`` (IPython.lib.pretty)."""

    def text(self, obj: str) -> None: ...


class Cluster:
    """A whole simulated cluster: controller, nodes and commands, in this process.

    ``conf`` is a slurm.conf path, a `SlurmConfig`, or None for ``$SLURM_CONF`` /
    the embedded default. ``policy`` picks the scheduler for comparisons
    (``fifo``, ``easy``, ``conservative`` or Slurm's own ``slurm``; default from
    ``SchedulerType``). Commands run as ``user`` unless a call names another.
    """

    def __init__(
        self,
        conf: str | Path | SlurmConfig | None = None,
        *,
        policy: str | None = None,
        associations: AssociationSet | str | Path | None = None,
        user: str = "student",
        uid: int = 1000,
        workdir: str | Path | None = None,
        epoch: int = DEFAULT_EPOCH,
        seed: int = 0,
    ) -> None:
        self.config = conf if isinstance(conf, SlurmConfig) else load_config(
            None if conf is None else str(conf))
        if associations is None or isinstance(associations, str | Path):
            associations = load_associations(associations)
        self.associations = associations
        self.env = simpy.Environment()
        self.controller = Controller(self.config, self.env, policy=policy,
                                     associations=associations, clock=SIMULATED,
                                     epoch=epoch, seed=seed)
        self.user, self.uid = user, uid
        # the learner runs this cluster as its SlurmUser would: draining nodes and making
        # reservations is theirs; any other ``run(..., user=...)`` is a plain user
        self.controller.operator_uids.add(uid)
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        if workdir is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="minislurm-")
            workdir = self._tmp.name
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)

    # ---- the clock ---------------------------------------------------------------
    @property
    def now(self) -> int:
        """The simulated time, epoch seconds."""
        return self.controller.now

    def advance(self, seconds: float) -> None:
        """Let ``seconds`` of simulated time pass."""
        self.controller.run_for(int(seconds))

    def wait(self, predicate: Callable[[], bool], *, limit: float = MAX_WAIT) -> None:
        """Run the simulated clock until ``predicate()`` holds (or ``limit`` seconds pass)."""
        stop = self.env.now + limit
        while not predicate():
            if self.env.peek() > stop:
                raise SlurmError(f"minislurm: still waiting after {int(limit)} simulated seconds")
            self.env.step()

    def wait_job(self, job_id: int) -> JobRecord:
        """Run until job ``job_id`` has ended; return its record."""
        self.wait(lambda: self.controller.job(job_id).state.is_terminal)
        return self.controller.job(job_id)

    # ---- commands ----------------------------------------------------------------
    def context(self, *, user: str | None = None, stdin: str | None = None,
                env: dict[str, str] | None = None) -> Context:
        """A command context on this cluster (fresh output buffers)."""
        name = user or self.user
        uid = self.uid if name == self.user else 1000 + sum(map(ord, name)) % 1000
        base = {"USER": name, "HOME": str(self.workdir), "PATH": "/usr/bin:/bin"}
        return Context(
            stdout=io.StringIO(), stderr=io.StringIO(), env={**base, **(env or {})},
            cwd=str(self.workdir), stdin=stdin, controller=lambda: self.controller,
            user=name, uid=uid, group=name, gid=uid, wait=self.wait, clock=lambda: self.now,
            job_body=lambda inv, _ctx: script_body(inv.script_text),
        )

    def run(self, command: str | Sequence[str], *, user: str | None = None,
            stdin: str | None = None, env: dict[str, str] | None = None) -> CommandResult:
        """Run one Slurm command line (``"squeue -l"``) and return what it printed."""
        argv = shlex.split(command) if isinstance(command, str) else list(command)
        text = command if isinstance(command, str) else shlex.join(argv)
        if not argv or argv[0] not in COMMANDS:
            known = ", ".join(COMMANDS)
            msg = f"minislurm: {argv[0] if argv else '(nothing)'}: not a command here ({known})\n"
            return CommandResult(text, "", msg, 127)
        module = importlib.import_module(f"minislurm.cli.{argv[0]}")
        ctx = self.context(user=user, stdin=stdin, env=env)
        rc = module.run(argv[1:], ctx)
        assert isinstance(ctx.stdout, io.StringIO) and isinstance(ctx.stderr, io.StringIO)
        return CommandResult(text, ctx.stdout.getvalue(), ctx.stderr.getvalue(), int(rc))

    def write(self, name: str, text: str) -> Path:
        """Write a file (a batch script) into the cluster's working directory."""
        path = self.workdir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def sbatch(self, script: str, *options: str, runtime: float | None = None,
               exit_code: int | None = None, user: str | None = None) -> int:
        """Submit ``script`` (its text) with extra sbatch ``options``; return the job id.

        ``runtime``/``exit_code`` override what the script implies (`script_body`).
        Raises `SlurmError` with sbatch's message when Slurm would refuse the job.
        """
        from minislurm.options.sbatch import parse_sbatch

        ctx = self.context(user=user)
        inv = parse_sbatch(list(options), env=ctx.env, stdin=script, cwd=ctx.cwd, now=self.now)
        body = script_body(inv.script_text)
        if runtime is not None or exit_code is not None:
            body = JobBody(run_time=body.run_time if runtime is None else int(runtime),
                           exit_code=body.exit_code if exit_code is None else exit_code)
        job_id: int = self.controller.submit_invocation(
            inv, user=ctx.user, uid=ctx.uid, group=ctx.group, gid=ctx.gid, cwd=ctx.cwd,
            body=body)
        return job_id

    def jobs(self) -> list[JobRecord]:
        """Every job the controller knows (accounting view: one record per job)."""
        return self.controller.jobs()

    def close(self) -> None:
        """Remove the temporary working directory (if the cluster made one)."""
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
