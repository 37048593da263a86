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
    eligible_time,
    mem_unit,
    parse_long_format,
    parse_percent_format,
    print_secs,
    print_str,
    tres_string,
)
from minislurm.cli.format.squeue_order import (
    DEFAULT_SORT,
    combine_pending_arrays,
    job_list_order,
    squeue_sort,
    unpack_arrays,
)
from minislurm.common.timespec import format_timestamp, time_limit_secs
from minislurm.job import JobRecord
from minislurm.states import JobState

#: ``squeue`` (``_print_job`` in squeue.c).
DEFAULT_FORMAT = "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R"
#: ``squeue -l``.
LONG_FORMAT = "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R"
#: ``squeue --start`` (also implies ``--sort=S --states=PENDING``).
START_FORMAT = "%.18i %.9P %.8j %.8u %.2t %.19S %.6D %20Y %R"

_Value = Callable[[JobRecord, int], "str | None"]


def _null(text: str | None) -> str | None:
    """A C string that may be NULL (None): see `fields.print_str` for how it prints."""
    return text if text else None


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


def _min_cpus(job: JobRecord, now: int) -> str:
    """``%c``: ``pn_min_cpus``, the CPUs per node the job asks for (``MinCPUsNode=``):
    ``-c2`` prints 2, ``--ntasks-per-node=2`` 2, ``-n3`` 1 (measured on 22.05.8)."""
    return str(job.cpus_per_task * (job.ntasks_per_node or 1))


def _priority(job: JobRecord, now: int) -> str:
    """``%p``: the priority over 2^32-1, ``%16.14f`` (``0.99998474074527``)."""
    return f"{job.priority / 4294967295:16.14f}"


def _pending_time(job: JobRecord, now: int) -> str:
    """``-O PendingTime``: seconds from submission to the start, or to now while
    pending (measured on 22.05.8: 0 for a job started at once, 18 for one cancelled
    after 18 s of pending)."""
    if job.state is JobState.PENDING or job.start_time is None:
        return str(max(0, now - job.submit_time))
    return str(max(0, job.start_time - job.submit_time))


def _exit_code(job: JobRecord, now: int) -> str:
    """``-O exit_code``: the raw wait status (``15`` for a job killed by SIGTERM,
    ``36608`` for exit code 143; measured on 22.05.8)."""
    return str((job.exit_code << 8) | job.signal)


def _time_min(job: JobRecord, now: int) -> str:
    """``-O MinTime``: ``--time-min`` as ``_print_secs`` (``0:00`` when unset)."""
    return print_secs(time_limit_secs(job.time_min) if job.time_min else 0)


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
    "c": ("MIN_CPUS", _min_cpus),
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
    "p": ("PRIORITY", _priority),
    "P": ("PARTITION", lambda j, n: j.partition),
    "q": ("QOS", lambda j, n: j.qos),
    "Q": ("PRIORITY", lambda j, n: str(j.priority)),
    "r": ("REASON", lambda j, n: j.reason_text),
    "R": ("NODELIST(REASON)", _reason_list),
    "s": ("", lambda j, n: ""),  # SELECT_JOBINFO: nothing with select/cons_tres
    "S": ("START_TIME", lambda j, n: _time_or_na(j.start_time)),
    "t": ("ST", lambda j, n: j.state.short),
    "T": ("STATE", lambda j, n: j.state.value),
    "u": ("USER", lambda j, n: j.user),
    "U": ("UID", lambda j, n: str(j.uid)),
    "v": ("RESERVATION", lambda j, n: _null(j.reservation)),
    "V": ("SUBMIT_TIME", lambda j, n: _time_or_na(j.submit_time)),
    "w": ("WCKEY", lambda j, n: None),
    "W": ("LICENSES", lambda j, n: None),
    "x": ("EXC_NODES", lambda j, n: j.exc_nodelist),
    "X": ("CORE_SPEC", lambda j, n: "N/A"),
    "y": ("NICE", lambda j, n: str(j.nice)),
    "Y": ("SCHEDNODES", lambda j, n: j.sched_nodes or None),
    "z": ("S:C:T", lambda j, n: "*:*:*"),
    "Z": ("WORK_DIR", lambda j, n: j.work_dir),
}

#: How squeue's printers call ``_print_str``, measured on 22.05.8 with ``%.1X`` and
#: ``-O X:.2``: most fields cut both header and value to the width when
#: right-justified; the node lists (``%N``, ``%Y``) cut neither; the time fields,
#: ``%n`` and ``ResizeTime`` cut the header but not the value; ``%R`` cuts a
#: ``(reason)`` but not a node list.  Left-justified values are always cut.
_HEADER_UNCUT = frozenset("NRY")
_VALUE_UNCUT = frozenset("lLMnNY")
#: ``%R``: cut only when the value is a ``(reason)``.
_CUT_REASON = "R"

