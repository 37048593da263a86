"""``scontrol update JobId=...`` on the controller (``Controller.update_job``), and a job
ending exactly at its time limit (Slurm's periodic limit check lets it complete).

Error texts are slurm_strerror's, followed by `` for job ID`` as scontrol prints them.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from ctld_helpers import ref_controller, sub

from minislurm.ctld import JobBody
from minislurm.errors import SlurmError
from minislurm.options import JobOptions
from minislurm.sim import Cluster
from minislurm.states import JobState, Reason


def test_starttime_now_lets_a_requeued_job_start_at_once() -> None:
    ctl = ref_controller()
    jid = sub(ctl, 30, nodelist="n1", time_limit=1)
    ctl.run_for(5)
    ctl.update_node("n1", "down", "test")
    ctl.update_node("n1", "resume")
    ctl.run_for(2)
    job = ctl.job(jid)
    assert (job.state, job.reason, job.restart_count) == (JobState.PENDING, Reason.BEGIN_TIME, 1)
    ctl.update_job(jid, start_time=ctl.now)
    ctl.run_for(2)
    assert ctl.job(jid).state is JobState.RUNNING


def test_starttime_in_the_future_holds_a_pending_job_until_then() -> None:
    ctl = ref_controller()
    blocker = sub(ctl, 100, nodes_min=4, exclusive="exclusive")
    jid = sub(ctl, 10)
    ctl.run_for(0)
    ctl.update_job(jid, start_time=ctl.now + 600)
    ctl.run_for(300)
    assert ctl.job(blocker).state is JobState.COMPLETED
    assert (ctl.job(jid).state, ctl.job(jid).reason) == (JobState.PENDING, Reason.BEGIN_TIME)
    ctl.run_for(310)
    assert ctl.job(jid).state in (JobState.RUNNING, JobState.COMPLETED)


def test_updates_refused_with_slurms_texts() -> None:
    ctl = ref_controller()
    running = ctl.submit(JobOptions(time_limit=10, time_limit_set=True), user="alice", uid=1000,
                         body=JobBody(600, 0))
    ctl.run_for(1)
    done = sub(ctl, 1)
    ctl.run_for(5)
    cases = [
        (partial(ctl.update_job, 999, nice=10), "Invalid job id specified for job 999"),
        (partial(ctl.update_job, running, start_time=ctl.now),
         "Job is no longer pending execution for job 1"),
        (partial(ctl.update_job, running, partition="gpu"),
         "Job is no longer pending execution for job 1"),
        (partial(ctl.update_job, running, time_limit=20, uid=1000),
         "Access/permission denied for job 1"),
        (partial(ctl.update_job, running, nice=-5, uid=1000), "Access/permission denied for job 1"),
        (partial(ctl.update_job, done, time_limit=5),
         "Job/step already completing or completed for job 2"),
        (partial(ctl.update_job, running, nice=50, uid=1001), "Access/permission denied for job 1"),
    ]
    for update, text in cases:
        with pytest.raises(SlurmError) as err:
            update()
        assert err.value.message == text


def test_a_longer_time_limit_keeps_a_running_job_alive() -> None:
    ctl = ref_controller()
    jid = sub(ctl, 150, time_limit=1)
    ctl.run_for(30)
    ctl.update_job(jid, time_limit=3)
    ctl.run()
    assert ctl.job(jid).state is JobState.COMPLETED


def test_a_user_may_shorten_a_time_limit() -> None:
    ctl = ref_controller()
    jid = ctl.submit(JobOptions(time_limit=10, time_limit_set=True), user="alice", uid=1000,
                     body=JobBody(None, 0))
    ctl.run_for(30)
    ctl.update_job(jid, time_limit=1, uid=1000)
    ctl.run()
    job = ctl.job(jid)
    assert job.state is JobState.TIMEOUT
    assert job.end_time is not None and job.start_time is not None
    assert job.end_time - job.start_time == 60


def test_partition_and_numnodes_of_a_pending_job() -> None:
    ctl = ref_controller()
    sub(ctl, 100, nodes_min=4, exclusive="exclusive")
    jid = sub(ctl, 10, partition="short", time_limit=10)  # over short's MaxTime=5
    ctl.run_for(1)
    assert ctl.job(jid).reason is Reason.PARTITION_TIME_LIMIT
    ctl.update_job(jid, partition="debug")
    ctl.update_job(jid, num_nodes=2)
    ctl.run_for(1)
    job = ctl.job(jid)
    assert (job.partition, job.num_nodes, job.reason) == ("debug", 2, Reason.RESOURCES)
    ctl.update_job(jid, num_nodes=5)  # more than the partition has: PartitionNodeLimit
    ctl.run_for(1)
    assert ctl.job(jid).reason is Reason.PARTITION_NODE_LIMIT
    with pytest.raises(SlurmError, match=r"^Invalid partition name specified for job 2$"):
        ctl.update_job(jid, partition="nosuch")


def test_nice_moves_a_basic_priority_by_the_difference() -> None:
    ctl = ref_controller()
    sub(ctl, 100, nodes_min=4, exclusive="exclusive")
    jid = sub(ctl, 10)
    ctl.run_for(0)
    before = ctl.job(jid).priority
    ctl.update_job(jid, nice=100)
    assert (ctl.job(jid).priority, ctl.job(jid).nice) == (before - 100, 100)
    ctl.update_job(jid, nice=40)  # an operator may lower it again
    assert ctl.job(jid).priority == before - 40


def test_a_job_ending_exactly_at_its_limit_completes() -> None:
    # Slurm checks limits periodically: the job has ended before any check sees it overrun
    ctl = ref_controller()
    exact = sub(ctl, 60, time_limit=1)
    over = sub(ctl, 61, time_limit=1)
    ctl.run()
    assert ctl.job(exact).state is JobState.COMPLETED
    assert ctl.job(exact).exit_code == 0
    assert ctl.job(over).state is JobState.TIMEOUT


def test_scontrol_update_starttime_and_its_errors(captures: Path) -> None:
    cluster = Cluster(captures / "slurm.conf")
    try:
        running = cluster.sbatch("#!/bin/bash\n#SBATCH -t 10\nsleep 300\n")
        later = cluster.sbatch("#!/bin/bash\n#SBATCH -t 10 --begin=now+1hour\nsleep 300\n")
        cluster.advance(2)
        done = cluster.run(["scontrol", "update", f"jobid={later}", "starttime=now"])
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
        cluster.advance(2)
        assert cluster.run(["squeue", "-h", "-j", str(later), "-o", "%t"]).stdout == "R\n"
        refused = cluster.run(["scontrol", "update", f"jobid={running}", "starttime=now"])
        assert (refused.returncode, refused.stderr) == (
            1, f"Job is no longer pending execution for job {running}\n")
    finally:
        cluster.close()
