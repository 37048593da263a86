"""Lesson 5's QOS quota demo: MaxTRESPerUser=gres/gpu=8 holds alice's second job."""

from __future__ import annotations

from course.lessons.qos_quota import QUOTA_SQUEUE, quota_cluster
from minislurm.states import JobState, Reason


def test_the_quota_holds_only_the_job_past_it() -> None:
    cluster = quota_cluster()
    ctl = cluster.controller
    assert ctl.job(1).state is JobState.RUNNING  # alice, 8 GPUs: at her quota
    assert ctl.job(3).state is JobState.RUNNING  # carol, same QOS, her own quota
    held = ctl.job(2)
    assert held.state is JobState.PENDING
    assert held.reason is Reason.QOS_MAX_GRES_PER_USER
    rows = cluster.run(QUOTA_SQUEUE).stdout.splitlines()
    assert any("ablation" in r and r.rstrip().endswith("QOSMaxGRESPerUser") for r in rows)


def test_the_held_job_starts_when_the_users_gpus_are_free() -> None:
    cluster = quota_cluster()
    cluster.advance(3600)  # pretrain (1 h) ends: alice is under her quota again
    assert cluster.controller.job(2).state is JobState.RUNNING
