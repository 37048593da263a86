"""squeue's output, compared byte for byte with captures of real Slurm 22.05.

The records below rebuild the cluster state each capture shows (case folder
``c2_formats_and_reasons``: jobs 46-58 on n[1-4], n4 drained for "maintenance";
``f3_array``: array job 108 ``--array=0-7%2``).
"""

from __future__ import annotations

import calendar
import dataclasses
from typing import Any

from captures import REF, needs_captures
from captures import capture_out as capture

from minislurm.cli.format.squeue import (
    DEFAULT_FORMAT,
    format_squeue,
    invalid_fields,
    squeue_sort,
    unpack_arrays,
)
from minislurm.job import JobRecord
from minislurm.states import JobState, Reason


def ts(hms: str, day: str = "2026-12-02") -> int:
    """Epoch seconds of ``day`` ``hms`` UTC (the captures' clock)."""
    y, m, d = (int(x) for x in day.split("-"))
    hh, mm, ss = (int(x) for x in hms.split(":"))
    return calendar.timegm((y, m, d, hh, mm, ss, 0, 0, 0))


def job(job_id: int, name: str, **kw: Any) -> JobRecord:
    """A job of root in debug, pending for Priority, 10-minute limit (the c2 defaults)."""
    base: dict[str, Any] = dict(
        job_id=job_id,
        name=name,
        user="root",
        uid=0,
        group="root",
        gid=0,
        account="root",
        partition="debug",
        qos="normal",
        state=JobState.PENDING,
        reason=Reason.PRIORITY,
        submit_time=ts("13:27:39"),
        time_limit=10,
        priority=4294901760 - job_id,
    )
    base.update(kw)
    return JobRecord(**base)


def running(job_id: int, name: str, start: str, nodes: str, **kw: Any) -> JobRecord:
    return job(
        job_id,
        name,
        state=JobState.RUNNING,
        reason=Reason.NONE,
        start_time=ts(start),
        nodelist=nodes,
        **kw,
    )


def c2_after_submit() -> list[JobRecord]:
    """01b: jobs just submitted, in the controller's order (``squeue`` sorts them)."""
    return [
        running(46, "timeout1", "13:27:38", "n1", time_limit=1),
        running(47, "bigrun", "13:27:38", "n[2-4]", num_nodes=3, num_cpus=12),
        job(48, "wantall", reason=Reason.RESOURCES, num_nodes=4, num_cpus=4, max_nodes=4),
        job(49, "small"),
        job(50, "depjob", reason=Reason.DEPENDENCY),
        job(51, "later", reason=Reason.BEGIN_TIME, start_time=ts("14:27:39")),
        job(53, "heldadm", reason=Reason.JOB_HELD_ADMIN, priority=0),
        job(52, "helduser", reason=Reason.JOB_HELD_USER, priority=0),
        job(54, "overmax", partition="short", reason=Reason.PARTITION_TIME_LIMIT),
        job(55, "toomany", reason=Reason.PARTITION_NODE_LIMIT, num_nodes=5, num_cpus=5),
    ]


def c2_after_drain() -> list[JobRecord]:
    """05-09: n4 drained, 49 started, 57 (afterok on failed 56) and 58 (-w n4) added."""
    jobs = {j.job_id: j for j in c2_after_submit()}
    jobs[48] = dataclasses.replace(jobs[48], reason=Reason.NODES_DOWN_DRAINED)
    jobs[49] = running(49, "small", "13:27:44", "n1")
    jobs[57] = job(
        57, "depnever", reason=Reason.DEPENDENCY_NEVER_SATISFIED, submit_time=ts("13:27:43")
    )
    jobs[58] = job(
        58,
        "wantn4",
        reason=Reason.REQ_NODE_NOT_AVAIL,
        reason_detail="UnavailableNodes:n4",
        req_nodelist="n4",
    )
    order = [46, 47, 48, 49, 50, 51, 53, 52, 54, 55, 57, 58]
    return [jobs[i] for i in order]


@needs_captures
def test_default_squeue_after_submit_matches_capture() -> None:
    out = capture("c2_formats_and_reasons", "01b_squeue_after_submit")
    expected = out.split("\n\n")[0] + "\n"
    assert format_squeue(c2_after_submit(), now=ts("13:27:41")) == expected


@needs_captures
def test_idle_squeue_prints_only_the_header() -> None:
    out = capture("c2_formats_and_reasons", "00_idle_views").split("\n\n")
    assert format_squeue([], now=0) == out[2] + "\n"


@needs_captures
def test_squeue_long_matches_capture_including_the_date_line() -> None:
    expected = capture("c2_formats_and_reasons", "05_squeue_long")
    assert format_squeue(c2_after_drain(), long=True, now=ts("13:27:46")) == expected


@needs_captures
def test_squeue_custom_format_matches_capture() -> None:
    fmt = "%.7i %.9P %.10j %.8u %.2t %.10M %.10l %.6D %.4C %b %R"
    expected = capture("c2_formats_and_reasons", "07_squeue_custom")
    assert format_squeue(c2_after_drain(), fmt=fmt, now=ts("13:27:47")) == expected


@needs_captures
def test_squeue_Format_matches_capture() -> None:
    fields = "JobID,Name,State,Reason,TimeLimit,TimeLeft,NumNodes,NumCPUs,tres-per-node,NodeList"
    expected = capture("c2_formats_and_reasons", "09_squeue_Format")
    assert format_squeue(c2_after_drain(), Format=fields, now=ts("13:27:47")) == expected


