"""The ``arg_set_*`` functions of slurm_opt.c: one setter per option kind.

A setter takes the `OptionBuilder` and the option's argument (``None`` for
flags), validates it exactly like Slurm 22.05 and stores the value, or raises
`OptionError` with Slurm's text: ``prog: error: ...`` and exit 255, or exit 1
where Slurm's helper calls ``exit(1)`` (``parse_int``).
"""

from __future__ import annotations

from collections.abc import Callable

from minislurm import SLURM_VERSION
from minislurm.common import timespec
from minislurm.errors import OptionError
from minislurm.options import values as V
from minislurm.options.builder import OptionBuilder
from minislurm.options.model import SignalSpec

Setter = Callable[[OptionBuilder, "str | None"], None]


class InfoExit(Exception):
    """``--help``, ``--usage``, ``--version``: print ``stdout`` and exit 0."""

    def __init__(self, stdout: str) -> None:
        super().__init__(stdout)
        self.stdout = stdout
        self.exit_code = 0


#: What ``-V``/``--version`` prints (``print_slurm_version``), without the newline.
VERSION = f"slurm {SLURM_VERSION}"


# --- setter factories ---------------------------------------------------------

def set_str(field: str) -> Setter:
    def setter(b: OptionBuilder, arg: str | None) -> None:
        b.set(field, arg if arg is not None else "")
    return setter


FLAG_FIELDS: dict[Setter, str] = {}
"""The JobOptions field behind each flag setter, for ``reset_func``."""


def set_flag(field: str, value: object = True) -> Setter:
    def setter(b: OptionBuilder, arg: str | None) -> None:
        b.set(field, value)
    FLAG_FIELDS[setter] = field
    return setter


def set_int(field: str, name: str, positive: bool = True) -> Setter:
    def setter(b: OptionBuilder, arg: str | None) -> None:
        try:
            b.set(field, V.parse_int(name, arg or "", positive))
        except V.NumericError as e:
            b.fail(e.message, 1)
    return setter


def set_int_other(option: str, name: str, positive: bool = True) -> Setter:
    """An integer option minislurm accepts but does not model."""
    def setter(b: OptionBuilder, arg: str | None) -> None:
        try:
            V.parse_int(name, arg or "", positive)
        except V.NumericError as e:
            b.fail(e.message, 1)
        b.set_other(option, arg)
    return setter


def set_mem(field: str, name: str) -> Setter:
    def setter(b: OptionBuilder, arg: str | None) -> None:
        mb = V.str_to_mbytes(arg or "")
        if mb is None:
            b.fail(f"Invalid {name} specification")
        b.set(field, mb)
    return setter


def set_other(name: str) -> Setter:
    def setter(b: OptionBuilder, arg: str | None) -> None:
        b.set_other(name, arg)
    return setter


def set_checked(name: str, check: Callable[[str], object], field: str | None = None) -> Setter:
    """A value validated by ``check`` (which raises OptionError)."""
    def setter(b: OptionBuilder, arg: str | None) -> None:
        try:
            check(arg or "")
        except OptionError as e:
            b.fail(e.message)
        if field is None:
            b.set_other(name, arg)
        else:
            b.set(field, arg)
    return setter


# --- special setters ----------------------------------------------------------

def set_distribution(b: OptionBuilder, arg: str | None) -> None:
    """``-m``/``--distribution`` (``verify_dist_type``): a plane without ``=size`` takes
    its size from ``SLURM_DIST_PLANESIZE``; a plane with no valid size (or with a
    second level) is "Invalid plane size or size not specified" first (measured on
    22.05.8 for srun, sbatch and salloc, exit 255)."""
    text = arg or ""
    levels = text.partition(",")[0]
    plane = levels.split(":")[0].lower().startswith("plane")
    if levels.lower() == "plane":  # -m plane, or SLURM_DISTRIBUTION=plane of a plane job
        size = b.env.get("SLURM_DIST_PLANESIZE", "")
        if size.isdigit() and int(size) > 0:
            text = f"plane={int(size)}" + text[len(levels):]
    try:
        V.verify_dist_type(text)
    except OptionError as e:
        why = f"Invalid plane size or size not specified\n{b.prog}: error: " if plane else ""
        b.fail(why + e.message)
    b.set("distribution", text)


