"""The local daemon loses nothing when it stops or dies (real processes, wall clock).

As on real Slurm, a batch script runs under a step daemon of its own, not under
slurmctld: SIGKILL the controller (its whole process group) in the middle of a run
and the running job goes on; start the controller again and it re-adopts that job,
collects the one that ended meanwhile with its real end time, starts the pending one,
and sacct still has every row. ``cluster down`` cancels running jobs and keeps
pending ones; ``cluster down --keep-jobs`` leaves them running for the next ``up``. A
damaged state file stops ``cluster up`` with slurmctld's words and nothing on disk
changes; ``cluster up -i`` uses the previous good save.

Every command has a timeout; each test's cluster is brought down and every process
of it ended, even on failure.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from minicluster import MiniCluster, python

FIRST = 100000


@pytest.fixture
def mini(tmp_path: Path) -> Iterator[MiniCluster]:
    cluster = MiniCluster(tmp_path / "c", first_job_id=FIRST)
    cluster.start_or_skip()
    try:
        yield cluster
    finally:
        survivors = cluster.stop()
        assert survivors == [], f"processes left: {survivors}"


def until(predicate: Callable[[], object], timeout: float = 20.0, step: float = 0.1) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s")
        time.sleep(step)


def alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return "\nState:\tZ" not in status


def submit(mini: MiniCluster, *argv: str) -> int:
    res = mini.run(["sbatch", "--parsable", *argv])
    assert res.rc == 0, res.stderr
    return int(res.stdout.strip())


def state(mini: MiniCluster, job_id: int) -> str:
    records = mini.job_records(job_id)
    return records[0].get("JobState", "") if records else ""


def sacct(mini: MiniCluster, job_id: int, fields: str = "JobID,State,ExitCode,Elapsed"
          ) -> list[list[str]]:
    res = mini.run(["sacct", "-j", str(job_id), "-P", "-n", "-o", fields])
    assert res.rc == 0, res.stderr
    return [line.split("|") for line in res.stdout.splitlines()]


def kill_controller(mini: MiniCluster) -> int:
    """SIGKILL slurmctld and everything in its process group (it leads its own)."""
    pid = int((mini.state_dir / "slurmctld.pid").read_text())
    os.killpg(pid, signal.SIGKILL)
    until(lambda: not alive(pid), 10)
    return pid


def restart(mini: MiniCluster, *flags: str) -> None:
    res = mini.run([python(), "-m", "minislurm", "cluster", "up", *flags], timeout=45)
    assert res.rc == 0, res.stdout + res.stderr + mini.log_tail()


def saved_srun_ports(mini: MiniCluster, job_id: int) -> dict[str, int]:
    """The ports of ``job_id``'s sruns in slurmctld's last saved state (``job_state``,
    what slurmd keeps: written after srun's ``step_pids`` request, before its answer)."""
    try:
        saved = json.loads((mini.state_dir / "job_state").read_text())
        ports = saved["data"]["slurmd"]["step_ports"].get(str(job_id), {})
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}
    return {str(step): int(port) for step, port in dict(ports).items()}


def seconds(elapsed: str) -> int:
    """sacct's Elapsed ``[D-]HH:MM:SS`` in seconds."""
    days, _, clock = elapsed.rpartition("-")
    h, m, s = (int(x) for x in clock.split(":"))
    return (int(days) if days else 0) * 86400 + h * 3600 + m * 60 + s


COUNTER = """#!/bin/bash
echo $$ > counter.pid
for i in $(seq 1 12); do echo "line $i"; sleep 0.5; done
echo finished
"""


