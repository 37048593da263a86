"""``scontrol update JobId=N TimeLimit=...`` on a running job re-arms the periodic check.

Measured on real Slurm 22.05.8 (scripts/realslurm, reference conf, 2026-12-03).
slurmctld's periodic ``job_time_limit()`` ran at 19:52:44, 19:53:14, 19:53:44 (every
30 s from its start at 19:50:14); six ``sleep 300`` jobs started at 19:51:41 and
were updated 15 s later (C: 70 s later):

===  ==========  ======================  ==================================  ===========
job  ``--time``  update                  shown after the update              ends
===  ==========  ======================  ==================================  ===========
A    1           ``TimeLimit=2``         TimeLimit=00:02:00 End 19:53:41     TIMEOUT 19:53:44
B    3           ``TimeLimit=1``         TimeLimit=00:01:00 End 19:52:41     TIMEOUT 19:52:44
C    2           ``TimeLimit=1`` (+70s)  End 19:52:51 (now), squeue %L INVALID  TIMEOUT 19:53:14
D    1           ``TimeLimit=UNLIMITED`` EndTime=Unknown                     still running
E    1           ``TimeLimit=+1``        TimeLimit=00:02:00                  TIMEOUT 19:53:44
F    3           ``TimeLimit=-2``        TimeLimit=00:01:00                  TIMEOUT 19:52:44
===  ==========  ======================  ==================================  ===========

So the job ends TIMEOUT at the first periodic check at or after ``start + new limit``
(the next check when that is already past).  Below the same run relative to the first
check: the jobs start 87 s after the daemon's start (phase + 87), updates at +15 s.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
from captures import checked_stdout, reference_cluster
from ctld_helpers import ended_at, ref_controller, signals_sent, sub
from realslurm import RealSlurm

from minislurm.cli.format.scontrol import format_scontrol_job
from minislurm.cli.format.squeue import format_squeue
from minislurm.common.timespec import format_timestamp
from minislurm.ctld import Controller, lifecycle
from minislurm.states import JobState, Reason

START = 87  # 19:51:41 - 19:50:14
UPDATE = 15


def _started(limit: int) -> tuple[Controller, int, int]:
    """A reference controller with one job of ``--time=limit`` started at phase + 87."""
    ctl = ref_controller()
    t0 = lifecycle.limit_check_phase(ctl)
    ctl.run_for(START)
    jid = sub(ctl, None, time_limit=limit)
    ctl.run_for(0)
    assert ctl.job(jid).start_time == t0 + START
    return ctl, jid, t0


def _end(ctl: Controller, jid: int, t0: int) -> tuple[JobState, int | None]:
    ctl.run_for(400)
    job = ctl.job(jid)
    return job.state, None if job.end_time is None else job.end_time - t0


def test_raised_limit_times_out_at_the_check_after_the_new_end() -> None:
    """A: 1 -> 2 minutes: the end moves to phase + 207, TIMEOUT at the check at 210."""
    ctl, jid, t0 = _started(1)
    ctl.run_for(UPDATE)
    ctl.update_job(jid, time_limit=2)
    assert _end(ctl, jid, t0) == (JobState.TIMEOUT, 210)


def test_lowered_limit_times_out_at_the_check_after_the_new_end() -> None:
    """B and F: 3 -> 1 minute: end at phase + 147, TIMEOUT at the check at 150 (not at
    147, nor at the check after the old end, 270)."""
    ctl, jid, t0 = _started(3)
    ctl.run_for(UPDATE)
    ctl.update_job(jid, time_limit=1)
    ctl.run_for(150 - (START + UPDATE) - 1)  # up to phase + 149: still running
    assert ctl.job(jid).state is JobState.RUNNING
    assert _end(ctl, jid, t0) == (JobState.TIMEOUT, 150)


def test_limit_lowered_below_the_time_used_ends_at_the_next_check() -> None:
    """C: 2 -> 1 minute after 70 s (phase + 157): TIMEOUT at the next check, 180;
    squeue's TIME_LEFT is INVALID meanwhile (negative)."""
    ctl, jid, t0 = _started(2)
    ctl.run_for(70)
    ctl.update_job(jid, time_limit=1)
    ctl.run_for(0)
    assert ctl.job(jid).state is JobState.RUNNING
    shown = format_squeue([ctl.job(jid)], fmt="%l %L", noheader=True, now=ctl.now)
    assert shown == "1:00 INVALID\n"
    assert _end(ctl, jid, t0) == (JobState.TIMEOUT, 180)


