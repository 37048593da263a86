"""sacct's output: ``--format/-o``, ``-l``, ``-X``, ``-p``/``-P``, ``-n``.

Mirrors ``src/sacct/sacct.c`` (the field table: name and width, negative =
left-justified), ``src/sacct/options.c`` (default and ``--long`` field lists,
``name%width``, names matched case-insensitively by prefix in table order) and
``src/common/print_fields.c``: every field is followed by a blank (also the
last one); a value wider than its column is cut and ends in ``+``
(``CANCELLED+``); ``-p`` ends every field with ``|``, ``-P`` separates them
with ``|``.  One line per job, then (unless ``-X``) one per step
(``JOBID.batch``, ``JOBID.extern``, ``JOBID.0``...).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from minislurm.cli.format.fields import eligible_time, mem_unit, tres_string
from minislurm.cli.format.sstat import FIELD_NAMES as USAGE_FIELDS
from minislurm.cli.format.sstat import usage_value
from minislurm.common.timespec import format_elapsed, format_time_limit_hms, format_timestamp
from minislurm.errors import SlurmError
from minislurm.job import JobRecord, StepRecord
from minislurm.states import JobState

DEFAULT_FIELDS = "JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode"
LONG_FIELDS = (
    "JobID,JobIDRaw,JobName,Partition,MaxVMSize,MaxVMSizeNode,MaxVMSizeTask,AveVMSize,"
    "MaxRSS,MaxRSSNode,MaxRSSTask,AveRSS,MaxPages,MaxPagesNode,MaxPagesTask,AvePages,"
    "MinCPU,MinCPUNode,MinCPUTask,AveCPU,NTasks,AllocCPUS,Elapsed,State,ExitCode,"
    "AveCPUFreq,ReqCPUFreqMin,ReqCPUFreqMax,ReqCPUFreqGov,ReqMem,ConsumedEnergy,"
    "MaxDiskRead,MaxDiskReadNode,MaxDiskReadTask,AveDiskRead,MaxDiskWrite,"
    "MaxDiskWriteNode,MaxDiskWriteTask,AveDiskWrite,ReqTRES,AllocTRES,TRESUsageInAve,"
    "TRESUsageInMax,TRESUsageInMaxNode,TRESUsageInMaxTask,TRESUsageInMin,"
    "TRESUsageInMinNode,TRESUsageInMinTask,TRESUsageInTot,TRESUsageOutMax,"
    "TRESUsageOutMaxNode,TRESUsageOutMaxTask,TRESUsageOutAve,TRESUsageOutTot"
)

#: sacct.c ``fields[]``: name and width, in the table's (alphabetical) order.
_WIDTHS: dict[str, int] = {
    "Account": 10, "AdminComment": 15, "AllocCPUS": 10, "AllocNodes": 10, "AllocTRES": 10,
    "AssocID": 7, "AveCPU": 10, "AveCPUFreq": 10, "AveDiskRead": 14, "AveDiskWrite": 14,
    "AvePages": 10, "AveRSS": 10, "AveVMSize": 10, "BlockID": 16, "Cluster": 10,
    "Comment": 14, "Constraints": 19, "ConsumedEnergy": 14, "ConsumedEnergyRaw": 17,
    "Container": 19, "CPUTime": 10, "CPUTimeRAW": 10, "DBIndex": -21, "DerivedExitCode": 15,
    "Elapsed": 10, "ElapsedRaw": 10, "Eligible": 19, "End": 19, "ExitCode": 8,
    "Extra": 14, "FailedNode": 8, "Flags": 19, "GID": 6, "Group": 9, "JobID": -12,
    "JobIDRaw": -12, "JobName": 10, "Layout": 9, "Licenses": 10, "MaxDiskRead": 12,
    "MaxDiskReadNode": 15, "MaxDiskReadTask": 15, "MaxDiskWrite": 12, "MaxDiskWriteNode": 16,
    "MaxDiskWriteTask": 16, "MaxPages": 8, "MaxPagesNode": 12, "MaxPagesTask": 14,
    "MaxRSS": 10, "MaxRSSNode": 10, "MaxRSSTask": 10, "MaxVMSize": 10, "MaxVMSizeNode": 14,
    "MaxVMSizeTask": 14, "McsLabel": 12, "MinCPU": 10, "MinCPUNode": 10, "MinCPUTask": 10,
    "NCPUS": 10, "NNodes": 8, "NodeList": 15, "NTasks": 8, "Partition": 10, "Planned": 10,
    "PlannedCPU": 10, "PlannedCPURAW": 13, "Priority": 10, "QOS": 10, "QOSRAW": 6,
    "QOSREQ": 10, "Reason": 22, "ReqCPUFreq": 10, "ReqCPUFreqGov": 13, "ReqCPUFreqMax": 13,
    "ReqCPUFreqMin": 13, "ReqCPUS": 8, "ReqMem": 10, "ReqNodes": 8, "ReqTRES": 10,
    "Reservation": 20, "ReservationId": 8, "Restarts": 8, "SegmentSize": 11, "Start": 19,
    "State": 10, "StdErr": 20, "StdIn": 20, "StdOut": 20, "Submit": 19, "SubmitLine": 20,
    "Suspended": 10, "SystemComment": 15, "SystemCPU": 10, "Timelimit": 10,
    "TimelimitRaw": 10, "TotalCPU": 10, "TRESUsageInAve": 14, "TRESUsageInMax": 14,
    "TRESUsageInMaxNode": 18, "TRESUsageInMaxTask": 18, "TRESUsageInMin": 14,
    "TRESUsageInMinNode": 18, "TRESUsageInMinTask": 18, "TRESUsageInTot": 14,
    "TRESUsageOutAve": 15, "TRESUsageOutMax": 15, "TRESUsageOutMaxNode": 19,
    "TRESUsageOutMaxTask": 19, "TRESUsageOutMin": 15, "TRESUsageOutMinNode": 19,
    "TRESUsageOutMinTask": 19, "TRESUsageOutTot": 15, "UID": 6, "User": 9, "UserCPU": 10,
    "WCKey": 10, "WCKeyID": 10, "WorkDir": 20,
}


@dataclass(frozen=True, slots=True)
class SacctField:
    """One requested column: its table name and width (negative = left-justified)."""

    name: str
    width: int


def _atoi(text: str) -> int:
    """C ``atoi``: leading blanks, a sign, digits; 0 without digits."""
    text = text.lstrip(" \t\n\v\f\r")
    sign = -1 if text[:1] == "-" else 1
    if text[:1] in "+-":
        text = text[1:]
    digits = ""
    for ch in text:
        if not ch.isdigit():
            break
        digits += ch
    return sign * int(digits) if digits else 0


def parse_fields(spec: str) -> list[SacctField]:
    """``--format`` as sacct reads it: ``Name[%width]``, case-insensitive prefixes.

    Raises `SlurmError` ``sacct: error: Invalid field requested: "X"`` (exit 1).
    """
    out: list[SacctField] = []
    for token in spec.split(","):
        token = token.strip()
        if not token:
            continue
        name, _, width_text = token.partition("%")
        match = next((n for n in _WIDTHS if n.lower().startswith(name.lower())), None)
        if match is None or not name:
            raise SlurmError(f'sacct: error: Invalid field requested: "{name}"', 1)
        width = _WIDTHS[match]
        if _:  # atoi(after '%'), measured on 22.05.8: "%8" right-justifies (JobID
            # too), "%-4" left-justifies in 4 columns, "%0", "%", "%.3", "%x" make a
            # column of width 0 (only its blank)
            width = _atoi(width_text)
        out.append(SacctField(match, width))
    return out


def _job_id(job: JobRecord) -> str:
    """``JobID``: ``108_3`` for an array task, else the job id."""
    if job.array_job_id is not None and job.array_task_id is not None:
        return f"{job.array_job_id}_{job.array_task_id}"
    return job.job_id_str


def _state(job: JobRecord) -> str:
    if job.state is JobState.CANCELLED and job.cancelled_by is not None:
        return f"CANCELLED by {job.cancelled_by}"
    return job.state.value


def _date(ts: int | None, unset: str) -> str:
    return format_timestamp(ts) if ts else unset


def _elapsed(start: int | None, end: int | None, now: int | None) -> int:
    """Seconds between start and end (``now`` for a job still running, when known)."""
    if not start:
        return 0
    stop = end or now
    return max(0, stop - start) if stop else 0


_JobValue = Callable[[JobRecord, int | None], str]
_StepValue = Callable[[JobRecord, StepRecord, int | None], str]

_JOB: dict[str, _JobValue] = {
    "Account": lambda j, now: j.account,
    "AllocCPUS": lambda j, now: str(j.num_cpus),
    "AllocNodes": lambda j, now: str(j.num_nodes if j.start_time else 0),
    "AllocTRES": lambda j, now: tres_string(j.tres_alloc, sort_by_name=True),
    "Comment": lambda j, now: j.comment,
    "CPUTime": lambda j, now: format_elapsed(_elapsed(j.start_time, j.end_time, now) * j.num_cpus),
    "CPUTimeRAW": lambda j, now: str(_elapsed(j.start_time, j.end_time, now) * j.num_cpus),
    "DerivedExitCode": lambda j, now: f"{j.derived_exit_code}:0",
    "Elapsed": lambda j, now: format_elapsed(_elapsed(j.start_time, j.end_time, now)),
    "ElapsedRaw": lambda j, now: str(_elapsed(j.start_time, j.end_time, now)),
    "Eligible": lambda j, now: _date(eligible_time(j), "Unknown"),
    "End": lambda j, now: _date(j.end_time, "Unknown"),
    "ExitCode": lambda j, now: f"{j.exit_code}:{j.signal}",
    "GID": lambda j, now: str(j.gid),
    "Group": lambda j, now: j.group,
    "JobID": lambda j, now: _job_id(j),
    "JobIDRaw": lambda j, now: str(j.job_id),
    "JobName": lambda j, now: j.name,
    "NCPUS": lambda j, now: str(j.num_cpus),
    "NNodes": lambda j, now: str(j.num_nodes),
    "NodeList": lambda j, now: j.nodelist or "None assigned",
    "Partition": lambda j, now: j.partition,
    "Priority": lambda j, now: str(j.priority),
    "QOS": lambda j, now: j.qos,
    "Reason": lambda j, now: j.reason.value,
    "ReqCPUFreqGov": lambda j, now: "Unknown",
    "ReqCPUFreqMax": lambda j, now: "Unknown",
    "ReqCPUFreqMin": lambda j, now: "Unknown",
    "ReqCPUS": lambda j, now: str(j.num_cpus),
    "ReqMem": lambda j, now: mem_unit(j.tres_req.get("mem", 0)),
    "ReqNodes": lambda j, now: str(j.num_nodes),
    "ReqTRES": lambda j, now: tres_string(j.tres_req, sort_by_name=True),
    "Reservation": lambda j, now: j.reservation,
    "Restarts": lambda j, now: str(j.restart_count),
    # measured on 22.05.8: a job still pending starts "Unknown", one cancelled before
    # it started "None"
    "Start": lambda j, now: _date(
        j.start_time, "Unknown" if j.state is JobState.PENDING else "None"),
    "State": lambda j, now: _state(j),
    "StdErr": lambda j, now: j.std_err,
    "StdIn": lambda j, now: j.std_in,
    "StdOut": lambda j, now: j.std_out,
    "Submit": lambda j, now: _date(j.submit_time, "Unknown"),
    # 0 minutes (scontrol update TimeLimit=0) prints nothing (print.c: ``else if (timelimit)``)
    "Timelimit": lambda j, now: format_time_limit_hms(j.time_limit) if j.time_limit != 0 else "",
    "TimelimitRaw": lambda j, now: "UNLIMITED" if j.time_limit is None else str(j.time_limit),
    "UID": lambda j, now: str(j.uid),
    "User": lambda j, now: j.user,
    "WorkDir": lambda j, now: j.work_dir,
}

_STEP: dict[str, _StepValue] = {
    "Account": lambda j, s, now: j.account,
    "AllocCPUS": lambda j, s, now: str(s.num_cpus),
    "AllocNodes": lambda j, s, now: str(s.num_nodes),
    "AllocTRES": lambda j, s, now: tres_string(s.tres_alloc, sort_by_name=True),
    "CPUTime": lambda j, s, now: format_elapsed(
        _elapsed(s.start_time, s.end_time, now) * s.num_cpus),
    "CPUTimeRAW": lambda j, s, now: str(_elapsed(s.start_time, s.end_time, now) * s.num_cpus),
    "Elapsed": lambda j, s, now: format_elapsed(_elapsed(s.start_time, s.end_time, now)),
    "ElapsedRaw": lambda j, s, now: str(_elapsed(s.start_time, s.end_time, now)),
    "Eligible": lambda j, s, now: _date(s.start_time, "Unknown"),
    "End": lambda j, s, now: _date(s.end_time, "Unknown"),
    "ExitCode": lambda j, s, now: f"{s.exit_code}:{s.signal}",
    "GID": lambda j, s, now: str(j.gid),
    "Group": lambda j, s, now: j.group,
    "JobID": lambda j, s, now: f"{_job_id(j)}.{s.step_id}",
    "JobIDRaw": lambda j, s, now: f"{j.job_id}.{s.step_id}",
    "JobName": lambda j, s, now: s.name,
    "NCPUS": lambda j, s, now: str(s.num_cpus),
    "NNodes": lambda j, s, now: str(s.num_nodes),
    "NodeList": lambda j, s, now: s.nodelist,
    "NTasks": lambda j, s, now: str(s.ntasks),
    "ReqCPUFreqGov": lambda j, s, now: "0",
    "ReqCPUFreqMax": lambda j, s, now: "0",
    "ReqCPUFreqMin": lambda j, s, now: "0",
    "Start": lambda j, s, now: _date(s.start_time, "None"),
    "State": lambda j, s, now: s.state.value,
    "Submit": lambda j, s, now: _date(s.start_time, "Unknown"),
    "UID": lambda j, s, now: str(j.uid),
    "User": lambda j, s, now: j.user,
}


def _usage(step: StepRecord, name: str) -> str:
    """A usage column (MaxRSS, AveCPU, TRESUsageInAve, ...) of a step whose tasks
    jobacct_gather polled (the wall clock); empty otherwise, as with no data."""
    if step.usage is None or name not in USAGE_FIELDS:
        return ""
    return usage_value(step.usage, name, step.step_id)


def _cell(value: str, width: int) -> str:
    """``print_fields_str``: cut with a trailing ``+``, justified, then a blank."""
    size = abs(width)
    if size == 0:  # "%0": an empty column, still followed by its blank
        return " "
    text = value if value else " "
    if len(text) > size:
        text = text[: size - 1] + "+"
    return (text.rjust(size) if width > 0 else text.ljust(size)) + " "


def _line(values: list[str], fields: list[SacctField], parsable: bool, parsable2: bool) -> str:
    if parsable2:
        return "|".join(values)
    if parsable:
        return "".join(v + "|" for v in values)
    return "".join(_cell(v, f.width) for v, f in zip(values, fields, strict=True))


#: slurmdbd stores the batch step as -5 and the extern step as -4 (SLURM_BATCH_SCRIPT,
#: SLURM_EXTERN_CONT) and lists steps by that id: ``N.batch``, ``N.extern``, ``N.0``, ...
_STEP_KEYS = {"batch": -5, "extern": -4}


def step_order(step: StepRecord) -> int:
    """sacct's order of a job's steps (the step table's ``id_step``)."""
    if isinstance(step.step_id, int):
        return step.step_id
    return _STEP_KEYS.get(str(step.step_id), -1)


def format_sacct(
    jobs: Iterable[JobRecord],
    *,
    fields: str | None = None,
    long: bool = False,
    parsable: bool = False,
    parsable2: bool = False,
    noheader: bool = False,
    allocations_only: bool = False,
    now: int | None = None,
    steps_of: Mapping[tuple[int, int | None], frozenset[str]] | None = None,
) -> str:
    """What ``sacct`` prints for these job records (the accounting entries kept).

    ``fields`` is ``-o/--format``; ``long`` is ``-l``; ``parsable`` ``-p``,
    ``parsable2`` ``-P``; ``allocations_only`` ``-X`` (no step lines).  Step
    usage statistics (MaxRSS, AveCPU, TRESUsage*, ...) are what jobacct_gather saw of
    a step's tasks on the wall clock (`minislurm.common.jobacct`), empty without data.
    ``now`` lets ``Elapsed``/``CPUTime`` of running jobs and steps
    count up to the present, as sacct does; without it they count 0.  ``steps_of``:
    records asked for by step (``-j 5.0``; key job id and array task) print only those
    steps' lines, or with ``-X`` their job's line.
    """

    cols = parse_fields(fields or (LONG_FIELDS if long else DEFAULT_FIELDS))
    lines: list[str] = []
    if not noheader:
        names = [c.name for c in cols]
        if parsable or parsable2:
            lines.append(_line(names, cols, parsable, parsable2))
        else:
            lines.append("".join(
                (n[: abs(c.width)].rjust(abs(c.width)) if c.width > 0
                 else n[: abs(c.width)].ljust(abs(c.width))) + " "
                for n, c in zip(names, cols, strict=True)))
            lines.append("".join("-" * abs(c.width) + " " for c in cols))
    for job in jobs:
        only = None if steps_of is None else steps_of.get((job.job_id, job.array_task_id))
        if only is None or allocations_only:
            values = [_JOB[c.name](job, now) if c.name in _JOB else "" for c in cols]
            lines.append(_line(values, cols, parsable, parsable2))
        if allocations_only:
            continue
        for step in sorted(job.steps, key=step_order):
            if only is not None and str(step.step_id) not in only:
                continue
            values = [_STEP[c.name](job, step, now) if c.name in _STEP
                      else _usage(step, c.name) for c in cols]
            lines.append(_line(values, cols, parsable, parsable2))
    return "".join(line + "\n" for line in lines)


__all__ = ["DEFAULT_FIELDS", "LONG_FIELDS", "SacctField", "format_sacct", "parse_fields"]
