"""The controller's job state machine and pending reasons (Slurm 22.05 names).

The scenario mirrors capture c2_formats_and_reasons: a 4-node cluster, a
3-node run and a short job running, a job wanting all 4 nodes (Resources), a
small job behind it (Priority), a dependent, a job with --begin, held jobs,
partition limits.
"""

from __future__ import annotations

import pytest
from ctld_helpers import ref_controller, signals_sent, started_at, sub

from minislurm.errors import SlurmError
from minislurm.states import JobState, Reason


def test_reasons_of_the_captured_queue() -> None:
    ctl = ref_controller()
    bigrun = sub(ctl, 600, name="bigrun", nodes_min=3, exclusive="exclusive")
    sub(ctl, None, name="timeout1", time_limit=1)
    wantall = sub(ctl, 10, name="wantall", nodes_min=4, nodes_max=4)
    small = sub(ctl, 10, name="small")
    dep = sub(ctl, 10, name="depjob", dependency=f"afterok:{bigrun}")
    later = sub(ctl, 10, name="later", begin=ctl.now + 3600)
    held = sub(ctl, 10, name="helduser", hold=True)
    heldadm = sub(ctl, 10, name="heldadm")
    ctl.hold(heldadm)
    overmax = sub(ctl, 10, name="overmax", partition="short", time_limit=10)
    toomany = sub(ctl, 10, name="toomany", nodes_min=5)
    ctl.run_for(0)
    reason = {j.job_id: j.reason for j in ctl.jobs()}
    assert ctl.job(bigrun).state is JobState.RUNNING
    assert reason[wantall] is Reason.RESOURCES
    assert reason[small] is Reason.PRIORITY
    assert reason[dep] is Reason.DEPENDENCY
    assert reason[later] is Reason.BEGIN_TIME
    assert reason[held] is Reason.JOB_HELD_USER
    assert reason[heldadm] is Reason.JOB_HELD_ADMIN
    assert reason[overmax] is Reason.PARTITION_TIME_LIMIT
    assert reason[toomany] is Reason.PARTITION_NODE_LIMIT
    assert ctl.job(held).priority == 0


def test_draining_a_node_changes_the_big_jobs_reason() -> None:
    ctl = ref_controller()
    sub(ctl, 600, nodes_min=3, exclusive="exclusive")
    sub(ctl, 600)
    wantall = sub(ctl, 10, nodes_min=4)
    ctl.run_for(0)
    ctl.update_node("n4", "drain", "maintenance")
    wantn4 = sub(ctl, 10, nodelist="n4")
    ctl.run_for(2)
    assert ctl.job(wantall).reason is Reason.NODES_DOWN_DRAINED
    job = ctl.job(wantn4)
    assert job.reason_text == "ReqNodeNotAvail, UnavailableNodes:n4"
    n4 = next(n for n in ctl.nodes() if n.name == "n4")
    assert (n4.state.short, n4.reason, n4.reason_user) == ("drng", "maintenance", "root")


def test_timeout_after_the_time_limit() -> None:
    ctl = ref_controller()
    jid = sub(ctl, None, time_limit=1)
    ctl.run_for(30)
    assert ctl.job(jid).state is JobState.RUNNING
    ctl.run_for(60)
    job = ctl.job(jid)
    assert job.state is JobState.TIMEOUT
    assert (job.exit_code, job.signal) == (0, 15)
    assert job.end_time is not None and job.start_time is not None
    assert job.end_time - job.start_time == 60


def test_exit_codes_completed_and_failed() -> None:
    ctl = ref_controller()
    ok = sub(ctl, 5, 0)
    bad = sub(ctl, 5, 3)
    ctl.run()
    assert ctl.job(ok).state is JobState.COMPLETED
    assert (ctl.job(bad).state, ctl.job(bad).exit_code) == (JobState.FAILED, 3)


def test_cancel_pending_and_running_and_by_user() -> None:
    ctl = ref_controller()
    run = sub(ctl, 100)
    ctl.run_for(1)
    pend = sub(ctl, 100, nodes_min=5)
    ctl.cancel(run)
    ctl.cancel(pend)
    ctl.cancel(99999)  # unknown ids are ignored, scancel exits 0
    ctl.run_for(1)
    assert ctl.job(run).state is JobState.CANCELLED
    assert ctl.job(run).cancelled_by == 0
    assert ctl.job(pend).state is JobState.CANCELLED
    a = sub(ctl, 100, user="alice")
    b = sub(ctl, 100, user="bob")
    assert ctl.cancel_where(user="alice") == [a]
    ctl.run_for(1)
    assert ctl.job(b).state is JobState.RUNNING