def test_unlimited_never_times_out() -> None:
    """D: raised to UNLIMITED: the check that was armed for the old limit does nothing."""
    ctl, jid, _t0 = _started(1)
    ctl.run_for(UPDATE)
    ctl.update_job(jid, time_limit=None)
    ctl.run_for(400)
    assert ctl.job(jid).state is JobState.RUNNING
    assert "EndTime=Unknown" in format_scontrol_job(ctl.job(jid), now=ctl.now)


def test_raise_then_lower_again_keeps_the_latest_limit() -> None:
    """Stale checks of earlier limits do nothing: 1 -> 5 -> 2 ends at the check after
    start + 2 min (210), the one armed for 1 min (150) passes the job by."""
    ctl, jid, t0 = _started(1)
    ctl.run_for(UPDATE)
    ctl.update_job(jid, time_limit=5)
    ctl.run_for(10)
    ctl.update_job(jid, time_limit=2)
    assert _end(ctl, jid, t0) == (JobState.TIMEOUT, 210)


def test_updating_a_pending_job_arms_nothing() -> None:
    ctl = ref_controller()
    jid = sub(ctl, None, time_limit=1, hold=True)
    ctl.run_for(5)
    ctl.update_job(jid, time_limit=2)
    ctl.run_for(300)
    assert ctl.job(jid).state is JobState.PENDING


def _warned(limit: int, new_limit: int | None) -> tuple[list[int], int | None]:
    """``--time=limit --signal=B:USR1@60`` started 25 s after a check, updated 5 s later:
    (when USR1 was sent, when the job ended TIMEOUT), relative to the check phase."""
    from minislurm.options import SignalSpec

    ctl = ref_controller()
    t0, e0 = lifecycle.limit_check_phase(ctl), ctl.env.now  # the runner logs SimPy times
    ctl.run_for(25)
    jid = sub(ctl, None, time_limit=limit, signal=SignalSpec(signal=10, time=60))
    ctl.run_for(5)
    if new_limit is not None:
        ctl.update_job(jid, time_limit=new_limit)
    ctl.run_for(400)
    signals = signals_sent(ctl)
    sent = [int(t - e0) for t, j, s in signals if j == jid and s == 10]
    job = ctl.job(jid)
    assert job.state is JobState.TIMEOUT
    return sent, None if job.end_time is None else job.end_time - t0


def test_signal_warning_follows_the_updated_limit() -> None:
    """Measured on 22.05.8 (checks at :15 and :45; jobs started 20:14:10, i.e. 25 s after
    a check; updated 5 s later): ``--time=2`` unchanged and ``--time=3`` lowered to 2 got
    USR1 at 20:14:45 and ended TIMEOUT at 20:16:15; ``--time=2`` raised to 4 got USR1 at
    20:16:45 (not 20:14:45) and ended at 20:18:15; every job was warned once."""
    assert _warned(2, None) == ([60], 150)
    assert _warned(3, 2) == ([60], 150)
    assert _warned(2, 4) == ([180], 270)


#: ``TimeLimit=+N``/``-N`` (scontrol's ``_get_job_time``): (update, exit code, stderr,
#: squeue %l after it) on a running 1-minute job, measured on real 22.05.8.
RELATIVE = [
    ("jobid={j} timelimit=+1", 0, "", "2:00"),
    ("jobid={j} timelimit=-5", 1,
     "scontrol: error: TimeLimit decrement larger than current time limit (5 > 2)\n", "2:00"),
    ("jobid={j} timelimit=-1", 0, "", "1:00"),
    ("timelimit=+1 jobid={j}", 1,
     "scontrol: error: JobId must precede TimeLimit increment or decrement\n", "1:00"),
    ("jobid={j} timelimit=-1", 0, "", "0:00"),
    ("jobid={j} timelimit=+bogus", 1, "scontrol: error: Invalid TimeLimit value\n", "0:00"),
]