def test_sigkill_mid_run_loses_no_job_row_or_output(mini: MiniCluster) -> None:
    work = mini.work_dir
    (work / "counter.sh").write_text(COUNTER)
    early = mini.run(["sbatch", "--wait", "--parsable", "--wrap", "echo early"])
    assert early.rc == 0, early.stderr
    done = int(early.stdout.strip())
    done_rows = sacct(mini, done)
    running = submit(mini, "-o", "counter.out", "counter.sh")
    pending = submit(mini, "-N4", "--exclusive", "-o", "wide.out", "--wrap", "echo wide")
    out = work / "counter.out"
    until(lambda: out.exists() and "line 2" in out.read_text())
    assert state(mini, pending) == "PENDING"
    script = int((work / "counter.pid").read_text())
    t_kill = time.time()
    kill_controller(mini)
    assert mini.run(["squeue"]).rc != 0  # the controller is really gone
    lines_then = out.read_text().count("line")
    until(lambda: out.read_text().count("line") > lines_then + 1, 10)  # the job goes on
    assert alive(script)
    restart(mini)
    assert state(mini, running) == "RUNNING"
    assert mini.wait_job(running, timeout=30) == "COMPLETED"
    assert mini.wait_job(pending, timeout=30) == "COMPLETED"
    text = out.read_text()
    assert text == "".join(f"line {i}\n" for i in range(1, 13)) + "finished\n"
    assert (work / "wide.out").read_text() == "wide\n"
    rows = sacct(mini, running)
    assert [r[:3] for r in rows] == [[str(running), "COMPLETED", "0:0"],
                                     [f"{running}.batch", "COMPLETED", "0:0"]]
    assert 6 <= seconds(rows[0][3]) <= 9, rows  # the script's own run time, not the outage
    assert sacct(mini, done) == done_rows
    assert [r[1] for r in sacct(mini, pending)] == ["COMPLETED", "COMPLETED"]
    assert submit(mini, "--wrap", "true") == pending + 1  # the job id counter went on
    assert time.time() - t_kill < 60


def test_a_job_that_ends_while_no_controller_runs_keeps_its_real_end(mini: MiniCluster) -> None:
    job = submit(mini, "-o", "short.out", "--wrap", "echo a; sleep 2; echo b")
    until(lambda: state(mini, job) == "RUNNING")
    kill_controller(mini)
    out = mini.work_dir / "short.out"  # RUNNING comes before slurmstepd opens the file
    until(lambda: out.exists() and out.read_text() == "a\nb\n", 15)
    time.sleep(3)  # the controller stays down well past the job's end
    restart(mini)
    assert mini.wait_job(job, timeout=15) == "COMPLETED"
    rows = sacct(mini, job, "JobID,State,Start,End,Elapsed")
    assert [r[1] for r in rows] == ["COMPLETED", "COMPLETED"]
    assert 2 <= seconds(rows[0][4]) <= 3, rows
    log = (mini.state_dir / "slurmctld.log").read_text()
    assert f"Recovered JobId={job}: ended while slurmctld was down" in log


def test_srun_steps_are_still_reached_after_a_restart(mini: MiniCluster) -> None:
    """Killed and started again, slurmctld still knows each running srun's port and each
    step's own time limit: ``scancel`` ends a step as before (srun's "aborted" line, the
    step's line, CANCELLED 0:15) and ``srun -t 1`` still times out (TIMEOUT 0:15)."""
    work = mini.work_dir
    body = "srun {} bash -c 'echo go; touch $SLURM_JOB_ID.on; sleep 300'\necho end $?\n"
    (work / "limit.sh").write_text("#!/bin/bash\n" + body.format("-t 1"))
    (work / "cancel.sh").write_text("#!/bin/bash\n" + body.format(""))
    limited = submit(mini, "-o", "limit.out", "limit.sh")
    cancelled = submit(mini, "-o", "cancel.out", "cancel.sh")
    until(lambda: all((work / f"{j}.on").exists() for j in (limited, cancelled)), 30)
    # a task runs before its srun tells slurmctld the port it listens on (step_pids):
    # kill slurmctld only once both ports are in its saved state
    until(lambda: all(saved_srun_ports(mini, j) for j in (limited, cancelled)), 30)
    kill_controller(mini)
    restart(mini)
    assert mini.run(["scancel", str(cancelled)]).rc == 0
    until(lambda: state(mini, cancelled) == "CANCELLED", 30)
    until(lambda: state(mini, limited) == "COMPLETED", 150, 0.5)
    time.sleep(8)  # KillWait + 2: srun's last lines are in the files
    out = (work / "cancel.out").read_text()
    assert "srun: Job step aborted: Waiting up to 7 seconds for job step to finish." in out
    assert f"*** STEP {cancelled}.0 ON n1 CANCELLED AT " in out
    assert (work / "limit.out").read_text().endswith(
        f"srun: Force Terminated StepId={limited}.0\nend 143\n")
    assert [r[:3] for r in sacct(mini, cancelled)][-1] == [f"{cancelled}.0", "CANCELLED", "0:15"]
    assert [r[:3] for r in sacct(mini, limited)][-1] == [f"{limited}.0", "TIMEOUT", "0:15"]


