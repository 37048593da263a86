"""``minislurm.sim.simulate`` and ``python -m minislurm simulate``: workloads via the controller.

The hand-made trace ``TRACE`` runs on 4 single-processor units (``--procs 4``).  Time
limits are SWF's requested times (field 9): in whole minutes (Slurm's ``--time``), to
the second under ``--scheduler easy`` (textbook EASY); jobs end before them.

    job  submit  procs  run     limit (requested)
    J1   0       3      5000 s  6000 s (100 min)
    J2   1       2      5000 s  6000 s
    J3   2       2      5000 s  6000 s
    J4   3       1      11000 s 12000 s (200 min)
    J5   4       1      2000 s  3000 s  (50 min)

Expected starts, by hand (backfill plans with the *limits*, sees *actual* ends):

* FIFO: J1 at 0; J2 needs 2 procs, 1 is free, so it and everything behind it waits.
  J1 ends at 5000: J2 and J3 start (4 procs).  They end at 10000: J4 and J5 start.
  -> 0, 5000, 5000, 10000, 10000.
* EASY (one reservation, for the head job): J2 is reserved at J1's limit end, 6000, on
  2 procs.  J4 fits the free proc now and, holding it to 3+12000, still leaves 3 procs
  for J2 at 6000: backfilled at once (3).  J5 finds no free proc.  J1 ends at 5000: J2
  starts (1 proc left); J3, now the head, is reserved at 11000 (J2's limit end); J5
  (limit 3000) fits the last proc and ends before 11000: backfilled at 5000 (textbook
  EASY backfills at the event, not bf_interval later).  J2 ends at 10000 and frees 2
  procs (+1 free since J5 ended at 7000): J3 starts at 10000.
  -> 0, 5000, 10000, 3, 5000.
* Conservative (a reservation for every job): J2 and J3 are both reserved at 6000 (4
  procs).  J4 would keep one of them until 12003: it would delay J3, so it waits (its
  reservation is at 12000).  J5 ends by 3005 < 6000: backfilled in the pass
  bf_interval = 1 s after its submission (5; Slurm's semantics).  J1 ends at 5000: J2
  and J3 start; J4 starts when they end at 10000.
  -> 0, 5000, 5000, 10000, 5.
* Slurm's sched/backfill reserves for every job it tests (bf_max_job_test): same as
  conservative here.

Every start is checked to the second.
"""

from __future__ import annotations

import csv
import io
from dataclasses import replace
from pathlib import Path

import pytest
import simpy
from easy_reference import RefJob, easy_schedule

from minislurm.conf import load_config
from minislurm.ctld import Controller, JobBody
from minislurm.options import JobOptions
from minislurm.sim.command import csv_text, main, run
from minislurm.sim.simulate import SimulationResult, job_options, procs_config, simulate
from minislurm.sim.workload import (
    SWFFormatError,
    WorkloadJob,
    WorkloadSpec,
    format_swf,
    from_job_records,
    generate,
    parse_swf,
)
from minislurm.states import JobState

TRACE = """\
; Version: 2.2
; UnixStartTime: 1767600000
; MaxProcs: 4
1 0 -1  5000 3 -1 -1 3  6000 -1 1 1 1 -1 -1 -1 -1 -1
2 1 -1  5000 2 -1 -1 2  6000 -1 1 1 1 -1 -1 -1 -1 -1
3 2 -1  5000 2 -1 -1 2  6000 -1 1 2 1 -1 -1 -1 -1 -1
4 3 -1 11000 1 -1 -1 1 12000 -1 1 2 1 -1 -1 -1 -1 -1
5 4 -1  2000 1 -1 -1 1  3000 -1 1 3 1 -1 -1 -1 -1 -1
"""

#: the start of each job, per scheduler (module docstring)
EXPECTED: dict[str, list[int]] = {
    "fifo": [0, 5000, 5000, 10000, 10000],
    "easy": [0, 5000, 10000, 3, 5000],
    "conservative": [0, 5000, 5000, 10000, 5],
    "slurm": [0, 5000, 5000, 10000, 5],
}


def starts(result: SimulationResult) -> dict[int, int]:
    """SWF job number -> start, in seconds from the trace's UnixStartTime."""
    return {result.workload_id(j): j.start_time - result.epoch for j in result.jobs
            if j.start_time is not None}  # fmt: skip


