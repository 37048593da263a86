"""Node states, scontrol update nodename=..., injected failures and requeue."""

from __future__ import annotations

import pytest
from ctld_helpers import ref_controller, sub

from minislurm.ctld import Controller
from minislurm.errors import SlurmError
from minislurm.node import NodeRecord
from minislurm.states import JobState, Reason


def node(ctl: Controller, name: str) -> NodeRecord:
    return next(n for n in ctl.nodes() if n.name == name)


def test_idle_mixed_allocated() -> None:
    ctl = ref_controller()
    sub(ctl, 100, ntasks=2, nodelist="n1")
    sub(ctl, 100, ntasks=4, nodelist="n2")
    ctl.run_for(1)
    assert [n.state.short for n in ctl.nodes()] == ["mix", "alloc", "idle", "idle"]
    assert node(ctl, "n1").alloc_mem == 2000  # DefMemPerCPU=1000


def test_drain_resume_and_reason_required() -> None:
    ctl = ref_controller()
    with pytest.raises(SlurmError) as info:
        ctl.update_node("n2", "drain")
    assert "You must specify a reason" in info.value.message
    ctl.update_node("n2", "drain", "maintenance")
    assert node(ctl, "n2").state.scontrol == "IDLE+DRAIN"
    assert node(ctl, "n2").state.short == "drain"
    ctl.update_node("n2", "resume")
    assert node(ctl, "n2").state.short == "idle" and node(ctl, "n2").reason == ""


def test_requeue_after_state_down() -> None:
    ctl = ref_controller()
    jid = sub(ctl, 500, gres="gpu:2")
    ctl.run_for(10)
    where = ctl.job(jid).nodelist
    ctl.update_node(where, "down", "bad gpu")
    job = ctl.job(jid)
    assert job.state is JobState.PENDING
    assert job.reason is Reason.BEGIN_TIME
    assert job.restart_count == 1
    assert job.begin_time == ctl.now + 121
    assert node(ctl, where).state.short == "down"
    ctl.run_for(120)
    assert ctl.job(jid).state is JobState.PENDING
    ctl.run_for(2)
    job = ctl.job(jid)
    assert job.state is JobState.RUNNING and job.nodelist != where
    ctl.run()
    attempts = [r for r in ctl.accounting() if r.job_id == jid]
    assert [a.state for a in attempts] == [JobState.NODE_FAIL, JobState.COMPLETED]
    assert [a.restart_count for a in attempts] == [0, 1]


def test_no_requeue_job_ends_node_fail() -> None:
    ctl = ref_controller()
    jid = sub(ctl, 1000, requeue=False)
    ctl.run_for(5)
    ctl.fail_node(ctl.job(jid).nodelist, repair_after=300)
    assert ctl.job(jid).state is JobState.NODE_FAIL
    name = ctl.job(jid).nodelist
    assert node(ctl, name).state.short == "down*"
    ctl.run_for(301)
    assert node(ctl, name).state.short == "idle"  # ReturnToService=1


def test_random_failures_are_seeded() -> None:
    a = ref_controller().random_failures(24, 600, seed=5, until=1767600000 + 7 * 86400)
    b = ref_controller().random_failures(24, 600, seed=5, until=1767600000 + 7 * 86400)
    assert a == b and len(a) > 0


def test_jobs_survive_random_failures_and_all_finish() -> None:
    ctl = ref_controller()
    ctl.random_failures(2, 300, seed=1, until=ctl.now + 6 * 3600)
    ids = [sub(ctl, 1800, ntasks=2, time_limit=40) for _ in range(12)]
    ctl.run()
    assert all(ctl.job(i).state.is_terminal for i in ids)
    assert any(ctl.job(i).restart_count for i in ids)
    ctl.table.check()
