"""Slurm's time formats: time limits, elapsed times, ``--begin`` times.

Mirrors src/common/parse_time.c of Slurm 22.05:

* `parse_time_limit` is ``time_str2mins`` as used by ``-t/--time`` and
  ``--time-min`` (slurm_opt.c ``arg_set_time_limit``): ``M``, ``M:S``,
  ``H:M:S``, ``D-H``, ``D-H:M``, ``D-H:M:S``, ``UNLIMITED``/``INFINITE``/``-1``;
  seconds round *up* to the next minute, and ``0`` means UNLIMITED.
* `parse_begin` is ``parse_time`` as used by ``-b/--begin`` and ``--deadline``.
* the formatters are ``mins2time_str``/``secs2time_str`` (scontrol) and
  squeue's shorter ``M:SS`` form.

Units follow docs/ARCHITECTURE.md: a time limit is ``int | None`` minutes with
``None`` = UNLIMITED; timestamps are epoch seconds.  minislurm's clock is UTC,
so "today", "noon" and ``HH:MM`` are read in UTC (Slurm uses local time).
"""

from __future__ import annotations

import re
import time as _time
from datetime import UTC, datetime, timedelta

from minislurm.errors import OptionError

INVALID_TIME = -1
"""A bare "negative limit" marker without a magnitude (kept for records built by
hand); `parse_time_limit` no longer returns it: a negative ``--time`` is stored as
slurmctld stores it, wrapped around 2**32 (see `parse_time_limit`)."""

UINT32 = 2**32
"""Slurm keeps time limits in ``uint32_t`` minutes: a negative ``int`` wraps."""

INT32_MAX = 2**31 - 1
"""A stored limit above this was a negative ``int`` on the command line."""

_INFINITE = -1
_NO_VAL = -2
"""INFINITE (0xffffffff) and NO_VAL (0xfffffffe) as the ``int`` parse_time.c compares."""

_TIMESPEC_CHARS = re.compile(r"^[0-9:-]*$")


def _is_valid_timespec(s: str) -> bool:
    """``_is_valid_timespec``: digits, at most one ``-`` (before any ``:``),
    at most two ``:``, with enough digit groups for the separators."""
    if not _TIMESPEC_CHARS.match(s):
        return False
    digit = dash = colon = 0
    already_digit = False
    for ch in s:
        if ch.isdigit():
            if not already_digit:
                digit += 1
                already_digit = True
        elif ch == "-":
            already_digit = False
            dash += 1
            if colon:
                return False
        else:  # ':'
            already_digit = False
            colon += 1
    if not digit or dash > 1 or colon > 2:
        return False
    if dash:
        return not ((colon == 1 and digit < 3) or (colon == 2 and digit < 4))
    return not ((colon == 1 and digit < 2) or (colon == 2 and digit < 3))


def _int32(value: int) -> int:
    """``value`` as a C ``int`` (two's complement, 32 bits): what Slurm's ``int``
    arithmetic leaves when a product or a sum overflows."""
    return (value + 2**31) % UINT32 - 2**31


def _scanf_int(text: str) -> int:
    """glibc's ``sscanf("%d")``: ``strtol`` (saturating at the 64-bit ``long``
    range) stored into an ``int``, i.e. truncated to 32 bits without an error."""
    return _int32(max(-(2**63), min(2**63 - 1, int(text))))


def _scan_ints(s: str, seps: str) -> list[int]:
    """Emulate ``sscanf`` with ``%d`` conversions separated by literal ``seps``
    characters: returns the integers converted before the first mismatch."""
    values: list[int] = []
    pos = 0
    for index in range(len(seps) + 1):
        m = re.match(r"[+-]?\d+", s[pos:])
        if not m:
            break
        values.append(_scanf_int(m.group()))
        pos += m.end()
        if index == len(seps) or pos >= len(s) or s[pos] != seps[index]:
            break
        pos += 1
    return values


