"""The ``arg_set_*`` functions of slurm_opt.c: one setter per option kind.

A setter takes the `OptionBuilder` and the option's argument (``None`` for
flags), validates it exactly like Slurm 22.05 and stores the value, or raises
`OptionError` with Slurm's text: ``prog: error: ...`` and exit 255, or exit 1
where Slurm's helper calls ``exit(1)`` (``parse_int``).
"""

from __future__ import annotations

import os
from collections.abc import Callable

from minislurm import timespec
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


VERSION = "slurm 22.05.8"


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
    if value not in ("exclusive", "oversubscribe", "user", "mcs", "topo"):
        b.fail("Invalid --exclusive specification")
    b.set("exclusive", value)


def set_path(field: str) -> Setter:
    """-o/-e/-i: ``none`` (any case) means ``/dev/null``."""
    def setter(b: OptionBuilder, arg: str | None) -> None:
        value = arg or ""
        b.set(field, "/dev/null" if value.lower() == "none" else value)
    return setter


def set_chdir(b: OptionBuilder, arg: str | None) -> None:
    value = arg or ""
    b.set("chdir", value if value.startswith("/") else os.path.normpath(os.path.join(b.cwd, value)))


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
    for tok in (arg or "").split(","):
        if tok.lower() not in ("disable-binding", "enforce-binding"):
            b.fail(f"Invalid --gres-flags specification: {tok}")
    b.set_other("gres-flags", arg)


def set_wait_all_nodes(b: OptionBuilder, arg: str | None) -> None:
    try:
        value = V.parse_int("--wait-all-nodes", arg or "", False)
    except V.NumericError as e:
        b.fail(e.message, 1)
    if value > 1:
        b.fail("Invalid --wait-all-nodes specification")
    b.set_other("wait-all-nodes", arg)


def set_info(kind: str) -> Setter:
    """--help, --usage, --version and the hidden --autocomplete (bash
    completion: the long options starting with the argument, one a line)."""
    def setter(b: OptionBuilder, arg: str | None) -> None:
        if kind == "version":
            raise InfoExit(VERSION + "\n")
        if kind == "autocomplete":
            from minislurm.options.table import options_for
            query = arg or ""
            hits = [f"--{o.name}" + ("=" if o.has_arg.value else "")
                    for o in options_for(b.prog) if f"--{o.name}".startswith(query)]
            raise InfoExit("".join(f"{h}\n" for h in hits) + ("\n" if hits else ""))
        from minislurm.options.usage import help_text, usage_text
        raise InfoExit(help_text(b.prog) if kind == "help" else usage_text(b.prog))
    return setter
