"""squeue's output: ``-o/--format``, ``-O/--Format``, ``-l``, ``--start``, ``-r``, ``-h``.

Mirrors ``src/squeue/opts.c`` (default formats, letter and field-name tables),
``src/squeue/print.c`` (what each field prints); which records are listed
and in which order (``-r``, array folding, ``--sort``) is ``squeue_order``'s.
"""

from __future__ import annotations

import time as _time
from collections.abc import Callable, Iterable

from minislurm.cli.format.fields import (
    FieldSpec,
    FormatSpec,
    mem_unit,
    pad,
    parse_long_format,
    parse_percent_format,
    print_secs,
    tres_string,
)
from minislurm.cli.format.squeue_order import (
    DEFAULT_SORT,
    combine_pending_arrays,
    job_list_order,
    squeue_sort,
    unpack_arrays,
)
from minislurm.job import JobRecord
from minislurm.states import JobState
from minislurm.timespec import format_timestamp, time_limit_secs

#: ``squeue`` (``_print_job`` in squeue.c).
DEFAULT_FORMAT = "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R"
#: ``squeue -l``.
LONG_FORMAT = "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R"
#: ``squeue --start`` (also implies ``--sort=S --states=PENDING``).
START_FORMAT = "%.18i %.9P %.8j %.8u %.2t %.19S %.6D %20Y %R"

_Value = Callable[[JobRecord, int], str]


def _null(text: str) -> str:
    """A C string that may be NULL: printf prints ``(null)``."""
    return text if text else "(null)"


def _time_or_na(ts: int | None) -> str:
    """``_print_time``: a timestamp, or ``N/A`` when unset."""
    return format_timestamp(ts) if ts else "N/A"


def _time_limit(job: JobRecord, now: int) -> str:
    """``%l``: ``UNLIMITED`` or ``_print_secs(time_limit * 60)``, the product in
    ``uint32_t``; ``INVALID`` when negative or above a year (``--time=-5``, stored as
    4294960097 minutes, prints ``INVALID``, measured on 22.05.8)."""
    if job.time_limit is None:
        return "UNLIMITED"
    if job.time_limit < 0:
        return "INVALID"
    return print_secs(time_limit_secs(job.time_limit))


def _time_left(job: JobRecord, now: int) -> str:
    """``%L``: ``time_limit * 60 - job_time_used`` (the product in ``uint32_t``);
    ``INVALID`` once negative (a limit lowered below the time used, measured)."""
    if job.time_limit is None:
        return "UNLIMITED"
    if job.time_limit < 0:
        return "INVALID"
    return print_secs(time_limit_secs(job.time_limit) - job.run_time(now))


def _end_time(job: JobRecord, now: int) -> str:
    """``%e``: ``NONE`` for an unlimited running job, else the end or ``N/A``."""
    if job.time_limit is None and job.end_time and job.end_time > now:
        return "NONE"
    return _time_or_na(job.end_time)


def _reason_list(job: JobRecord, now: int) -> str:
    """``%R``: ``(reason)`` for pending, timed-out and failed jobs, else the node list."""
    if job.state is not JobState.COMPLETING and job.state in (
        JobState.PENDING,
        JobState.TIMEOUT,
        JobState.FAILED,
    ):
        return f"({job.reason_text})"
    return job.nodelist


def _min_memory(job: JobRecord, now: int) -> str:
    """``%m``: memory per node, or per CPU, as ``1000M``; ``0`` when unset."""
    if job.min_memory_mb:
        return mem_unit(job.min_memory_mb)
    if job.mem_per_cpu:
        return mem_unit(job.mem_per_cpu)
    return "0"


def _array_task(job: JobRecord, now: int) -> str:
    """``%K``: the pending task list, the task id, or ``N/A``."""
    if job.array_task_str is not None:
        return job.array_task_str
    if job.array_task_id is not None:
        return str(job.array_task_id)
    return "N/A"


