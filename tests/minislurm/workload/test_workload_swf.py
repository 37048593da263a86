"""Standard Workload Format (SWF) import/export."""

from __future__ import annotations

from pathlib import Path

import pytest

from minislurm.job import JobRecord
from minislurm.sim.workload import (
    SWFFormatError,
    SWFRecord,
    WorkloadSpec,
    format_swf,
    from_job_records,
    from_workload,
    generate,
    parse_swf,
    read_swf,
    to_workload,
    write_swf,
)
from minislurm.sim.workload.swf import STATUS_CANCELLED, STATUS_COMPLETED, STATUS_FAILED
from minislurm.states import JobState, Reason

SAMPLE = """\
; Version: 2.2
; Computer: Example cluster
; UnixStartTime: 1767600000
; MaxProcs: 128
;
    1        0     10   3600   64  3500.5   -1   64   7200   -1  1  1  1  -1  1  1  -1  -1
    2       30     -1    100   -1      -1   -1   16     -1   -1  0  2  1  -1  1  1  -1  -1
    3       60     -1     -1   -1      -1   -1   -1     -1   -1  5  2  1  -1  1  1  -1  -1
"""


def test_parse_fields_and_header() -> None:
    swf = parse_swf(SAMPLE)
    assert swf.unix_start_time == 1767600000
    assert swf.max_procs == 128
    assert swf.header_value("computer") == "Example cluster"
    first = swf.records[0]
    assert (first.job_number, first.submit_time) == (1, 0)
    assert (first.wait_time, first.run_time) == (10, 3600)
    assert first.avg_cpu_time == 3500.5
    assert (first.requested_procs, first.requested_time, first.status) == (64, 7200, 1)
    assert swf.records[1].wait_time == -1


def test_requested_time_falls_back_to_run_time() -> None:
    r = parse_swf(SAMPLE).records
    assert r[0].time_limit_seconds == 7200
    assert r[1].time_limit_seconds == 100
    assert r[1].procs == 16


def test_import_as_single_processor_units() -> None:
    jobs = to_workload(parse_swf(SAMPLE))
    assert [j.job_id for j in jobs] == [1, 2]  # job 3 has no size and no time: skipped
    a, b = jobs
    assert (a.submit_time, a.nodes, a.cpus) == (1767600000, 64, 64)
    assert (a.time_limit, a.run_time) == (120, 3600)  # 7200 s requested = 120 min
    assert (b.time_limit, b.exit_code, b.user, b.account) == (2, 1, "user2", "group1")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("1 0 10 3600 64", "expected 18 fields, found 5"),
        ("1 0 10 3600 64 -1 -1 64 7200 -1 1 1 1 -1 1 1 -1 x", "think_time is not a number: 'x'"),
        ("1 0 10 36.5 64 -1 -1 64 7200 -1 1 1 1 -1 1 1 -1 -1", "field run_time must be an integer"),
        ("1 -5 10 3600 64 -1 -1 64 7200 -1 1 1 1 -1 1 1 -1 -1", "submit_time is negative"),
    ],
)
def test_a_bad_line_is_named(line: str, message: str) -> None:
    with pytest.raises(SWFFormatError) as err:
        parse_swf(f"; Version: 2.2\n\n{line}\n", "trace.swf")
    assert err.value.message.startswith("trace.swf:3: ")
    assert message in err.value.message


def test_round_trip_through_a_file(tmp_path: Path) -> None:
    swf = parse_swf(SAMPLE)
    path = tmp_path / "out.swf"
    write_swf(path, swf.records, swf.header)
    again = read_swf(path)
    assert again == swf
    assert path.read_text().startswith("; Version: 2.2\n; Computer: Example cluster\n")


def test_format_uses_minus_one_for_unknown() -> None:
    text = format_swf([SWFRecord(job_number=7, submit_time=12)], header=())
    assert text.split() == ["7", "12"] + ["-1"] * 16


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(SWFFormatError, match="Unable to open workload file"):
        read_swf(tmp_path / "none.swf")


def test_export_generated_jobs_expands_arrays() -> None:
    jobs = list(generate(WorkloadSpec(seed=5, days=2)))
    records = from_workload(jobs, start=jobs[0].submit_time)
    assert len(records) == sum(j.array_size or 1 for j in jobs)
    assert records[0].submit_time == 0
    assert [r.job_number for r in records] == list(range(1, len(records) + 1))
    train = next(j for j in jobs if j.kind == "train")
    rec = next(
        r for r in records
        if r.requested_procs == train.gpus and r.requested_time == train.time_limit * 60
    )  # fmt: skip
    assert rec.run_time <= rec.requested_time
    assert {r.wait_time for r in records} == {-1}
    assert len(parse_swf(format_swf(records)).records) == len(records)


def test_export_simulated_job_records() -> None:
    def rec(job_id: int, state: JobState, start: int | None, end: int | None) -> JobRecord:
        return JobRecord(
            job_id=job_id, name="j", user="u", uid=1000 + job_id, group="g", gid=100,
            account="a", partition="gpu", qos="normal", state=state, reason=Reason.NONE,
            submit_time=1000, start_time=start, end_time=end, time_limit=10, num_cpus=4,
            tres_alloc={"cpu": 4, "gres/gpu": 2, "node": 1} if start else {},
        )  # fmt: skip

    out = from_job_records(
        [rec(1, JobState.COMPLETED, 1010, 1310), rec(2, JobState.TIMEOUT, 1020, 1620),
         rec(3, JobState.CANCELLED, None, None)],
        start=1000,
    )  # fmt: skip
    assert [(r.wait_time, r.run_time, r.status) for r in out] == [
        (10, 300, STATUS_COMPLETED), (20, 600, STATUS_FAILED), (-1, -1, STATUS_CANCELLED),
    ]  # fmt: skip
    assert out[0].allocated_procs == 4 and out[0].requested_time == 600
    gpus = from_job_records([rec(1, JobState.COMPLETED, 1010, 1310)], start=1000, procs="gpus")
    assert gpus[0].allocated_procs == 2
