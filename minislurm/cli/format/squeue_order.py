"""Which records squeue lists and in which order: ``-r``, array folding, ``--sort``.

Mirrors ``src/squeue/print.c`` (``_combine_pending_array_tasks`` and the
``-r/--array`` unpacking in ``print_job_from_format``) and ``src/squeue/sort.c``:
a first pass by expected start time (latest first; an unknown start counts as
``now + 100``), then the ``--sort`` keys applied right to left (default
``P,t,-p``).  Every pass is stable, so ties keep the controller's job order, as
glibc's merge-sorting ``qsort`` does.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence

from minislurm import hostlist
from minislurm.job import JobRecord
from minislurm.states import JobState

#: squeue's default ``--sort``.
DEFAULT_SORT = "P,t,-p"


def unpack_arrays(jobs: Iterable[JobRecord]) -> list[JobRecord]:
    """``squeue -r``: one record per task of a pending array remainder (``108_[2-7%2]``)."""
    out: list[JobRecord] = []
    for job in jobs:
        if job.array_task_str is None:
            out.append(job)
            continue
        spec = job.array_task_str.split("%", 1)[0]
        for task in hostlist.expand(f"t[{spec}]"):
            out.append(dataclasses.replace(job, array_task_id=int(task[1:]), array_task_str=None))
    return out


def _bit_fmt(ids: Iterable[int]) -> str:
    """Slurm's ``bit_fmt``: ``2-7``, ``1,3,5``, ``0-1,4``."""
    out: list[str] = []
    run: list[int] = []
    for i in sorted(set(ids)):
        if run and i == run[-1] + 1:
            run.append(i)
            continue
        if run:
            out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
        run = [i]
    if run:
        out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return ",".join(out)


def combine_pending_arrays(jobs: Sequence[JobRecord]) -> list[JobRecord]:
    """``_combine_pending_array_tasks``: fold pending tasks into their array's pending record.

    A pending task record (``array_task_id`` set) of the same array, name and
    partition as a pending remainder record (``array_task_str`` set) is merged
    into it; the remainder's task list is then rebuilt with ``bit_fmt``, which
    drops the ``%throttle`` as real squeue does.  The remainder keeps its reason.
    """
    records = list(jobs)
    metas = [j for j in records if j.state is JobState.PENDING and j.array_task_str is not None]
    for meta in metas:
        tasks = [t for t in records
                 if t.state is JobState.PENDING and t.array_task_str is None
                 and t.array_task_id is not None and t.array_job_id == meta.array_job_id
                 and t.name == meta.name and t.partition == meta.partition]
        if not tasks:
            continue
        own = hostlist.expand(f"t[{(meta.array_task_str or '').split('%', 1)[0]}]")
        ids = [int(x[1:]) for x in own] + [t.array_task_id or 0 for t in tasks]
        merged = dataclasses.replace(meta, array_task_str=_bit_fmt(ids))
        records = [merged if r is meta else r for r in records
                   if all(r is not t for t in tasks)]
    return records


def _start_key(job: JobRecord, now: int) -> int:
    """sort.c ``_get_start_time``: unknown start sorts as ``now + 100``."""
    if not job.start_time:
        return now + 100
    if job.state is JobState.PENDING and job.start_time < now:
        return now
    return job.start_time


_SORT_KEYS: dict[str, Callable[[JobRecord, int], object]] = {
    "C": lambda j, n: j.num_cpus,
    "D": lambda j, n: j.num_nodes,
    "e": lambda j, n: j.end_time or 0,
    "i": lambda j, n: (j.array_job_id or j.job_id, j.array_task_id or 0),
    "j": lambda j, n: j.name,
    "l": lambda j, n: j.time_limit if j.time_limit is not None else 2**32,
    "M": lambda j, n: j.run_time(n),
    "N": lambda j, n: j.nodelist,
    "p": lambda j, n: j.priority,
    "P": lambda j, n: j.partition,
    "Q": lambda j, n: j.priority,
    "S": _start_key,
    "t": lambda j, n: j.state.short,
    "T": lambda j, n: j.state.value,
    "u": lambda j, n: j.user,
    "U": lambda j, n: j.uid,
    "V": lambda j, n: j.submit_time,
}


def sort_jobs(jobs: Sequence[JobRecord], sort: str, now: int) -> list[JobRecord]:
    """Order jobs as ``squeue --sort=<sort>`` does (stable, keys applied right to left)."""
    ordered = sorted(jobs, key=lambda j: _start_key(j, now), reverse=True)
    for i in range(len(sort) - 1, -1, -1):
        letter = sort[i]
        if letter in ",+-" or letter not in _SORT_KEYS:
            continue
        reverse = i > 0 and sort[i - 1] == "-"
        key = _SORT_KEYS[letter]
        ordered.sort(key=lambda j, k=key: k(j, now), reverse=reverse)  # type: ignore[misc]
    return ordered


__all__ = ["DEFAULT_SORT", "combine_pending_arrays", "sort_jobs", "unpack_arrays"]