# letter -> (header, value)
_LETTERS: dict[str, tuple[str, _Value]] = {
    "a": ("ACCOUNT", lambda j, n: j.account),
    "A": ("JOBID", lambda j, n: str(j.job_id)),
    "b": ("TRES_PER_NODE", lambda j, n: j.tres_per_node or "N/A"),
    "B": ("EXEC_HOST", lambda j, n: j.batch_host or "n/a"),
    "c": ("MIN_CPUS", lambda j, n: str(j.cpus_per_task)),
    "C": ("CPUS", lambda j, n: str(j.num_cpus)),
    "d": ("MIN_TMP_DISK", lambda j, n: "0"),
    "D": ("NODES", lambda j, n: str(j.num_nodes)),
    "e": ("END_TIME", _end_time),
    "E": ("DEPENDENCY", lambda j, n: _null(j.dependency)),
    "f": ("FEATURES", lambda j, n: _null(j.features)),
    "F": ("ARRAY_JOB_ID", lambda j, n: str(j.array_job_id or j.job_id)),
    "g": ("GROUP", lambda j, n: j.group),
    "G": ("GROUP", lambda j, n: str(j.gid)),
    "h": ("OVER_SUBSCRIBE", lambda j, n: "NO" if j.exclusive else "OK"),
    "H": ("SOCKETS_PER_NODE", lambda j, n: "*"),
    "i": ("JOBID", lambda j, n: j.job_id_str),
    "I": ("CORES_PER_SOCKET", lambda j, n: "*"),
    "j": ("NAME", lambda j, n: j.name),
    "J": ("THREADS_PER_CORE", lambda j, n: "*"),
    "k": ("COMMENT", lambda j, n: _null(j.comment)),
    "K": ("ARRAY_TASK_ID", _array_task),
    "l": ("TIME_LIMIT", _time_limit),
    "L": ("TIME_LEFT", _time_left),
    "m": ("MIN_MEMORY", _min_memory),
    "M": ("TIME", lambda j, n: print_secs(j.run_time(n))),
    "n": ("REQ_NODES", lambda j, n: j.req_nodelist),
    "N": ("NODELIST", lambda j, n: j.nodelist),
    "o": ("COMMAND", lambda j, n: _null(j.command)),
    "O": ("CONTIGUOUS", lambda j, n: "0"),
    "p": ("PRIORITY", lambda j, n: f"{j.priority / 4294967295:.8f}"),
    "P": ("PARTITION", lambda j, n: j.partition),
    "q": ("QOS", lambda j, n: j.qos),
    "Q": ("PRIORITY", lambda j, n: str(j.priority)),
    "r": ("REASON", lambda j, n: j.reason_text),
    "R": ("NODELIST(REASON)", _reason_list),
    "S": ("START_TIME", lambda j, n: _time_or_na(j.start_time)),
    "t": ("ST", lambda j, n: j.state.short),
    "T": ("STATE", lambda j, n: j.state.value),
    "u": ("USER", lambda j, n: j.user),
    "U": ("UID", lambda j, n: str(j.uid)),
    "v": ("RESERVATION", lambda j, n: _null(j.reservation)),
    "V": ("SUBMIT_TIME", lambda j, n: _time_or_na(j.submit_time)),
    "w": ("WCKEY", lambda j, n: "(null)"),
    "W": ("LICENSES", lambda j, n: "(null)"),
    "x": ("EXC_NODES", lambda j, n: j.exc_nodelist),
    "X": ("CORE_SPEC", lambda j, n: "N/A"),
    "y": ("NICE", lambda j, n: str(j.nice)),
    "Y": ("SCHEDNODES", lambda j, n: j.sched_nodes or "(null)"),
    "z": ("S:C:T", lambda j, n: "*:*:*"),
    "Z": ("WORK_DIR", lambda j, n: j.work_dir),
}

#: Letters whose value squeue prints without cutting it to the width.
_UNCUT = frozenset("NR")

