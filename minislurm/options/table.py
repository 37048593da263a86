"""The option table shared by sbatch, srun and salloc (slurm_opt.c).

Each `OptionSpec` is one ``slurm_cli_opt_t``: long name, short letter,
``has_arg``, which commands accept it, and its ``arg_set_*`` function
(`minislurm.options.setters`).  Names, letters and argument kinds are Slurm
22.05's; options minislurm does not model are still accepted (so they never
raise "unrecognized option") and recorded in `JobOptions.other`.
"""

from __future__ import annotations

from dataclasses import dataclass

from minislurm.options import values as V
from minislurm.options.getopt import HasArg, LongOption
from minislurm.options.setters import (
    VERSION,
    InfoExit,
    Setter,
    set_chdir,
    set_checked,
    set_delay_boot,
    set_distribution,
    set_exclusive,
    set_flag,
    set_gpu_bind,
    set_gres_flags,
    set_immediate,
    set_info,
    set_int,
    set_int_other,
    set_kill_on_bad_exit,
    set_kill_on_invalid_dep,
    set_mail_type,
    set_mem,
    set_nice,
    set_no_kill,
    set_nodes,
    set_open_mode,
    set_other,
    set_path,
    set_priority,
    set_propagate,
    set_send_libs,
    set_signal,
    set_str,
    set_switches,
    set_time,
    set_verbose,
    set_wait_all_nodes,
    set_when,
    set_x11,
)

__all__ = ["OPTIONS", "VERSION", "InfoExit", "OptionSpec", "by_key", "getopt_tables",
           "options_for"]

SBATCH, SRUN, SALLOC = "sbatch", "srun", "salloc"
ALL = frozenset({SBATCH, SRUN, SALLOC})
S, R, A = frozenset({SBATCH}), frozenset({SRUN}), frozenset({SALLOC})


@dataclass(frozen=True, slots=True)
class OptionSpec:
    """One entry of ``common_options[]``."""

    name: str
    short: str | None
    has_arg: HasArg
    commands: frozenset[str]
    setter: Setter
    early: bool = False
    """``sbatch_early_pass``: handled while looking for the script."""
    same_as: str | None = None
    """Another spelling of that option (``cpu_bind`` of ``cpu-bind``): getopt returns
    the same value for both, so glibc never calls a prefix of the two ambiguous."""

    @property
    def key(self) -> str:
        """The value getopt returns for it: the short letter or the long name."""
        return self.short or self.same_as or self.name


def _o(name: str, short: str | None, has_arg: HasArg, commands: frozenset[str],
       setter: Setter, early: bool = False, same_as: str | None = None) -> OptionSpec:
    return OptionSpec(name, short, has_arg, commands, setter, early, same_as)


N, REQ, OPT = HasArg.NO, HasArg.REQUIRED, HasArg.OPTIONAL
SA = S | A
SR = S | R

