"""``--array`` job array specifications (slurmctld ``_valid_array_inx``).

Syntax: comma separated items ``N``, ``N-M`` or ``N-M:S`` (step), optionally
followed by ``%P`` to run at most ``P`` tasks at once: ``0-7%2``, ``1,3,5``,
``0-10:3``, ``1-3,7`` (capture f3_array).  Every index must be below
``MaxArraySize`` (1001 on the reference cluster: ``--array=1000-1001`` is
rejected).  sbatch does not check the text; slurmctld rejects a bad one with
``Invalid job array specification`` (capture b_sbatch_errors/38_bad_array,
exit 1), which is the message of the `SubmitError` raised here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from minislurm.errors import SubmitError

INVALID_ARRAY = "Invalid job array specification"
"""slurm_strerror(ESLURM_INVALID_ARRAY)."""

NO_ARRAY_TASK = 4294967294
"""What ``%a`` expands to outside an array (NO_VAL - 1; capture f4 03)."""

_ITEM = re.compile(r"^(\d+)(?:-(\d+)(?::(\d+))?)?$")


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


def parse_array(s: str, max_array_size: int = 1001) -> ArraySpec:
    """Parse an ``--array`` value; raises `SubmitError` (`INVALID_ARRAY`)."""
    text, pct, throttle = s.partition("%")
    max_running: int | None = None
    if pct:
        if not throttle.isdigit():
            raise SubmitError(INVALID_ARRAY)
        max_running = int(throttle)
    if not text:
        raise SubmitError(INVALID_ARRAY)
    indices: set[int] = set()
    for item in text.split(","):
        m = _ITEM.match(item)
        if m is None:
            raise SubmitError(INVALID_ARRAY)
        first = int(m.group(1))
        last = int(m.group(2)) if m.group(2) is not None else first
        step = int(m.group(3)) if m.group(3) is not None else 1
        if last < first or step < 1 or last >= max_array_size:
            raise SubmitError(INVALID_ARRAY)
        indices.update(range(first, last + 1, step))
    return ArraySpec(tuple(sorted(indices)), max_running, s)


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
