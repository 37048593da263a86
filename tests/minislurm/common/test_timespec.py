"""Slurm's time formats (src/common/parse_time.c) as minislurm.common.timespec mirrors them."""

from __future__ import annotations

import calendar

import pytest

from minislurm.common.timespec import (
    INVALID_TIME,
    format_elapsed,
    format_time_limit,
    format_time_limit_hms,
    format_timestamp,
    parse_begin,
    parse_time_limit,
)
from minislurm.errors import OptionError

# 2026-01-05T08:00:00 UTC, a Monday: the simulator's default epoch.
NOW = 1767600000


def ts(text: str) -> int:
    """Epoch seconds of an ISO-like UTC time."""
    date, _, clock = text.partition("T")
    y, mo, d = (int(x) for x in date.split("-"))
    h, mi, s = (int(x) for x in (clock or "0:0:0").split(":"))
    return calendar.timegm((y, mo, d, h, mi, s))


@pytest.mark.parametrize(("text", "minutes"), [
    ("5", 5),                 # minutes
    ("90", 90),
    ("5:30", 6),              # minutes:seconds, seconds round up
    ("5:00", 5),
    ("1:00:00", 60),          # hours:minutes:seconds
    ("0:0:1", 1),
    ("2-0", 2880),            # days-hours
    ("1-2", 1560),
    ("1-2:30", 1590),         # days-hours:minutes
    ("1-00:00:01", 1441),     # days-hours:minutes:seconds
    ("00:05:00", 5),
])
def test_every_time_format(text: str, minutes: int) -> None:
    assert parse_time_limit(text) == minutes


@pytest.mark.parametrize("text", ["UNLIMITED", "unlimited", "INFINITE", "-1", "0", "0:0"])
def test_unlimited_and_zero(text: str) -> None:
    """``--time=0`` is UNLIMITED (capture b_sbatch_errors/56_time_zero)."""
    assert parse_time_limit(text) is None


def test_negative_is_accepted_and_stored_as_uint32() -> None:
    """``--time=-5`` is accepted (capture 09_bad_time_negative) and stored as slurmctld
    stores it, ``2**32 - 7199`` minutes: squeue ``INVALID``, scontrol
    ``2982611-04:17:00`` (measured on 22.05.8)."""
    assert parse_time_limit("-5") == 2**32 - 7199
    assert format_time_limit(parse_time_limit("-5")) == "INVALID"
    assert format_time_limit_hms(parse_time_limit("-5")) == "2982611-04:17:00"
    assert format_time_limit(INVALID_TIME) == "INVALID"


@pytest.mark.parametrize("text", ["abc", "", "1:2:3:4", "1--2", "1:-2", "5m", ":", "-", "1:"])
def test_bad_time_specifications(text: str) -> None:
    with pytest.raises(OptionError, match="Invalid --time specification"):
        parse_time_limit(text)


@pytest.mark.parametrize(("minutes", "squeue", "scontrol"), [
    (5, "5:00", "00:05:00"),
    (10, "10:00", "00:10:00"),
    (60, "1:00:00", "01:00:00"),
    (125, "2:05:00", "02:05:00"),
    (2880, "2-00:00:00", "2-00:00:00"),
    (None, "UNLIMITED", "UNLIMITED"),
])
def test_formatting_time_limits(minutes: int | None, squeue: str, scontrol: str) -> None:
    assert format_time_limit(minutes) == squeue
    assert format_time_limit_hms(minutes) == scontrol


def test_formatting_elapsed_and_timestamps() -> None:
    assert format_elapsed(85) == "00:01:25"  # the TIMEOUT job of capture c2
    assert format_elapsed(93784) == "1-02:03:04"
    assert format_elapsed(-1) == "INVALID"
    assert format_timestamp(NOW) == "2026-01-05T08:00:00"
    assert format_timestamp(0) == "Unknown"


@pytest.mark.parametrize(("text", "expected"), [
    ("now", "2026-01-05T08:00:00"),
    ("now+60", "2026-01-05T08:01:00"),
    ("now+1hour", "2026-01-05T09:00:00"),
    ("now+2days", "2026-01-07T08:00:00"),
    ("now+1week", "2026-01-12T08:00:00"),
    ("now-30minutes", "2026-01-05T07:30:00"),
    ("16:00", "2026-01-05T16:00:00"),          # later today
    ("07:30", "2026-01-06T07:30:00"),          # already passed: tomorrow
    ("10:15:30", "2026-01-05T10:15:30"),
    ("4:00 PM", "2026-01-05T16:00:00"),
    ("midnight", "2026-01-06T00:00:00"),
    ("noon", "2026-01-05T12:00:00"),
    ("teatime", "2026-01-05T16:00:00"),
    ("fika", "2026-01-05T15:00:00"),
    ("today", "2026-01-05T00:00:00"),
    ("tomorrow", "2026-01-06T00:00:00"),
    ("2026-02-01", "2026-02-01T00:00:00"),
    ("2026-02-01T12:34", "2026-02-01T12:34:00"),
    ("2026-02-01T12:34:56", "2026-02-01T12:34:56"),
    ("020126", "2026-02-01T00:00:00"),         # MMDDYY
    ("02/01/26", "2026-02-01T00:00:00"),
    ("0201", "2026-02-01T00:00:00"),           # MMDD: the next Feb 1st
    ("0101", "2027-01-01T00:00:00"),           # already passed this year
    ("uts1767700000", "2026-01-06T11:46:40"),
])
def test_begin_formats(text: str, expected: str) -> None:
    assert parse_begin(text, NOW) == ts(expected)


@pytest.mark.parametrize(("text", "pos"), [
    ("foo", 0),
    ("25:00", 0),
    ("now+5min", 4),
    ("2026-13-01", 5),
])
def test_begin_errors_name_the_position(text: str, pos: int) -> None:
    """parse_time prints ``Invalid time specification (pos=N): text``."""
    with pytest.raises(OptionError) as e:
        parse_begin(text, NOW)
    assert e.value.message == f"Invalid time specification (pos={pos}): {text}"


def test_begin_with_nothing_specified_prints_nothing() -> None:
    with pytest.raises(OptionError) as e:
        parse_begin("T", NOW)
    assert e.value.message == ""
