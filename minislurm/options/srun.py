"""``srun`` and ``salloc`` option processing (Slurm 22.05).

src/srun/libsrun/opt.c and src/salloc/opt.c: environment variables first
(``_opt_env``), then the command line (``_opt_args``); the first non-option
word starts the command.  Inside an allocation srun picks up the job's
``SLURM_NTASKS``, ``SLURM_NNODES``, ``SLURM_JOB_ID``... (see
`minislurm.options.env.SRUN_ENV`), which is how a step inherits its job.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

from minislurm.errors import OptionError
from minislurm.options.builder import OptionBuilder
from minislurm.options.env import apply_env
from minislurm.options.model import SallocInvocation, SrunInvocation
from minislurm.options.sbatch import (
    apply_options,
    option_arg,
    run_getopt,
    to_job_desc_uint16,
    verify_counts,
    verify_hint,
)
from minislurm.options.setters import check_x11
from minislurm.options.table import by_key


def _parse(command: str, argv: Sequence[str], env: Mapping[str, str], cwd: str,
           now: int | None) -> tuple[OptionBuilder, tuple[str, ...]]:
    b = OptionBuilder(command, cwd=cwd, now=int(time.time()) if now is None else now, env=env)
    specs = by_key(command)
    parsed, optind = run_getopt(argv, command, command)
    # --help/--usage/--version act before anything else (srun's early pass)
    apply_options(b, [p for p in parsed if specs[p.key].name in ("help", "usage", "version")],
                  specs, early=None)
    apply_env(b, command, env)
    for p in parsed:
        specs[p.key].setter(b, option_arg(specs[p.key], p))
        if command == "srun" and specs[p.key].name == "mem":
            # arg_set_mem: "srun silently stomps on any --mem-per-cpu setting"
            b.reset("mem_per_cpu_mb")
    b.validate_memory()
    if b.get("quiet") and b.get("verbose"):
        b.fail("don't specify both --verbose (-v) and --quiet (-Q)", 1)
    verify_hint(b)
    lines: list[str] = []
    if verify_counts(b, lines):
        raise OptionError("\n".join(lines), 1)
    to_job_desc_uint16(b)
    b.warnings = tuple(lines)
    return b, tuple(argv[optind:])


def parse_srun(argv: Sequence[str], *, env: Mapping[str, str], cwd: str = "/",
               now: int | None = None) -> SrunInvocation:
    """Parse ``srun`` arguments (``argv`` without the program name).

    Raises `OptionError` (``srun: unrecognized option '--foo'`` + ``Try "srun
    --help" for more information``, exit 255; ``srun: error: must supply
    remote command``, exit 1) or `minislurm.options.table.InfoExit`.
    """
    b, command = _parse("srun", argv, env, cwd, now)
    if not command and not b.get("test_only"):
        b.fatal("No command given to execute.")
    check_x11(b, bool(env.get("DISPLAY")))
    return SrunInvocation(b.build(), command, b.warnings)


def parse_salloc(argv: Sequence[str], *, env: Mapping[str, str], cwd: str = "/",
                 now: int | None = None) -> SallocInvocation:
    """Parse ``salloc`` arguments; without a command salloc runs a shell."""
    b, command = _parse("salloc", argv, env, cwd, now)
    check_x11(b, bool(env.get("DISPLAY")))
    return SallocInvocation(b.build(), command, b.warnings)