def time_str2secs(s: str) -> int | None:
    """``time_str2secs``: seconds, ``None`` for UNLIMITED; raises `ValueError`
    where Slurm returns NO_VAL.

    Slurm computes in ``int``: each number is read by ``sscanf("%d")`` (truncated
    to 32 bits) and ``d*86400 + h*3600 + m*60 + s`` wraps, so a huge value comes
    out small or negative (``--time=99999-0`` is 578-11:04:00, measured), and a
    sum that lands on -1 (INFINITE) or -2 (NO_VAL) means UNLIMITED or invalid."""
    if not s:
        raise ValueError(s)
    if s.lower() in ("-1", "infinite", "unlimited"):
        return None
    if not _is_valid_timespec(s):
        raise ValueError(s)
    d = h = m = sec = 0
    if "-" in s:
        vals = [*_scan_ints(s, "-::"), 0, 0, 0, 0]
        d, h, m, sec = vals[0] * 86400, vals[1] * 3600, vals[2] * 60, vals[3]
    else:
        vals = _scan_ints(s, "::")
        if len(vals) == 3:
            h, m, sec = vals[0] * 3600, vals[1] * 60, vals[2]
        else:
            vals += [0, 0]
            m, sec = vals[0] * 60, vals[1]
    total = _int32(_int32(d) + _int32(h) + _int32(m) + sec)
    if total == _INFINITE:
        return None
    if total == _NO_VAL:
        raise ValueError(s)
    return total


