"""sbatch / srun / salloc front end: options, directives, environment.

Mirrors Slurm 22.05's src/common/slurm_opt.c (the shared option table),
src/sbatch/opt.c, src/srun/libsrun/opt.c and src/salloc/opt.c.  The public
API (docs/ARCHITECTURE.md) is re-exported here.
"""

from minislurm.options.directives import sbatch_directives
from minislurm.options.model import (
    JobOptions,
    SallocInvocation,
    SbatchInvocation,
    SignalSpec,
    SrunInvocation,
)
from minislurm.options.sbatch import parse_sbatch
from minislurm.options.srun import parse_salloc, parse_srun
from minislurm.options.table import VERSION, InfoExit

__all__ = [
    "VERSION",
    "InfoExit",
    "JobOptions",
    "SallocInvocation",
    "SbatchInvocation",
    "SignalSpec",
    "SrunInvocation",
    "parse_salloc",
    "parse_sbatch",
    "parse_srun",
    "sbatch_directives",
]
