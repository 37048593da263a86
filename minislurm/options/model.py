"""The data the sbatch/srun/salloc front end hands to the rest of minislurm.

`JobOptions` mirrors Slurm 22.05's ``slurm_opt_t`` (src/common/slurm_opt.h):
one field per option, ``None`` (or ``False`` for flags) when the option was
not given, so that the controller can apply its own defaults (partition
DefaultTime, DefMemPerCPU, ...) exactly where slurmctld does.

Values the *client* validates in Slurm are already parsed here (``--time``,
``--mem``, ``--nodes``, ``--ntasks``, ``--begin``, ``--signal``...): a bad one
never reaches this dataclass.  Values that slurmctld validates in Slurm are
kept as the text the user gave (``--array``, ``--dependency``, ``--gres``,
``--gpus*``, ``--partition``, ``--nodelist``...), because a bad one must be
*accepted* by the front end and rejected at submission with exit code 1
(see captures b_sbatch_errors 11, 13, 34, 38): parse them with
`minislurm.common.jobarray.parse_array`, `minislurm.dependency.parse_dependency`,
`minislurm.common.gres.parse_gres_request`, `minislurm.common.hostlist.expand`.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class SignalSpec:
    """``--signal=[{R|B}:]<sig_num>[@sig_time]`` (slurm_opt.c ``arg_set_signal``).

    ``signal`` is the signal number (``USR1`` -> 10), ``time`` the number of
    seconds before the end of the time limit (default 60), ``batch_only`` is
    the ``B:`` prefix (signal only the batch shell), ``reservation`` the ``R:``
    prefix (also signal when the reservation ends).
    """

    signal: int
    time: int = 60
    batch_only: bool = False
    reservation: bool = False


@dataclass(frozen=True, slots=True)
class JobOptions:
    """Every job option an AI cluster uses; ``None``/``False`` = not given.

    Units follow docs/ARCHITECTURE.md: memory in MB, time limits in minutes,
    timestamps in epoch seconds.  Each field names the option it mirrors.
    """

    # --- resources ------------------------------------------------------
    nodes_min: int | None = None
    """``-N/--nodes=<min>[-max]``: minimum node count.  ``-N0`` passes the
    front end as ``0`` (Slurm 22.05's verify_node_count allows it) and must be
    rejected at submission with ``Node count specification invalid``."""
    nodes_max: int | None = None
    """``-N/--nodes``: maximum node count (equal to min for ``-N 2``; ``None`` if
    not given)."""
    ntasks: int | None = None
    """``-n/--ntasks``."""
    ntasks_per_node: int | None = None
    """``--ntasks-per-node``."""
    ntasks_per_gpu: int | None = None
    """``--ntasks-per-gpu``."""
    cpus_per_task: int | None = None
    """``-c/--cpus-per-task``."""
    cpus_per_gpu: int | None = None
    """``--cpus-per-gpu``."""
    mincpus: int | None = None
    """``--mincpus`` (minimum CPUs per node)."""
    gres: str | None = None
    """``--gres`` text as given (``gpu:a100:2``); validated by slurmctld."""
    gpus: str | None = None
    """``-G/--gpus=[type:]count`` text as given."""
    gpus_per_node: str | None = None
    """``--gpus-per-node=[type:]count`` text as given."""
    gpus_per_task: str | None = None
    """``--gpus-per-task=[type:]count`` text as given."""
    mem_mb: int | None = None
    """``--mem`` in MB per node (``0`` = all memory of each node)."""
    mem_per_cpu_mb: int | None = None
    """``--mem-per-cpu`` in MB."""
    mem_per_gpu_mb: int | None = None
    """``--mem-per-gpu`` in MB."""
    tmp_mb: int | None = None
    """``--tmp`` in MB."""
    exclusive: str | None = None
    """``--exclusive[=user|mcs|topo]``: ``'exclusive'``, ``'user'``, ``'mcs'``,
    ``'topo'``; ``--oversubscribe``/``-s`` sets ``'oversubscribe'``."""
    nodelist: str | None = None
    """``-w/--nodelist`` hostlist expression as given."""
    exclude: str | None = None
    """``-x/--exclude`` hostlist expression as given."""
    constraint: str | None = None
    """``-C/--constraint`` feature expression."""
    contiguous: bool = False
    """``--contiguous``."""
    overcommit: bool = False
    """``-O/--overcommit``."""
    distribution: str | None = None
    """``-m/--distribution`` as given (``block``, ``cyclic``, ``block:cyclic``,
    ``plane=4``...), validated like ``verify_dist_type``."""
    licenses: str | None = None
    """``-L/--licenses``."""

    # --- time -------------------------------------------------------------
    time_limit: int | None = None
    """``-t/--time`` in minutes; ``None`` = UNLIMITED *when* `time_limit_set`; a
    negative value is accepted and stored as slurmctld stores it, wrapped around 2**32
    (`minislurm.common.timespec.parse_time_limit`)."""
    time_limit_set: bool = False
    """Whether ``-t/--time`` (or ``SBATCH_TIMELIMIT``...) was given at all: Slurm's
    NO_VAL (use the partition's DefaultTime) vs INFINITE."""
    time_min: int | None = None
    """``--time-min`` in minutes (same conventions as `time_limit`)."""
    time_min_set: bool = False
    """Whether ``--time-min`` was given."""
    begin: int | None = None
    """``-b/--begin`` as an epoch timestamp."""
    deadline: int | None = None
    """``--deadline`` as an epoch timestamp."""

    # --- placement in the queue -----------------------------------------
    partition: str | None = None
    """``-p/--partition`` (may be a comma separated list)."""
    qos: str | None = None
    """``-q/--qos``."""
    account: str | None = None
    """``-A/--account``."""
    reservation: str | None = None
    """``--reservation``."""
    nice: int | None = None
    """``--nice[=adj]`` (``--nice`` alone = 100)."""
    priority: str | None = None
    """``--priority=<value>|TOP`` as given."""
    hold: bool = False
    """``-H/--hold``: submit held (reason JobHeldUser)."""
    dependency: str | None = None
    """``-d/--dependency`` text as given; parse with
    `minislurm.dependency.parse_dependency` (slurmctld rejects bad ones)."""
    array: str | None = None
    """``-a/--array`` text as given; parse with `minislurm.common.jobarray.parse_array`
    (slurmctld rejects bad ones)."""
    requeue: bool | None = None
    """``--requeue`` (True) / ``--no-requeue`` (False)."""
    kill_on_invalid_dep: bool | None = None
    """``--kill-on-invalid-dep=yes|no``."""
    signal: SignalSpec | None = None
    """``--signal``."""
    comment: str | None = None
    """``--comment``."""
    wckey: str | None = None
    """``--wckey``."""
    mail_type: str | None = None
    """``--mail-type`` as given (accepted, never sent: MailProg=/bin/true)."""
    mail_user: str | None = None
    """``--mail-user``."""
    uid: str | None = None
    """``--uid`` (root only in Slurm; kept as given)."""
    gid: str | None = None
    """``--gid``."""

    # --- naming, files, environment ---------------------------------------
    job_name: str | None = None
    """``-J/--job-name``."""
    output: str | None = None
    """``-o/--output`` pattern (``none`` -> ``/dev/null``)."""
    error: str | None = None
    """``-e/--error`` pattern (``none`` -> ``/dev/null``)."""
    input: str | None = None
    """``-i/--input`` pattern (``none`` -> ``/dev/null``)."""
    open_mode: str | None = None
    """``--open-mode=append|truncate``."""
    chdir: str | None = None
    """``-D/--chdir``, made absolute against the submit directory."""
    export: str | None = None
    """``--export=ALL|NONE|[ALL,]VAR[=val],...`` as given."""
    export_file: str | None = None
    """``--export-file``."""
    get_user_env: str | None = None
    """``--get-user-env[=timeout][S|L]`` (``''`` when given without value)."""

    # --- client behaviour ---------------------------------------------------
    parsable: bool = False
    """``--parsable``: print ``<jobid>[;cluster]`` only."""
    test_only: bool = False
    """``--test-only``."""
    wait: bool = False
    """``-W/--wait`` (sbatch): wait for the job and exit with its code."""
    wrap: str | None = None
    """``--wrap=<command>`` (sbatch)."""
    verbose: int = 0
    """``-v`` count."""
    quiet: bool = False
    """``-Q/--quiet``."""
    immediate: int | None = None
    """``-I/--immediate[=secs]`` (srun/salloc; ``0`` when given without value)."""
    no_kill: bool = False
    """``-k/--no-kill``."""
    clusters: str | None = None
    """``-M/--clusters``."""

    # --- srun (job steps) ---------------------------------------------------
    label: bool = False
    """``-l/--label`` (srun): prefix output lines with the task id."""
    unbuffered: bool = False
    """``-u/--unbuffered`` (srun)."""
    mpi: str | None = None
    """``--mpi`` (srun)."""
    kill_on_bad_exit: int | None = None
    """``-K/--kill-on-bad-exit[=0|1]`` (srun)."""
    jobid: str | None = None
    """``--jobid`` (srun: run a step inside an existing allocation)."""
    exact: bool = False
    """``--exact`` (srun)."""
    overlap: bool = False
    """``--overlap`` (srun)."""
    cpu_bind: str | None = None
    """``--cpu-bind`` (srun)."""
    multi_prog: bool = False
    """``--multi-prog`` (srun)."""

    other: tuple[tuple[str, str | None], ...] = field(default=())
    """Options Slurm accepts that minislurm does not model, as (long name,
    argument) in the order given, e.g. ``(('cpu-freq', 'high'),)``."""


@dataclass(frozen=True, slots=True)
class SbatchInvocation:
    """What ``sbatch [options] [script [args...]]`` asks for (src/sbatch/sbatch.c).

    ``script_text`` is the batch script (for ``--wrap`` the generated
    ``#!/bin/sh`` script), ``script_name`` the name Slurm gives the job when
    no ``-J`` is given: the script's base name, ``sbatch`` for a script read
    from standard input and ``wrap`` for ``--wrap`` (capture f2 07/08).
    ``script_path`` is the absolute path of the script file (``None`` for stdin
    and ``--wrap``).  ``job_name`` is the name the job gets.  ``warnings`` are
    the lines sbatch prints on stderr before submitting (``sbatch: Warning:
    can't run 1 processes on 2 nodes, setting nnodes to 1``).
    """

    options: JobOptions
    script_text: str
    script_name: str
    script_args: tuple[str, ...] = ()
    script_path: str | None = None
    warnings: tuple[str, ...] = ()

    @property
    def job_name(self) -> str:
        """``-J`` if given, else the script's name (``JobName=`` in scontrol)."""
        return self.options.job_name if self.options.job_name is not None else self.script_name


@dataclass(frozen=True, slots=True)
class SrunInvocation:
    """What ``srun [options] command [args...]`` asks for (src/srun/libsrun/opt.c).

    The job name defaults to the command's base name (capture a1: ``env``).
    """

    options: JobOptions
    command: tuple[str, ...]
    warnings: tuple[str, ...] = ()
    """Lines srun prints on stderr first (see `SbatchInvocation.warnings`)."""

    @property
    def job_name(self) -> str:
        """``-J`` if given, else the base name of the command."""
        if self.options.job_name is not None:
            return self.options.job_name
        return self.command[0].rsplit("/", 1)[-1] if self.command else "srun"


@dataclass(frozen=True, slots=True)
class SallocInvocation:
    """What ``salloc [options] [command [args...]]`` asks for (src/salloc/opt.c).

    Without a command salloc runs the user's shell; the job name then is
    ``interactive`` (Slurm 22.05 ``salloc`` default).
    """

    options: JobOptions
    command: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    """Lines salloc prints on stderr first (see `SbatchInvocation.warnings`)."""

    @property
    def job_name(self) -> str:
        """``-J`` if given, else the command's base name, else ``interactive``."""
        if self.options.job_name is not None:
            return self.options.job_name
        return self.command[0].rsplit("/", 1)[-1] if self.command else "interactive"