def parse_time_limit(s: str) -> int | None:
    """Minutes for a ``--time`` value, as slurmctld stores them; ``None`` = UNLIMITED.

    ``time_str2mins`` returns an ``int`` that ``arg_set_time_limit`` hands to the
    ``uint32_t`` ``job_desc_msg_t.time_limit`` unchecked, so a negative value wraps:
    ``--time=-5`` (``-5`` days: ``(-432000 + 59) / 60 = -7199``) is stored as
    ``2**32 - 7199 = 4294960097`` minutes.  Measured on 22.05.8: ``scontrol show job``
    prints ``TimeLimit=2982611-04:17:00``, sacct ``TimelimitRaw=4294960097``, squeue
    ``%l`` ``INVALID`` (more than a year); the job pends ``PartitionTimeLimit`` under
    a partition ``MaxTime`` and runs (never timed out) in a partition without one.
    ``0`` (and ``-0``) is UNLIMITED, as is ``-1``.  Huge values wrap in ``int`` as
    in `time_str2secs` (``--time=71582789`` is 00:01:00, ``--time=4294967296`` UNLIMITED).

    Raises `OptionError` ``Invalid --time specification`` (without the
    program prefix, which the front end adds).
    """
    try:
        secs = time_str2secs(s)
    except ValueError:
        raise OptionError("Invalid --time specification") from None
    if secs is None:
        return None
    # C integer division (of an int that may wrap) truncates towards zero.
    total = _int32(secs + 59)
    minutes = -(-total // 60) if total < 0 else total // 60
    if minutes == _NO_VAL:
        raise OptionError("Invalid --time specification")
    if minutes in (0, _INFINITE):
        return None
    return minutes % UINT32


def is_negative_limit(minutes: int | None) -> bool:
    """Whether a stored limit was a negative number of minutes (``--time=-5``): the
    `INVALID_TIME` marker, a negative value, or a ``uint32`` above ``INT32_MAX``."""
    return minutes is not None and (minutes < 0 or minutes > INT32_MAX)


def time_limit_secs(minutes: int) -> int:
    """``job_ptr->time_limit * 60`` as slurmctld and squeue compute it: a ``uint32_t``
    product, so it wraps for limits beyond 2**32 s (``--time=-5``: 4294535356 s, which
    puts a running job's ``EndTime`` 136 years ahead, e.g. 2026-12-03T19:50:19 ->
    2163-01-05T02:19:35, measured).  ``job_end_time_reset`` (job_mgr.c)."""
    return (minutes % UINT32) * 60 % UINT32


def format_time_limit(minutes: int | None) -> str:
    """squeue's ``%l`` (``_print_secs(time_limit * 60)``): ``5:00``, ``1:00:00``,
    ``2-00:00:00``, ``UNLIMITED``; ``INVALID`` for a negative limit and for anything
    above a year (``_print_secs``' ``YEAR_SECONDS``)."""
    if minutes is None:
        return "UNLIMITED"
    if minutes < 0:
        return "INVALID"
    secs = time_limit_secs(minutes)
    if secs > 365 * 86400:
        return "INVALID"
    minutes = secs // 60
    days, rem = divmod(minutes, 1440)
    hours, mins = divmod(rem, 60)
    if days:
        return f"{days}-{hours:02d}:{mins:02d}:00"
    if hours:
        return f"{hours}:{mins:02d}:00"
    return f"{mins}:00"


def format_time_limit_hms(minutes: int | None) -> str:
    """``mins2time_str`` as scontrol prints ``TimeLimit=`` (and sacct ``Timelimit``):
    ``00:05:00``, ``2-00:00:00``, ``UNLIMITED``.  The ``uint32_t`` minutes print as
    they are, so ``--time=-5`` shows ``2982611-04:17:00``; a negative ``int`` given
    here wraps the same way.  Only the bare `INVALID_TIME` marker prints ``INVALID``."""
    if minutes is None:
        return "UNLIMITED"
    if minutes == INVALID_TIME:
        return "INVALID"
    return format_elapsed((minutes % UINT32) * 60)


def format_elapsed(seconds: int) -> str:
    """``secs2time_str`` (scontrol ``RunTime=``, sacct ``Elapsed``):
    ``00:01:25``, ``1-02:03:04``; ``INVALID`` when negative."""
    if seconds < 0:
        return "INVALID"
    days, rem = divmod(seconds, 86400)
    hours, rem = divmod(rem, 3600)
    mins, secs = divmod(rem, 60)
    if days:
        return f"{days}-{hours:02d}:{mins:02d}:{secs:02d}"
    return f"{hours:02d}:{mins:02d}:{secs:02d}"


def format_timestamp(ts: int | None) -> str:
    """``slurm_make_time_str`` (``%FT%T``): ``2026-01-05T08:00:00``; ``Unknown``
    for 0/None (as scontrol prints an unset time)."""
    if not ts:
        return "Unknown"
    return _time.strftime("%Y-%m-%dT%H:%M:%S", _time.gmtime(ts))


# --- parse_time (--begin) ----------------------------------------------------

_UNITS = (
    ("seconds", 1), ("second", 1), ("minutes", 60), ("minute", 60),
    ("hours", 3600), ("hour", 3600), ("days", 86400), ("day", 86400),
    ("weeks", 604800), ("week", 604800),
)


class _Prob(Exception):
    """A parse failure at character ``pos`` (parse_time's ``goto prob``)."""

    def __init__(self, pos: int) -> None:
        super().__init__(pos)
        self.pos = pos


def _ch(s: str, i: int) -> str:
    """``time_str[i]``: the string, its terminating NUL, then whatever follows it in
    memory (the next command-line word): never NUL again, so a scan that steps over
    the end fails there. parse_time's ``now`` adds an absolute index to ``pos``
    (``pos += i``), which does that: 22.05.8 answers ``--begin=' now'`` with
    ``Invalid time specification (pos=5)`` and ``'tomorrow now'`` with ``pos=21``."""
    if 0 <= i < len(s):
        return s[i]
    return "\0" if i == len(s) or i < 0 else "\x01"


def _wrap64(value: int) -> int:
    return (value + 2**63) % 2**64 - 2**63


def _days_from_civil(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (any year; ``d`` may
    run past the month, as ``mktime`` lets it)."""
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468 + d - 1


def _gmtime(t: int) -> tuple[int, int, int, int, int, int]:
    """``gmtime``: (year, month 1-12, day, hour, minute, second) for any epoch time."""
    days, secs = divmod(t, 86400)
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    y = yoe + era * 400 + (m <= 2)
    return y, m, d, secs // 3600, secs % 3600 // 60, secs % 60


def _exactly_two_digits(s: str, o: int, maximum: int) -> tuple[int, int]:
    """Exactly two digits at ``o`` (parse_time.c's minutes/seconds), at most ``maximum``;
    returns (value, next offset) or raises `_Prob` at the offending position."""
    for k in (o, o + 1):
        if not _isdigit(_ch(s, k)):
            raise _Prob(k)
    value = int(s[o]) * 10 + int(s[o + 1])
    if value > maximum:
        raise _Prob(o)
    return value, o + 2


def _isdigit(c: str) -> bool:
    return "0" <= c <= "9"


def _get_delta(s: str, pos: int) -> tuple[int, int]:
    """``_get_delta``: count and unit after ``now+``; returns (new pos, secs)."""
    cnt = 0
    digit = 0
    offset = pos + 1
    while _ch(s, offset) not in ("\0", "\n"):
        c = s[offset]
        if c.isspace():
            offset += 1
            continue
        unit = next(((n, mult) for n, mult in _UNITS
                     if s[offset:offset + len(n)].lower() == n), None)
        if unit is not None:
            offset += len(unit[0])
            cnt = _wrap64(cnt * unit[1])
            break
        if _isdigit(c):
            cnt = _wrap64(cnt * 10 + int(c))
            digit += 1
            offset += 1
            continue
        raise _Prob(offset - 1)
    if not digit:
        raise _Prob(pos)
    return offset - 1, cnt


def _get_time(s: str, pos: int) -> tuple[int, int, int, int]:
    """``_get_time``: ``HH:MM[:SS] [AM|PM]``; returns (pos, hour, min, sec)."""
    o = pos
    if not _isdigit(_ch(s, o)):
        raise _Prob(o)
    hr = int(s[o])
    o += 1
    if _ch(s, o) != ":":
        if not _isdigit(_ch(s, o)):
            raise _Prob(o)
        hr = hr * 10 + int(s[o])
        o += 1
    if hr > 23:
        raise _Prob(o - 2)
    if _ch(s, o) != ":":
        raise _Prob(o)
    mn, o = _exactly_two_digits(s, o + 1, 59)
    sec = 0
    if _ch(s, o) == ":":
        sec, o = _exactly_two_digits(s, o + 1, 59)
    while _ch(s, o).isspace() and _ch(s, o) != "\0":
        o += 1
    if s[o:o + 2].lower() == "pm":
        hr += 12
        if hr > 23:
            if hr != 24:
                raise _Prob(o)
            hr = 12
        o += 2
    elif s[o:o + 2].lower() == "am":
        if hr > 11:
            if hr != 12:
                raise _Prob(o)
            hr = 0
        o += 2
    return o - 1, hr, mn, sec


def _two_digits(s: str, o: int) -> tuple[int, int]:
    """One digit, optionally followed by a second: (value, new offset)."""
    v = ord(_ch(s, o)) - ord("0")
    o += 1
    if _isdigit(_ch(s, o)):
        v = v * 10 + int(s[o])
        o += 1
    return v, o


def _get_date(s: str, pos: int) -> tuple[int, int, int, int | None]:
    """``_get_date``: ``YYYY-MM-DD`` or ``MMDD[YY]``, ``MM/DD[/YY]``,
    ``MM.DD[.YY]``; returns (pos, month 0-11, mday, year-1900 or None)."""
    o = pos
    if len(s) >= o + 7 and _ch(s, o + 4) == "-" and _ch(s, o + 7) == "-":
        yr = 0
        for _ in range(4):
            if not _isdigit(_ch(s, o)):
                raise _Prob(o)
            yr = yr * 10 + int(s[o])
            o += 1
        o += 1
        mon, o = _two_digits(s, o)
        if mon < 1 or mon > 12:
            raise _Prob(o - 2)
        o += 1
        if not _isdigit(_ch(s, o)):
            raise _Prob(o)
        day, o = _two_digits(s, o)
        if day < 1 or day > 31:
            raise _Prob(o - 2)
        return o - 1, mon - 1, day, yr - 1900
    mon, o = _two_digits(s, o)
    if mon < 1 or mon > 12:
        raise _Prob(o - 2)
    if _ch(s, o) in "./" and _ch(s, o) != "\0":
        o += 1
    if not _isdigit(_ch(s, o)):
        raise _Prob(o)
    day, o = _two_digits(s, o)
    if day < 1 or day > 31:
        raise _Prob(o - 2)
    if _ch(s, o) in "./" and _ch(s, o) != "\0":
        o += 1
    year: int | None = None
    if _isdigit(_ch(s, o)):
        yr = int(s[o])
        o += 1
        if not _isdigit(_ch(s, o)):
            raise _Prob(o)
        yr = yr * 10 + int(s[o])
        o += 1
        if yr:
            year = yr + 100
    return o - 1, mon - 1, day, year


def parse_begin(s: str, now: int) -> int:
    """``parse_time(s, past=0)`` relative to ``now``: the epoch time of ``s``.

    Formats: ``today``, ``tomorrow``, ``midnight``, ``noon``, ``fika`` (15:00),
    ``teatime`` (16:00), ``HH:MM[:SS] [AM|PM]``, ``MMDD[YY]``,
    ``MM/DD[/YY]``, ``MM.DD[.YY]``, ``YYYY-MM-DD[THH:MM[:SS]]``,
    ``now[{+|-}count[seconds|minutes|hours|days|weeks]]``, ``uts<epoch>``.
    A time without a date is the next such time (today or tomorrow).

    Raises `OptionError` when Slurm's parse_time returns 0; its message is the
    line parse_time prints (``Invalid time specification (pos=N): s``), or
    empty when nothing was specified.
    """
    if s[:3].lower() == "uts":
        m = re.fullmatch(r"[+-]?\d+", s[3:].lstrip())
        if m is None or int(m.group()) < 1000000:
            raise OptionError(f"Invalid time specification (pos=0): {s}")
        return int(m.group())
    now_tm = datetime.fromtimestamp(now, UTC)
    hour = minute = -1
    second = 0
    month = mday = -1
    year: int | None = None
    pos = 0
    try:
        while _ch(s, pos) not in ("\0", "\n"):
            c = _ch(s, pos)
            low = s[pos:].lower()
            if c in " \t-T":
                pos += 1
                continue
            if low.startswith("today"):
                month, mday, year = now_tm.month - 1, now_tm.day, now_tm.year - 1900
                pos += 5
                continue
            if low.startswith("tomorrow"):
                t = now_tm + timedelta(days=1)
                month, mday, year = t.month - 1, t.day, t.year - 1900
                pos += 8
                continue
            named = {"midnight": 0, "noon": 12, "fika": 15, "teatime": 16}
            word = next((w for w in named if low.startswith(w)), None)
            if word is not None:
                hour, minute, second = named[word], 0, 0
                pos += len(word)
                continue
            if low.startswith("now"):
                delta = 0
                i = pos + 3
                while True:
                    ci = _ch(s, i)
                    if ci in "+-" and ci != "\0":
                        pos += i
                        pos, delta = _get_delta(s, pos)
                        if ci == "-":
                            delta = -delta
                        break
                    if ci in " \t" and ci != "\0":
                        i += 1
                        continue
                    if ci in ("\0", "\n"):
                        pos += i - 1
                        break
                    pos += i
                    raise _Prob(pos)
                # time_t arithmetic; a year beyond tm_year's int leaves localtime_r
                # failing and the fields at "now" (22.05.8: now+1e21seconds is now)
                y, mo, d, hour, minute, second = _gmtime(_wrap64(now + delta))
                if not -(2**31) <= y - 1900 < 2**31:
                    y, mo, d, hour, minute, second = _gmtime(now)
                month, mday, year = mo - 1, d, y - 1900
                pos += 1
                continue
            if not _isdigit(c):
                raise _Prob(pos)
            if _ch(s, pos + 1) == ":" or _ch(s, pos + 2) == ":":
                pos, hour, minute, second = _get_time(s, pos)
            else:
                pos, month, mday, year = _get_date(s, pos)
            pos += 1
    except _Prob as prob:
        raise OptionError(f"Invalid time specification (pos={prob.pos}): {s}") from None
    return _resolve(now_tm, hour, minute, second, month, mday, year, s)


def _resolve(now_tm: datetime, hour: int, minute: int, second: int, month: int,
             mday: int, year: int | None, s: str) -> int:
    """The end of parse_time: default the missing date or time, then mktime."""
    if hour == -1 and month == -1:
        raise OptionError("")
    if hour == -1:
        hour, minute = 0, 0
    elif month == -1:
        if hour > now_tm.hour or (hour == now_tm.hour and minute > now_tm.minute):
            t = now_tm
        else:
            t = now_tm + timedelta(days=1)
        month, mday, year = t.month - 1, t.day, t.year - 1900
    if year is None:
        later = (month, mday, hour, minute) > (now_tm.month - 1, now_tm.day,
                                                 now_tm.hour, now_tm.minute)
        year = now_tm.year - 1900 + (0 if later else 1)
    # mktime normalises out-of-range days (Feb 31 -> Mar 3).
    days = _days_from_civil(year + 1900, month + 1, mday)
    return days * 86400 + hour * 3600 + minute * 60 + second
