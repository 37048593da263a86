"""The training log's line format: one ``key=value`` record per line, rank 0 only.

The script prints, on stdout::

    start rank=0 world=4 launcher=slurm master=127.0.0.1:20042 restart_count=0
    resume step=10 path=checkpoints/ckpt-00000010.pt
    step=11 loss=0.4182710945606232
    checkpoint step=15 path=checkpoints/ckpt-00000015.pt
    final step=20 sha256=9f2c...

Losses are printed with ``repr`` (shortest round-trip form), so a parsed value is
the exact float the run computed. :func:`parse_records` reads any of these lines
(and ignores others, e.g. ``srun -l`` prefixes are stripped), :func:`loss_curve`
gives ``[(step, loss), ...]`` ready to plot.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["format_record", "loss_curve", "parse_records"]

_KINDS = ("start", "resume", "checkpoint", "final", "skipped", "removed", "note", "timing")
_LABEL = re.compile(r"^\s*\d+:\s")  # srun -l / --label prefix "0: "
_PAIR = re.compile(r"(\w+)=(\S+)")


def format_record(kind: str | None, **fields: object) -> str:
    """``kind k1=v1 k2=v2`` (a step line has no kind: ``step=3 loss=0.25``)."""
    pairs = " ".join(
        f"{key}={value!r}" if isinstance(value, float) else f"{key}={value}"
        for key, value in fields.items()
    )
    return f"{kind} {pairs}" if kind else pairs


def parse_records(lines: Iterable[str]) -> list[tuple[str, dict[str, str]]]:
    """``(kind, fields)`` of every record line; a step line has kind ``"step"``."""
    records = []
    for raw in lines:
        line = _LABEL.sub("", raw.rstrip("\n"), count=1)
        head = line.split(" ", 1)[0]
        if head in _KINDS:
            records.append((head, dict(_PAIR.findall(line))))
        elif line.startswith("step=") and " loss=" in line:
            records.append(("step", dict(_PAIR.findall(line))))
    return records


def loss_curve(lines: Iterable[str]) -> list[tuple[int, float]]:
    """``[(step, loss), ...]`` sorted by step, one point per step.

    The log of a requeued job holds the steps run after the last checkpoint
    twice (before the kill and again after the resume, with the same losses when
    the resume is exact); the later line wins.
    """
    curve: dict[int, float] = {}
    for kind, fields in parse_records(lines):
        if kind == "step":
            curve[int(fields["step"])] = float(fields["loss"])
    return sorted(curve.items())
