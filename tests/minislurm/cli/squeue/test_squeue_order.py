"""squeue's order of jobs that tie on every ``--sort`` key, as real Slurm 22.05.8 prints it.

Measured on the reference cluster (scripts/realslurm, 2026-12-03), glibc 2.36; the
comparators were observed by spying on ``qsort`` (LD_PRELOAD) while squeue ran:

* squeue loads the jobs in slurmctld's job list order (``squeue --json``): creation
  order, except that a job array's pending record moves behind each task it starts.
* ``sort_jobs_by_start_time`` then ``sort_job_list`` (``-S``, default ``P,t,-p``), each
  a stable merge sort, but sort.c's start-time comparator says "greater" for any job
  without a start time, even against itself: those jobs end up last and reversed.
  So six held jobs a..f print ``f e d c b a``, and the held array ``arr`` comes before
  the held ``unlimited`` submitted before it
  (tests/minislurm/cli/squeue/test_queue_differential.py).
"""

from __future__ import annotations

import calendar
from typing import Any

import pytest

from minislurm.cli.format.squeue import format_squeue, job_list_order, squeue_sort
from minislurm.job import JobRecord
from minislurm.states import JobState, Reason

T0 = calendar.timegm((2026, 12, 3, 20, 6, 0, 0, 0, 0))


def rec(job_id: int, name: str, **kw: Any) -> JobRecord:
    """A pending job of root in debug (priority/basic counts down)."""
    base: dict[str, Any] = dict(
        job_id=job_id, name=name, user="root", uid=0, group="root", gid=0, account="root",
        partition="debug", qos="normal", state=JobState.PENDING, reason=Reason.PRIORITY,
        submit_time=T0, time_limit=10, priority=4294901760 - job_id,
    )
    base.update(kw)
    return JobRecord(**base)


def held(job_id: int, name: str, **kw: Any) -> JobRecord:
    return rec(job_id, name, reason=Reason.JOB_HELD_USER, priority=0, **kw)


def names(jobs: list[JobRecord], sort: str, now: int = T0 + 10) -> list[str]:
    return [j.name for j in squeue_sort(jobs, sort, now)]


def test_held_jobs_newest_first_whatever_the_tied_key() -> None:
    """Held 22..27 (a-d in one second, e and f later): default ``f e d c b a``;
    ``-S V`` ``d c b a e f``; ``-S i`` and ``-S j`` ascending."""
    jobs = [held(22 + i, n, submit_time=T0 + (0 if i < 4 else i)) for i, n in enumerate("abcdef")]
    assert names(jobs, "P,t,-p") == list("fedcba")
    for tied in ("P", "t", "p", "-V", ""):
        assert names(jobs, tied) == list("fedcba"), tied
    assert names(jobs, "V") == list("dcbaef")
    assert names(jobs, "i") == names(jobs, "j") == list("abcdef")


def _mixed() -> list[JobRecord]:
    """58 h1 held, 59 big and 60 r2 running since 20:06:52, 61 p1 and 63 p2 pending with
    expected starts 20:09:52 and 20:11:52, 62 h2 held."""
    start = T0 + 52
    return [
        held(58, "h1"),
        rec(59, "big", state=JobState.RUNNING, reason=Reason.NONE, start_time=start),
        rec(60, "r2", state=JobState.RUNNING, reason=Reason.NONE, start_time=start),
        rec(61, "p1", reason=Reason.RESOURCES, start_time=start + 180),
        held(62, "h2"),
        rec(63, "p2", start_time=start + 300),
    ]


@pytest.mark.parametrize(("sort", "expected"), [
    ("", "p2 p1 big r2 h2 h1"),
    ("S", "big r2 p1 p2 h1 h2"),
    ("-S", "p2 p1 big r2 h1 h2"),
    ("P,t,-p", "p1 p2 h2 h1 big r2"),
])
def test_start_time_passes_put_unknown_starts_last_and_reversed(sort: str, expected: str) -> None:
    """The orders squeue 22.05.8 printed for these six jobs with ``-S <sort>``."""
    assert " ".join(names(_mixed(), sort, now=T0 + 56)) == expected


def test_squeue_start_lists_known_starts_first() -> None:
    """``squeue --start``: 61 p1, 63 p2, then the held 58 h1 and 62 h2 (N/A)."""
    out = format_squeue(_mixed(), start=True, noheader=True, fmt="%i %S", now=T0 + 56)
    assert out.split() == ["61", "2026-12-03T20:09:52", "63", "2026-12-03T20:11:52",
                           "58", "N/A", "62", "N/A"]


def _task(task_id: int, job_id: int, array: int = 40, priority: int = 7) -> JobRecord:
    return rec(job_id, "arr", array_job_id=array, array_task_id=task_id, priority=priority,
               state=JobState.RUNNING, reason=Reason.NONE, start_time=T0)


def test_job_list_order_moves_an_array_behind_its_started_tasks() -> None:
    """``squeue --json`` order on 22.05.8: 39 43 41 42 44 45 47 46 48 40 (array 40's
    tasks 0-4 started as 43 44 45 47 48; 41, 42 and 46 other jobs)."""
    jobs = [
        held(39, "h1"),
        rec(40, "arr", array_job_id=40, array_task_str="5%3", priority=7),
        held(41, "h2"),
        rec(42, "r1", state=JobState.RUNNING, start_time=T0),
        _task(0, 43), _task(1, 44), _task(2, 45),
        rec(46, "r2", state=JobState.RUNNING, start_time=T0 + 3),
        _task(3, 47), _task(4, 48),
    ]
    assert [j.job_id for j in job_list_order(jobs)] == [39, 43, 41, 42, 44, 45, 47, 46, 48, 40]


def test_started_array_tasks_keep_their_order_and_pending_tasks_stay_together() -> None:
    """Capture f3_array/03 (``squeue -r``): 108_2..108_7 pending, then 108_0 (109) and
    108_1 (110), started in the same second."""
    meta = rec(108, "arr", array_job_id=108, array_task_str="2-7%2", priority=5,
               reason=Reason.JOB_ARRAY_TASK_LIMIT)
    run0, run1 = _task(0, 109, array=108, priority=5), _task(1, 110, array=108, priority=5)
    out = format_squeue([meta, run0, run1], fmt="%i", noheader=True, array_unpack=True, now=T0)
    assert out.split() == [f"108_{i}" for i in range(2, 8)] + ["108_0", "108_1"]


def test_differential_queue_default_order() -> None:
    """The differential test's queue (held short job, partition-limit jobs, held
    'unlimited', held array 'arr', one running job): 22.05.8's default order."""
    jobs = [
        held(14, "held", partition="short"),
        rec(15, "toomanynodes", reason=Reason.PARTITION_NODE_LIMIT),
        rec(16, "overmax", reason=Reason.PARTITION_TIME_LIMIT),
        rec(17, "negtime", reason=Reason.PARTITION_TIME_LIMIT),
        held(18, "unlimited", time_limit=None),
        rec(19, "toomanycpus", reason=Reason.PARTITION_CONFIG),
        held(20, "arr", array_job_id=20, array_task_str="0-3%2"),
        rec(21, "running", state=JobState.RUNNING, reason=Reason.NONE, start_time=T0),
    ]
    assert names(jobs, "P,t,-p") == ["toomanynodes", "overmax", "negtime", "toomanycpus",
                                     "arr", "unlimited", "running", "held"]
