"""What every command shares: where it runs (`Context`) and how it parses its options.

A command is ``run(argv, ctx) -> exit code``: it parses ``argv`` like Slurm's
own client (glibc ``getopt_long``, so the same abbreviations and the same
error lines), asks the controller through ``ctx.controller()``, and writes
what Slurm would print to ``ctx.stdout`` / ``ctx.stderr``. The same function
serves a terminal (``python -m minislurm squeue``), a notebook
(``Cluster.run("squeue")``) and the controller daemon.
"""

from __future__ import annotations

import io
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, TextIO, TypeVar

from minislurm.cli.identity import process_identity
from minislurm.common.rpc import CONNECT_HINT
from minislurm.errors import ControllerUnavailable, Errno, SlurmError
from minislurm.options.getopt import GetoptError, HasArg, LongOption, ParsedOption, getopt_long
from minislurm.options.setters import VERSION, InfoExit

if TYPE_CHECKING:
    from minislurm.ctld.controller import Controller
    from minislurm.ctld.runner import JobBody
    from minislurm.options import SbatchInvocation




def _no_controller() -> Controller:
    raise ControllerUnavailable(Errno.SLURMCTLD_COMMUNICATIONS_CONNECTION_ERROR)


def _cannot_wait(predicate: Callable[[], bool]) -> None:
    raise ControllerUnavailable(Errno.SLURMCTLD_COMMUNICATIONS_CONNECTION_ERROR)


@dataclass
class Context:
    """Where a command runs: streams, environment, working directory, controller.

    ``controller()`` returns the live controller or raises `ControllerUnavailable`
    (slurmctld is down); commands parse their options *before* calling it, as
    Slurm's clients do, so option errors show even without a controller.
    """

    stdout: TextIO = field(default_factory=io.StringIO)
    stderr: TextIO = field(default_factory=io.StringIO)
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str = "."
    stdin: str | None = None
    controller: Callable[[], Controller] = _no_controller
    user: str = "root"
    uid: int = 0
    group: str = "root"
    gid: int = 0
    wait: Callable[[Callable[[], bool]], object] = _cannot_wait
    """Block until the predicate holds (runs the simulated clock, or sleeps on the real one)."""
    job_body: Callable[[SbatchInvocation, Context], JobBody] | None = None
    """What a submitted job does: on the simulated clock its run time and exit
    code (`minislurm.sim.simscript`), on the real one the process to start."""
    clock: Callable[[], float] = time.time
    """The command's ``time(NULL)``, epoch seconds: the simulated clock of an
    embedded `Cluster`, else the wall clock (slurmctld's realtime clock follows it)."""

    def now(self) -> int:
        """``time(NULL)`` for this command: what ``now`` in ``--begin=now+60``,
        ``StartTime=now+1hour`` or sacct's default window means (parse_time.c)."""
        return int(self.clock())

    def out(self, text: str) -> None:
        """Write ``text`` (a newline is added when missing) to stdout."""
        self.stdout.write(text if text.endswith("\n") or not text else text + "\n")

    def err(self, text: str) -> None:
        """Write ``text`` (a newline is added when missing) to stderr."""
        self.stderr.write(text if text.endswith("\n") or not text else text + "\n")

    @classmethod
    def from_process(cls) -> Context:
        """The context of a command started from a shell, as this user."""
        user, uid, group, gid = process_identity()
        return cls(stdout=sys.stdout, stderr=sys.stderr, env=dict(os.environ),
                   cwd=os.getcwd(), user=user, uid=uid, group=group, gid=gid)


def fail(ctx: Context, error: SlurmError) -> int:
    """Print a typed error the way Slurm does and return its exit code."""
    ctx.err(error.message)
    return error.exit_code


