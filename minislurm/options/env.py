"""Input environment variables of sbatch, srun and salloc.

Mirrors the ``env_vars[]`` tables of src/sbatch/opt.c, src/srun/libsrun/opt.c
and src/salloc/opt.c (Slurm 22.05): each variable is processed exactly like
its option (``slurm_process_option(..., set_by_env=true)``), after the
``#SBATCH`` directives and before the command line, so the command line
wins (capture f2_option_precedence).  For a flag option the value ``""``,
``yes`` or a non-zero number sets it and anything else clears it.
"""

from __future__ import annotations

from collections.abc import Mapping

from minislurm.options.builder import ENV, OptionBuilder
from minislurm.options.getopt import HasArg
from minislurm.options.setters import FLAG_FIELDS
from minislurm.options.table import OptionSpec, by_key

SBATCH_ENV: tuple[tuple[str, str], ...] = (
    ("SBATCH_ACCOUNT", "A"), ("SBATCH_ARRAY_INX", "a"), ("SBATCH_ACCTG_FREQ", "acctg-freq"),
    ("SBATCH_BATCH", "batch"), ("SBATCH_BURST_BUFFER", "bb"),
    ("SBATCH_CLUSTER_CONSTRAINT", "cluster-constraint"), ("SBATCH_CLUSTERS", "M"),
    ("SLURM_CLUSTERS", "M"), ("SBATCH_CONSTRAINT", "C"), ("SBATCH_CONTAINER", "container"),
    ("SBATCH_CORE_SPEC", "S"), ("SBATCH_CPU_FREQ_REQ", "cpu-freq"),
    ("SBATCH_CPUS_PER_GPU", "cpus-per-gpu"), ("SBATCH_DEBUG", "v"),
    ("SBATCH_DELAY_BOOT", "delay-boot"), ("SBATCH_DISTRIBUTION", "m"), ("SBATCH_ERROR", "e"),
    ("SBATCH_EXCLUSIVE", "exclusive"), ("SBATCH_EXPORT", "export"),
    ("SBATCH_GET_USER_ENV", "get-user-env"), ("SBATCH_GRES", "gres"),
    ("SBATCH_GRES_FLAGS", "gres-flags"), ("SBATCH_GPUS", "G"), ("SBATCH_GPU_BIND", "gpu-bind"),
    ("SBATCH_GPU_FREQ", "gpu-freq"), ("SBATCH_GPUS_PER_NODE", "gpus-per-node"),
    ("SBATCH_GPUS_PER_SOCKET", "gpus-per-socket"), ("SBATCH_GPUS_PER_TASK", "gpus-per-task"),
    ("SLURM_HINT", "hint"), ("SBATCH_HINT", "hint"), ("SBATCH_INPUT", "i"),
    ("SBATCH_JOB_NAME", "J"), ("SBATCH_MEM_BIND", "mem-bind"),
    ("SBATCH_MEM_PER_CPU", "mem-per-cpu"), ("SBATCH_MEM_PER_GPU", "mem-per-gpu"),
    ("SBATCH_MEM_PER_NODE", "mem"), ("SBATCH_NETWORK", "network"), ("SBATCH_NO_KILL", "k"),
    ("SBATCH_NO_REQUEUE", "no-requeue"), ("SBATCH_OPEN_MODE", "open-mode"),
    ("SBATCH_OUTPUT", "o"), ("SBATCH_OVERCOMMIT", "O"), ("SBATCH_PARTITION", "p"),
    ("SBATCH_POWER", "power"), ("SBATCH_PROFILE", "profile"), ("SBATCH_QOS", "q"),
    ("SBATCH_REQ_SWITCH", "switches"),
    ("SBATCH_REQUEUE", "requeue"), ("SBATCH_RESERVATION", "reservation"),
    ("SBATCH_SIGNAL", "signal"), ("SBATCH_SPREAD_JOB", "spread-job"),
    ("SBATCH_THREAD_SPEC", "thread-spec"), ("SBATCH_THREADS_PER_CORE", "threads-per-core"),
    ("SBATCH_TIMELIMIT", "t"),
    ("SBATCH_USE_MIN_NODES", "use-min-nodes"), ("SBATCH_WAIT", "W"),
    ("SBATCH_WAIT_ALL_NODES", "wait-all-nodes"), ("SBATCH_WCKEY", "wckey"),
)
"""``env_vars[]`` of src/sbatch/opt.c."""

