"""``squeue -s``: the job steps that run now (squeue's step printers, src/squeue/print.c).

Every running batch job has its ``JOBID.batch`` step (on the job's first node, one task);
srun steps are listed while they run, numbered steps first, sorted by job and step.
Measured on 22.05.8: the default format is ``%.15i %.8j %.9P %.8u %.9M %N``; the step
letters are ``i j P u M N b A l S``, any other prints as written after ``squeue: error:
Invalid job step format specification: z``; ``-O`` knows the names below (``NodeList``,
``State``, ``Name``... are invalid for steps, ``Nodes`` prints the node list); an unknown
job in ``-j`` lists nothing, without an error.
"""

from __future__ import annotations

import time as _time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from minislurm.cli.format.fields import (
    FieldSpec,
    FormatSpec,
    parse_long_format,
    parse_percent_format,
    print_secs,
    print_str,
)
from minislurm.common.timespec import format_timestamp
from minislurm.ctld.accounting import batch_step
from minislurm.job import JobRecord, StepRecord
from minislurm.states import JobState

STEP_FORMAT = "%.15i %.8j %.9P %.8u %.9M %N"

#: ``squeue -s`` when a step's id is not numbered: slurm's ``SLURM_BATCH_SCRIPT`` sorts last.
_BATCH_ORDER = 0xFFFFFFFB


@dataclass(frozen=True, slots=True)
class StepRow:
    """One running step and its job."""

    job: JobRecord
    step: StepRecord


_Value = Callable[[StepRow, int, str], "str | None"]


def _step_id(row: StepRow, _now: int, _cluster: str) -> str:
    job = row.job
    head = (f"{job.array_job_id}_{job.array_task_id}" if job.array_task_id is not None
            and job.array_job_id is not None else str(job.job_id))
    return f"{head}.{row.step.step_id}"


def _used(row: StepRow, now: int, _cluster: str) -> str:
    return print_secs(max(0, now - (row.step.start_time or now)))


def _start(row: StepRow, _now: int, _cluster: str) -> str:
    return format_timestamp(row.step.start_time) if row.step.start_time else "N/A"


#: letter -> (header, value); ``-O`` names map to a letter or carry their own field.
_LETTERS: dict[str, tuple[str, _Value]] = {
    "i": ("STEPID", _step_id),
    "j": ("NAME", lambda r, n, c: r.step.name),
    "P": ("PARTITION", lambda r, n, c: r.job.partition),
    "u": ("USER", lambda r, n, c: r.job.user),
    "M": ("TIME", _used),
    "N": ("NODELIST", lambda r, n, c: r.step.nodelist),
    "b": ("TRES_PER_JOB", lambda r, n, c: None),
    "A": ("TASKS", lambda r, n, c: str(r.step.ntasks)),
    "l": ("TIME_LIMIT", lambda r, n, c: "UNLIMITED"),
    "S": ("START_TIME", _start),
}
_UNCUT = frozenset("lMN")
_NAMES: dict[str, tuple[str, _Value]] = {
    "stepid": _LETTERS["i"], "stepname": _LETTERS["j"], "numtasks": _LETTERS["A"],
    "timeused": _LETTERS["M"], "timelimit": _LETTERS["l"], "starttime": _LETTERS["S"],
    "partition": _LETTERS["P"], "username": _LETTERS["u"], "nodes": _LETTERS["N"],
    "userid": ("UID", lambda r, n, c: str(r.job.uid)),
    "stepstate": ("STATE", lambda r, n, c: "RUNNING"),
    "jobid": ("JOB_ID", lambda r, n, c: str(r.job.job_id)),
    "cluster": ("CLUSTER", lambda r, n, c: c),
    "arrayjobid": ("ARRAY_JOB_ID", lambda r, n, c: str(r.job.array_job_id or 0)),
    "numcpus": ("NUM_CPUS", lambda r, n, c: "0"),
    "network": ("NETWORK", lambda r, n, c: None),
    "tres-per-node": ("TRES_PER_NODE", lambda r, n, c: None),
}


def running_steps(jobs: Iterable[JobRecord]) -> list[StepRow]:
    """The steps of running jobs that run now, by job id then step (batch last)."""
    rows = []
    for job in jobs:
        if job.state is not JobState.RUNNING:
            continue
        steps = [s for s in job.steps if s.state is JobState.RUNNING and s.step_id != "batch"]
        batch = batch_step(job, None, 0, 0)
        rows += [StepRow(job, s) for s in ([*steps, batch] if batch else steps)]
    return sorted(rows, key=lambda r: (r.job.job_id, r.step.step_id
                                       if isinstance(r.step.step_id, int) else _BATCH_ORDER))


def select_steps(rows: Sequence[StepRow], *, jobs: set[int] | None = None,
                 steps: set[tuple[int, str]] | None = None, users: set[str] | None = None,
                 partitions: set[str] | None = None) -> list[StepRow]:
    """``-j``, ``--steps=J.S``, ``-u`` and ``-p`` for steps."""
    out = []
    for r in rows:
        if jobs is not None and r.job.job_id not in jobs:
            continue
        if steps is not None and (r.job.job_id, str(r.step.step_id)) not in steps:
            continue
        if users is not None and r.job.user not in users and str(r.job.uid) not in users:
            continue
        if partitions is not None and r.job.partition not in partitions:
            continue
        out.append(r)
    return out


def _spec(fmt: str | None, Format: str | None) -> tuple[FormatSpec, bool]:
    if Format is not None:
        return parse_long_format(Format), True
    return parse_percent_format(fmt or STEP_FORMAT), False


def _field(f: FieldSpec, long_names: bool) -> tuple[str, _Value, bool] | None:
    if long_names:
        hit = _NAMES.get(f.key.lower())
        return None if hit is None else (*hit, True)
    hit = _LETTERS.get(f.key)
    return None if hit is None else (*hit, f.key not in _UNCUT)


def invalid_step_fields(fmt: str | None, Format: str | None) -> list[str]:
    """squeue's error per unknown field (``Invalid job step format specification: z``)."""
    spec, long_names = _spec(fmt, Format)
    return [f"squeue: error: Invalid job step format specification: {f.key}"
            for f in spec.fields if _field(f, long_names) is None]


def format_steps(rows: Sequence[StepRow], *, fmt: str | None = None, Format: str | None = None,
                 noheader: bool = False, long: bool = False, now: int | None = None,
                 cluster_name: str = "") -> str:
    """The ``squeue -s`` text: header (unless ``noheader``) and one line per step."""
    now = int(_time.time()) if now is None else now
    spec, long_names = _spec(fmt, Format)

    def line(row: StepRow | None) -> str:
        out = [spec.prefix]
        for f in spec.fields:
            field = _field(f, long_names)
            if field is None:  # -o prints the token as written, -O nothing
                out.append(f.suffix if long_names else f.raw)
                continue
            header, value, cut = field
            text = header if row is None else value(row, now, cluster_name)
            out.append(print_str(text, f.width, f.right, cut or row is None) + f.suffix)
        return "".join(out)

    lines = []
    if long and not noheader:
        lines.append(_time.strftime("%a %b %d %H:%M:%S %Y", _time.gmtime(now)))
    if not noheader:
        lines.append(line(None))
    lines += [line(r) for r in rows]
    return "".join(f"{text}\n" for text in lines)


__all__ = ["STEP_FORMAT", "StepRow", "format_steps", "invalid_step_fields", "running_steps",
           "select_steps"]