_TABLE: tuple[OptionSpec, ...] = (
    _o("accel-bind", None, REQ, R, set_other("accel-bind")),
    _o("account", "A", REQ, ALL, set_str("account")),
    _o("acctg-freq", None, REQ, ALL, set_other("acctg-freq")),
    _o("array", "a", REQ, S, set_str("array")),
    _o("batch", None, REQ, S, set_other("batch")),
    _o("bb", None, REQ, ALL, set_other("bb")),
    _o("bbf", None, REQ, ALL, set_other("bbf")),
    _o("bcast", None, OPT, R, set_other("bcast")),
    _o("bcast-exclude", None, REQ, R, set_other("bcast-exclude")),
    _o("begin", "b", REQ, ALL, set_when("begin", "--begin")),
    _o("bell", None, N, A, set_other("bell")),
    _o("chdir", "D", REQ, ALL, set_chdir),
    _o("cluster", None, REQ, ALL, set_str("clusters")),
    _o("cluster-constraint", None, REQ, ALL, set_other("cluster-constraint")),
    _o("clusters", "M", REQ, ALL, set_str("clusters")),
    _o("comment", None, REQ, ALL, set_str("comment")),
    _o("compress", None, OPT, R, set_other("compress")),
    _o("constraint", "C", REQ, ALL, set_str("constraint")),
    _o("container", None, REQ, ALL, set_other("container")),
    _o("context", None, REQ, ALL, set_other("context")),
    _o("contiguous", None, N, ALL, set_flag("contiguous")),
    _o("core-spec", "S", REQ, ALL, set_int_other("core-spec", "--core-spec", False)),
    _o("cores-per-socket", None, REQ, ALL, set_int_other("cores-per-socket", "--cores-per-socket")),
    _o("cpu-bind", None, REQ, R, set_str("cpu_bind")),
    _o("cpu_bind", None, REQ, R, set_str("cpu_bind"), same_as="cpu-bind"),
    _o("cpu-freq", None, REQ, ALL, set_other("cpu-freq")),
    _o("cpus-per-gpu", None, REQ, ALL, set_int("cpus_per_gpu", "--cpus-per-gpu")),
    _o("cpus-per-task", "c", REQ, ALL, set_int("cpus_per_task", "--cpus-per-task")),
    _o("deadline", None, REQ, ALL, set_when("deadline", "--deadline")),
    _o("debugger-test", None, N, R, set_other("debugger-test")),
    _o("delay-boot", None, REQ, ALL, set_delay_boot),
    _o("dependency", "d", REQ, ALL, set_str("dependency")),
    _o("disable-status", "X", N, R, set_other("disable-status")),
    _o("distribution", "m", REQ, ALL, set_distribution),
    _o("epilog", None, REQ, R, set_other("epilog")),
    _o("error", "e", REQ, SR, set_path("error")),
    _o("exact", None, N, R, set_flag("exact")),
    _o("exclude", "x", REQ, ALL, set_str("exclude")),
    _o("exclusive", None, OPT, ALL, set_exclusive),
    _o("export", None, REQ, SR, set_str("export")),
    _o("export-file", None, REQ, S, set_str("export_file")),
    _o("extra-node-info", "B", REQ, ALL, set_other("extra-node-info")),
    _o("get-user-env", None, OPT, SA, set_checked("get-user-env", V.verify_get_user_env,
                                                "get_user_env")),
    _o("gid", None, REQ, ALL, set_str("gid")),
    _o("gpu-bind", None, REQ, ALL, set_gpu_bind),
    _o("gpu-freq", None, REQ, ALL, set_other("gpu-freq")),
    _o("gpus", "G", REQ, ALL, set_str("gpus")),
    _o("gpus-per-node", None, REQ, ALL, set_str("gpus_per_node")),
    _o("gpus-per-socket", None, REQ, ALL, set_other("gpus-per-socket")),
    _o("gpus-per-task", None, REQ, ALL, set_str("gpus_per_task")),
    _o("gres", None, REQ, ALL, set_str("gres")),
    _o("gres-flags", None, REQ, ALL, set_gres_flags),
    _o("help", "h", N, ALL, set_info("help"), early=True),
    _o("het-group", None, REQ, R, set_other("het-group")),
    _o("pack-group", None, REQ, R, set_other("het-group"), same_as="het-group"),
    _o("hint", None, REQ, ALL, set_other("hint")),
    _o("hold", "H", N, ALL, set_flag("hold")),
    _o("ignore-pbs", None, N, S, set_other("ignore-pbs")),
    _o("immediate", "I", OPT, R | A, set_immediate),
    _o("input", "i", REQ, SR, set_path("input")),
    _o("interactive", None, N, R, set_other("interactive")),
    _o("jobid", None, REQ, R, set_str("jobid")),
    _o("job-name", "J", REQ, ALL, set_str("job_name")),
    _o("kill-command", "K", OPT, A, set_other("kill-command")),
    _o("kill-on-bad-exit", "K", OPT, R, set_kill_on_bad_exit),
    _o("kill-on-invalid-dep", None, REQ, S, set_kill_on_invalid_dep),
    _o("label", "l", N, R, set_flag("label")),
    _o("licenses", "L", REQ, ALL, set_str("licenses")),
    _o("mail-type", None, REQ, ALL, set_mail_type),
    _o("mail-user", None, REQ, ALL, set_str("mail_user")),
    _o("mcs-label", None, REQ, ALL, set_other("mcs-label")),
    _o("mem", None, REQ, ALL, set_mem("mem_mb", "--mem")),
    _o("mem-bind", None, REQ, ALL, set_other("mem-bind")),
    _o("mem-per-cpu", None, REQ, ALL, set_mem("mem_per_cpu_mb", "--mem-per-cpu")),
    _o("mem-per-gpu", None, REQ, ALL, set_mem("mem_per_gpu_mb", "--mem-per-gpu")),
    _o("mincpus", None, REQ, ALL, set_int("mincpus", "--mincpus")),
    _o("mpi", None, REQ, R, set_str("mpi")),
    _o("msg-timeout", None, REQ, R, set_other("msg-timeout")),
    _o("multi-prog", None, N, R, set_flag("multi_prog")),
    _o("network", None, REQ, ALL, set_other("network")),
    _o("nice", None, OPT, ALL, set_nice),
    _o("no-allocate", "Z", N, R, set_other("no-allocate")),
    _o("no-bell", None, N, A, set_other("no-bell")),
    _o("no-kill", "k", OPT, ALL, set_no_kill),
    _o("no-requeue", None, N, S, set_flag("requeue", False)),
    _o("no-shell", None, N, A, set_other("no-shell")),
    _o("nodefile", "F", REQ, ALL, set_other("nodefile")),
    _o("nodelist", "w", REQ, ALL, set_str("nodelist")),
    _o("nodes", "N", REQ, ALL, set_nodes),
    _o("ntasks", "n", REQ, ALL, set_int("ntasks", "--ntasks")),
    _o("ntasks-per-core", None, REQ, ALL, set_int_other("ntasks-per-core", "--ntasks-per-core")),
    _o("ntasks-per-gpu", None, REQ, ALL, set_int("ntasks_per_gpu", "--ntasks-per-gpu")),
    _o("ntasks-per-node", None, REQ, ALL, set_int("ntasks_per_node", "--ntasks-per-node")),
    _o("ntasks-per-socket", None, REQ, ALL, set_int_other("ntasks-per-socket",
                                                          "--ntasks-per-socket")),
    _o("ntasks-per-tres", None, REQ, ALL, set_int_other("ntasks-per-tres", "--ntasks-per-tres")),
    _o("open-mode", None, REQ, SR, set_open_mode),
    _o("output", "o", REQ, SR, set_path("output")),
    _o("overcommit", "O", N, ALL, set_flag("overcommit")),
    _o("overlap", None, OPT, R, set_flag("overlap")),
    _o("oversubscribe", "s", N, ALL, set_flag("exclusive", "oversubscribe")),
    _o("parsable", None, N, S, set_flag("parsable")),
    _o("partition", "p", REQ, ALL, set_str("partition")),
    _o("power", None, REQ, ALL, set_other("power")),
    _o("prefer", None, REQ, ALL, set_other("prefer")),
    _o("preserve-env", "E", N, R, set_other("preserve-env")),
    _o("priority", None, REQ, ALL, set_priority),
    _o("profile", None, REQ, ALL, set_checked("profile", V.verify_profile)),
    _o("prolog", None, REQ, R, set_other("prolog")),
    _o("propagate", None, OPT, SR, set_propagate),
    _o("pty", None, OPT, R, set_other("pty")),
    _o("qos", "q", REQ, ALL, set_str("qos")),
    _o("quiet", "Q", N, ALL, set_flag("quiet"), early=True),
    _o("quit-on-interrupt", None, N, R, set_other("quit-on-interrupt")),
    _o("reboot", None, N, ALL, set_other("reboot")),
    _o("relative", "r", REQ, R, set_other("relative")),
    _o("requeue", None, N, S, set_flag("requeue", True)),
    _o("reservation", None, REQ, ALL, set_str("reservation")),
    _o("resv-ports", None, OPT, R, set_other("resv-ports")),
    _o("send-libs", None, OPT, R, set_send_libs),
    _o("signal", None, REQ, ALL, set_signal),
    _o("slurmd-debug", None, REQ, R, set_other("slurmd-debug")),
    _o("sockets-per-node", None, REQ, ALL, set_int_other("sockets-per-node", "--sockets-per-node")),
    _o("spread-job", None, N, ALL, set_other("spread-job")),
    _o("switches", None, REQ, ALL, set_switches),
    _o("task-epilog", None, REQ, R, set_other("task-epilog")),
    _o("task-prolog", None, REQ, R, set_other("task-prolog")),
    _o("tasks-per-node", None, REQ, ALL, set_int("ntasks_per_node", "--ntasks-per-node")),
    _o("test-only", None, N, SR, set_flag("test_only")),
    _o("thread-spec", None, REQ, ALL, set_int_other("thread-spec", "--thread-spec")),
    _o("threads", "T", REQ, R, set_other("threads")),
    _o("threads-per-core", None, REQ, ALL, set_int_other("threads-per-core", "--threads-per-core")),
    _o("time", "t", REQ, ALL, set_time("time_limit", "time_limit_set", "--time")),
    _o("time-min", None, REQ, ALL, set_time("time_min", "time_min_set", "--time-min")),
    _o("tmp", None, REQ, ALL, set_mem("tmp_mb", "--tmp")),
    _o("uid", None, REQ, ALL, set_str("uid")),
    _o("unbuffered", "u", N, R, set_flag("unbuffered")),
    _o("usage", None, N, ALL, set_info("usage"), early=True),
    _o("use-min-nodes", None, N, ALL, set_other("use-min-nodes")),
    _o("verbose", "v", N, ALL, set_verbose, early=True),
    _o("version", "V", N, ALL, set_info("version"), early=True),
    _o("wait", "W", N, S, set_flag("wait")),
    _o("wait", "W", REQ, R, set_other("wait")),
    _o("wait-all-nodes", None, REQ, SA, set_wait_all_nodes),
    _o("wckey", None, REQ, ALL, set_str("wckey")),
    _o("whole", None, N, R, set_other("whole")),
    _o("wrap", None, REQ, S, set_str("wrap"), early=True),
    _o("x11", None, OPT, R | A, set_x11),
)