_NA: _Value = lambda j, n: "N/A"  # noqa: E731
_ZERO: _Value = lambda j, n: "0"  # noqa: E731
_NULL: _Value = lambda j, n: None  # noqa: E731

#: ``-O`` field names (case-insensitive) -> (letter, header when it differs), for the
#: fields that print like a ``-o`` letter.
_LONG_NAMES: dict[str, tuple[str, str | None]] = {
    "account": ("a", None),
    "arrayjobid": ("F", None),
    "arraytaskid": ("K", None),
    "batchhost": ("B", None),
    "command": ("o", None),
    "comment": ("k", None),
    "contiguous": ("O", None),
    "cores": ("I", None),
    "corespec": ("X", None),
    "dependency": ("E", None),
    "endtime": ("e", None),
    "excnodes": ("x", None),
    "feature": ("f", None),
    "groupid": ("G", None),
    "groupname": ("g", None),
    "jobarrayid": ("i", None),
    "jobid": ("A", None),
    "licenses": ("W", None),
    "mincpus": ("c", None),
    "minmemory": ("m", None),
    "mintmpdisk": ("d", None),
    "name": ("j", None),
    "nice": ("y", None),
    "nodelist": ("N", None),
    "numcpus": ("C", None),
    "numnodes": ("D", None),
    "oversubscribe": ("h", None),
    "partition": ("P", None),
    "priority": ("p", None),
    "prioritylong": ("Q", None),
    "qos": ("q", None),
    "reason": ("r", None),
    "reasonlist": ("R", None),
    "reqnodes": ("n", None),
    "reservation": ("v", None),
    "schednodes": ("Y", None),
    "sct": ("z", None),
    "selectjobinfo": ("s", None),
    "sockets": ("H", None),
    "starttime": ("S", None),
    "state": ("T", None),
    "statecompact": ("t", None),
    "submittime": ("V", None),
    "threads": ("J", None),
    "timeleft": ("L", None),
    "timelimit": ("l", None),
    "timeused": ("M", None),
    "tres-per-node": ("b", None),
    "userid": ("U", None),
    "username": ("u", None),
    "wckey": ("w", None),
    "workdir": ("Z", None),
}

