"""The embedded cluster for notebooks (`minislurm.sim.cluster.Cluster`).

A `Cluster` is a controller on a simulated clock plus Slurm's commands:
``run("squeue")`` prints exactly what the command prints, ``sbatch(script)``
submits a script whose ``sleep``/``exit`` lines say how long it runs and how
it ends, ``advance(seconds)`` lets simulated time pass and ``wait_job`` runs
the clock until a job has ended. Nothing waits for the wall clock.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from minislurm.ctld import DEFAULT_EPOCH
from minislurm.errors import OptionError, SlurmError, SubmitError
from minislurm.job import JobRecord
from minislurm.sim.cluster import COMMANDS, Cluster, CommandResult
from minislurm.states import JobState


@pytest.fixture
def reference_conf(captures: Path) -> Path:
    """The slurm.conf the captures of real Slurm were taken with (4 nodes n1..n4)."""
    return captures / "slurm.conf"


@pytest.fixture
def cluster(reference_conf: Path) -> Iterator[Cluster]:
    c = Cluster(reference_conf)
    try:
        yield c
    finally:
        c.close()


def _run_time(record: JobRecord) -> int:
    """Seconds between a finished job's start and end."""
    assert record.start_time is not None and record.end_time is not None
    return record.end_time - record.start_time


def test_an_idle_cluster_prints_sinfo_and_squeue_like_the_capture(
    cluster: Cluster, captures: Path,
) -> None:
    """Capture c2/00_idle_views starts with ``sinfo``, a blank line, ... ``squeue``."""
    blocks = (captures / "c2_formats_and_reasons" / "00_idle_views.out").read_text().split("\n\n")
    sinfo = cluster.run("sinfo")
    squeue = cluster.run("squeue")
    assert (sinfo.returncode, sinfo.stderr) == (0, "")
    assert sinfo.stdout == blocks[0] + "\n"
    assert squeue.stdout == blocks[2] + "\n"


def test_the_clock_starts_at_the_epoch_and_moves_only_when_asked(cluster: Cluster) -> None:
    assert cluster.now == DEFAULT_EPOCH
    cluster.advance(3600)
    assert cluster.now == DEFAULT_EPOCH + 3600


def test_a_script_runs_as_long_as_its_sleeps_say(cluster: Cluster) -> None:
    job = cluster.sbatch("#!/bin/bash\n#SBATCH -J train -N2\nsrun sleep 300\n")
    cluster.advance(1)
    assert cluster.controller.job(job).state is JobState.RUNNING
    line = cluster.run("squeue").stdout.splitlines()[1].split()
    assert line == [str(job), "debug", "train", "student", "R", "0:01", "2", "n[1-2]"]
    cluster.advance(298)
    assert cluster.controller.job(job).state is JobState.RUNNING
    cluster.advance(2)
    record = cluster.controller.job(job)
    assert record.state is JobState.COMPLETED
    assert _run_time(record) == 300


def test_wait_job_runs_the_clock_to_the_end_of_the_job_without_waiting(cluster: Cluster) -> None:
    job = cluster.sbatch("#!/bin/bash\nsleep 50m\n", "--time=1:00:00")
    start = time.monotonic()
    record = cluster.wait_job(job)
    assert time.monotonic() - start < 5          # 50 simulated minutes, in a moment
    assert record.state is JobState.COMPLETED
    assert cluster.now == record.end_time
    assert _run_time(record) == 3000


def test_exit_lines_and_overrides_decide_how_a_job_ends(cluster: Cluster) -> None:
    failed = cluster.wait_job(cluster.sbatch("#!/bin/bash\nsleep 5\nexit 3\n"))
    assert (failed.state, failed.exit_code) == (JobState.FAILED, 3)
    told = cluster.wait_job(cluster.sbatch("#!/bin/bash\nsleep 5\n", runtime=120, exit_code=9))
    assert (told.state, told.exit_code, _run_time(told)) == (
        JobState.FAILED, 9, 120)


def test_sacct_lists_the_job_and_its_batch_step(cluster: Cluster) -> None:
    job = cluster.sbatch("#!/bin/bash\n#SBATCH -J small\nsleep 10\n")
    cluster.wait_job(job)
    rows = [line.split() for line in cluster.run("sacct").stdout.splitlines()[2:]]
    assert rows == [[str(job), "small", "debug", "teaching", "1", "COMPLETED", "0:0"],
                    [f"{job}.batch", "batch", "teaching", "1", "COMPLETED", "0:0"]]