def _relative(run: Callable[[str], tuple[str, str, int]], pause: Callable[[float], None],
              ) -> list[tuple[str, int, str, str]]:
    job = run("sbatch --parsable -t 1 --wrap 'sleep 600'")[0].strip()
    pause(2)
    out = []
    for update, _, _, _ in RELATIVE:
        _, err, rc = run("scontrol update " + update.format(j=job))
        # -t all: at 0:00 the 30 s time-limit check (PERIODIC_TIMEOUT) may end the job
        # before the last reads, and squeue lists no ended job without -t
        out.append((update, rc, err, run(f"squeue -h -t all -j {job} -o %l")[0].strip()))
    run(f"scancel {job}")
    return out


def test_relative_time_limits_like_slurm(tmp_path: Path) -> None:
    cluster = reference_cluster(tmp_path)

    def run(cmd: str) -> tuple[str, str, int]:
        r = cluster.run(cmd)
        return r.stdout, r.stderr, r.returncode

    assert _relative(run, cluster.advance) == RELATIVE


@pytest.mark.realslurm
def test_relative_time_limits_on_real_slurm(real_slurm: RealSlurm, tmp_path: Path) -> None:
    def run(cmd: str) -> tuple[str, str, int]:
        r = real_slurm.run(cmd, cwd=tmp_path)
        return r.stdout, r.stderr, r.rc

    assert _relative(run, time.sleep) == RELATIVE


# ---- a limit lowered below the time already used: EndTime is the update ---------------
#: Measured on real 22.05.8 (checks at :19 and :49, i.e. 23:05:19 + 30k s): two jobs
#: started at 23:05:32, 13 s after a check.
#:
#: ===  ==========  =============================  =================================
#: job  ``--time``  ``scontrol update TimeLimit=1``  then
#: ===  ==========  =============================  =================================
#: A    3           at 23:06:47 (75 s used)          ``TimeLimit=00:01:00
#:                                                   EndTime=2026-12-03T23:06:47``;
#:                                                   squeue ``%l %L %e``: ``1:00 INVALID
#:                                                   2026-12-03T23:06:47``; sacct End
#:                                                   ``Unknown``; TIMEOUT Reason=TimeLimit
#:                                                   at 23:06:49 (sacct End 23:06:49,
#:                                                   Elapsed 00:01:17)
#: B    10          at 23:08:27 (175 s used)         EndTime=23:08:27, TIMEOUT at
#:                                                   23:08:49 (Elapsed 00:03:17)
#: ===  ==========  =============================  =================================
#:
#: ``_update_job`` moves ``end_time`` by the change and then ``if (end_time < now)
#: end_time = now``: the end shown is the update's time, not ``start + 1 min``.
CLAMP_START = 13


def test_limit_lowered_below_the_time_used_shows_the_update_as_end() -> None:
    ctl = ref_controller()
    t0 = lifecycle.limit_check_phase(ctl)
    ctl.run_for(CLAMP_START)
    a = sub(ctl, None, time_limit=3)
    b = sub(ctl, None, time_limit=10)
    ctl.run_for(75)
    assert ctl.now - t0 == 88
    ctl.update_job(a, time_limit=1)
    job = ctl.job(a)
    assert (job.state, job.end_time) == (JobState.RUNNING, t0 + 88)  # not start + 60
    shown = format_scontrol_job(job, now=ctl.now)
    assert "TimeLimit=00:01:00 TimeMin=N/A\n   SubmitTime" in shown
    assert f"EndTime={format_timestamp(t0 + 88)} Deadline" in shown
    squeue = format_squeue([job], fmt="%l %L %e", noheader=True, now=ctl.now)
    assert squeue == f"1:00 INVALID {format_timestamp(t0 + 88)}\n"
    assert ctl._jobs[a].snapshot(accounting=True).end_time is None  # sacct: End Unknown
    ctl.run_for(100)  # B at phase + 188
    ctl.update_job(b, time_limit=1)
    assert ctl.job(b).end_time == t0 + 188
    ctl.run_for(100)
    for jid, end in ((a, 90), (b, 210)):
        rec = ctl.job(jid)
        assert (rec.state, rec.reason) == (JobState.TIMEOUT, Reason.TIME_LIMIT)
        assert ended_at(rec) - t0 == end
    assert [ctl.job(j).run_time(ctl.now) for j in (a, b)] == [77, 197]  # 00:01:17, 00:03:17