def test_hold_and_release() -> None:
    ctl = ref_controller()
    jid = sub(ctl, 10, hold=True)
    ctl.run_for(5)
    assert ctl.job(jid).state is JobState.PENDING
    ctl.release(jid)
    ctl.run_for(1)
    assert ctl.job(jid).state is JobState.RUNNING
    assert ctl.job(jid).priority > 0


def test_begin_time_is_honoured_without_ticking() -> None:
    ctl = ref_controller()
    jid = sub(ctl, 10, begin=ctl.now + 600)
    ctl.run()
    job = ctl.job(jid)
    assert job.start_time is not None and job.start_time - job.submit_time == 600


def test_dependencies() -> None:
    ctl = ref_controller()
    first = sub(ctl, 10, 1)
    ok = sub(ctl, 10, dependency=f"afterok:{first}")
    notok = sub(ctl, 10, dependency=f"afternotok:{first}")
    anyj = sub(ctl, 10, dependency=f"afterany:{first}")
    ctl.run_for(5)
    assert "unfulfilled" in ctl.job(ok).dependency
    ctl.run_for(60)
    assert ctl.job(ok).reason is Reason.DEPENDENCY_NEVER_SATISFIED
    assert ctl.job(ok).dependency == f"afterok:{first}(failed)"
    assert ctl.job(notok).state is JobState.COMPLETED
    assert ctl.job(anyj).state is JobState.COMPLETED
    assert ctl.job(notok).dependency == ""


def test_singleton() -> None:
    ctl = ref_controller()
    a = sub(ctl, 10, name="single", dependency="singleton")
    b = sub(ctl, 10, name="single", dependency="singleton")
    ctl.run_for(2)
    assert ctl.job(a).state is JobState.RUNNING
    assert ctl.job(b).reason is Reason.DEPENDENCY
    ctl.run()
    assert started_at(ctl.job(b)) >= (ctl.job(a).end_time or 0)


def test_every_job_reaches_a_terminal_state() -> None:
    ctl = ref_controller()
    ids = [sub(ctl, 30 * (i % 4 + 1), i % 3, ntasks=1 + i % 4) for i in range(20)]
    ctl.run()
    assert all(ctl.job(i).state.is_terminal for i in ids)
    assert all(n.alloc_cpus == 0 and n.state.short == "idle" for n in ctl.nodes())


def test_runs_on_a_realtime_clock() -> None:
    """The same controller under simpy.rt (wall-clock mode), sped up 1000x."""
    import simpy.rt
    from ctld_helpers import REF_CONF

    from minislurm.conf import parse_config
    from minislurm.ctld import Controller, JobBody
    from minislurm.options import JobOptions

    env = simpy.rt.RealtimeEnvironment(factor=0.001, strict=False)
    ctl = Controller(parse_config(REF_CONF, "slurm.conf"), env)
    jid = ctl.submit(JobOptions(), body=JobBody(20))
    ctl.run_for(30)
    assert ctl.job(jid).state is JobState.COMPLETED


def test_signal_before_the_time_limit() -> None:
    """--signal=USR1@60: SIGUSR1 (10) reaches the job at the periodic check 90 s before
    its limit (60 s + one PERIODIC_TIMEOUT), as slurmctld 22.05 sends it."""
    from minislurm.options import SignalSpec

    ctl = ref_controller()
    jid = sub(ctl, None, time_limit=5, signal=SignalSpec(signal=10, time=60))
    start = ctl.env.now
    ctl.run()
    sent = [(t - start, s) for t, j, s in signals_sent(ctl) if j == jid]
    assert sent[0] == (210, 10)
    assert ctl.job(jid).state is JobState.TIMEOUT


def test_scancel_signal_and_reservation_deletion() -> None:
    ctl = ref_controller()
    jid = sub(ctl, 100)
    ctl.run_for(1)
    ctl.signal_job(jid, 10)
    assert ctl.job(jid).state is JobState.RUNNING
    ctl.create_reservation("r", ctl.now + 3600, 60, "n1")
    waiting = sub(ctl, 10, reservation="r")
    ctl.run_for(1)
    # 22.05.8 refuses to delete a reservation a pending job asks for
    # (tests/minislurm/ctld/reservations/test_resv_admin.py); the job keeps waiting for it
    with pytest.raises(SlurmError, match=r"^Requested reservation is in use$"):
        ctl.delete_reservation("r")
    assert ctl.job(waiting).reason is Reason.RESERVATION
    ctl.cancel(waiting)
    ctl.delete_reservation("r")