def set_time(field: str, flag: str, name: str) -> Setter:
    def setter(b: OptionBuilder, arg: str | None) -> None:
        try:
            minutes = timespec.parse_time_limit(arg or "")
        except OptionError:
            b.fail(f"Invalid {name} specification")
        b.set(field, minutes)
        b.set(flag, True)
    return setter


def set_when(field: str, name: str) -> Setter:
    def setter(b: OptionBuilder, arg: str | None) -> None:
        try:
            ts = timespec.parse_begin(arg or "", b.now)
        except OptionError as e:
            lines = [e.message] if e.message else []
            lines.append(f"{b.prog}: error: Invalid {name} specification")
            raise OptionError("\n".join(lines)) from None
        b.set(field, ts)
    return setter


def set_nodes(b: OptionBuilder, arg: str | None) -> None:
    try:
        lo, hi = V.verify_node_count(arg or "")
    except OptionError as e:
        b.fail(e.message)
    b.set("nodes_min", lo)
    b.set("nodes_max", hi if hi else None)


def set_signal(b: OptionBuilder, arg: str | None) -> None:
    try:
        sig, t, batch, resv = V.get_signal_opts(arg or "")
    except OptionError as e:
        b.fail(e.message)
    b.set("signal", SignalSpec(sig, t, batch, resv))


def set_exclusive(b: OptionBuilder, arg: str | None) -> None:
    value = "exclusive" if arg is None else arg.lower()
    if value not in ("exclusive", "oversubscribe", "user", "mcs"):
        b.fail("Invalid --exclusive specification")
    b.set("exclusive", value)


def set_path(field: str) -> Setter:
    """-o/-e/-i: ``none`` (any case) means ``/dev/null``."""
    def setter(b: OptionBuilder, arg: str | None) -> None:
        value = arg or ""
        b.set(field, "/dev/null" if value.lower() == "none" else value)
    return setter


def set_chdir(b: OptionBuilder, arg: str | None) -> None:
    """``arg_set_chdir``/``make_full_path``: a relative directory is appended to the
    current one as written (22.05.8: ``-D ..`` is ``<cwd>/..``, ``-D ''`` ``<cwd>/``)."""
    value = arg or ""
    b.set("chdir", value if value.startswith("/") else f"{b.cwd}/{value}")


def set_open_mode(b: OptionBuilder, arg: str | None) -> None:
    first = (arg or "")[:1].lower()
    if first not in ("a", "t"):
        b.fail("Invalid --open-mode specification")
    b.set("open_mode", "append" if first == "a" else "truncate")


def set_nice(b: OptionBuilder, arg: str | None) -> None:
    try:
        b.set("nice", V.parse_nice(arg))
    except OptionError as e:
        b.fail(e.message)


def set_priority(b: OptionBuilder, arg: str | None) -> None:
    text = arg or ""
    if text.upper() != "TOP":
        value, _ = V.strtol(text)
        if (value or 0) < 0:
            b.fail("Priority must be >= 0")
        if (value or 0) >= 0xFFFFFFFE:
            b.fail(f"Priority must be < {0xFFFFFFFE}")
    b.set("priority", text)


def set_mail_type(b: OptionBuilder, arg: str | None) -> None:
    try:
        b.set("mail_type", V.parse_mail_type(arg or ""))
    except OptionError as e:
        b.fail(e.message)


def set_kill_on_invalid_dep(b: OptionBuilder, arg: str | None) -> None:
    text = (arg or "").lower()
    if text not in ("yes", "no"):
        b.fail("Invalid --kill-on-invalid-dep specification")
    b.set("kill_on_invalid_dep", text == "yes")


def set_no_kill(b: OptionBuilder, arg: str | None) -> None:
    text = None if arg is None else arg.lower()
    if text in (None, "set"):
        b.set("no_kill", True)
    elif text in ("off", "no"):
        b.set("no_kill", False)
    else:
        b.fail("Invalid --no-kill specification")


def set_immediate(b: OptionBuilder, arg: str | None) -> None:
    if arg is None:
        b.set("immediate", 1)
    else:
        set_int("immediate", "immediate", positive=False)(b, arg)


