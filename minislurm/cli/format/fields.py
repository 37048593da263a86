"""The ``%``-format and ``-O/--Format`` machinery shared by squeue and sinfo.

Mirrors three small pieces of Slurm 22.05 that squeue (``src/squeue/opts.c``,
``src/squeue/print.c``) and sinfo (``src/sinfo/opts.c``, ``src/sinfo/print.c``)
each carry a copy of:

* ``_get_prefix`` + ``_parse_token``: ``-o "%[[.]size]type[suffix]"``.  Text
  before the first ``%`` is a prefix printed as is; the string is cut at every
  ``%`` (``strtok``, so ``%%`` is simply an empty token); each token is an
  optional ``.`` (right-justify), a size, the one-letter type, and a suffix
  that is printed verbatim after the field.  sinfo also knows ``%#P``/``%#N``:
  the width becomes the longest partition name / node list (at least 9).
* ``_parse_long_token``: ``-O "type[:[.]size][suffix]",...`` with a default
  width of 20 and no separator between fields.
* ``_print_str``: a value printed in ``width`` columns.  Left-justified values
  are always truncated to the width (C's ``%.Ns``) then padded with blanks;
  right-justified ones (``%Ns``) are padded on the left and truncated only
  when ``cut`` is set (most fields; ``squeue``'s NODELIST is not cut); width
  0 prints the value whole.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from minislurm.job import JobRecord

#: sinfo's MIN_NODE_FIELD_SIZE / MIN_PART_FIELD_SIZE for ``%#N`` / ``%#P``.
MIN_HASH_FIELD_SIZE = 9

#: Width of a ``-O`` field given without ``:size`` (squeue and sinfo).
LONG_FORMAT_DEFAULT_WIDTH = 20


@dataclass(frozen=True, slots=True)
class FieldSpec:
    """One field of a format: what to print and how.

    ``key`` is the type letter (``-o``) or the field name as given (``-O``);
    ``width`` 0 means "as wide as the value"; ``hash_width`` marks sinfo's
    ``%#P``/``%#N`` whose width is computed from the records.  ``raw`` is the
    token as written (``%`` + token), which Slurm prints verbatim for an
    unknown type.
    """

    key: str
    width: int = 0
    right: bool = False
    suffix: str = ""
    hash_width: bool = False
    raw: str = ""


@dataclass(frozen=True, slots=True)
class FormatSpec:
    """A parsed format: an optional literal prefix and the fields in order."""

    prefix: str
    fields: tuple[FieldSpec, ...]


def pad(value: str, width: int, right: bool, cut: bool = True) -> str:
    """``_print_str``: ``value`` in ``width`` columns, as Slurm's printers do it.

    >>> pad("debug", 9, True)
    '    debug'
    >>> pad("helduser", 4, False)
    'held'
    >>> pad("n[1-4]", 3, True, cut=False)
    'n[1-4]'
    """
    if width <= 0:
        return value
    if right:
        text = value.rjust(width)
        if cut:
            text = text[:width]
    else:
        text = value[:width]
    return text.ljust(width)


def print_str(value: str | None, width: int, right: bool, cut: bool = True) -> str:
    """squeue's ``_print_str`` to the letter, ``value=None`` being a NULL ``char *``.

    Width 0 prints the value whole.  Right-justified (``%Ns``) pads on the left and
    cuts to the width only when ``cut``.  Left-justified is ``%.Ns``: always cut,
    and glibc prints a NULL as ``(null)`` only when the precision holds it (6), else
    as nothing; then blanks up to the width.  A negative width (``-O name:-3``,
    ``strtol`` reads the sign) prints the value and one blank (measured on 22.05.8).

    >>> [print_str(None, 2, False), print_str(None, 2, True), print_str(None, 6, False)]
    ['  ', '(n', '(null)']
    >>> print_str("n[1-2]", 2, True, cut=False), print_str("run1", -3, False)
    ('n[1-2]', 'run1 ')
    """
    if width == 0:
        return "(null)" if value is None else value
    if width < 0:
        return ("(null)" if value is None else value) + " "
    if right:
        text = ("(null)" if value is None else value).rjust(width)
        return text[:width] if cut else text
    if value is None:
        value = "(null)" if width >= 6 else ""
    return value[:width].ljust(width)


def parse_percent_format(fmt: str, *, allow_hash: bool = False) -> FormatSpec:
    """Parse an ``-o/--format`` string the way squeue/sinfo ``_parse_format`` do.

    ``allow_hash`` enables sinfo's ``%#X`` (width from the records).

    >>> spec = parse_percent_format("%.7i %j|")
    >>> [(f.key, f.width, f.right, f.suffix) for f in spec.fields]
    [('i', 7, True, ' '), ('j', 0, False, '|')]
    """
    first = fmt.find("%")
    if first == -1:
        return FormatSpec(prefix=fmt, fields=())
    prefix = fmt[:first]
    fields: list[FieldSpec] = []
    for token in fmt[first:].split("%"):
        if not token:  # strtok skips empty tokens ("%%" and the leading '%')
            continue
        fields.append(_parse_token(token, allow_hash))
    return FormatSpec(prefix=prefix, fields=tuple(fields))


def _parse_token(token: str, allow_hash: bool) -> FieldSpec:
    """``_parse_token``: ``[.][size][#]type[suffix]``."""
    i = 0
    right = False
    if token[i:i + 1] == ".":
        right = True
        i += 1
    hash_width = False
    if allow_hash and token[i:i + 1] == "#":
        hash_width = True
        i += 1
    size = 0
    while i < len(token) and "0" <= token[i] <= "9":
        size = size * 10 + int(token[i])
        i += 1
    key = token[i:i + 1]
    suffix = token[i + 1:]
    return FieldSpec(key=key, width=size, right=right, suffix=suffix,
                     hash_width=hash_width, raw="%" + token)


def parse_long_format(fmt: str, *, default_width: int = LONG_FORMAT_DEFAULT_WIDTH) -> FormatSpec:
    """Parse ``-O/--Format`` the way ``parse_long_format``/``_parse_long_token`` do.

    Fields are comma separated; ``name:[.]size[suffix]`` sets the width (``.``
    right-justifies) and an optional suffix printed after the field.

    >>> [(f.key, f.width, f.right) for f in parse_long_format("JobID,Name:.30").fields]
    [('JobID', 20, False), ('Name', 30, True)]
    """
    fields: list[FieldSpec] = []
    for token in fmt.split(","):
        if not token:
            continue
        name, sep, rest = token.partition(":")
        right = False
        width = default_width
        suffix = ""
        if sep:
            if rest.startswith("."):
                right = True
                rest = rest[1:]
            width, suffix = _strtol(rest)
        fields.append(FieldSpec(key=name, width=width, right=right, suffix=suffix, raw=token))
    return FormatSpec(prefix="", fields=tuple(fields))


def _strtol(text: str) -> tuple[int, str]:
    """C ``strtol(text, &end, 10)``: leading blanks, a sign, digits; (value, rest).
    Without digits nothing is consumed: (0, text)."""
    i = len(text) - len(text.lstrip(" \t\n\v\f\r"))
    j = i + 1 if text[i:i + 1] in ("+", "-") else i
    k = j
    while k < len(text) and "0" <= text[k] <= "9":
        k += 1
    if k == j:
        return 0, text
    return int(text[i:k]), text[k:]


def eligible_time(job: JobRecord) -> int | None:
    """The eligible time commands show.  An array's pending remainder held back by its
    ``%`` throttle (``JobArrayTaskLimit``) has none (22.05.8's scontrol prints
    ``EligibleTime=Unknown``, sacct ``Unknown``, squeue ``-O EligibleTime`` ``N/A``):
    the controller clears it (``Job.reason``)."""
    return job.eligible_time


def print_secs(seconds: int) -> str:
    """squeue/sinfo ``_print_secs``: ``0:00``, ``1:23``, ``1:02:03``, ``1-02:03:04``.

    Negative times and times beyond a year print ``INVALID``.

    >>> [print_secs(s) for s in (0, 83, 3723, 93784, -1)]
    ['0:00', '1:23', '1:02:03', '1-02:03:04', 'INVALID']
    """
    if seconds < 0 or seconds > 365 * 24 * 3600:
        return "INVALID"
    days, rem = divmod(seconds, 86400)
    hours, rem = divmod(rem, 3600)
    minutes, secs = divmod(rem, 60)
    if days:
        return f"{days}-{hours:02d}:{minutes:02d}:{secs:02d}"
    if hours:
        return f"{hours}:{minutes:02d}:{secs:02d}"
    return f"{minutes}:{secs:02d}"


def mem_unit(mb: int) -> str:
    """A memory amount as TRES strings print it (``convert_num_unit`` exact):
    ``4000M``, ``2G`` (only exact multiples of 1024 go up a unit)."""
    units = "MGTP"
    value = mb
    idx = 0
    while value and value % 1024 == 0 and idx < len(units) - 1:
        value //= 1024
        idx += 1
    return f"{value}{units[idx]}"


_TRES_ORDER = ("cpu", "mem", "energy", "node", "billing", "fs/disk", "vmem", "pages")


def tres_string(tres: dict[str, int], *, sort_by_name: bool = False) -> str:
    """A TRES mapping as Slurm prints it: ``cpu=4,mem=4000M,node=1,billing=4,gres/gpu=2``.

    The controller orders TRES by their id (cpu, mem, energy, node, billing, ...,
    then gres/*); sacct sorts them by name (``billing=12,cpu=12,...``).
    """
    if sort_by_name:
        keys = sorted(tres)
    else:
        known = [k for k in _TRES_ORDER if k in tres]
        keys = known + [k for k in tres if k not in _TRES_ORDER]
    parts = []
    for key in keys:
        value = tres[key]
        parts.append(f"{key}={mem_unit(value) if key == 'mem' else value}")
    return ",".join(parts)


__all__ = [
    "LONG_FORMAT_DEFAULT_WIDTH",
    "MIN_HASH_FIELD_SIZE",
    "FieldSpec",
    "FormatSpec",
    "eligible_time",
    "mem_unit",
    "pad",
    "parse_long_format",
    "parse_percent_format",
    "print_secs",
    "print_str",
    "tres_string",
]
