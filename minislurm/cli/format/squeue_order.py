"""Which records squeue lists and in which order: ``-r``, array folding, ``--sort``.

Mirrors ``src/squeue/print.c`` (``_combine_pending_array_tasks`` and the
``-r/--array`` unpacking in ``print_job_from_format``) and ``src/squeue/sort.c``:
a first pass by expected start time (latest first; an unknown start counts as
``now + 100``), then the ``--sort`` keys applied right to left (default
``P,t,-p``).  Every pass is stable, so ties keep the controller's job order, as
glibc's merge-sorting ``qsort`` does.
"""

from __future__ import annotations

import bisect
import dataclasses
from collections.abc import Callable, Iterable, Sequence

from minislurm.common import hostlist
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


#: What a ``--sort`` letter compares (``slurm_sort_job_*`` of squeue/sort.c).
SortValue = int | str | tuple[int, int]

_SORT_KEYS: dict[str, Callable[[JobRecord, int], SortValue]] = {
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
    "t": lambda j, n: j.state.short,
    "T": lambda j, n: j.state.value,
    "u": lambda j, n: j.user,
    "U": lambda j, n: j.uid,
    "V": lambda j, n: j.submit_time,
}


def job_list_order(records: Iterable[JobRecord]) -> list[JobRecord]:
    """``records`` (job id order) in slurmctld's job list order, which is the order
    ``slurm_load_jobs`` answers in (``squeue --json`` on 22.05.8: 39 43 41 42 44 45 47
    46 48 40 for the array 40 whose tasks started as 43 44 45 47 48).

    The list is in creation order, except for job arrays: ``job_array_split`` gives the
    record that starts a task a new job id where it stands and appends a new record
    for the tasks still pending.  So the first started task sits at the array's place,
    each later one where the pending record was (just before the id of the task
    started before it), and the pending record (or the last task, which keeps the
    array's id) just before the id of the newest started task.  Computed from the
    records given: a started task filtered out of them is not accounted for.
    """
    jobs = list(records)
    started: dict[int, list[int]] = {}
    for job in jobs:
        if job.array_job_id is not None and job.job_id != job.array_job_id:
            started.setdefault(job.array_job_id, []).append(job.job_id)
    for ids in started.values():
        ids.sort()

    def place(job: JobRecord) -> float:
        array = job.array_job_id
        if array is None:
            return job.job_id
        tasks = started.get(array, [])
        if job.job_id == array:
            return tasks[-1] - 0.5 if tasks else array
        i = bisect.bisect_left(tasks, job.job_id)
        return array if i == 0 else tasks[i - 1] - 0.5

    return sorted(jobs, key=place)


_Group = list[JobRecord]


def _loaded_groups(records: Sequence[JobRecord]) -> list[_Group]:
    """``records`` as squeue's list of ``squeue_job_rec_t``: the task records of one
    pending array record (``-r``: same ``job_id``, consecutive) kept together as the one
    record squeue sorts and then prints task by task."""
    groups: list[_Group] = []
    for job in records:
        if groups and groups[-1][0].job_id == job.job_id:
            groups[-1].append(job)
        else:
            groups.append([job])
    return groups


def _first_job(key: Callable[[JobRecord, int], SortValue], now: int
               ) -> Callable[[_Group], SortValue]:
    """A group's sort key: its first job's (the others are tasks of the same array)."""
    return lambda group: key(group[0], now)


def _by_start(groups: list[_Group], now: int, reverse: bool) -> list[_Group]:
    """One ``list_sort`` with sort.c's ``_sort_job_by_time_start``, as 22.05.8 behaves.

    Measured (glibc ``qsort`` spied with LD_PRELOAD): a record without a start time
    compares greater than every record, itself included, whichever the direction, so
    glibc's merge sort puts those records last and in *reverse* order; the others are
    ordered by ``_get_start_time`` (a pending start in the past counts as ``now``),
    stably.  ``sort_jobs_by_start_time`` runs before ``sort_job_list`` has set sort.c's
    static ``now``: there ``now`` is 0 and ``reverse`` (latest start first).
    """
    def start(group: _Group) -> int:
        job = group[0]
        at = int(job.start_time or 0)
        return now if job.state is JobState.PENDING and at < now else at

    known = [g for g in groups if g[0].start_time]
    unknown = [g for g in groups if not g[0].start_time]
    known.sort(key=start, reverse=reverse)
    return known + unknown[::-1]


def squeue_sort(records: Sequence[JobRecord], sort: str, now: int) -> list[JobRecord]:
    """The order squeue 22.05 prints ``records`` in (print.c ``print_jobs_array``).

    ``records`` are taken in the order squeue loads them (`job_list_order`: creation
    order, an array's pending record moved behind its newest started task).  First
    ``sort_jobs_by_start_time`` (`_by_start`: started jobs and pending jobs with an
    expected start, latest first; then the others in reverse order, newest first),
    then ``sort_job_list``: the ``--sort`` keys right to left (default ``P,t,-p``), each
    a stable ``list_sort``.  So among pending jobs equal in every key the newest comes
    first: 22.05.8 lists the held array ``arr`` before the held ``unlimited`` submitted
    before it, both priority 0
    (tests/minislurm/cli/squeue/test_queue_differential.py), and a held job 53
    before a held job 52 (capture c2 01b).
    """
    groups = _by_start(_loaded_groups(job_list_order(records)), 0, reverse=True)
    for i in range(len(sort) - 1, -1, -1):
        letter = sort[i]
        reverse = i > 0 and sort[i - 1] == "-"
        if letter == "S":
            groups = _by_start(groups, now, reverse)
            continue
        key = _SORT_KEYS.get(letter)
        if letter in ",+-" or key is None:
            continue
        groups.sort(key=_first_job(key, now), reverse=reverse)
    return [job for group in groups for job in group]


__all__ = [
    "DEFAULT_SORT", "combine_pending_arrays", "job_list_order", "squeue_sort", "unpack_arrays",
]