SRUN_ENV: tuple[tuple[str, str], ...] = (
    ("SLURM_ACCOUNT", "A"), ("SLURM_ACCTG_FREQ", "acctg-freq"), ("SLURM_BCAST", "bcast"),
    ("SLURM_BURST_BUFFER", "bb"), ("SLURM_CLUSTERS", "M"), ("SLURM_COMPRESS", "compress"),
    ("SLURM_CONSTRAINT", "C"), ("SLURM_CORE_SPEC", "S"), ("SLURM_CPUS_PER_TASK", "c"),
    ("SLURM_CPU_BIND", "cpu-bind"), ("SLURM_CPU_FREQ_REQ", "cpu-freq"),
    ("SLURM_CPUS_PER_GPU", "cpus-per-gpu"), ("SLURM_DEBUG", "v"),
    ("SLURM_DELAY_BOOT", "delay-boot"), ("SLURM_DEPENDENCY", "d"),
    ("SLURM_DISABLE_STATUS", "X"), ("SLURM_DISTRIBUTION", "m"), ("SLURM_EPILOG", "epilog"),
    ("SLURM_EXACT", "exact"), ("SLURM_EXCLUSIVE", "exclusive"), ("SLURM_EXPORT_ENV", "export"),
    ("SLURM_GPUS", "G"), ("SLURM_GPU_BIND", "gpu-bind"), ("SLURM_GPU_FREQ", "gpu-freq"),
    ("SLURM_GPUS_PER_NODE", "gpus-per-node"), ("SLURM_GPUS_PER_SOCKET", "gpus-per-socket"),
    ("SLURM_GPUS_PER_TASK", "gpus-per-task"), ("SLURM_GRES", "gres"),
    ("SLURM_GRES_FLAGS", "gres-flags"), ("SLURM_HINT", "hint"), ("SLURM_IMMEDIATE", "I"),
    ("SLURM_JOB_ID", "jobid"), ("SLURM_JOB_NAME", "J"), ("SLURM_JOB_NUM_NODES", "N"),
    ("SLURM_KILL_BAD_EXIT", "K"), ("SLURM_LABELIO", "l"), ("SLURM_MEM_BIND", "mem-bind"),
    ("SLURM_MEM_PER_CPU", "mem-per-cpu"), ("SLURM_MEM_PER_GPU", "mem-per-gpu"),
    ("SLURM_MEM_PER_NODE", "mem"), ("SLURM_MPI_TYPE", "mpi"), ("SLURM_NETWORK", "network"),
    ("SLURM_NNODES", "N"), ("SLURM_NO_KILL", "k"), ("SLURM_NPROCS", "n"),
    ("SLURM_NTASKS", "n"), ("SLURM_NTASKS_PER_GPU", "ntasks-per-gpu"),
    ("SLURM_NTASKS_PER_NODE", "ntasks-per-node"), ("SLURM_OPEN_MODE", "open-mode"),
    ("SLURM_OVERCOMMIT", "O"), ("SLURM_OVERLAP", "overlap"), ("SLURM_PARTITION", "p"),
    ("SLURM_POWER", "power"), ("SLURM_PROFILE", "profile"), ("SLURM_PROLOG", "prolog"),
    ("SLURM_QOS", "q"), ("SLURM_REMOTE_CWD", "D"), ("SLURM_RESERVATION", "reservation"),
    ("SLURM_RESV_PORTS", "resv-ports"), ("SLURM_SIGNAL", "signal"),
    ("SLURM_SPREAD_JOB", "spread-job"), ("SLURM_SRUN_MULTI", "multi-prog"),
    ("SLURM_STDERRMODE", "e"), ("SLURM_STDINMODE", "i"), ("SLURM_STDOUTMODE", "o"),
    ("SLURM_TASK_EPILOG", "task-epilog"), ("SLURM_TASK_PROLOG", "task-prolog"),
    ("SLURM_THREAD_SPEC", "thread-spec"), ("SLURM_THREADS", "T"), ("SLURM_TIMELIMIT", "t"),
    ("SLURM_UNBUFFEREDIO", "u"), ("SLURM_USE_MIN_NODES", "use-min-nodes"), ("SLURM_WAIT", "W"),
    ("SLURM_WCKEY", "wckey"), ("SLURM_WORKING_DIR", "D"),
)
"""``env_vars[]`` of src/srun/libsrun/opt.c: inside an allocation srun
inherits the job's SLURM_NTASKS, SLURM_NNODES, SLURM_JOB_ID, ... this way."""

