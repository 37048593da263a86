"""Units a numeric answer may carry, converted to the item's unit.

Memory follows Slurm's ``--mem`` suffixes (K, M, G, T are powers of 1024, the
default unit is megabytes); ``KB/MB/GB/TB`` and ``KiB/MiB/GiB/TiB`` are read the
same way because Slurm itself means binary units.  Time accepts seconds, minutes,
hours and days.  Any other unit (``GPUs``, ``tasks``, ``GPU-hours``) is a
counting word: the learner may write it or leave it out, in any case, with a
hyphen or a space (``9216 gpu hours`` = ``9216 GPU-hours``), singular or plural.

Numbers: ``_`` is ignored and a comma is read only as a thousands separator in
groups of three (``9,216``, ``1,048,576``); any other comma (``0,5``, ``12,34``)
is ambiguous (a decimal comma?) and the answer is refused with
:data:`AMBIGUOUS_COMMA` rather than guessed.
"""

from __future__ import annotations

import re

MEMORY_MB = {
    "k": 1 / 1024, "kb": 1 / 1024, "kib": 1 / 1024,
    "m": 1.0, "mb": 1.0, "mib": 1.0,
    "g": 1024.0, "gb": 1024.0, "gib": 1024.0,
    "t": 1024.0**2, "tb": 1024.0**2, "tib": 1024.0**2,
}
TIME_MIN = {
    "s": 1 / 60, "sec": 1 / 60, "secs": 1 / 60, "second": 1 / 60, "seconds": 1 / 60,
    "min": 1.0, "mins": 1.0, "minute": 1.0, "minutes": 1.0,
    "h": 60.0, "hr": 60.0, "hrs": 60.0, "hour": 60.0, "hours": 60.0,
    "d": 1440.0, "day": 1440.0, "days": 1440.0,
}
_NUMBER = re.compile(r"^\s*([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-z%/ -]*?)\s*$")
_THOUSANDS = re.compile(r"^\s*[-+]?\d{1,3}(?:,\d{3})+(?![\d,])")
AMBIGUOUS_COMMA = ("write decimals with a point (0.5, not 0,5); a comma is read only between "
                   "groups of three digits (9,216)")


def comma_problem(text: str) -> str | None:
    """:data:`AMBIGUOUS_COMMA` if ``text`` has a comma that is not a thousands separator."""
    cleaned = text.replace("_", "")
    if "," not in cleaned:
        return None
    match = _THOUSANDS.match(cleaned)
    if match and "," not in cleaned[match.end():]:
        return None
    return AMBIGUOUS_COMMA


def _word(unit: str) -> str:
    """A counting word compared loosely: case, hyphens and spaces do not matter."""
    return re.sub(r"[\s-]+", "-", unit.strip().lower())


def family(unit: str) -> dict[str, float] | None:
    """The conversion table a unit belongs to, or None for a counting word."""
    u = unit.lower()
    if u in MEMORY_MB:
        return MEMORY_MB
    if u in TIME_MIN:
        return TIME_MIN
    return None


def parse_quantity(text: str, unit: str) -> float | None:
    """The value of ``text`` expressed in ``unit``; None if it cannot be read.

    >>> parse_quantity("64G", "MB")
    65536.0
    >>> parse_quantity("90 s", "minutes")
    1.5
    >>> parse_quantity("9,216 gpu-hours", "GPU-hours")
    9216.0
    >>> parse_quantity("0,5", "") is None  # ambiguous: see comma_problem()
    True
    """
    if comma_problem(text):
        return None
    match = _NUMBER.match(text.replace(",", "").replace("_", ""))
    if not match:
        return None
    value = float(match.group(1))
    given = match.group(2).strip().lower()
    if not given or not unit:
        return value if not given else None
    table = family(unit)
    if table is None:
        word = _word(unit)
        return value if _word(given) in {word, word.rstrip("s")} else None
    if given not in table:
        return None
    return value * table[given] / table[unit.lower()]
