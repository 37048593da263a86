"""A step daemon's socket deeper than ``sun_path`` (108 bytes) still works.

minislurm's spool is ``$MINISLURM_STATE_DIR/spool``; the batch step's socket there is
``<node>_<jobid>.4294967291``. Under pytest-xdist a cluster's folder is deep enough for
that path to pass 108 bytes (110 in a clean-clone run): binding failed with ``AF_UNIX
path too long``, the job FAILED before its script ran, and no ``slurm-%j.out`` existed
(tests/course/ddp/test_ddp_runs.py read it and raised FileNotFoundError).
"""

from __future__ import annotations

import time
from pathlib import Path

from minicluster import MiniCluster

from minislurm.common.rpc import socket_address
from minislurm.common.wire import SUN_PATH_MAX
from minislurm.slurmd.spool import JobSpool


def _deep_root(tmp_path: Path) -> Path:
    """A cluster folder whose batch step socket path is 115 bytes long (its
    ``slurmctld.sock``, 103 bytes, still fits)."""
    base = tmp_path / "c"
    sock = f"{base}/state/spool/n1_100000.4294967291"
    return tmp_path / ("d" * (115 - len(sock) - 1)) / "c"


def test_socket_address_is_the_path_itself_when_it_fits(tmp_path: Path) -> None:
    path = tmp_path / "n1_5.4294967291"
    with socket_address(path) as address:
        assert address == str(path)


def test_a_deep_cluster_runs_and_cancels_batch_jobs(tmp_path: Path) -> None:
    """The script runs (its output file is there when the job is COMPLETED), and
    scancel reaches the step daemon over its socket: its ``*** JOB ... CANCELLED AT``
    line (written by slurmstepd only) is in the job's output."""
    root = _deep_root(tmp_path)
    mini = MiniCluster(root)
    sock = JobSpool(mini.state_dir / "spool", 100000, "n1", 0).socket
    assert len(str(sock)) == 115 > SUN_PATH_MAX
    mini.start_or_skip()
    try:
        work = mini.work_dir
        done = mini.run(["sbatch", "--parsable", "--wrap", "echo hi"], cwd=work)
        assert done.rc == 0, done.stderr
        first = int(done.stdout.strip())
        assert mini.wait_job(first, timeout=60) == "COMPLETED", mini.log_tail()
        assert (work / f"slurm-{first}.out").read_text() == "hi\n"
        done = mini.run(["sbatch", "--parsable", "--wrap", "echo on; sleep 300"], cwd=work)
        second = int(done.stdout.strip())
        out = work / f"slurm-{second}.out"
        deadline = time.monotonic() + 60
        while not (out.exists() and out.read_text() == "on\n"):
            assert time.monotonic() < deadline, "the second job never started"
            time.sleep(0.2)
        assert mini.run(["scancel", str(second)]).rc == 0
        assert mini.wait_job(second, timeout=60) == "CANCELLED"
        assert f"*** JOB {second} ON n1 CANCELLED AT " in out.read_text()
    finally:
        assert mini.stop() == []


def test_a_controller_deeper_than_sun_path_starts_and_answers(tmp_path: Path) -> None:
    """slurmctld's own socket past 108 bytes: ``cluster up`` binds it, sbatch and squeue
    reach it (it used to fail with ``AF_UNIX path too long``)."""
    base = tmp_path / "c"
    sock = f"{base}/state/slurmctld.sock"
    root = tmp_path / ("d" * (112 - len(sock) - 1)) / "c"
    mini = MiniCluster(root)
    assert len(str(mini.state_dir / "slurmctld.sock")) == 112 > SUN_PATH_MAX
    mini.start_or_skip()
    try:
        done = mini.run(["sbatch", "--parsable", "--wrap", "echo deep"], cwd=mini.work_dir)
        assert done.rc == 0, done.stderr
        job = int(done.stdout.strip())
        assert mini.wait_job(job, timeout=60) == "COMPLETED", mini.log_tail()
        assert (mini.work_dir / f"slurm-{job}.out").read_text() == "deep\n"
    finally:
        assert mini.stop() == []
