"""A QOS's per-user limits hold a user's next job PENDING with Slurm's reason.

The embedded cluster's associations (minislurm/etc/associations.yaml): QOS ``debug``
allows 2 running jobs per user (``MaxJobsPerUser``: the third pends
``QOSMaxJobsPerUserLimit``), QOS ``high`` 8 GPUs per user (``MaxTRESPerUser=gres/gpu=8``:
a job that would take the user past 8 pends ``QOSMaxGRESPerUser``); another user, or
a QOS without per-user limits, is not held back.
"""

from __future__ import annotations

from ctld_helpers import sub

from minislurm.common.accounts import load_associations
from minislurm.conf import load_config
from minislurm.ctld import Controller
from minislurm.states import JobState, Reason


def _cluster() -> Controller:
    return Controller(load_config(None), associations=load_associations())


def test_max_jobs_per_user() -> None:
    ctl = _cluster()
    mine = [sub(ctl, 600, name=f"d{i}", user="alice", qos="debug", time_limit=20)
            for i in range(3)]
    bobs = sub(ctl, 600, name="b", user="bob", qos="debug", time_limit=20)
    other = sub(ctl, 600, name="n", user="alice", time_limit=20)  # QOS normal
    ctl.run_for(5)
    states = [ctl.job(j).state for j in mine]
    assert states == [JobState.RUNNING, JobState.RUNNING, JobState.PENDING]
    assert ctl.job(mine[2]).reason is Reason.QOS_MAX_JOBS_PER_USER
    assert ctl.job(bobs).state is ctl.job(other).state is JobState.RUNNING
    ctl.run_for(600)  # the first two end: the third starts
    assert ctl.job(mine[2]).state is JobState.RUNNING


def test_max_gres_per_user() -> None:
    ctl = _cluster()
    big = sub(ctl, 600, name="g6", user="alice", qos="high", gres="gpu:6", time_limit=20)
    over = sub(ctl, 600, name="g4", user="alice", qos="high", gres="gpu:4", time_limit=20)
    fits = sub(ctl, 600, name="g2", user="alice", qos="high", gres="gpu:2", time_limit=20)
    carols = sub(ctl, 600, name="c", user="carol", qos="high", gres="gpu:4", time_limit=20)
    ctl.run_for(5)
    assert ctl.job(big).state is ctl.job(fits).state is JobState.RUNNING
    assert ctl.job(over).state is JobState.PENDING
    assert ctl.job(over).reason is Reason.QOS_MAX_GRES_PER_USER
    assert ctl.job(carols).state is JobState.RUNNING