#: ``-O`` field names (case-insensitive) -> (letter, header when it differs).
_LONG_NAMES: dict[str, tuple[str, str | None]] = {
    "account": ("a", None),
    "arrayjobid": ("F", None),
    "arraytaskid": ("K", None),
    "batchhost": ("B", None),
    "command": ("o", None),
    "comment": ("k", None),
    "dependency": ("E", None),
    "endtime": ("e", None),
    "exit_code": ("", "EXIT_CODE"),
    "excnodes": ("x", None),
    "feature": ("f", None),
    "gid": ("G", None),
    "groupid": ("G", None),
    "groupname": ("g", None),
    "jobarrayid": ("i", None),
    "jobid": ("i", None),
    "mincpus": ("c", None),
    "minmemory": ("m", None),
    "name": ("j", None),
    "nice": ("y", None),
    "nodelist": ("N", None),
    "numcpus": ("C", None),
    "numnodes": ("D", None),
    "numtasks": ("", "TASKS"),
    "partition": ("P", None),
    "priority": ("p", None),
    "prioritylong": ("Q", None),
    "qos": ("q", None),
    "reason": ("r", None),
    "reasonlist": ("R", None),
    "reqnodes": ("n", None),
    "reservation": ("v", None),
    "schednodes": ("Y", None),
    "starttime": ("S", None),
    "state": ("T", None),
    "statecompact": ("t", None),
    "submittime": ("V", None),
    "timeleft": ("L", None),
    "timelimit": ("l", None),
    "timeused": ("M", None),
    "tres-alloc": ("", "TRES_ALLOC"),
    "tres-per-node": ("b", None),
    "uid": ("U", None),
    "userid": ("U", None),
    "username": ("u", None),
    "workdir": ("Z", None),
    "cpus-per-task": ("c", "CPUS_PER_TASK"),
    "stdout": ("", "STDOUT"),
    "stderr": ("", "STDERR"),
    "stdin": ("", "STDIN"),
}

_LONG_ONLY: dict[str, _Value] = {
    "exit_code": lambda j, n: f"{j.exit_code}:{j.signal}",
    "numtasks": lambda j, n: str(j.num_tasks),
    "tres-alloc": lambda j, n: tres_string(j.tres_alloc),
    "stdout": lambda j, n: j.std_out,
    "stderr": lambda j, n: j.std_err,
    "stdin": lambda j, n: j.std_in,
}


def invalid_fields(fmt: str | None = None, Format: str | None = None) -> list[str]:
    """The errors squeue prints for unknown types (``Invalid job format specification: Z``)."""
    errors = []
    if fmt is not None:
        for f in parse_percent_format(fmt).fields:
            if f.key not in _LETTERS:
                errors.append(f"squeue: error: Invalid job format specification: {f.key}")
    if Format is not None:
        for f in parse_long_format(Format).fields:
            if f.key.lower() not in _LONG_NAMES:
                errors.append(f"squeue: error: Invalid job format specification: {f.key}")
    return errors


def _cell(spec: FieldSpec, job: JobRecord | None, now: int, long_names: bool) -> str:
    """One field of one line (``job=None`` gives the header) with its suffix."""
    if long_names:
        entry = _LONG_NAMES.get(spec.key.lower())
        if entry is None:
            return spec.raw + spec.suffix if job is None else spec.suffix
        letter, header = entry
        if letter:
            default_header, value = _LETTERS[letter]
        else:
            default_header, value = "", _LONG_ONLY[spec.key.lower()]
        title = header or default_header
        cut = letter not in _UNCUT
    else:
        if spec.key not in _LETTERS:
            return spec.raw  # job_format_add_invalid: the token printed verbatim
        title, value = _LETTERS[spec.key]
        cut = spec.key not in _UNCUT
    text = title if job is None else value(job, now)
    return pad(text, spec.width, spec.right, cut=cut) + spec.suffix


def _line(spec: FormatSpec, job: JobRecord | None, now: int, long_names: bool) -> str:
    return spec.prefix + "".join(_cell(f, job, now, long_names) for f in spec.fields)


#: One compiled field: a constant text, or (value, width, right, cut, suffix).
_Compiled = str | tuple[_Value, int, bool, bool, str]