def set_kill_on_bad_exit(b: OptionBuilder, arg: str | None) -> None:
    if arg is None:
        b.set("kill_on_bad_exit", 1)
    else:
        set_int("kill_on_bad_exit", "--kill-on-bad-exit", positive=False)(b, arg)


def set_verbose(b: OptionBuilder, arg: str | None) -> None:
    if arg is None:
        b.set("verbose", b.get("verbose", 0) + 1)
    else:  # SBATCH_DEBUG=3 / SLURM_DEBUG=3
        set_int("verbose", "--verbose", positive=False)(b, arg)


def set_gres_flags(b: OptionBuilder, arg: str | None) -> None:
    """One of ``disable-binding``/``enforce-binding`` (any case), not a list."""
    if (arg or "").lower() not in ("disable-binding", "enforce-binding"):
        b.fail("Invalid --gres-flags specification")
    b.set_other("gres-flags", arg)


def set_gpu_bind(b: OptionBuilder, arg: str | None) -> None:
    """``arg_set_gpu_bind``: ``tres_bind_verify_cmdline`` (exit 255)."""
    errors = V.gpu_bind_errors(arg or "")
    if errors is not None:
        lines = [*errors, f"Invalid --gpu-bind argument: gpu:{arg}"]
        b.fail(f"\n{b.prog}: error: ".join(lines))
    b.set_other("gpu-bind", arg)


def set_delay_boot(b: OptionBuilder, arg: str | None) -> None:
    """``arg_set_delay_boot``: a time limit (``time_str2secs``)."""
    try:
        timespec.time_str2secs(arg or "")
    except ValueError:
        b.fail("Invalid --delay-boot specification")
    b.set_other("delay-boot", arg)


def set_switches(b: OptionBuilder, arg: str | None) -> None:
    """``count[@max-time]``: the count is ``parse_int``; a bad time is ignored."""
    count, _, _ = (arg or "").partition("@")
    try:
        V.parse_int("--switches", count, True)
    except V.NumericError as e:
        b.fail(e.message, 1)
    b.set_other("switches", arg)


def set_propagate(b: OptionBuilder, arg: str | None) -> None:
    """``arg_set_propagate``: ``Bad rlimit name: as`` + ``--propagate=as is not
    valid.`` (exit 1)."""
    bad = None if arg is None else V.bad_rlimit(arg)
    if bad is not None:
        b.fail(f"Bad rlimit name: {bad}\n{b.prog}: error: --propagate={arg} is not valid.", 1)
    b.set_other("propagate", arg)


def set_wait_all_nodes(b: OptionBuilder, arg: str | None) -> None:
    try:
        value = V.parse_int("--wait-all-nodes", arg or "", False)
    except V.NumericError as e:
        b.fail(e.message, 1)
    if value > 1:
        b.fail("Invalid --wait-all-nodes specification")
    b.set_other("wait-all-nodes", arg)


def set_send_libs(b: OptionBuilder, arg: str | None) -> None:
    """srun ``--send-libs[=yes|no]`` (``y``/``n`` too, any case)."""
    if arg is not None and arg.lower() not in ("y", "yes", "n", "no"):
        b.fail("Invalid --send-libs specification")
    b.set_other("send-libs", arg)


X11_TARGETS = ("all", "batch", "first", "last")


def set_x11(b: OptionBuilder, arg: str | None) -> None:
    """``--x11[=all|batch|first|last]`` (checked once the command line is read:
    `check_x11`)."""
    b.set_other("x11", arg)


def check_x11(b: OptionBuilder, display: bool) -> None:
    """Without ``DISPLAY`` Slurm 22.05.8 refuses ``--x11`` (``No DISPLAY variable set,
    cannot setup x11 forwarding.``, exit 255); an unknown target word is ignored."""
    if "x11" not in b.other:
        return
    arg = b.other["x11"]
    if (arg is None or arg.lower() in X11_TARGETS) and not display:
        b.fail("No DISPLAY variable set, cannot setup x11 forwarding.")


def set_info(kind: str) -> Setter:
    """--help, --usage and --version (22.05.8 has no --autocomplete)."""
    def setter(b: OptionBuilder, arg: str | None) -> None:
        if kind == "version":
            raise InfoExit(VERSION + "\n")
        from minislurm.options.usage import help_text, usage_text
        raise InfoExit(help_text(b.prog) if kind == "help" else usage_text(b.prog))
    return setter
