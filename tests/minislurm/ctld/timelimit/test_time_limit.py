"""Time limits are enforced by slurmctld's periodic check, not at the exact deadline.

Measured on real Slurm 22.05.8 (reference conf, slurmctld started 21:04:29.96, its
``job_time_limit()`` logged "Time limit exhausted" at 21:21:59.92 and 21:22:29.98, i.e.
every PERIODIC_TIMEOUT = 30 s counted from the daemon's start):

=========  ==========  ===========================  ========
``--time``  StartTime   EndTime (TIMEOUT)            RunTime
=========  ==========  ===========================  ========
1           21:20:56    21:21:59 (check)             00:01:03
1           21:21:07    21:22:29 (check)             00:01:22
1           21:21:14    21:22:29 (same check)        00:01:15
=========  ==========  ===========================  ========

minislurm's simulated controller starts its checks at SimPy time 0; the same relative
starts must end at the same relative checks.
"""

from __future__ import annotations

from ctld_helpers import ended_at, ref_controller, signals_sent, started_at, sub

from minislurm.ctld import lifecycle
from minislurm.states import JobState

#: The real run above relative to the daemon's start (21:04:29.96): the checks fall on
#: multiples of 30 s; the three jobs started 26.8, 37.8 and 44.8 s after the check of
#: 21:20:29.96 (a multiple of 30 s from the start).
STARTS = (27, 38, 45)
EXPECTED_END = (90, 120, 120)


def test_timeout_waits_for_the_next_periodic_check() -> None:
    ctl = ref_controller()
    t0 = ctl.now
    ids = []
    for at in STARTS:
        ctl.run_for(at - (ctl.now - t0))
        ids.append(sub(ctl, None, time_limit=1))
    ctl.run_for(200)
    for jid, start, end in zip(ids, STARTS, EXPECTED_END, strict=True):
        job = ctl.job(jid)
        assert job.state is JobState.TIMEOUT
        assert (started_at(job) - t0, ended_at(job) - t0) == (start, end)
        assert (job.exit_code, job.signal) == (0, 15)


def test_still_running_between_deadline_and_check() -> None:
    ctl = ref_controller()
    t0 = ctl.now
    ctl.run_for(45)
    jid = sub(ctl, None, time_limit=1)
    ctl.run_for(75 - 45 + 30)  # deadline at 105, next check at 120
    assert ctl.job(jid).state is JobState.RUNNING
    assert ctl.now - t0 == 105
    ctl.run_for(16)  # run_for stops before the events of its last instant
    assert ctl.job(jid).state is JobState.TIMEOUT
    assert ended_at(ctl.job(jid)) - t0 == 120


def test_body_ending_before_the_check_completes() -> None:
    """A job that overruns its limit but ends before the check is COMPLETED, as on real
    Slurm (the second capture's 60-s script with --time=1 COMPLETED with RunTime 1:00)."""
    ctl = ref_controller()
    ctl.run_for(10)
    jid = sub(ctl, 65, time_limit=1)  # deadline 70 s, check at 90 s, body ends at 75 s
    ctl.run_for(100)
    job = ctl.job(jid)
    assert job.state is JobState.COMPLETED
    assert ended_at(job) - started_at(job) == 65


def test_body_ending_at_the_check_instant_completes() -> None:
    ctl = ref_controller()
    jid = sub(ctl, 60, time_limit=1)  # deadline and check both at 60 s
    ctl.run_for(120)
    assert ctl.job(jid).state is JobState.COMPLETED


def test_over_time_limit_moves_the_deadline() -> None:
    """``OverTimeLimit=1``: over_run = now - 60 s, so the deadline is start + 2 min."""
    ctl = ref_controller("OverTimeLimit=1\n")
    jid = sub(ctl, None, time_limit=1)
    ctl.run_for(119)
    assert ctl.job(jid).state is JobState.RUNNING
    ctl.run_for(2)
    assert ctl.job(jid).state is JobState.TIMEOUT


def test_next_check_arithmetic() -> None:
    ctl = ref_controller()
    phase = lifecycle.limit_check_phase(ctl)
    assert phase == ctl.now  # a fresh simulated controller starts its checks now
    assert lifecycle.next_limit_check(ctl, phase + 60) == phase + 60
    assert lifecycle.next_limit_check(ctl, phase + 61) == phase + 90
    assert lifecycle.next_limit_check(ctl, phase - 5) == phase  # never in the past


def test_signal_at_the_check_that_sees_the_warning_window() -> None:
    """``--signal=B:USR1@60 --time=2`` on real 22.05.8: USR1 48.2 s after the start (the
    first check with now + 60 + PERIODIC_TIMEOUT >= end_time), TIMEOUT at the first
    check after 120 s.  Here: start 12 s after a check -> checks at 18, 48, 78, ...;
    48 + 90 >= 120 first holds at 48."""
    from minislurm.options import SignalSpec

    ctl = ref_controller()
    ctl.run_for(12)
    jid = sub(ctl, None, time_limit=2, signal=SignalSpec(signal=10, time=60))
    start = ctl.env.now
    ctl.run_for(300)
    sent = [(t - start, s) for t, j, s in signals_sent(ctl) if j == jid]
    assert sent[0] == (48, 10)
    job = ctl.job(jid)
    assert job.state is JobState.TIMEOUT
    assert ended_at(job) - started_at(job) == 138


def test_wall_clock_daemon_counts_checks_from_its_own_start() -> None:
    """The wall-clock controller (``realtime_environment``, as ``slurmctld.py`` builds it)
    checks at ``start + 30k`` (whole seconds), not at Unix multiples of 30 s.  Here the
    daemon starts at ...017.6: a 1-min job started at ...020 is over its limit at ...080
    and ends TIMEOUT at the check of ...107 (Unix multiples would have said ...090)."""
    from ctld_helpers import REF_CONF

    from minislurm.conf import parse_config
    from minislurm.ctld import Controller
    from minislurm.daemon.realtime import realtime_environment

    started = 1_767_600_017.6
    env = realtime_environment(lambda: started)
    ctl = Controller(parse_config(REF_CONF, "slurm.conf"), env)
    assert lifecycle.limit_check_phase(ctl) == 1_767_600_017
    assert lifecycle.next_limit_check(ctl, 1_767_600_077) == 1_767_600_077
    env.run(until=started + 3)
    jid = sub(ctl, None, time_limit=1)
    env.run(until=started + 200)
    job = ctl.job(jid)
    assert job.state is JobState.TIMEOUT
    assert job.start_time == 1_767_600_020
    # deadline start + 60 = ...080; checks at ...017 + 30k: ...077, ...107 -> ...107
    assert job.end_time == 1_767_600_107
