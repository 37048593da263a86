"""Times and exit codes the controller reports, as Slurm 22.05 shows them.

* a pending job waiting for its BeginTime shows it as EligibleTime, AccrueTime and
  StartTime, and EndTime = StartTime + TimeLimit (capture c2 15_scontrol_show_job_pending,
  job ``later``); a requeued job is submitted anew and waits 121 s;
* a running job's EndTime is its start + TimeLimit (job ``small`` there);
* sacct's job line of a TIMEOUT or cancelled job shows 0:0, its ``.batch`` step 0:15,
  while scontrol keeps ExitCode=0:15 (capture c2 25_sacct_default, jobs 46 and 47);
* a job killed by a node set DOWN has ExitCode 0:0;
* jobs waiting behind a blocker start in priority order (``--nice``).
"""

from __future__ import annotations

from ctld_helpers import gpu_cluster, ref_controller, sub

from minislurm.states import JobState, Reason


def test_a_job_with_begin_shows_its_begin_time_as_eligible_and_start() -> None:
    ctl = ref_controller()
    later = sub(ctl, 10, begin=ctl.now + 3600, time_limit=10)
    ctl.run_for(1)
    job = ctl.job(later)
    begin = ctl.now - 1 + 3600
    assert job.reason is Reason.BEGIN_TIME
    assert (job.eligible_time, job.accrue_time, job.start_time) == (begin, begin, begin)
    assert job.end_time == begin + 600


def test_a_running_job_shows_its_start_plus_time_limit_as_end() -> None:
    ctl = gpu_cluster()  # MaxTime=UNLIMITED
    small = sub(ctl, 600, time_limit=10)
    forever = sub(ctl, None, time_limit=None)  # --time=0 or UNLIMITED
    ctl.run_for(3)
    job, unlimited = ctl.job(small), ctl.job(forever)
    assert job.state is JobState.RUNNING and job.start_time is not None
    assert job.end_time == job.start_time + 600
    assert unlimited.time_limit is None and unlimited.start_time is not None
    assert unlimited.end_time == unlimited.start_time + 365 * 86400
    active = {r.job_id: r for r in ctl.accounting()}
    assert active[small].end_time is None  # sacct: End=Unknown while it runs


def test_a_pending_job_without_an_expected_start_has_no_end() -> None:
    ctl = ref_controller()
    sub(ctl, 600, nodes_min=4, exclusive="exclusive")
    held = sub(ctl, 10, hold=True)
    ctl.run_for(3)
    assert (ctl.job(held).start_time, ctl.job(held).end_time) == (None, None)


def test_a_requeued_job_is_submitted_anew_and_waits_121_seconds() -> None:
    ctl = ref_controller()
    rq = sub(ctl, 30, nodelist="n1", time_limit=1)
    ctl.run_for(5)
    first_submit = ctl.job(rq).submit_time
    ctl.update_node("n1", "down", "test")
    job = ctl.job(rq)
    assert job.submit_time == ctl.now > first_submit
    assert job.eligible_time == job.start_time == job.submit_time + 121
    assert job.end_time == job.start_time + 60
    (dead,) = [r for r in ctl.accounting() if r.state is JobState.NODE_FAIL]
    assert dead.submit_time == first_submit  # the attempt that died keeps its submit time


def test_a_job_killed_by_a_node_set_down_has_exit_code_0_0() -> None:
    ctl = ref_controller()
    norq = sub(ctl, 30, nodelist="n1", requeue=False)
    ctl.run_for(5)
    ctl.update_node("n1", "down", "test")
    job = ctl.job(norq)
    assert (job.state, job.reason) == (JobState.NODE_FAIL, Reason.NODE_DOWN)
    assert (job.exit_code, job.signal) == (0, 0)


def test_timeout_and_cancel_exit_codes_of_job_lines_and_batch_steps() -> None:
    ctl = ref_controller()
    timeout1 = sub(ctl, None, time_limit=1)
    bigrun = sub(ctl, 600)
    ctl.run_for(10)
    ctl.cancel(bigrun)
    ctl.run()
    assert (ctl.job(timeout1).state, ctl.job(timeout1).signal) == (JobState.TIMEOUT, 15)
    records = {r.job_id: r for r in ctl.accounting()}
    for jid, state in ((timeout1, JobState.TIMEOUT), (bigrun, JobState.CANCELLED)):
        rec = records[jid]
        assert (rec.state, rec.exit_code, rec.signal) == (state, 0, 0)
        (batch,) = rec.steps
        assert (batch.state, batch.exit_code, batch.signal) == (JobState.CANCELLED, 0, 15)


def test_jobs_behind_a_blocker_start_in_priority_order() -> None:
    ctl = ref_controller()
    sub(ctl, 6, name="blocker", nodes_min=4, exclusive="exclusive")
    nice = {"p0": 0, "p300": 300, "p100": 100, "p0b": 0, "p50": 50}
    ids = {sub(ctl, 1, name=label, nodes_min=4, exclusive="exclusive", nice=value): label
           for label, value in nice.items()}
    ctl.run()
    started = sorted(ids, key=lambda j: (ctl.job(j).start_time or 0, j))
    assert [ids[j] for j in started] == ["p0", "p0b", "p50", "p100", "p300"]
