"""Value parsers shared by sbatch/srun/salloc options.

Each mirrors a helper of Slurm 22.05 (src/common/proc_args.c unless noted)
and raises `OptionError` with Slurm's text *without* the ``prog: error:``
prefix; `minislurm.options.table` adds the prefix and the exit code.
"""

from __future__ import annotations

import re

from minislurm.errors import OptionError


class NumericError(OptionError):
    """``parse_int`` failures: Slurm calls ``exit(1)`` there, not ``exit(-1)``
    (capture b_sbatch_errors/42_ntasks_zero: rc 1)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, 1)


def strtol(s: str) -> tuple[int | None, str]:
    """C ``strtol(s, &end, 10)``: (value or None when no digits, rest)."""
    m = re.match(r"[ \t\n\v\f\r]*([+-]?[0-9]+)", s)
    if not m:
        return None, s
    return int(m.group(1)), s[m.end():]


LONG_MAX = 2**63 - 1


def c_long(value: int) -> int:
    """``strtol``'s result: saturated at the 64-bit ``long`` range (ERANGE)."""
    return max(-LONG_MAX - 1, min(LONG_MAX, value))


def c_int(value: int) -> int:
    """A ``long`` stored into an ``int``: the low 32 bits, signed."""
    return (value + 2**31) % 2**32 - 2**31


def parse_int(name: str, val: str, positive: bool) -> int:
    """``parse_int``: a decimal integer, > 0 if ``positive`` else >= 0.

    ``Invalid numeric value "0" for --ntasks.`` / ``Numeric argument (N) to big
    for NAME.`` (both exit 1; Slurm's spelling).  Only ``LONG_MAX`` (or an
    overflowing ``strtol``) is "to big": the ``long`` is returned as an ``int``,
    so ``-n 99999999999`` is 1215752191 tasks and ``-n 2147483648`` is -2147483648
    (which sbatch's verification then refuses), as measured on 22.05.8.
    """
    value, rest = strtol(val)
    result = 0 if value is None else c_long(value)
    if (val if value is None else rest) != "":
        raise NumericError(f'Invalid numeric value "{val}" for {name}.')
    if result < 0 or (positive and result <= 0):
        raise NumericError(f'Invalid numeric value "{val}" for {name}.')
    if result == LONG_MAX:
        raise NumericError(f"Numeric argument ({result}) to big for {name}.")
    return c_int(result)


def str_to_mbytes(arg: str) -> int | None:
    """``str_to_mbytes``: ``N[K|M|G|T][B]`` in MB (default unit M, K rounds up);
    ``None`` where Slurm returns NO_VAL64 (invalid).

    ``strtoll`` must read digits and must not overflow (``LLONG_MAX`` itself is
    fine); the unit may be followed by ``B``/``b`` and nothing else (``_end_on_byte``:
    ``1GB`` is 1024, ``1Kx``, ``2M2``, ``G`` and the empty string are invalid; measured
    on 22.05.8). The ``long long`` product wraps like C's.
    """
    value, rest = strtol(arg)
    if value is None or not -(2**63) <= value < 2**63 or value < 0:
        return None
    units = {"k": 0, "m": 1, "g": 1024, "t": 1024 * 1024}
    if rest:
        factor = units.get(rest[0].lower())
        if factor is None or rest[1:] not in ("", "B", "b"):
            return None
        # K: (result + 1023) / 1024 in long long, truncating towards zero
        value = _c_div(_int64(value + 1023), 1024) if factor == 0 else _int64(value * factor)
    return value % 2**64