#: ``-O`` fields of their own: name -> (header, value, value cut when right-justified).
#: Values measured on 22.05.8 (reference cluster, batch jobs).
_LONG_ONLY: dict[str, tuple[str, _Value, bool]] = {
    "accruetime": ("ACCRUE_TIME", lambda j, n: _time_or_na(j.accrue_time), True),
    "admin_comment": ("ADMIN_COMMENT", _NULL, True),
    "allocnodes": ("ALLOC_NODES", lambda j, n: "localhost", True),
    "allocsid": ("ALLOC_SID", _ZERO, True),
    "associd": ("ASSOC_ID", _ZERO, True),
    "batchflag": ("BATCH_FLAG", lambda j, n: str(int(j.batch_flag)), True),
    "boardspernode": ("BOARDS_PER_NODE", _ZERO, True),
    "burstbuffer": ("BURST_BUFFER", _NULL, True),
    "burstbufferstate": ("BURST_BUFFER_STATE", _NULL, True),
    "cluster": ("CLUSTER", lambda j, n: _CLUSTER[0], True),
    "clusterfeature": ("CLUSTER_FEATURES", _NULL, True),
    "container": ("CONTAINER", _NULL, True),
    "cpus-per-task": ("CPUS_PER_TASK", lambda j, n: str(j.cpus_per_task), True),
    "cpus-per-tres": ("CPUS_PER_TRES", _NA, True),
    "deadline": ("DEADLINE", _NA, True),
    "delayboot": ("DELAY_BOOT", lambda j, n: "0:00", True),
    "derivedec": ("DERIVED_EC", lambda j, n: str(j.derived_exit_code), True),
    "eligibletime": ("ELIGIBLE_TIME", lambda j, n: _time_or_na(eligible_time(j)), True),
    "exit_code": ("EXIT_CODE", _exit_code, True),
    "hetjobid": ("HET_JOB_ID", _NA, True),
    "hetjobidset": ("HET_JOB_ID_SET", _NA, True),
    "hetjoboffset": ("HET_JOB_OFFSET", _NA, True),
    "lastschedeval": ("LAST_SCHED_EVAL",
                      lambda j, n: _time_or_na(j.last_sched_eval or j.submit_time), True),
    "maxcpus": ("MAX_CPUS", lambda j, n: str(j.num_cpus), True),
    "maxnodes": ("MAX_NODES", lambda j, n: str(j.max_nodes or j.num_nodes), True),
    "mcslabel": ("MCSLABEL", _NULL, True),
    "mem-per-tres": ("MEM_PER_TRES", _NA, True),
    "mintime": ("TIME_MIN", _time_min, True),
    "network": ("NETWORK", _NULL, True),
    "ntperboard": ("NTASKS_PER_BOARD", _ZERO, True),
    "ntpercore": ("NTASKS_PER_CORE", _NA, True),
    "ntpernode": ("NTASKS_PER_NODE", lambda j, n: str(j.ntasks_per_node or 0), True),
    "ntpersocket": ("NTASKS_PER_SOCKET", _NA, True),
    "numtasks": ("TASKS", lambda j, n: str(j.num_tasks), True),
    "origin": ("ORIGIN", lambda j, n: "NA", True),
    "originraw": ("ORIGIN_RAW", lambda j, n: "NA", True),
    "pendingtime": ("PENDING_TIME", _pending_time, True),
    "preempttime": ("PREEMPT_TIME", lambda j, n: _time_or_na(j.preempt_time), True),
    "prefer": ("PREFER", _NULL, True),
    "profile": ("PROFILE", lambda j, n: "NotSet", True),
    "reboot": ("REBOOT", _ZERO, True),
    "reqswitch": ("REQ_SWITCH", _ZERO, True),
    "requeue": ("REQUEUE", lambda j, n: str(int(j.requeue)), True),
    "resizetime": ("RESIZE_TIME", _NA, False),
    "restartcnt": ("RESTART_COUNT", lambda j, n: str(j.restart_count), True),
    "siblingsactive": ("ACTIVE_SIBLINGS", lambda j, n: "NA", True),
    "siblingsactiveraw": ("ACTIVE_SIBLINGS_RAW", lambda j, n: "NA", True),
    "siblingsviable": ("VIABLE_SIBLINGS", lambda j, n: "NA", True),
    "siblingsviableraw": ("VIALBLE_SIBLINGS_RAW", lambda j, n: "NA", True),  # sic
    "sperboard": ("SOCKETS_PER_BOARD", _ZERO, True),
    "stderr": ("STDERR", lambda j, n: j.std_err, True),
    "stdin": ("STDIN", lambda j, n: j.std_in, True),
    "stdout": ("STDOUT", lambda j, n: j.std_out, True),
    "system_comment": ("SYSTEM_COMMENT", _NULL, True),
    # a pending job shows what it asks for (measured on 22.05.8)
    "tres-alloc": ("TRES_ALLOC", lambda j, n: tres_string(j.tres_alloc or j.tres_req), True),
    "tres-bind": ("TRES_BIND", _NA, True),
    "tres-freq": ("TRES_FREQ", _NA, True),
    "tres-per-job": ("TRES_PER_JOB", lambda j, n: j.tres_per_job or "N/A", True),
    "tres-per-socket": ("TRES_PER_SOCKET", _NA, True),
    "tres-per-task": ("TRES_PER_TASK", lambda j, n: j.tres_per_task or "N/A", True),
    "wait4switch": ("WAIT4SWITCH", lambda j, n: "0:00", True),
}

#: Fields whose value for a pending job moves with the clock (not line-cached).
_CLOCK_FIELDS = frozenset({"pendingtime"})

#: ``-O Cluster``: the ClusterName of the cluster asked (set by `format_squeue`).
_CLUSTER: list[str] = ["cluster"]


def _field(spec: FieldSpec, long_names: bool) -> tuple[str, _Value, bool, bool | str] | None:
    """What one format field prints: (header, value, header cut, value cut -- True,
    False or ``_CUT_REASON``), or None for an unknown type."""
    if long_names:
        name = spec.key.lower()
        if name in _LONG_ONLY:
            header, value, cut = _LONG_ONLY[name]
            return header, value, True, cut
        entry = _LONG_NAMES.get(name)
        if entry is None:
            return None
        letter, header_override = entry
    else:
        if spec.key not in _LETTERS:
            return None
        letter, header_override = spec.key, None
    header, value = _LETTERS[letter]
    value_cut: bool | str = _CUT_REASON if letter == _CUT_REASON else letter not in _VALUE_UNCUT
    return header_override or header, value, letter not in _HEADER_UNCUT, value_cut