def test_the_end_moves_from_where_the_last_update_put_it() -> None:
    """Measured on 22.05.8: two ``--time=5`` jobs started 23:16:01, updated at 23:16:04:
    ``TimeLimit=0`` then ``TimeLimit=1`` -> ``EndTime=23:17:04`` (the clamped end + 1
    min, not start + 1 min); ``TimeLimit=UNLIMITED`` (``EndTime=Unknown``, squeue ``%e``
    ``NONE``) then ``TimeLimit=3`` -> ``EndTime=23:19:04`` (now + a year - a year + 3
    min); squeue ``%L`` 0:57 and 2:57 (the limit minus the time used)."""
    ctl = ref_controller()
    a = sub(ctl, None, time_limit=5)
    b = sub(ctl, None, time_limit=5)
    ctl.run_for(3)
    start = ctl.job(a).start_time
    assert start is not None and ctl.now == start + 3
    ctl.update_job(a, time_limit=0)
    ctl.update_job(a, time_limit=1)
    ctl.update_job(b, time_limit=None)
    assert format_squeue([ctl.job(b)], fmt="%l %L %e", noheader=True,
                         now=ctl.now) == "UNLIMITED UNLIMITED NONE\n"
    ctl.update_job(b, time_limit=3)
    assert [ctl.job(j).end_time for j in (a, b)] == [start + 63, start + 183]
    squeue = format_squeue([ctl.job(a), ctl.job(b)], fmt="%l %L", noheader=True, now=ctl.now)
    assert squeue == "1:00 0:57\n3:00 2:57\n"
    ctl.run_for(300)  # the checks come at 90 and 210 (ends 63 and 183)
    assert [ended_at(ctl.job(j)) - start for j in (a, b)] == [90, 210]


def test_the_wall_clock_daemon_clamps_the_end_the_same_way() -> None:
    """The controller slurmctld.py runs (``realtime_environment``): a job started at
    ...020 with ``--time=2`` lowered to 1 at ...110 (90 s used) shows EndTime ...110 and
    ends TIMEOUT at the daemon's next check, ...137 (checks at ...017 + 30k)."""
    from ctld_helpers import REF_CONF

    from minislurm.conf import parse_config
    from minislurm.daemon.realtime import realtime_environment

    started = 1_767_600_017.6
    env = realtime_environment(lambda: started)
    ctl = Controller(parse_config(REF_CONF, "slurm.conf"), env)
    env.run(until=started + 3)
    jid = sub(ctl, None, time_limit=2)
    env.run(until=started + 93)
    assert ctl.job(jid).start_time == 1_767_600_020 and ctl.now == 1_767_600_110
    ctl.update_job(jid, time_limit=1)
    assert ctl.job(jid).end_time == 1_767_600_110
    env.run(until=started + 119)  # ...136.6: the check of ...107 has passed, ...137 not yet
    assert ctl.job(jid).state is JobState.RUNNING
    env.run(until=started + 200)
    job = ctl.job(jid)
    assert (job.state, job.end_time) == (JobState.TIMEOUT, 1_767_600_137)


#: Whether the job had ended when squeue returned (see the real-Slurm test's race).
ENDED_FIRST = "ended before squeue returned"


#: ``scontrol update TimeLimit=0`` of a running job, measured on 22.05.8 (a ``--time=5``
#: job started 23:14:18, updated at 23:14:20, checks at :19 and :49): ``TimeLimit=00:00:00
#: EndTime=2026-12-03T23:14:20`` (the update), squeue ``%l %L`` ``0:00 INVALID``; TIMEOUT
#: Reason=TimeLimit at 23:14:49; sacct ``TIMEOUT``, ``Elapsed 00:00:31``, ``Timelimit``
#: empty.  (sbatch's ``--time=0`` is UNLIMITED; scontrol's ``TimeLimit=0`` is 0 minutes.)
ZEROED = {
    "TimeLimit": "00:00:00",
    "squeue": "0:00 INVALID",
    "EndTime is the update": True,
    "JobState": "TIMEOUT",
    "Reason": "TimeLimit",
    "timed out within 30 s of the update": True,
    "sacct": "TIMEOUT|0:0|",
    ENDED_FIRST: False,
}