@pytest.mark.parametrize("scheduler", list(EXPECTED))
def test_fifo_easy_conservative_start_times_by_hand(scheduler: str) -> None:
    result = simulate(parse_swf(TRACE), procs=4, scheduler=scheduler)
    assert starts(result) == dict(enumerate(EXPECTED[scheduler], start=1))
    assert all(j.state is JobState.COMPLETED for j in result.jobs)


#: J1 runs 100 s, J2 200 s, both asking for 90 s (``--time=2``: 120 s), from second 10.
OVERRUN = """; UnixStartTime: 1767600000
1 10 -1 100 1 -1 -1 1 90 -1 1 1 1 -1 -1 -1 -1 -1
2 10 -1 200 1 -1 -1 1 90 -1 1 1 1 -1 -1 -1 -1 -1
"""


def test_easy_of_procs_mode_kills_at_the_requested_second() -> None:
    """Textbook EASY: a job runs ``min(run time, requested time)``, to the second."""
    result = simulate(parse_swf(OVERRUN), procs=2, scheduler="easy")
    got = [(j.state, j.end_time - j.start_time, j.time_limit) for j in result.jobs
           if j.start_time is not None and j.end_time is not None]  # fmt: skip
    assert got == [(JobState.TIMEOUT, 90, 2), (JobState.TIMEOUT, 90, 2)]  # sacct: minutes