def test_cluster_down_keep_jobs_then_up_finds_the_job_again(mini: MiniCluster) -> None:
    work = mini.work_dir
    (work / "counter.sh").write_text(COUNTER)
    job = submit(mini, "-o", "counter.out", "counter.sh")
    until(lambda: (work / "counter.out").exists() and "line 1" in (work / "counter.out")
          .read_text())
    res = mini.run([python(), "-m", "minislurm", "cluster", "down", "--keep-jobs"], timeout=30)
    assert res.rc == 0 and "running jobs go on" in res.stdout, res.stdout + res.stderr
    assert not (mini.state_dir / "slurmctld.sock").exists()
    script = int((work / "counter.pid").read_text())
    assert alive(script)
    restart(mini)
    assert mini.wait_job(job, timeout=30) == "COMPLETED"
    assert (work / "counter.out").read_text().endswith("line 12\nfinished\n")
    assert 6 <= seconds(sacct(mini, job)[0][3]) <= 9


def test_cluster_down_cancels_running_jobs_and_keeps_pending_ones(mini: MiniCluster) -> None:
    work = mini.work_dir
    (work / "counter.sh").write_text(COUNTER)
    running = submit(mini, "-o", "counter.out", "counter.sh")
    held = submit(mini, "--hold", "--wrap", "echo later")
    until(lambda: (work / "counter.pid").exists())
    script = int((work / "counter.pid").read_text())
    res = mini.run([python(), "-m", "minislurm", "cluster", "down"], timeout=60)
    assert (res.rc, res.stdout) == (0, "minislurm: cluster is down\n")
    until(lambda: not alive(script), 10)
    restart(mini)
    assert state(mini, running) == "CANCELLED"
    assert sacct(mini, running, "JobID,State")[0] == [str(running), "CANCELLED by 0"]
    assert state(mini, held) == "PENDING"
    assert mini.job_records(held)[0].get("Reason") == "JobHeldUser"
    assert mini.run(["scontrol", "release", str(held)]).rc == 0
    assert mini.wait_job(held, timeout=20) == "COMPLETED"


def test_a_corrupt_state_file_stops_cluster_up_and_i_uses_the_previous_save(
    mini: MiniCluster,
) -> None:
    job = submit(mini, "--wrap", "sleep 1")
    assert mini.wait_job(job, timeout=20) == "COMPLETED"
    res = mini.run([python(), "-m", "minislurm", "cluster", "down"], timeout=30)
    assert res.rc == 0
    job_state = mini.state_dir / "job_state"
    job_state.write_text(job_state.read_text()[:100])  # a torn write / damaged disk
    before = {p.name: p.read_bytes() for p in mini.state_dir.iterdir() if p.is_file()
              and p.name != "slurmctld.log"}
    res = mini.run([python(), "-m", "minislurm", "cluster", "up"], timeout=45)
    assert res.rc == 1
    assert ("fatal: Incomplete job state save file, start with '-i' to ignore this. "
            "Warning: using -i will lose the data that can't be recovered.") in res.stderr
    after = {p.name: p.read_bytes() for p in mini.state_dir.iterdir() if p.is_file()
             and p.name != "slurmctld.log"}
    assert after == before
    restart(mini, "-i")
    assert state(mini, job) == "COMPLETED"  # from the previous good save (+ its spool)
    assert [r[1] for r in sacct(mini, job)] == ["COMPLETED", "COMPLETED"]
    kept = list(mini.state_dir.glob("job_state.corrupt-*"))
    assert [p.read_bytes() for p in kept] == [before["job_state"]]
