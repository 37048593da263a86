"""``--signal`` and time limits on the wall clock, end to end on real processes.

What real 22.05 does (checked on this host with scripts/realslurm, ``--time=1``,
``KillWait=5``): ``--signal=B:USR1@T`` reaches the batch shell only -- not its
children, not the srun steps; ``--signal=USR1@T`` reaches every srun step and not
the batch shell. Both come at slurmctld's periodic check (every 30 s) at which
``now + T + 30 >= end``, the time limit at the first check after ``start + limit``:
SIGTERM to everything, SIGKILL ``KillWait`` seconds later, the job TIMEOUT.  The
checks are counted from the daemon's start (not from multiples of 30 s of the clock).

All three jobs run at once on one local cluster (~95 s in all); each test checks one.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from minicluster import MiniCluster, srun_works

PERIOD = 30  # slurmctld's PERIODIC_TIMEOUT
KILL_WAIT = 5  # the reference slurm.conf

SIGNALLED = """#!/bin/bash
trap 'echo "batch USR1 $(date +%s.%N)"' USR1
srun -o step.out bash -c 'trap "echo step USR1 \\$(date +%s.%N)" USR1; \
for i in $(seq 600); do sleep 0.2; done' &
sleep 300 &
echo $! > child.pid
while true; do sleep 0.2; done
"""

STUBBORN = """#!/bin/bash
trap 'echo "TERM $(date +%s.%N)"' TERM
echo $$ > script.pid
while true; do sleep 0.2; done
"""


@dataclass
class Jobs:
    mini: MiniCluster
    ids: dict[str, int]

    def folder(self, name: str) -> Path:
        return self.mini.work_dir / name

    def start(self, name: str) -> int:
        """The job's StartTime (epoch seconds, as scontrol prints it in local time)."""
        text = self.mini.job_records(self.ids[name])[0]["StartTime"]
        return int(time.mktime(time.strptime(text, "%Y-%m-%dT%H:%M:%S")))


def _check_after(t: int, phase: int) -> int:
    """The first periodic check at or after ``t``: every 30 s counted from slurmctld's
    start, so on seconds congruent to ``phase`` modulo 30."""
    return phase + -(-(t - phase) // PERIOD) * PERIOD


def _warn_due(start: int, limit_min: int, before: int, phase: int) -> int:
    return max(_check_after(start + limit_min * 60 - before - PERIOD, phase), start)


def _phase(jobs: Jobs) -> int:
    """The checks' phase: the second of the stubborn job's SIGTERM (sent at a check)."""
    out = (jobs.folder("stubborn") / "out.txt").read_text()
    return int(_stamps(out, "TERM")[0])


@pytest.fixture(scope="module")
def jobs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Jobs]:
    if not srun_works():
        pytest.skip("minislurm srun is not available")
    mini = MiniCluster(tmp_path_factory.mktemp("sigwall"), first_job_id=None)
    mini.start_or_skip()
    ids = {}
    try:
        for name, script, opts in (("batch_only", SIGNALLED, "--signal=B:USR1@20"),
                                   ("steps", SIGNALLED, "--signal=USR1@20"),
                                   ("stubborn", STUBBORN, "")):
            work = mini.work_dir / name
            work.mkdir()
            (work / "job.sh").write_text(script)
            cmd = f"sbatch --parsable -t 1 {opts} -o out.txt job.sh"
            res = mini.run(cmd, cwd=work)
            assert res.rc == 0, res.stderr
            ids[name] = int(res.stdout.strip())
        for job_id in ids.values():
            mini.wait_job(job_id, timeout=150)
        yield Jobs(mini, ids)
    finally:
        survivors = mini.stop()
        assert survivors == [], f"processes left: {survivors}"


def _stamps(text: str, word: str) -> list[float]:
    return [float(line.split()[-1]) for line in text.splitlines() if line.startswith(word)]


def test_signal_b_reaches_the_batch_shell_alone_on_time(jobs: Jobs) -> None:
    work = jobs.folder("batch_only")
    out = (work / "out.txt").read_text()
    got = _stamps(out, "batch USR1")
    assert len(got) == 1, out
    due = _warn_due(jobs.start("batch_only"), 1, 20, _phase(jobs))
    assert due - 0.5 <= got[0] <= due + 2.0, (got, due)
    assert not _stamps((work / "step.out").read_text(), "step USR1")  # no step got it
    assert "User defined signal 1" not in out  # the shell's child (sleep 300) did not either


def test_signal_without_b_reaches_the_steps_not_the_batch_shell(jobs: Jobs) -> None:
    work = jobs.folder("steps")
    out = (work / "out.txt").read_text()
    assert not _stamps(out, "batch USR1"), out
    got = _stamps((work / "step.out").read_text(), "step USR1")
    assert len(got) == 1, (work / "step.out").read_text()
    due = _warn_due(jobs.start("steps"), 1, 20, _phase(jobs))
    assert due - 0.5 <= got[0] <= due + 2.0, (got, due)


def test_time_limit_is_sigterm_then_sigkill_after_killwait(jobs: Jobs) -> None:
    work = jobs.folder("stubborn")
    job_id = jobs.ids["stubborn"]
    out = (work / "out.txt").read_text()
    terms = _stamps(out, "TERM")
    assert len(terms) == 1
    # slurmstepd's line first (real 22.05: "slurmstepd-n1: error: *** JOB 1 ON n1
    # CANCELLED AT 2026-12-02T21:51:42 DUE TO TIME LIMIT ***"), then the trap's
    line = re.compile(rf"slurmstepd-(n\d): error: \*\*\* JOB {job_id} ON \1 CANCELLED AT "
                      r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d DUE TO TIME LIMIT \*\*\*$")
    assert line.match(out.splitlines()[0]), out
    start = jobs.start("stubborn")  # SIGTERM at the first check after start + 60 s
    assert start + 60 <= terms[0] < start + 60 + PERIOD + 2.0, (terms, start)
    rows = jobs.mini.run(["sacct", "-j", str(job_id), "-P", "-n", "-o",
                          "JobID,State,ExitCode,Start,End"]).stdout.splitlines()
    assert [r.split("|")[:3] for r in rows] == [[str(job_id), "TIMEOUT", "0:0"],
                                                [f"{job_id}.batch", "CANCELLED", "0:15"]]
    # the script ignored SIGTERM: it died of SIGKILL KillWait seconds later
    # (the step daemon's record of the attempt: kept until the next controller start)
    # slurmctld records TIMEOUT when it sends SIGKILL; slurmstepd writes status.json once
    # the process is gone, a moment later
    path = jobs.mini.state_dir / "spool" / f"job{job_id:05d}" / "status.json"
    deadline = time.monotonic() + 15
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    status = json.loads(path.read_text())
    assert status["signal"] == 9
    assert terms[0] + KILL_WAIT - 0.5 <= status["end_time"] <= terms[0] + KILL_WAIT + 2.0