@needs_captures
def test_squeue_noheader_custom_matches_capture() -> None:
    expected = capture("c2_formats_and_reasons", "21_squeue_user_jobs_array")
    out = format_squeue(c2_after_drain(), fmt="%A %i %j", noheader=True, now=ts("13:27:47"))
    assert "".join(out.splitlines(keepends=True)[:3]) == expected


def array_108() -> list[JobRecord]:
    """f3: 108_0 and 108_1 running as jobs 109/110, 108_[2-7%2] pending."""
    arr: dict[str, Any] = dict(name="arr", array_job_id=108, array_max_tasks=2,
                               submit_time=ts("13:40:07"))
    return [
        job(
            108,
            state=JobState.PENDING,
            reason=Reason.JOB_ARRAY_TASK_LIMIT,
            array_task_str="2-7%2",
            **arr,
        ),
        running(109, start="13:40:07", nodes="n1", array_task_id=0, **arr),
        running(110, start="13:40:07", nodes="n1", array_task_id=1, **arr),
    ]


@needs_captures
def test_squeue_r_unpacks_the_pending_array_like_the_capture() -> None:
    expected = capture("f3_array", "03_squeue_r")
    out = format_squeue(array_108(), fmt="%i %A %a %j %T %r", array_unpack=True, now=ts("13:40:08"))
    assert out == expected


def test_pending_array_remainder_prints_as_one_line() -> None:
    out = format_squeue(array_108(), fmt="%i %t %r", noheader=True, now=ts("13:40:08"))
    assert out.splitlines()[0] == "108_[2-7%2] PD JobArrayTaskLimit"


def test_unpack_arrays_ignores_the_throttle_and_keeps_other_jobs() -> None:
    tasks = unpack_arrays(array_108())
    assert [t.job_id_str for t in tasks] == [f"108_{i}" for i in range(2, 8)] + ["108_0", "108_1"]


def test_time_formats_of_TIME_and_TIME_LIMIT() -> None:
    now = ts("13:00:00")
    cases = [
        (now, 10, "0:00", "10:00"),
        (now - 83, 60, "1:23", "1:00:00"),
        (now - 3723, None, "1:02:03", "UNLIMITED"),
        (now - 93784, 2 * 1440, "1-02:03:04", "2-00:00:00"),
        (now, -1, "0:00", "INVALID"),
    ]
    for start, limit, used, shown_limit in cases:
        j = dataclasses.replace(
            running(1, "x", "00:00:00", "n1", time_limit=limit), start_time=start
        )
        assert format_squeue([j], fmt="%M|%l", noheader=True, now=now) == f"{used}|{shown_limit}\n"


def test_start_lists_pending_jobs_by_expected_start_with_schednodes() -> None:
    jobs = c2_after_submit()
    out = format_squeue(jobs, start=True, now=ts("13:27:41")).splitlines()
    assert out[0] == (
        "             JOBID PARTITION     NAME     USER ST          START_TIME"
        "  NODES SCHEDNODES           NODELIST(REASON)"
    )  # one space before %.19S: measured on 22.05.8 (test_fidelity_sched_nodes)
    # increasing start time; a job without one sorts after all others (22.05.8 measured:
    # squeue --start lists 61 (20:09:52), 63 (20:11:52), then held 58 and 62 with N/A)
    assert out[1].split()[0] == "51" and "2026-12-02T14:27:39" in out[1]
    assert "                N/A" in out[-1]
    assert all(" PD " in line for line in out[1:])
    assert len(out) == 1 + sum(j.state is JobState.PENDING for j in jobs)


def test_sort_by_priority_descending_then_partition() -> None:
    ids = [j.job_id for j in squeue_sort(c2_after_submit(), "P,t,-p", ts("13:27:41"))]
    assert ids == [48, 49, 50, 51, 55, 53, 52, 46, 47, 54]


def test_invalid_letter_is_printed_verbatim_and_reported() -> None:
    out = format_squeue([job(5, "x")], fmt="%i %! end", noheader=True, now=0)
    assert out == "5 %! end\n"
    assert invalid_fields(fmt="%i %!") == ["squeue: error: Invalid job format specification: !"]
    assert invalid_fields(Format="JobID,Bogus") == [
        "squeue: error: Invalid job format specification: Bogus"
    ]


def test_prefix_and_suffix_text_is_kept() -> None:
    out = format_squeue([job(7, "n")], fmt="JobName=[%j] Nodes=%D", noheader=True, now=0)
    assert out == "JobName=[n] Nodes=1\n"
    assert DEFAULT_FORMAT.startswith("%.18i")


def test_pending_tasks_split_off_an_array_are_folded_back_without_the_throttle() -> None:
    meta, run0, run1 = array_108()
    task9 = dataclasses.replace(meta, job_id=120, array_task_str=None, array_task_id=9)
    other = dataclasses.replace(task9, name="other", array_task_id=10, job_id=121)
    out = format_squeue(
        [meta, run0, run1, task9, other], fmt="%i", noheader=True, now=ts("13:40:08")
    )
    assert out.splitlines() == ["108_[2-7,9]", "108_10", "108_0", "108_1"]


def test_f1_directive_captures_print_the_prefixed_custom_line() -> None:
    first = job(82, "first", time_limit=5)
    out = format_squeue(
        [first], noheader=True, now=0, fmt="JobName=[%j] TimeLimit=%l Partition=%P Nodes=%D CPUs=%C"
    )
    if REF.is_dir():
        assert (
            out
            == capture("f1_sbatch_directive_parsing", "show_after_command").splitlines(
                keepends=True
            )[0]
        )
    assert out == "JobName=[first] TimeLimit=5:00 Partition=debug Nodes=1 CPUs=1\n"