SALLOC_ENV: tuple[tuple[str, str], ...] = (
    ("SALLOC_ACCOUNT", "A"), ("SALLOC_ACCTG_FREQ", "acctg-freq"), ("SALLOC_BELL", "bell"),
    ("SALLOC_BURST_BUFFER", "bb"), ("SALLOC_CLUSTER_CONSTRAINT", "cluster-constraint"),
    ("SALLOC_CLUSTERS", "M"), ("SLURM_CLUSTERS", "M"), ("SALLOC_CONSTRAINT", "C"),
    ("SALLOC_CONTAINER", "container"), ("SALLOC_CORE_SPEC", "S"),
    ("SALLOC_CPU_FREQ_REQ", "cpu-freq"), ("SALLOC_CPUS_PER_GPU", "cpus-per-gpu"),
    ("SALLOC_DEBUG", "v"), ("SALLOC_DELAY_BOOT", "delay-boot"),
    ("SALLOC_EXCLUSIVE", "exclusive"), ("SALLOC_GPU_BIND", "gpu-bind"),
    ("SALLOC_GPU_FREQ", "gpu-freq"), ("SALLOC_GPUS", "G"),
    ("SALLOC_GPUS_PER_NODE", "gpus-per-node"), ("SALLOC_GPUS_PER_SOCKET", "gpus-per-socket"),
    ("SALLOC_GPUS_PER_TASK", "gpus-per-task"), ("SALLOC_GRES", "gres"),
    ("SALLOC_GRES_FLAGS", "gres-flags"), ("SALLOC_HINT", "hint"), ("SLURM_HINT", "hint"),
    ("SALLOC_IMMEDIATE", "I"), ("SALLOC_KILL_CMD", "K"), ("SALLOC_MEM_BIND", "mem-bind"),
    ("SALLOC_MEM_PER_CPU", "mem-per-cpu"), ("SALLOC_MEM_PER_GPU", "mem-per-gpu"),
    ("SALLOC_MEM_PER_NODE", "mem"), ("SALLOC_NETWORK", "network"),
    ("SALLOC_NO_BELL", "no-bell"), ("SALLOC_NO_KILL", "k"), ("SALLOC_OVERCOMMIT", "O"),
    ("SALLOC_PARTITION", "p"), ("SALLOC_POWER", "power"), ("SALLOC_PROFILE", "profile"),
    ("SALLOC_QOS", "q"), ("SALLOC_RESERVATION", "reservation"), ("SALLOC_SIGNAL", "signal"),
    ("SALLOC_SPREAD_JOB", "spread-job"), ("SALLOC_THREAD_SPEC", "thread-spec"),
    ("SALLOC_TIMELIMIT", "t"), ("SALLOC_USE_MIN_NODES", "use-min-nodes"),
    ("SALLOC_WAIT_ALL_NODES", "wait-all-nodes"), ("SALLOC_WCKEY", "wckey"),
)
"""``env_vars[]`` of src/salloc/opt.c."""

TABLES = {"sbatch": SBATCH_ENV, "srun": SRUN_ENV, "salloc": SALLOC_ENV}


def _flag_is_set(value: str) -> bool:
    """slurm_process_option's rule for flags given through the environment."""
    if value == "" or value.lower() == "yes":
        return True
    try:
        return int(value) != 0
    except ValueError:
        return False


def apply_env(b: OptionBuilder, command: str, env: Mapping[str, str]) -> None:
    """Process ``command``'s input environment variables into ``b``."""
    specs: dict[str, OptionSpec] = by_key(command)
    previous = b.source
    b.source = ENV
    try:
        for var, key in TABLES[command]:
            if var not in env:
                continue
            spec = specs[key]
            value: str | None = env[var]
            if spec.has_arg is HasArg.NO:
                if not _flag_is_set(env[var]):
                    # "arg is anything else, call reset instead"
                    if spec.setter in FLAG_FIELDS:
                        b.reset(FLAG_FIELDS[spec.setter])
                    continue
                value = None
                if key == "v":  # SBATCH_DEBUG=<level>
                    value = env[var] if env[var] not in ("", "yes") else None
            elif spec.has_arg is HasArg.OPTIONAL and value == "":
                value = None
            spec.setter(b, value)
    finally:
        b.source = previous