_ORDER_TEXT = (
    "accel-bind account acctg-freq array batch bcast bcast-exclude begin bell bb bbf "
    "cluster-constraint chdir cluster clusters comment compress container context contiguous "
    "constraint core-spec cores-per-socket cpu-bind cpu_bind cpu-freq cpus-per-gpu "
    "cpus-per-task deadline debugger-test delay-boot dependency disable-status distribution "
    "epilog error exact exclude exclusive export export-file extra-node-info get-user-env gid "
    "gpu-bind gpu-freq gpus gpus-per-node gpus-per-socket gpus-per-task gres gres-flags help "
    "het-group hint hold ignore-pbs immediate input interactive jobid job-name label licenses "
    "mail-type mail-user mcs-label mem mem-bind mem-per-cpu mem-per-gpu mincpus mpi "
    "msg-timeout multi-prog network nice no-allocate no-bell no-kill no-requeue no-shell "
    "nodefile nodelist nodes ntasks ntasks-per-core ntasks-per-gpu ntasks-per-node "
    "ntasks-per-socket ntasks-per-tres open-mode output overcommit overlap oversubscribe "
    "pack-group parsable partition power prefer preserve-env priority profile prolog "
    "propagate pty qos quiet quit-on-interrupt reboot relative requeue reservation "
    "resv-ports send-libs signal slurmd-debug sockets-per-node spread-job switches threads "
    "task-epilog task-prolog tasks-per-node test-only thread-spec threads-per-core time "
    "time-min tmp uid unbuffered use-min-nodes usage verbose version wait wait-all-nodes "
    "wckey whole wrap x11"
)
GETOPT_ORDER = tuple(_ORDER_TEXT.split())
"""The order of slurm_opt.c's ``common_options[]``, which glibc follows when it lists
the possibilities of an ambiguous prefix (measured on 22.05.8: ``sbatch --b`` lists
``'--batch' '--begin' '--bb' '--bbf'``); options of one first letter keep this order."""


_RANK = {name: i for i, name in enumerate(GETOPT_ORDER)}


def _getopt_rank(spec: OptionSpec) -> tuple[str, int]:
    return spec.name[0], _RANK.get(spec.name, len(_RANK))


OPTIONS: tuple[OptionSpec, ...] = tuple(sorted(_TABLE, key=_getopt_rank))
"""Every option, in `GETOPT_ORDER`."""


def options_for(command: str) -> tuple[OptionSpec, ...]:
    """The table entries one command accepts (``slurm_option_table_create``)."""
    return tuple(o for o in OPTIONS if command in o.commands)


def getopt_tables(command: str) -> tuple[dict[str, HasArg], list[LongOption]]:
    """The short-option map and long-option list handed to getopt_long."""
    specs = options_for(command)
    shorts = {o.short: o.has_arg for o in specs if o.short}
    longs = [LongOption(o.name, o.has_arg, o.key) for o in specs]
    return shorts, longs


def by_key(command: str) -> dict[str, OptionSpec]:
    """Table entries of ``command`` by getopt key."""
    return {o.key: o for o in options_for(command)}