def _put(text: str | None, width: int, right: bool, cut: bool | str) -> str:
    """`print_str` with ``%R``'s rule: a ``(reason)`` is cut, a node list is not."""
    if cut == _CUT_REASON:
        cut = text is not None and text.startswith("(")
    return print_str(text, width, right, bool(cut))


def invalid_fields(fmt: str | None = None, Format: str | None = None) -> list[str]:
    """The errors squeue prints for unknown types (``Invalid job format specification: Z``)."""
    errors = []
    if fmt is not None:
        for f in parse_percent_format(fmt).fields:
            if f.key not in _LETTERS:
                errors.append(f"squeue: error: Invalid job format specification: {f.key}")
    if Format is not None:
        for f in parse_long_format(Format).fields:
            if _field(f, True) is None:
                errors.append(f"squeue: error: Invalid job format specification: {f.key}")
    return errors


def _cell(spec: FieldSpec, job: JobRecord | None, now: int, long_names: bool) -> str:
    """One field of one line (``job=None`` gives the header) with its suffix.

    An unknown ``-o`` type prints its token verbatim (``job_format_add_invalid``); an
    unknown ``-O`` name prints nothing but its suffix (measured on 22.05.8)."""
    field = _field(spec, long_names)
    if field is None:
        return spec.suffix if long_names else spec.raw
    header, value, header_cut, value_cut = field
    if job is None:
        return print_str(header, spec.width, spec.right, header_cut) + spec.suffix
    return _put(value(job, now), spec.width, spec.right, value_cut) + spec.suffix


def _line(spec: FormatSpec, job: JobRecord | None, now: int, long_names: bool) -> str:
    return spec.prefix + "".join(_cell(f, job, now, long_names) for f in spec.fields)


#: One compiled field: a constant text, or (value, width, right, cut, suffix).
_Compiled = str | tuple[_Value, int, bool, "bool | str", str]


def _compile(spec: FormatSpec, long_names: bool) -> list[_Compiled]:
    """`_cell`'s decisions taken once per format, not once per job and field (squeue
    prints 10,000 lines in well under 100 ms)."""
    out: list[_Compiled] = []
    for f in spec.fields:
        field = _field(f, long_names)
        if field is None:
            out.append(f.suffix if long_names else f.raw)
            continue
        _header, value, _header_cut, value_cut = field
        out.append((value, f.width, f.right, value_cut, f.suffix))
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
        if width > 0 and text is not None and cut is True:  # `print_str`, inlined
            text = text.rjust(width)[:width] if right else text[:width].ljust(width)
        else:
            text = _put(text, width, right, cut)
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
    cluster_name: str = "cluster",
) -> str:
    """What ``squeue`` prints for ``jobs`` (the records the filters kept), newline-terminated.

    ``fmt`` is ``-o``, ``Format`` ``-O``; otherwise ``-l`` (``long``) / ``--start``
    choose the format.  ``start`` also keeps only pending jobs and sorts by start
    time, like ``--start``.  ``-l`` prints the current date first.  ``sort`` is
    ``-S/--sort`` (default ``P,t,-p``).  ``--start`` prints its own format even
    with ``-O`` (not with ``-o``), as 22.05.8 does; ``-o ""`` prints empty lines.
    """
    _CLUSTER[0] = cluster_name
    records = list(jobs)
    if start:
        records = [j for j in records if j.state is JobState.PENDING]
    records = unpack_arrays(records) if array_unpack else combine_pending_arrays(records)
    sort_spec = sort if sort is not None else ("S" if start else DEFAULT_SORT)
    records = squeue_sort(records, sort_spec, now)

    long_names = Format is not None and fmt is None and not start
    if long_names:
        spec = parse_long_format(Format or "")
    else:
        chosen = fmt if fmt is not None else (
            START_FORMAT if start else LONG_FORMAT if long else DEFAULT_FORMAT)
        spec = parse_percent_format(chosen)

    lines: list[str] = []
    if long and not noheader:  # squeue.c prints the date with the header only
        lines.append(_time.strftime("%a %b %d %H:%M:%S %Y", _time.gmtime(now)))
    if not noheader:
        lines.append(_line(spec, None, now, long_names))
    compiled = _compile(spec, long_names)
    clock = long_names and any(f.key.lower() in _CLOCK_FIELDS for f in spec.fields)
    key = f"{long_names}:{Format if long_names else chosen}"
    old = _LINE_CACHE.pop(key, {})
    new: dict[int, tuple[JobRecord, int | None, str]] = {}
    for job in records:
        hit = old.get(id(job))
        at = None if job.state is JobState.PENDING and not clock else now
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
