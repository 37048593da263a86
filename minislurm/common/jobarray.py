"""``--array`` job array specifications (slurmctld ``_valid_array_inx``).

Syntax: comma separated items ``N``, ``N-M`` or ``N-M:S`` (step), optionally
followed by ``%P`` to run at most ``P`` tasks at once: ``0-7%2``, ``1,3,5``,
``0-10:3``, ``1-3,7`` (capture f3_array).  Every index must be below
``MaxArraySize`` (1001 on the reference cluster: ``--array=1000-1001`` is
rejected).  sbatch does not check the text; slurmctld rejects a bad one with
``Invalid job array specification`` (capture b_sbatch_errors/38_bad_array,
exit 1), which is the message of the `SubmitError` raised here.

slurmctld reads the text with ``strtok``/``strtol``, not a grammar, and real
22.05.8 accepts what that lets through (measured): empty items are skipped
(``1,,3``), a ``[`` before and a ``]`` after each number are dropped
(``[1-3]``), numbers may have leading blanks or a sign (`` 1-3``, ``+1``),
a missing number is 0 (``%2`` is task 0, ``-`` too), anything from a ``%``
on ends an item (``1,2%1,3`` is 1-3), and the throttle is ``atoi`` of what
follows the first ``%`` (``1-3%`` and ``1-3%0`` are unthrottled, ``%2x`` is 2).
A step must be below ``MaxArraySize`` as well.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from minislurm.errors import Errno, SubmitError

INVALID_ARRAY = Errno.ESLURM_INVALID_ARRAY
"""slurm_strerror(ESLURM_INVALID_ARRAY)."""

NO_ARRAY_TASK = 4294967294
"""What ``%a`` expands to outside an array (NO_VAL - 1; capture f4 03)."""

_LONG = 2**63
_STRTOL = re.compile(r"[ \t\n\v\f\r]*([+-]?\d+)")


def _strtol(text: str, pos: int) -> tuple[int, int]:
    """C ``strtol(text + pos, &end, 10)`` into a ``long``: (value, end); (0, pos)
    without digits; saturated at the ``long`` range."""
    m = _STRTOL.match(text, pos)
    if m is None:
        return 0, pos
    return max(-_LONG, min(_LONG - 1, int(m.group(1)))), m.end()


def _atoi(text: str) -> int:
    """C ``atoi``: ``(int) strtol(text, NULL, 10)``."""
    value, _ = _strtol(text, 0)
    return (value + 2**31) % 2**32 - 2**31


@dataclass(frozen=True, slots=True)
class ArraySpec:
    """A parsed ``--array``: sorted unique ``indices``, the ``%`` throttle
    (``max_running``, ``None`` = unlimited) and the ``text`` as given."""

    indices: tuple[int, ...]
    max_running: int | None
    text: str

    @property
    def task_count(self) -> int:
        """``SLURM_ARRAY_TASK_COUNT``."""
        return len(self.indices)

    @property
    def task_min(self) -> int:
        """``SLURM_ARRAY_TASK_MIN``."""
        return self.indices[0]

    @property
    def task_max(self) -> int:
        """``SLURM_ARRAY_TASK_MAX``."""
        return self.indices[-1]

    @property
    def task_step(self) -> int:
        """``SLURM_ARRAY_TASK_STEP``: the common difference of the indices if
        they are evenly spaced, else 1 (as slurmctld computes it)."""
        diffs = {b - a for a, b in zip(self.indices, self.indices[1:], strict=False)}
        return diffs.pop() if len(diffs) == 1 else 1


def _parse_item(item: str, max_array_size: int) -> range:
    """``_parse_array_tok``: one comma-separated item -> its indices."""
    def at(pos: int) -> str:
        return item[pos] if pos < len(item) else ""

    def close(pos: int) -> int:  # a trailing "]" is dropped
        return pos + 1 if at(pos) == "]" else pos

    first, pos = _strtol(item, 1 if item.startswith("[") else 0)
    pos = close(pos)
    if first < 0:
        raise SubmitError(INVALID_ARRAY)
    last, step = first, 1
    if at(pos) == "-":
        last, pos = _strtol(item, pos + 1)
        pos = close(pos)
        if at(pos) == ":":
            step, pos = _strtol(item, pos + 1)
            pos = close(pos)
            if step <= 0:
                raise SubmitError(INVALID_ARRAY)
        if last < first:
            raise SubmitError(INVALID_ARRAY)
    if at(pos) not in ("", "%") or last >= max_array_size or step >= max_array_size:
        raise SubmitError(INVALID_ARRAY)
    return range(first, last + 1, step)


def parse_array(s: str, max_array_size: int = 1001) -> ArraySpec:
    """Parse an ``--array`` value; raises `SubmitError` (`INVALID_ARRAY`).

    ``indices`` is empty when the text has no item at all (``,``)."""
    indices: set[int] = set()
    for item in s.split(","):
        if item:
            indices.update(_parse_item(item, max_array_size))
    pct = s.find("%")
    throttle = _atoi(s[pct + 1:]) if pct >= 0 else 0
    return ArraySpec(tuple(sorted(indices)), throttle if throttle > 0 else None, s)


def format_indices(indices: Iterable[int]) -> str:
    """``bit_fmt``: ``[0,1,2,3,7]`` -> ``0-3,7`` (ranges, no steps)."""
    values = sorted(set(indices))
    parts: list[str] = []
    i = 0
    while i < len(values):
        j = i
        while j + 1 < len(values) and values[j + 1] == values[j] + 1:
            j += 1
        parts.append(str(values[i]) if i == j else f"{values[i]}-{values[j]}")
        i = j + 1
    return ",".join(parts)


def format_pending(indices: tuple[int, ...] | list[int], max_running: int | None) -> str:
    """The pending part squeue shows as ``108_[2-7%2]``: ``2-7%2``."""
    text = format_indices(indices)
    return f"{text}%{max_running}" if max_running else text
