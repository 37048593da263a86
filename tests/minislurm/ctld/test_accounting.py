"""Accounting: every attempt, the .batch step and srun steps, usage = allocated x elapsed."""

from __future__ import annotations

import pytest
from ctld_helpers import ref_controller, sub

from minislurm.job import StepRecord
from minislurm.states import JobState


def test_batch_step_states() -> None:
    ctl = ref_controller()
    ok = sub(ctl, 10)
    bad = sub(ctl, 10, 3)
    to = sub(ctl, None, time_limit=1)
    ctl.run()
    steps = {r.job_id: r.steps for r in ctl.accounting()}
    assert [(s.step_id, s.state, s.exit_code) for s in steps[ok]] == [
        ("batch", JobState.COMPLETED, 0)]
    assert [(s.state, s.exit_code) for s in steps[bad]] == [(JobState.FAILED, 3)]
    assert [(s.state, s.exit_code, s.signal) for s in steps[to]] == [
        (JobState.CANCELLED, 0, 15)]  # capture c2 25_sacct_default: 46.batch CANCELLED 0:15


def test_usage_adds_up_to_allocated_times_elapsed() -> None:
    ctl = ref_controller()
    for n in (1, 2, 4):
        sub(ctl, 100 * n, ntasks=n, gres="gpu:1")
    ctl.run()
    done = [r for r in ctl.accounting() if r.state is JobState.COMPLETED]
    cpu = sum(r.tres_alloc["cpu"] * r.elapsed for r in done)
    gpu = sum(r.tres_alloc["gres/gpu"] * r.elapsed for r in done)
    assert ctl.accounting_store.total("cpu") == cpu == 100 * 1 + 200 * 2 + 400 * 4
    assert ctl.accounting_store.total("gres/gpu") == gpu


def test_preemption_of_a_scavenger_qos() -> None:
    from minislurm.common.accounts import QOS

    for mode, expect in (("requeue", JobState.PENDING), ("cancel", JobState.PREEMPTED)):
        ctl = ref_controller("PreemptType=preempt/qos\nPreemptMode=REQUEUE\n")
        ctl.qos["scavenger"] = QOS(name="scavenger", preempt_mode=mode)
        ctl.qos["high"] = QOS(name="high", priority=100, preempt=("scavenger",))
        scav = [sub(ctl, 5000, qos="scavenger", ntasks=4) for _ in range(4)]
        ctl.run_for(5)
        hi = sub(ctl, 100, qos="high", ntasks=4)
        ctl.run_for(1)
        assert ctl.job(hi).state is JobState.RUNNING
        victims = [j for j in scav if ctl.job(j).state is not JobState.RUNNING]
        assert len(victims) == 1
        assert ctl.job(victims[0]).state is expect
        logged = [r.state for r in ctl.accounting() if r.job_id == victims[0]]
        assert JobState.PREEMPTED in logged


def test_reservation_for_the_big_run() -> None:
    ctl = ref_controller()
    start = ctl.now + 3600
    assert ctl.create_reservation("big", start, 120, "n[1-2]", users=["root"]) == (
        "Reservation created: big")
    member = sub(ctl, 600, reservation="big", nodes_min=2)
    long_ = sub(ctl, 7200, nodes_min=4, time_limit=60 * 2 - 1, partition="gpu")
    short = sub(ctl, 600, nodes_min=4, time_limit=30)
    ctl.run_for(10)
    assert ctl.job(member).reason.value == "Reservation"
    assert ctl.job(short).state is JobState.RUNNING  # ends before the reservation
    assert ctl.job(long_).state is JobState.PENDING
    ctl.run()
    assert ctl.job(member).start_time == start
    assert set(ctl.job(member).nodelist) <= set("n[1-2]")


def _step(step_id: int, end: int) -> StepRecord:
    return StepRecord(step_id=step_id, name="hostname", state=JobState.COMPLETED, nodelist="n1",
                      num_nodes=1, ntasks=1, num_cpus=1, start_time=end - 5, end_time=end)


def test_an_srun_step_shows_in_the_jobs_accounting() -> None:
    ctl = ref_controller()
    jid = sub(ctl, 60)
    ctl.run_for(10)
    ctl.add_step(jid, _step(0, ctl.now))
    assert [s.step_id for s in ctl.job(jid).steps] == [0]
    ctl.run()
    (record,) = [r for r in ctl.accounting() if r.job_id == jid]
    assert sorted(str(s.step_id) for s in record.steps) == ["0", "batch"]


def test_a_step_reported_after_its_job_ended_joins_the_recorded_attempt() -> None:
    ctl = ref_controller()
    jid = sub(ctl, 20)
    ctl.run()
    ctl.add_step(jid, _step(1, ctl.now))
    (record,) = [r for r in ctl.accounting() if r.job_id == jid]
    assert sorted(str(s.step_id) for s in record.steps) == ["1", "batch"]
    with pytest.raises(KeyError):
        ctl.add_step(999, _step(0, ctl.now))