def parse_permuted(
    argv: Sequence[str], shorts: dict[str, HasArg], longs: Sequence[LongOption], prog: str,
) -> tuple[list[ParsedOption], list[str]]:
    """glibc getopt_long without ``+``: options and operands may be interleaved.

    squeue, sinfo, scancel, scontrol and sacct parse this way (``scancel 5 -u me``).
    Returns the options and the operands, in order; ``--`` ends the options.
    """
    opts: list[ParsedOption] = []
    operands: list[str] = []
    rest = list(argv)
    while rest:
        found, index = getopt_long(rest, shorts, longs, prog)
        opts.extend(found)
        if index > 0 and rest[index - 1] == "--":
            operands.extend(rest[index:])
            break
        if index >= len(rest):
            break
        operands.append(rest[index])
        rest = rest[index + 1:]
    return opts, operands


def option_table(spec: str, longs: Sequence[tuple[str, HasArg, str]]
                 ) -> tuple[dict[str, HasArg], list[LongOption]]:
    """Build getopt tables from a getopt short string (``"ahj:"``) and long entries."""
    shorts: dict[str, HasArg] = {}
    i = 0
    while i < len(spec):
        letter = spec[i]
        if spec[i + 1:i + 3] == "::":
            shorts[letter] = HasArg.OPTIONAL
            i += 3
        elif spec[i + 1:i + 2] == ":":
            shorts[letter] = HasArg.REQUIRED
            i += 2
        else:
            shorts[letter] = HasArg.NO
            i += 1
    return shorts, [LongOption(name, has, key) for name, has, key in longs]


def usage_error(ctx: Context, prog: str, error: GetoptError) -> int:
    """glibc's line and Slurm's ``Try "prog --help"`` hint; exit 1 like squeue/sinfo."""
    ctx.err(error.message)
    ctx.err(f'Try "{prog} --help" for more information')
    return 1


def info_table(help_text: str, usage_text: str, *, help_key: str = "help",
               usage_key: str = "usage") -> dict[str, str]:
    """The options that print a text and exit 0, by getopt key: ``--help``,
    ``--usage`` and ``-V``/``--version`` (``print_slurm_version``).

    sacct spells them ``-h`` and ``-U`` (``help_key="h", usage_key="U"``).
    """
    return {help_key: help_text, usage_key: usage_text, "V": VERSION + "\n"}


class _HasInfo(Protocol):
    @property
    def info(self) -> str | None: ...


_Options = TypeVar("_Options", bound=_HasInfo)
_Parsed = TypeVar("_Parsed")


def parse_or_exit(ctx: Context, prog: str, parse: Callable[[], _Options]) -> _Options | int:
    """Run a getopt client's parser; an ``int`` is the exit code to return at once.

    As squeue, sinfo, scancel, sprio and sshare do before contacting slurmctld:
    a glibc error prints its line and the ``Try "prog --help"`` hint (exit 1), the
    client's own error its message (its code), and ``--help``/``--usage``/``-V``
    (``options.info``) print their text (exit 0).
    """
    try:
        options = parse()
    except GetoptError as exc:
        return usage_error(ctx, prog, exc)
    except SlurmError as exc:
        return fail(ctx, exc)
    if options.info is not None:
        ctx.stdout.write(options.info)
        return 0
    return options


def parse_or_info(ctx: Context, parse: Callable[[], _Parsed]) -> _Parsed | int:
    """Run an srun/salloc parser (`InfoExit` for ``--help``/``--usage``/``-V``);
    an ``int`` is the exit code to return at once (0 after the info text)."""
    try:
        return parse()
    except InfoExit as info:
        ctx.stdout.write(info.stdout)
        return 0
    except SlurmError as exc:
        return fail(ctx, exc)


def unreachable(lead_in: str) -> ControllerUnavailable:
    """``<lead_in>: Unable to contact slurm controller (connect failure)`` plus the
    hint to start one, exit 1 (e.g. sinfo's ``slurm_load_partitions``)."""
    return ControllerUnavailable(
        f"{lead_in}: {Errno.SLURMCTLD_COMMUNICATIONS_CONNECTION_ERROR}\n{CONNECT_HINT}", 1)


def connect(ctx: Context, error: SlurmError) -> Controller | int:
    """``ctx.controller()``, or, when slurmctld does not answer, ``error`` printed
    and its exit code returned (the client's own connect-failure line)."""
    try:
        return ctx.controller()
    except ControllerUnavailable:
        return fail(ctx, error)
