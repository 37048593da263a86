"""``SchedView.blocker``'s inline path gives what its rules give, rule by rule.

``blocker`` runs for every pending job of every scheduler pass, so a job that is not
held and has no ``-d`` takes the rules inline (begin time, partition limit, partition
state, reservation, array throttle, QOS per-user limits); ``_blocker_by_rules`` is the
rules one after the other.  On the embedded cluster with its QOS limits, jobs that
each hit one rule (and jobs that hit none) are compared at several moments, while
partitions go DOWN and INACTIVE, reservations start and end, and jobs end.
"""

from __future__ import annotations

from ctld_helpers import sub

from minislurm.common.accounts import load_associations
from minislurm.conf import load_config
from minislurm.ctld import Controller
from minislurm.states import Reason


def _compare(ctl: Controller) -> set[Reason | None]:
    """Both answers for every pending job (and the EligibleTime each leaves); the reasons."""
    view = ctl.view
    seen: set[Reason | None] = set()
    for job in list(ctl.pending_in_order()):
        before = job.eligible_time
        fast = view.blocker(job)
        after_fast = job.eligible_time
        job.eligible_time = before
        job._eligible_time = before
        ruled = view._blocker_by_rules(job)
        assert fast is ruled, (job.job_id, fast, ruled)
        assert after_fast == job.eligible_time, job.job_id
        seen.add(fast)
    return seen


def test_inline_blocker_matches_the_rules() -> None:
    ctl = Controller(load_config(None), associations=load_associations())
    now = ctl.now
    ctl.create_reservation("later", now + 600, 30, "cpu01")
    ctl.create_reservation("now", now, 30, "cpu02")
    ctl.create_reservation("gone", now, 30, "cpu03")
    for i in range(3):  # debug: MaxJobsPerUser=2
        sub(ctl, 900, name=f"d{i}", user="alice", qos="debug", time_limit=20)
    sub(ctl, 900, name="g6", user="carol", qos="high", gres="gpu:6", time_limit=60)
    sub(ctl, 900, name="g4", user="carol", qos="high", gres="gpu:4", time_limit=60)
    sub(ctl, 300, name="arr", user="bob", array="0-5%2", partition="cpu", time_limit=10)
    sub(ctl, 60, name="begin", user="bob", begin=now + 120, time_limit=5)
    sub(ctl, 60, name="held", user="bob", hold=True, time_limit=5)
    sub(ctl, 60, name="dep", user="bob", dependency="afterok:1", time_limit=5)
    sub(ctl, 60, name="resv-later", user="root", reservation="later", time_limit=5)
    sub(ctl, 60, name="resv-now", user="root", reservation="now", time_limit=5)
    sub(ctl, 60, name="resv-gone", user="root", reservation="gone", nodes_min=2,
        time_limit=5)  # never fits its 1-node reservation: ReservationDeleted once it ends
    sub(ctl, 60, name="toolong", user="dave", partition="debug", time_limit=90)
    sub(ctl, 60, name="cpu", user="erin", partition="cpu", time_limit=5)
    sub(ctl, 60, name="big", user="erin", partition="cpu", nodes_min=4, time_limit=5)
    seen = _compare(ctl)
    ctl.run_for(1)
    seen |= _compare(ctl)
    ctl.update_partition("cpu", "DOWN")
    sub(ctl, 60, name="cpu2", user="erin", partition="cpu", time_limit=5)
    seen |= _compare(ctl)
    ctl.update_partition("cpu", "INACTIVE")
    seen |= _compare(ctl)
    ctl.update_partition("cpu", "UP")
    for _ in range(14):  # "gone" ends after 30 minutes
        ctl.run_for(150)
        seen |= _compare(ctl)
    for job in ctl.pending_in_order():  # a reservation no longer there (as a record kept)
        if job.hold is None and not job.dependency:
            job.reservation = "nosuch"
    seen |= _compare(ctl)
    # the comparison saw the rules decide, not only jobs that pass them all
    assert {None, Reason.BEGIN_TIME, Reason.JOB_HELD_USER, Reason.QOS_MAX_JOBS_PER_USER,
            Reason.QOS_MAX_GRES_PER_USER, Reason.PARTITION_DOWN, Reason.PARTITION_INACTIVE,
            Reason.RESERVATION, Reason.RESERVATION_DELETED} <= seen, seen