def _procs_trace() -> list[WorkloadJob]:
    """test_schedule_digests.py's ``--procs 32`` trace: 150 generated jobs, 7 time out."""
    return [replace(j, nodes=max(1, j.nodes * j.gpus_per_node // 2), array_size=None)
            for j in generate(WorkloadSpec(seed=3, days=2))][:150]  # fmt: skip


def test_easy_of_procs_mode_is_the_textbook_schedule() -> None:
    """Job for job, start and end (kills at the limit included), as tests/easy_reference.py."""
    jobs = _procs_trace()
    result = simulate(jobs, procs=32, scheduler="easy")
    e = result.epoch
    got = {result.workload_id(j): (j.start_time - e, j.end_time - e) for j in result.jobs
           if j.start_time is not None and j.end_time is not None}  # fmt: skip
    ref = easy_schedule([RefJob(j.job_id, j.submit_time - e, j.nodes, j.run_time, j.limit_secs)
                         for j in jobs], 32)  # fmt: skip
    assert len(got) == len(ref) > 100
    assert got == {o.job.number: (o.start, o.end) for o in ref}
    assert sum(j.state is JobState.TIMEOUT for j in result.jobs) == 7


def test_exact_limit_refines_the_minutes_of_time() -> None:
    """``Controller.submit(exact_limit=)``, the seam of textbook EASY: within ``--time``,
    EndTime is start + exact_limit while the limit shown stays in minutes."""
    ctl = Controller(procs_config(1), simpy.Environment())
    opts = JobOptions(time_limit=2, time_limit_set=True)
    with pytest.raises(ValueError, match="exact_limit=121 s is not within TimeLimit=2"):
        ctl.submit(opts, exact_limit=121)
    jid = ctl.submit(opts, body=JobBody(run_time=None), exact_limit=75)
    ctl.env.run(until=1)
    job = ctl.job(jid)
    assert job.state is JobState.RUNNING and job.time_limit == 2
    assert job.start_time is not None and job.end_time == job.start_time + 75
    ctl.env.run(until=100)
    assert (ctl.job(jid).state, ctl.job(jid).end_time) == (JobState.TIMEOUT, job.end_time)


@pytest.mark.parametrize("scheduler", ["slurm", "conservative", "fifo"])
def test_other_schedulers_of_procs_mode_keep_slurms_minute_limits(scheduler: str) -> None:
    """``--time=2``: J1 (100 s) completes; J2 is over its 120 s at 130 and is timed out
    at slurmctld's next periodic check (every 30 s from the start: 150)."""
    result = simulate(parse_swf(OVERRUN), procs=2, scheduler=scheduler)
    got = [(j.state, j.end_time - j.start_time) for j in result.jobs
           if j.start_time is not None and j.end_time is not None]  # fmt: skip
    assert got == [(JobState.COMPLETED, 100), (JobState.TIMEOUT, 140)]


def test_easy_on_a_slurm_conf_keeps_slurms_semantics() -> None:
    """Only ``--procs`` mode's EASY is the textbook's: the same machine given as a
    slurm.conf (``procs_config``) backfills ``bf_interval`` after the event and keeps
    whole-minute limits (J4 starts at 3 there too: the pass that J3's submission at 2
    asked for runs at 3, after J4's submission)."""
    result = simulate(parse_swf(TRACE), procs_config(4), scheduler="easy")
    assert starts(result) == {1: 0, 2: 5000, 3: 10000, 4: 3, 5: 5001}
    result = simulate(parse_swf(OVERRUN), procs_config(2), scheduler="easy")
    assert [j.state for j in result.jobs] == [JobState.COMPLETED, JobState.TIMEOUT]


def test_the_three_policies_really_differ() -> None:
    by = {s: starts(simulate(parse_swf(TRACE), procs=4, scheduler=s))
          for s in ("fifo", "easy", "conservative")}  # fmt: skip
    assert by["fifo"] != by["easy"] != by["conservative"] != by["fifo"]


def test_procs_mode_machine_and_time_limits() -> None:
    cfg = procs_config(4)
    assert [n.name for n in cfg.nodes] == ["p0001", "p0002", "p0003", "p0004"]
    assert all(n.cpus == 1 for n in cfg.nodes)
    result = simulate(parse_swf(TRACE), procs=4, scheduler="fifo")
    limits = {result.workload_id(j): j.time_limit for j in result.jobs}
    assert limits == {1: 100, 2: 100, 3: 100, 4: 200, 5: 50}  # minutes, from field 9
    procs = {result.workload_id(j): j.tres_alloc["node"] for j in result.jobs}
    assert procs == {1: 3, 2: 2, 3: 2, 4: 1, 5: 1}
    with pytest.raises(ValueError):
        procs_config(0)


def test_requested_time_unknown_falls_back_to_run_time() -> None:
    trace = "; UnixStartTime: 1767600000\n1 0 -1 90 1 -1 -1 1 -1 -1 1 1 1 -1 -1 -1 -1 -1\n"
    result = simulate(parse_swf(trace), procs=2)
    (job,) = result.jobs
    assert job.time_limit == 2  # ceil(90 s / 60)
    assert job.end_time - job.start_time == 90


def test_job_larger_than_the_machine_pends_and_the_simulation_still_ends() -> None:
    """EnforcePartLimits=NO: Slurm accepts it and leaves it PENDING (PartitionNodeLimit)."""
    trace = "; UnixStartTime: 1767600000\n1 0 -1 60 8 -1 -1 8 120 -1 1 1 1 -1 -1 -1 -1 -1\n"
    result = simulate(parse_swf(trace), procs=4)
    (job,) = result.jobs
    assert (job.state, job.reason.value) == (JobState.PENDING, "PartitionNodeLimit")
    assert result.rejected == 0 and result.metrics.started == 0


def test_swf_round_trip_through_simulate() -> None:
    first = simulate(parse_swf(TRACE), procs=4, scheduler="easy")
    exported = format_swf(from_job_records(first.jobs, start=first.epoch, procs="nodes"),
                          header=("Version: 2.2", f"UnixStartTime: {first.epoch}"))  # fmt: skip
    swf = parse_swf(exported)
    waits = {r.job_number: r.wait_time for r in swf.records}
    first_starts = starts(first)
    assert waits == {n: first_starts[n] - (n - 1) for n in range(1, 6)}  # submits 0..4
    assert [r.run_time for r in swf.records] == [5000, 5000, 5000, 11000, 2000]
    again = simulate(swf, procs=4, scheduler="easy")
    assert starts(again) == starts(first)


def test_generated_workload_on_the_teaching_cluster() -> None:
    cfg = load_config(None)
    jobs = list(generate(WorkloadSpec(seed=3, days=0.5)))
    result = simulate(jobs, cfg, scheduler="slurm")
    assert result.events > 0 and result.wall_seconds > 0
    arrays = sum(j.array_size or 1 for j in jobs)
    assert result.metrics.jobs >= arrays  # every array task is a record
    ended = [j for j in result.jobs if j.state.is_terminal]
    pending = [j for j in result.jobs if j.state is JobState.PENDING]
    assert len(ended) + len(pending) == len(result.jobs)
    assert all(j.reason.value != "Resources" for j in pending)  # stuck only for a limit
    again = simulate(jobs, cfg, scheduler="slurm")
    assert [(j.job_id, j.start_time, j.nodelist) for j in again.jobs] == [
        (j.job_id, j.start_time, j.nodelist) for j in result.jobs]


def test_job_options_mirror_sbatch_flags() -> None:
    job = next(j for j in generate(WorkloadSpec(seed=1, days=2)) if j.array_size)
    opts = job_options(job, load_config(None))
    assert opts.array == f"0-{job.array_size - 1}"
    assert opts.gres == f"gpu:{job.gpus_per_node}"
    assert (opts.nodes_min, opts.nodes_max, opts.time_limit) == (
        job.nodes, job.nodes, job.time_limit)


def test_unknown_scheduler() -> None:
    with pytest.raises(ValueError, match="unknown scheduler"):
        simulate([], procs=1, scheduler="lottery")


# ---------------------------------------------------------------- the command


def test_cli_writes_csv_and_prints_metrics(tmp_path: Path) -> None:
    swf = tmp_path / "t.swf"
    swf.write_text(TRACE)
    out = tmp_path / "jobs.csv"
    stdout, stderr = io.StringIO(), io.StringIO()
    rc = run(["--workload", str(swf), "--procs", "4", "--scheduler", "easy", "--out", str(out)],
             stdout, stderr)  # fmt: skip
    assert rc == 0, stderr.getvalue()
    assert "mean bounded slowdown" in stdout.getvalue()
    rows = list(csv.DictReader(out.open()))
    assert list(rows[0]) == ["job_id", "workload_id", "submit", "start", "end", "wait",
                             "procs", "gpus", "state"]  # fmt: skip
    assert [r["start"] for r in rows][:3] == ["0", "5000", "10000"]
    assert {r["state"] for r in rows} == {"COMPLETED"}


def test_cli_generate(tmp_path: Path) -> None:
    stdout, stderr = io.StringIO(), io.StringIO()
    rc = run(["--generate", "40", "--seed", "2", "--scheduler", "fifo", "--no-progress"],
             stdout, stderr)  # fmt: skip
    assert rc == 0, stderr.getvalue()
    assert "GPU utilisation" in stdout.getvalue()


def test_cli_bad_swf_line_is_named(tmp_path: Path) -> None:
    swf = tmp_path / "bad.swf"
    swf.write_text(TRACE + "6 5 -1 10 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1\n")
    stdout, stderr = io.StringIO(), io.StringIO()
    rc = run(["--workload", str(swf), "--procs", "4"], stdout, stderr)
    assert rc == 1
    assert stderr.getvalue() == (
        f"simulate: error: {swf}:9: expected 18 fields, found 16: "
        "'6 5 -1 10 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1'\n")
    with pytest.raises(SWFFormatError):  # the same error from Python
        parse_swf(swf.read_text(), str(swf))


@pytest.mark.parametrize(("argv", "rc", "text"), [
    (["--workload", "/nonexistent.swf", "--procs", "4"], 1,
     "simulate: error: Unable to open workload file /nonexistent.swf\n"),
    (["--procs", "4"], 2, "one of the arguments --workload --generate is required"),
    (["--generate", "5", "--scheduler", "lottery"], 2, "invalid choice: 'lottery'"),
    (["--generate", "5", "--procs", "0"], 2, "--procs: must be a positive number"),
    (["--generate", "0"], 2, "--generate: must be a positive number"),
    (["--generate", "5", "--conf", "/nonexistent/slurm.conf"], 1, "simulate: error: "),
])  # fmt: skip
def test_cli_errors_are_messages_not_tracebacks(argv: list[str], rc: int, text: str) -> None:
    stdout, stderr = io.StringIO(), io.StringIO()
    assert run(argv, stdout, stderr) == rc
    assert text in stderr.getvalue()
    assert "Traceback" not in stderr.getvalue()


def test_main_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    assert "--workload" in capsys.readouterr().out


def test_csv_text_marks_jobs_that_never_started() -> None:
    trace = "; UnixStartTime: 1767600000\n1 0 -1 60 8 -1 -1 8 120 -1 1 1 1 -1 -1 -1 -1 -1\n"
    text = csv_text(simulate(parse_swf(trace), procs=4), procs=True)
    row = text.splitlines()[1].split(",")
    assert row[3:6] == ["", "", ""] and row[-1] == "PENDING"