def _c_div(a: int, b: int) -> int:
    """C integer division (truncates towards zero)."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _int64(value: int) -> int:
    """``value`` as a C ``long long`` (64-bit two's complement wrap)."""
    return (value + 2**63) % 2**64 - 2**63


def _str_to_nodes(s: str) -> tuple[int, str]:
    """``_str_to_nodes``: a count with an optional ``k`` then ``m`` multiplier
    (``1km`` is 2**30), as an ``int``; -1 and the whole text when there are no digits."""
    value, rest = strtol(s)
    if value is None:
        return -1, s
    value = c_long(value)
    if rest[:1] in ("k", "K"):
        value, rest = value * 1024, rest[1:]
    if rest[:1] in ("m", "M"):
        value, rest = value * 1024 * 1024, rest[1:]
    return c_int(value), rest


def verify_node_count(arg: str) -> tuple[int, int]:
    """``verify_node_count``: ``N`` or ``min-max`` -> (min, max).

    The counts are ``int``: ``-N 99999999999`` is 1215752191 nodes, ``-N
    2147483648`` (negative) is not a valid node count.  A missing minimum is 1
    (``-N -3``), a missing maximum -1 (``-N 2-``: "Maximum node count -1 is less
    than minimum node count 2"); all measured on 22.05.8.  ``-N0`` passes the
    client (Slurm 22.05 allows 0 nodes for steps/hetjobs) and is rejected by
    slurmctld (``Node count specification invalid``).
    """
    if "-" in arg:
        min_str, _, max_str = arg.partition("-")
        lo, left = _str_to_nodes(min_str)
        if left.strip():
            raise OptionError(f'"{min_str}" is not a valid node count')
        if lo < 0:
            lo = 1
        hi, left = _str_to_nodes(max_str)
        if left.strip():
            raise OptionError(f'"{max_str}" is not a valid node count')
    else:
        lo, left = _str_to_nodes(arg)
        if left.strip() or lo < 0:
            raise OptionError(f'"{arg}" is not a valid node count')
        hi = lo
    if hi != 0 and hi < lo:
        raise OptionError(f"Maximum node count {hi} is less than minimum node count {lo}")
    return lo, hi


SIGNALS: dict[str, int] = {
    "HUP": 1, "INT": 2, "QUIT": 3, "ABRT": 6, "KILL": 9, "ALRM": 14, "TERM": 15,
    "USR1": 10, "USR2": 12, "URG": 23, "CONT": 18, "STOP": 19, "TSTP": 20,
    "TTIN": 21, "TTOU": 22, "XCPU": 24,
}
"""``sig_name_num`` (src/common/proc_args.c), Linux numbering."""


def sig_name2num(name: str) -> int:
    """``sig_name2num``: ``10``, ``USR1``, ``SIGUSR1`` (any case) -> 10; 0 if unknown."""
    value, rest = strtol(name)
    if value is not None:
        return value if not rest.strip() else 0
    s = name.lstrip()
    if s[:3].upper() == "SIG":
        s = s[3:]
    for sig, num in SIGNALS.items():
        if s[: len(sig)].upper() == sig and not s[len(sig):].strip():
            return num
    return 0


def get_signal_opts(arg: str) -> tuple[int, int, bool, bool]:
    """``get_signal_opts``: ``[{R|B}:]sig[@time]`` -> (signal, time, batch, resv).

    Raises `OptionError` ``Invalid --signal specification``.
    """
    batch = resv = False
    low = arg[:3].upper()
    if low in ("RB:", "BR:"):
        batch = resv = True
        arg = arg[3:]
    elif low[:2] == "B:":
        batch = True
        arg = arg[2:]
    elif low[:2] == "R:":
        resv = True
        arg = arg[2:]
    sig_text, at, time_text = arg.partition("@")
    num = sig_name2num(sig_text) & 0xFFFF
    if num < 1:
        raise OptionError("Invalid --signal specification")
    if not at:
        return num, 60, batch, resv
    value, rest = strtol(time_text)
    t = 0 if value is None else value
    if t < 0 or t > 0xFFFF or (rest != "" and value is not None):
        raise OptionError("Invalid --signal specification")
    if value is None and time_text != "":
        raise OptionError("Invalid --signal specification")
    return num, t, batch, resv


_DIST_L1 = ("block", "cyclic", "arbitrary", "*")
_DIST_L23 = ("block", "cyclic", "fcyclic", "*")


def verify_dist_type(arg: str) -> str:
    """``verify_dist_type``: ``block|cyclic|arbitrary|plane=<size>|*`` then
    ``:block|cyclic|fcyclic`` (socket, core) and ``,Pack|NoPack``.

    Returns ``arg``; raises `OptionError` ``Invalid --distribution
    specification``.
    """
    err = OptionError("Invalid --distribution specification")
    text, comma, flag = arg.partition(",")
    if comma and flag.lower() not in ("pack", "nopack"):
        raise err
    levels = text.split(":")
    if not text or len(levels) > 3:
        raise err
    first = levels[0].lower()
    if first.startswith("plane"):
        if len(levels) > 1 or not re.fullmatch(r"plane=\d+", first) or int(first[6:]) < 1:
            raise err
        return arg
    if first not in _DIST_L1:
        raise err
    if any(lvl.lower() not in _DIST_L23 for lvl in levels[1:]):
        raise err
    return arg


MAIL_TYPES = (
    "NONE", "BEGIN", "END", "FAIL", "REQUEUE", "ALL", "STAGE_OUT", "TIME_LIMIT",
    "TIME_LIMIT_90", "TIME_LIMIT_80", "TIME_LIMIT_50", "ARRAY_TASKS", "INVALID_DEPEND",
)
"""``parse_mail_type`` tokens."""


def parse_mail_type(arg: str) -> str:
    """``parse_mail_type``: a comma list of `MAIL_TYPES` (any case)."""
    tokens = arg.split(",")
    if not arg or any(t.upper() not in MAIL_TYPES for t in tokens):
        raise OptionError("Invalid --mail-type specification")
    return ",".join(t.upper() for t in tokens)


NICE_LIMIT = 0x80000000 - 3
"""``NICE_OFFSET - 3``: the largest ``--nice`` adjustment."""


def parse_nice(arg: str | None) -> int:
    """``arg_set_nice``: ``strtoll`` of the value (100 without one)."""
    if arg is None:
        value = 100
    else:
        parsed, _ = strtol(arg)
        value = c_long(parsed or 0)
    # llabs(LLONG_MIN) overflows to itself: -9223372036854775809 passes as nice 0
    if abs(value) > NICE_LIMIT and value != -LONG_MAX - 1:
        raise OptionError(f"Invalid --nice value, out of range (+/- {NICE_LIMIT})")
    return c_int(value)


HINTS = ("compute_bound", "memory_bound", "multithread", "nomultithread", "help")
"""``verify_hint`` keywords (any case)."""


def verify_hint(arg: str) -> None:
    """``verify_hint``: comma-separated `HINTS`; the first unknown one is named
    (``unrecognized --hint argument "abc", see --hint=help``, exit 1)."""
    for tok in arg.split(",") if arg else [""]:
        if tok.lower() not in HINTS:
            raise OptionError(f'unrecognized --hint argument "{tok}", see --hint=help', 1)


PROFILES = ("none", "all", "energy", "task", "lustre", "network")
"""``acct_gather_profile_from_string`` keywords (any case)."""


def verify_profile(arg: str) -> None:
    """``acct_gather_profile_from_string``: at least one known keyword in the
    comma list (unknown ones are ignored: ``task,abc`` is fine, ``abc`` is not)."""
    if not any(tok.lower() in PROFILES for tok in arg.split(",")):
        raise OptionError(f"invalid --profile={arg} option")


RLIMITS = ("CPU", "FSIZE", "DATA", "STACK", "CORE", "RSS", "NPROC", "NOFILE", "MEMLOCK", "AS")
"""``get_slurm_rlimits_info`` names (exact case, ``RLIMIT_`` prefix optional)."""


def bad_rlimit(arg: str) -> str | None:
    """``parse_rlimits``: ``ALL``, ``NONE`` or a comma list of `RLIMITS`; the
    first name that is none of them (without its ``RLIMIT_``), else None."""
    if arg in ("ALL", "NONE"):
        return None
    for tok in (t for t in arg.split(",") if t):
        name = tok[7:] if tok.startswith("RLIMIT_") else tok
        if name not in RLIMITS:
            return name
    return None


def verify_get_user_env(arg: str) -> None:
    """``arg_set_get_user_env``: ``[timeout][S|L...]`` (only the first character
    after the number is looked at)."""
    _, rest = strtol(arg)
    if rest[:1] not in ("", "s", "S", "l", "L"):
        raise OptionError("Invalid --get-user-env specification")


def _gpu_bind_num_list(text: str, hex_digits: bool) -> list[str]:
    """``_valid_num_list``: comma-separated ids (``map_gpu``) or masks (``mask_gpu``,
    an optional ``0x`` each), ``*`` allowed; the error line for the first bad character."""
    valid = "0123456789abcdefABCDEF*" if hex_digits else "0123456789*"
    for tok in (t for t in text.split(",") if t):
        if hex_digits and tok.startswith("0x"):
            tok = tok[2:]
        bad = next((c for c in tok if c not in valid), None)
        if bad is not None:
            return [f"Failed to validate {tok}, offending character is {bad}"]
    return []


def gpu_bind_errors(arg: str) -> list[str] | None:
    """``tres_bind_verify_cmdline("gpu:" + arg)``/``_valid_gpu_bind`` as 22.05.8
    applies them: None when valid, else the error lines before ``Invalid --gpu-bind
    argument``. Only the first letter of ``closest`` and ``none`` is looked at
    (``closest+gpu:x`` passes), ``verbose,`` may come first, ``per_task:``/``single:``
    refuse a negative count only."""
    if arg[:8].lower() == "verbose,":
        arg = arg[8:]
    low = arg.lower()
    if low[:1] in ("c", "n"):
        return None
    if low.startswith("map_gpu:") or low.startswith("mask_gpu:"):
        hex_digits = low.startswith("mask_gpu:")
        errors = _gpu_bind_num_list(arg[9 if hex_digits else 8:], hex_digits)
        return errors or None
    for prefix in ("per_task:", "single:"):
        if low.startswith(prefix):
            value, _ = strtol(arg[len(prefix):])
            return [] if value is not None and value < 0 else None
    return []
