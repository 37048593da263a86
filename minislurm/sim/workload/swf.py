"""The Standard Workload Format (SWF) of the Parallel Workloads Archive, version 2.2.

https://www.cs.huji.ac.il/labs/parallel/workload/swf.html: one job per line, 18
whitespace-separated fields, ``-1`` where a value is unknown; header lines start with
``;`` (``; Version: 2.2``, ``; UnixStartTime: 1767600000``, ``; MaxProcs: 128``, ...).
Times are seconds; submit times are relative to ``UnixStartTime``; memory is KB.

``parse_swf`` / ``read_swf`` import (a bad line raises ``SWFFormatError`` naming the
file, the line number and the field), ``format_swf`` exports; ``to_workload`` and
``from_workload`` convert to and from the generator's ``WorkloadJob``, and
``from_job_records`` exports what a simulation ran (``JobRecord`` lists).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from minislurm.errors import SlurmError
from minislurm.sim.workload.generator import WorkloadJob

#: The 18 fields, in file order (the archive's names).
SWF_FIELDS = (
    "job_number",
    "submit_time",
    "wait_time",
    "run_time",
    "allocated_procs",
    "avg_cpu_time",
    "used_memory",
    "requested_procs",
    "requested_time",
    "requested_memory",
    "status",
    "user_id",
    "group_id",
    "executable",
    "queue",
    "partition",
    "preceding_job",
    "think_time",
)
_FLOAT_FIELDS = {"avg_cpu_time", "used_memory", "requested_memory"}

#: Field 11: 1 = completed, 0 = failed, 5 = cancelled (2-4: checkpointed/swapped parts).
STATUS_FAILED, STATUS_COMPLETED, STATUS_CANCELLED = 0, 1, 5
UNKNOWN = -1


class SWFFormatError(SlurmError):
    """An SWF file could not be read; the message names the file, line and field."""


@dataclass(frozen=True, slots=True)
class SWFRecord:
    """One SWF line.  Every field is ``-1`` when unknown."""

    job_number: int
    submit_time: int
    wait_time: int = UNKNOWN
    run_time: int = UNKNOWN
    allocated_procs: int = UNKNOWN
    avg_cpu_time: float = UNKNOWN
    used_memory: float = UNKNOWN
    requested_procs: int = UNKNOWN
    requested_time: int = UNKNOWN
    requested_memory: float = UNKNOWN
    status: int = UNKNOWN
    user_id: int = UNKNOWN
    group_id: int = UNKNOWN
    executable: int = UNKNOWN
    queue: int = UNKNOWN
    partition: int = UNKNOWN
    preceding_job: int = UNKNOWN
    think_time: int = UNKNOWN

    @property
    def procs(self) -> int:
        """Requested processors, else allocated (what a simulator schedules)."""
        return self.requested_procs if self.requested_procs > 0 else self.allocated_procs

    @property
    def time_limit_seconds(self) -> int:
        """Requested time (field 9), falling back to the run time when unknown."""
        return self.requested_time if self.requested_time > 0 else self.run_time


@dataclass(frozen=True, slots=True)
class SWFWorkload:
    """A whole file: header comments (without ``;``) and the records."""

    header: tuple[str, ...]
    records: tuple[SWFRecord, ...]

    def header_value(self, key: str) -> str | None:
        """The value of a ``; Key: value`` header line (e.g. ``UnixStartTime``)."""
        for line in self.header:
            k, sep, v = line.partition(":")
            if sep and k.strip().lower() == key.lower():
                return v.strip()
        return None

    @property
    def unix_start_time(self) -> int:
        """``UnixStartTime`` (0 when absent)."""
        v = self.header_value("UnixStartTime")
        try:
            return int(v) if v is not None else 0
        except ValueError:
            return 0

    @property
    def max_procs(self) -> int | None:
        """``MaxProcs`` of the header, if given."""
        v = self.header_value("MaxProcs")
        return int(v) if v is not None and v.lstrip("-").isdigit() else None


def _number(text: str, name: str, where: str, as_float: bool) -> int | float:
    try:
        value = float(text)
    except ValueError:
        raise SWFFormatError(f"{where}: field {name} is not a number: {text!r}") from None
    if math.isnan(value) or math.isinf(value):
        raise SWFFormatError(f"{where}: field {name} is not a number: {text!r}")
    if as_float:
        return value
    if value != int(value):
        raise SWFFormatError(f"{where}: field {name} must be an integer: {text!r}")
    return int(value)


#: Each field's conversion on a plain row (`_plain_row`), in file order.
_CONVERT = tuple(float if name in _FLOAT_FIELDS else int for name in SWF_FIELDS)
#: The float fields' positions in a row.
_FLOAT_AT = tuple(k for k, name in enumerate(SWF_FIELDS) if name in _FLOAT_FIELDS)


def _plain_row(parts: list[str]) -> list[Any] | None:
    """The 18 values `_number` gives, when every field is plain (else None: the row
    goes field by field through `_number`, which names a bad field).

    Plain: at most 15 characters per field, every integer field an integer literal
    (``int`` parses it), every float field a finite number.  An integer literal of at
    most 15 characters is below 2**53, so ``int(text)`` is ``int(float(text))``, what
    `_number` returns for it; a float field is ``float(text)`` either way.
    """
    if max(map(len, parts)) > 15:
        return None
    try:
        row: list[Any] = [conv(p) for conv, p in zip(_CONVERT, parts, strict=True)]
    except ValueError:
        return None
    for k in _FLOAT_AT:
        if not math.isfinite(row[k]):
            return None
    return row


def parse_swf(text: str, filename: str = "<swf>") -> SWFWorkload:
    """Parse SWF text; blank lines are skipped, ``;`` lines are the header."""
    header: list[str] = []
    records: list[SWFRecord] = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith(";"):
            header.append(line[1:].strip())
            continue
        parts = line.split()
        where = f"{filename}:{lineno}"
        if len(parts) != len(SWF_FIELDS):
            raise SWFFormatError(
                f"{where}: expected {len(SWF_FIELDS)} fields, found {len(parts)}: {line!r}"
            )
        row = _plain_row(parts)
        if row is not None:
            rec = SWFRecord(*row)
        else:
            # each field's number is an int or a float as _FLOAT_FIELDS says: a parsed
            # row is typed by its field names, which are SWFRecord's
            values: dict[str, Any] = {
                name: _number(p, name, where, name in _FLOAT_FIELDS)
                for p, name in zip(parts, SWF_FIELDS, strict=True)
            }
            rec = SWFRecord(**values)
        if rec.submit_time < 0:
            raise SWFFormatError(f"{where}: field submit_time is negative: {parts[1]!r}")
        records.append(rec)
    return SWFWorkload(tuple(header), tuple(records))


def read_swf(path: str | os.PathLike[str]) -> SWFWorkload:
    """Read an SWF file (``.swf``)."""
    p = Path(path)
    try:
        text = p.read_text()
    except OSError:
        raise SWFFormatError(f"Unable to open workload file {p}") from None
    return parse_swf(text, str(p))


def _fmt(value: int | float) -> str:
    if isinstance(value, float) and value != int(value):
        return f"{value:.2f}"
    return str(int(value))


def format_swf(
    records: Iterable[SWFRecord], header: Sequence[str] = ("Version: 2.2",)
) -> str:
    """SWF text: ``; header`` lines, then one right-aligned line per record."""
    out = [f"; {h}\n" if h else ";\n" for h in header]
    for r in records:
        cells = [_fmt(getattr(r, f.name)) for f in fields(SWFRecord)]
        out.append(" ".join(c.rjust(w) for c, w in zip(cells, _WIDTHS, strict=True)) + "\n")
    return "".join(out)


_WIDTHS = (6, 8, 6, 6, 4, 6, 6, 4, 6, 6, 2, 4, 4, 3, 2, 2, 6, 4)


def write_swf(path: str | os.PathLike[str], records: Iterable[SWFRecord],
              header: Sequence[str] = ("Version: 2.2",)) -> None:  # fmt: skip
    """Write an SWF file."""
    Path(path).write_text(format_swf(records, header))


# ------------------------------------------------------------------ conversions


def from_workload(
    jobs: Iterable[WorkloadJob], *, start: int, procs: str = "gpus"
) -> list[SWFRecord]:
    """Export generated jobs (arrays: one record per task); ``procs``: gpus|cpus|nodes.

    Submit times become relative to ``start`` (put ``UnixStartTime: start`` in the
    header); wait, allocation and status are unknown before a simulation (-1).
    """
    if procs not in ("gpus", "cpus", "nodes"):
        raise ValueError("procs must be 'gpus', 'cpus' or 'nodes'")
    users: dict[str, int] = {}
    groups: dict[str, int] = {}
    out: list[SWFRecord] = []
    number = 0
    for j in jobs:
        count = {"gpus": j.gpus, "cpus": j.cpus, "nodes": j.nodes}[procs]
        uid = users.setdefault(j.user, len(users) + 1)
        gid = groups.setdefault(j.account, len(groups) + 1)
        for _ in range(j.array_size or 1):
            number += 1
            out.append(SWFRecord(
                job_number=number, submit_time=j.submit_time - start,
                run_time=min(j.run_time, j.time_limit * 60), requested_procs=count,
                requested_time=j.time_limit * 60, user_id=uid, group_id=gid,
            ))  # fmt: skip
    return out


def to_workload(swf: SWFWorkload, *, partition: str = "batch") -> list[WorkloadJob]:
    """Import SWF records as jobs of single-processor units (``--procs N`` mode).

    ``nodes`` = processors (requested, else allocated); the time limit is the
    requested time (field 9) or, when unknown, the run time: in whole minutes
    (``time_limit``, rounded up) and in seconds (``limit_seconds``).
    Records without a usable size or time are skipped, as SWF simulators do.
    """
    start = swf.unix_start_time
    jobs = []
    for r in swf.records:
        procs = r.procs
        limit_s = r.time_limit_seconds
        if procs <= 0 or limit_s <= 0:
            continue
        run = r.run_time if r.run_time >= 0 else limit_s
        jobs.append(WorkloadJob(
            job_id=r.job_number, submit_time=start + r.submit_time,
            user=f"user{r.user_id}" if r.user_id >= 0 else "unknown",
            account=f"group{r.group_id}" if r.group_id >= 0 else "unknown",
            partition=partition, kind="swf", name=f"swf-{r.job_number}", nodes=procs,
            gpus_per_node=0, cpus=procs, time_limit=max(1, math.ceil(limit_s / 60)),
            run_time=run, exit_code=0 if r.status in (UNKNOWN, STATUS_COMPLETED) else 1,
            limit_seconds=limit_s,
        ))  # fmt: skip
    return jobs


_STATUS = {"COMPLETED": STATUS_COMPLETED, "CANCELLED": STATUS_CANCELLED}


def from_job_records(jobs: Iterable[Any], *, start: int, procs: str = "cpus") -> list[SWFRecord]:
    """Export simulated jobs (``JobRecord``) with their wait and run times.

    Status: COMPLETED -> 1, CANCELLED -> 5, any other end (FAILED, TIMEOUT,
    NODE_FAIL, ...) -> 0; jobs that never started have wait and run time -1.
    """
    out = []
    for n, j in enumerate(sorted(jobs, key=lambda r: (r.submit_time, r.job_id)), start=1):
        alloc = j.tres_alloc or {}
        count = {
            "cpus": alloc.get("cpu", j.num_cpus),
            "gpus": alloc.get("gres/gpu", 0),
            "nodes": alloc.get("node", j.num_nodes),
        }[procs]
        started = j.start_time is not None and j.end_time is not None
        out.append(SWFRecord(
            job_number=n, submit_time=j.submit_time - start,
            wait_time=j.start_time - j.submit_time if started else UNKNOWN,
            run_time=j.end_time - j.start_time if started else UNKNOWN,
            allocated_procs=count if started else UNKNOWN,
            requested_procs={"cpus": j.num_cpus, "nodes": j.num_nodes}.get(procs, count),
            requested_time=j.time_limit * 60 if j.time_limit is not None else UNKNOWN,
            status=_STATUS.get(j.state.value, STATUS_FAILED) if started else STATUS_CANCELLED,
            user_id=j.uid, group_id=j.gid,
        ))  # fmt: skip
    return out


__all__ = [
    "STATUS_CANCELLED",
    "STATUS_COMPLETED",
    "STATUS_FAILED",
    "SWF_FIELDS",
    "UNKNOWN",
    "SWFFormatError",
    "SWFRecord",
    "SWFWorkload",
    "format_swf",
    "from_job_records",
    "from_workload",
    "parse_swf",
    "read_swf",
    "to_workload",
    "write_swf",
]