def _fields(text: str) -> dict[str, str]:
    return dict(kv.split("=", 1) for kv in text.split() if "=" in kv)


def _stamp(text: str) -> int:
    import calendar

    return calendar.timegm(time.strptime(text, "%Y-%m-%dT%H:%M:%S"))


def _zeroed(run: Callable[[str], str], pause: Callable[[float], None],
            clock: Callable[[], int]) -> dict[str, object]:
    """Submit a 5-minute job, set ``TimeLimit=0`` once it runs, wait for its end. ``clock``
    is the cluster's time as `_stamp` reads its timestamps."""
    job = run("sbatch --parsable -t 5 --wrap 'sleep 300'").strip()
    try:
        for _ in range(20):
            if run(f"squeue -h -j {job} -o %T").strip() == "RUNNING":
                break
            pause(0.5)
        pause(1)
        run(f"scontrol update jobid={job} TimeLimit=0")
        shown = _fields(run(f"scontrol -o show job {job}"))
        squeue = run(f"squeue -h -j {job} -o '%l %L'").strip()
        squeue_returned = clock()
        run_time = sum(int(x) * m for x, m in zip(shown["RunTime"].split(":"), (3600, 60, 1),
                                                 strict=True))
        updated = _stamp(shown["EndTime"])
        # the next periodic check is at most 30 s away; then the job is COMPLETING until
        # slurmd has killed its processes (more on a loaded machine), TIMEOUT after
        for _ in range(60):
            if run(f"squeue -h -j {job} -o %T").strip() not in ("RUNNING", "COMPLETING"):
                break
            pause(1)
        done = _fields(run(f"scontrol -o show job {job}"))
        sacct = ""
        for _ in range(20):  # slurmdbd may lag a moment behind slurmctld
            sacct = run(f"sacct -n -X -P -j {job} -o State,ExitCode,Timelimit").strip()
            if not sacct.startswith("RUNNING"):
                break
            pause(0.5)
    finally:
        run(f"scancel {job}")
    return {
        "TimeLimit": shown["TimeLimit"],
        "squeue": squeue,
        # the same record's RunTime (up to the moment shown, the same second or the next)
        "EndTime is the update": 0 <= _stamp(shown["StartTime"]) + run_time - updated <= 1,
        "JobState": done["JobState"],
        "Reason": done["Reason"],
        "timed out within 30 s of the update": 0 <= _stamp(done["EndTime"]) - updated <= 30,
        "sacct": sacct,
        ENDED_FIRST: _stamp(done["EndTime"]) <= squeue_returned,
    }


def test_time_limit_zero_ends_a_running_job_at_the_next_check(tmp_path: Path) -> None:
    cluster = reference_cluster(tmp_path)
    assert _zeroed(checked_stdout(cluster.run), cluster.advance, lambda: cluster.now) == ZEROED


def _wall_clock() -> int:
    """Now, as `_stamp` reads slurmctld's local-time stamps."""
    import calendar

    return calendar.timegm(time.localtime())


@pytest.mark.realslurm
def test_time_limit_zero_on_real_slurm(real_slurm: RealSlurm, tmp_path: Path) -> None:
    """A race of real Slurm's, whose outcomes are both accepted: slurmctld checks time
    limits every ``PERIODIC_TIMEOUT`` (30 s, ``_slurmctld_background``). When that check
    falls between the update and the squeue call (a loaded machine) and slurmd has killed
    the job by then, the job is TIMEOUT when squeue asks, and squeue prints nothing:
    without ``-t``, even with ``-j``, it lists only pending, running, suspended and
    completing jobs (``_filter_job``, src/squeue/print.c). Nothing else may differ."""
    got = _zeroed(checked_stdout(real_slurm.run, cwd=tmp_path), time.sleep, _wall_clock)
    if got[ENDED_FIRST]:
        ended = {**ZEROED, ENDED_FIRST: True}
        assert got in (ended, {**ended, "squeue": ""}), got
    else:
        assert got == ZEROED