def _compile(spec: FormatSpec, long_names: bool) -> list[_Compiled]:
    """`_cell`'s decisions taken once per format, not once per job and field (squeue
    prints 10,000 lines in well under 100 ms)."""
    out: list[_Compiled] = []
    for f in spec.fields:
        if long_names:
            entry = _LONG_NAMES.get(f.key.lower())
            if entry is None:
                out.append(f.suffix)
                continue
            letter, _header = entry
            value = _LETTERS[letter][1] if letter else _LONG_ONLY[f.key.lower()]
            cut = letter not in _UNCUT
        else:
            if f.key not in _LETTERS:
                out.append(f.raw)
                continue
            value = _LETTERS[f.key][1]
            cut = f.key not in _UNCUT
        out.append((value, f.width, f.right, cut, f.suffix))
    return out


#: Lines of the last call per format: ``id(record) -> (record, now, line)``. A job's
#: snapshot is the same object while the job is unchanged (`Job.snapshot`), so a
#: pending job's line is made once; a started job's line also depends on ``now``.
_LINE_CACHE: dict[str, dict[int, tuple[JobRecord, int | None, str]]] = {}
_LINE_CACHE_FORMATS = 8


def _job_line(prefix: str, compiled: list[_Compiled], job: JobRecord, now: int) -> str:
    parts = [prefix]
    for c in compiled:
        if isinstance(c, str):
            parts.append(c)
            continue
        value, width, right, cut, suffix = c
        text = value(job, now)
        if width > 0:  # `pad`, inlined: this loop runs once per job and field
            if right:
                text = text.rjust(width)
                if cut:
                    text = text[:width]
            else:
                text = text[:width].ljust(width)
        parts.append(text)
        parts.append(suffix)
    return "".join(parts)


def format_squeue(
    jobs: Iterable[JobRecord],
    *,
    fmt: str | None = None,
    Format: str | None = None,
    long: bool = False,
    start: bool = False,
    noheader: bool = False,
    now: int,
    array_unpack: bool = False,
    sort: str | None = None,
) -> str:
    """What ``squeue`` prints for ``jobs`` (the records the filters kept), newline-terminated.

    ``fmt`` is ``-o``, ``Format`` ``-O``; otherwise ``-l`` (``long``) / ``--start``
    choose the format.  ``start`` also keeps only pending jobs and sorts by start
    time, like ``--start``.  ``-l`` prints the current date first.  ``sort`` is
    ``-S/--sort`` (default ``P,t,-p``).
    """
    records = list(jobs)
    if start:
        records = [j for j in records if j.state is JobState.PENDING]
    records = unpack_arrays(records) if array_unpack else combine_pending_arrays(records)
    sort_spec = sort if sort is not None else ("S" if start else DEFAULT_SORT)
    records = squeue_sort(records, sort_spec, now)

    long_names = Format is not None and fmt is None
    if long_names:
        spec = parse_long_format(Format or "")
    else:
        chosen = fmt or (START_FORMAT if start else LONG_FORMAT if long else DEFAULT_FORMAT)
        spec = parse_percent_format(chosen)

    lines: list[str] = []
    if long and not noheader:  # squeue.c prints the date with the header only
        lines.append(_time.strftime("%a %b %d %H:%M:%S %Y", _time.gmtime(now)))
    if not noheader:
        lines.append(_line(spec, None, now, long_names))
    compiled = _compile(spec, long_names)
    key = f"{long_names}:{Format if long_names else chosen}"
    old = _LINE_CACHE.pop(key, {})
    new: dict[int, tuple[JobRecord, int | None, str]] = {}
    for job in records:
        hit = old.get(id(job))
        at = None if job.state is JobState.PENDING else now
        if hit is None or hit[0] is not job or hit[1] != at:
            hit = (job, at, _job_line(spec.prefix, compiled, job, now))
        new[id(job)] = hit
        lines.append(hit[2])
    _LINE_CACHE[key] = new
    while len(_LINE_CACHE) > _LINE_CACHE_FORMATS:
        del _LINE_CACHE[next(iter(_LINE_CACHE))]
    return "".join(line + "\n" for line in lines)


__all__ = [
    "DEFAULT_FORMAT",
    "DEFAULT_SORT",
    "LONG_FORMAT",
    "START_FORMAT",
    "combine_pending_arrays",
    "format_squeue",
    "invalid_fields",
    "job_list_order",
    "squeue_sort",
    "unpack_arrays",
]
