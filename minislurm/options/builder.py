"""Mutable accumulator of option values while one command line is parsed.

Slurm keeps one ``slurm_opt_t`` and lets each source (batch script
directives, environment variables, command line) overwrite it in turn;
`OptionBuilder` is that struct, and ``build()`` freezes it into
`JobOptions`.  It also remembers *where* each value came from, which
``_validate_memory_options`` (slurm_opt.c) needs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any, NoReturn

from minislurm.errors import OptionError
from minislurm.options.model import JobOptions

_FIELDS = frozenset(f.name for f in fields(JobOptions))

CLI = "cli"
ENV = "env"
SCRIPT = "script"


class OptionBuilder:
    """Collects option values for one ``sbatch``/``srun``/``salloc`` call."""

    def __init__(self, prog: str, *, cwd: str, now: int,
                 env: Mapping[str, str] | None = None) -> None:
        self.prog = prog
        self.cwd = cwd
        self.now = now
        #: the command's environment, for the options that read it (getenv in slurm_opt.c:
        #: ``-m plane`` takes its size from SLURM_DIST_PLANESIZE)
        self.env: Mapping[str, str] = env or {}
        self.source = CLI
        self.values: dict[str, Any] = {}
        self.origin: dict[str, str] = {}
        self.other: dict[str, str | None] = {}
        self.warnings: tuple[str, ...] = ()
        """Lines the command prints on stderr before going on (``Warning: ...``)."""

    # -- setting ---------------------------------------------------------
    def set(self, name: str, value: Any) -> None:
        """Set JobOptions field ``name`` (later sources overwrite earlier)."""
        if name not in _FIELDS:
            raise KeyError(name)
        self.values[name] = value
        self.origin[name] = self.source

    def reset(self, name: str) -> None:
        """Forget ``name`` (Slurm's ``reset_func``)."""
        self.values.pop(name, None)
        self.origin.pop(name, None)

    def get(self, name: str, default: Any = None) -> Any:
        """The current value of ``name``."""
        return self.values.get(name, default)

    def set_other(self, name: str, value: str | None) -> None:
        """Record an accepted option that minislurm does not model."""
        self.other.pop(name, None)
        self.other[name] = value

    def is_set_by_cli(self, name: str) -> bool:
        """``slurm_option_set_by_cli``: set by the command line *or* a
        ``#SBATCH`` directive (anything but an environment variable)."""
        return name in self.origin and self.origin[name] != ENV

    def is_set_by_env(self, name: str) -> bool:
        """``slurm_option_set_by_env``."""
        return self.origin.get(name) == ENV

    # -- errors ------------------------------------------------------------
    def fail(self, message: str, exit_code: int = 255) -> NoReturn:
        """``error(message)`` then ``exit(-1)``: ``prog: error: message``."""
        raise OptionError(f"{self.prog}: error: {message}", exit_code)

    def fatal(self, message: str) -> NoReturn:
        """``fatal(message)``: ``prog: fatal: message``, exit 1."""
        raise OptionError(f"{self.prog}: fatal: {message}", 1)

    # -- result ------------------------------------------------------------
    def build(self) -> JobOptions:
        """Freeze the collected values."""
        return JobOptions(**self.values, other=tuple(self.other.items()))

    def validate_memory(self) -> None:
        """``_validate_memory_options``: at most one of --mem, --mem-per-cpu,
        --mem-per-gpu from the command line; one given there clears the
        others coming from the environment."""
        mem = ("mem_mb", "mem_per_cpu_mb", "mem_per_gpu_mb")
        by_cli = [m for m in mem if self.is_set_by_cli(m)]
        if len(by_cli) > 1:
            self.fatal("--mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.")
        if by_cli:
            for m in mem:
                if m != by_cli[0]:
                    self.reset(m)
        elif sum(self.is_set_by_env(m) for m in mem) > 1:
            self.fatal("SLURM_MEM_PER_CPU, SLURM_MEM_PER_GPU, and SLURM_MEM_PER_NODE "
                       "are mutually exclusive.")