def test_sacct_of_a_timed_out_job_matches_the_capture(cluster: Cluster) -> None:
    job = cluster.sbatch("#!/bin/bash\n#SBATCH -J timeout1 -t 1\nsleep 300\n")
    cluster.wait_job(job)
    rows = [line.split() for line in cluster.run("sacct").stdout.splitlines()[2:]]
    assert [r[-2:] for r in rows] == [["TIMEOUT", "0:0"], ["CANCELLED", "0:15"]]


def test_commands_can_be_given_as_a_line_a_list_or_with_stdin(cluster: Cluster) -> None:
    by_line = cluster.run("sbatch --parsable --wrap 'sleep 5'")
    by_list = cluster.run(["sbatch", "--parsable", "--wrap", "sleep 5"])
    by_stdin = cluster.run("sbatch --parsable", stdin="#!/bin/bash\nsleep 5\n")
    ids = [int(r.stdout) for r in (by_line, by_list, by_stdin)]
    assert ids == [ids[0], ids[0] + 1, ids[0] + 2]
    assert by_list.command == "sbatch --parsable --wrap 'sleep 5'"
    names = {j.job_id: j.name for j in cluster.jobs()}
    assert [names[i] for i in ids] == ["wrap", "wrap", "sbatch"]   # capture f2


def test_a_command_result_prints_like_a_terminal(cluster: Cluster) -> None:
    result = cluster.run("sbatch --time=abc --wrap true")
    assert isinstance(result, CommandResult)
    assert (result.returncode, result.stdout) == (255, "")
    assert str(result) == "sbatch: error: Invalid --time specification\n"


def test_commands_run_as_the_clusters_user_unless_told_otherwise(cluster: Cluster) -> None:
    cluster.sbatch("#!/bin/bash\nsleep 100\n")
    cluster.sbatch("#!/bin/bash\nsleep 100\n", user="alice")
    cluster.advance(1)
    users = [line.split()[3] for line in cluster.run("squeue").stdout.splitlines()[1:]]
    assert sorted(users) == ["alice", "student"]


def test_only_slurms_commands_run_here(cluster: Cluster) -> None:
    result = cluster.run("rm -rf /")
    assert result.returncode == 127
    assert result.stderr.startswith("minislurm: rm: not a command here (")
    assert set(COMMANDS) >= {"sbatch", "squeue", "sinfo", "scancel", "scontrol", "sacct"}


def test_sbatch_raises_slurms_errors(cluster: Cluster) -> None:
    with pytest.raises(OptionError) as option:
        cluster.sbatch("#!/bin/bash\nsleep 1\n", "--foo")
    assert (option.value.message, option.value.exit_code) == (
        "sbatch: unrecognized option '--foo'\nTry \"sbatch --help\" for more information", 255)
    with pytest.raises(SubmitError) as submit:
        cluster.sbatch("#!/bin/bash\nsleep 1\n", "-p", "nosuch")
    assert submit.value.message == ("sbatch: error: invalid partition specified: nosuch\n"
                                    "sbatch: error: Batch job submission failed: "
                                    "Invalid partition name specified")
    assert submit.value.exit_code == 1


def test_waiting_for_what_never_happens_stops_at_the_limit(cluster: Cluster) -> None:
    held = cluster.sbatch("#!/bin/bash\nsleep 10\n", "--hold")
    with pytest.raises(SlurmError, match="still waiting after 3600 simulated seconds"):
        cluster.wait(lambda: cluster.controller.job(held).state.is_terminal, limit=3600)


def test_a_script_can_be_written_into_the_working_directory(cluster: Cluster) -> None:
    path = cluster.write("jobs/train.sh", "#!/bin/bash\nsleep 60\n")
    assert path == cluster.workdir / "jobs" / "train.sh"
    result = cluster.run("sbatch jobs/train.sh")
    assert result.stdout.startswith("Submitted batch job ")
    job = int(result.stdout.split()[-1])
    assert _run_time(cluster.wait_job(job)) == 60


def test_close_removes_the_temporary_working_directory(reference_conf: Path) -> None:
    c = Cluster(reference_conf)
    workdir = c.workdir
    assert workdir.is_dir()
    c.close()
    assert not workdir.exists()
    kept = Cluster(reference_conf, workdir=workdir)
    kept.close()
    assert workdir.is_dir()              # a folder the caller chose is the caller's
    workdir.rmdir()
