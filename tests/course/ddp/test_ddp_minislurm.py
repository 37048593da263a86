"""The course's DDP example, course/ddp/job.sh, submitted to minislurm's local cluster.

``python -m minislurm cluster up`` (tests/minicluster.py: the reference slurm.conf,
4 nodes n1..n4) runs the unmodified batch script; its ``srun`` is minislurm's
(``bin/`` first on PATH), which starts the gloo ranks as real processes with the
``SLURM_*`` variables course/ddp/wiring.py reads. Two ranks (``-N2
--ntasks-per-node=1``: one per node, so that a node failure kills one of them)
keep it quick. Every result is compared with the bare launcher
(course.ddp.launch_bare, no Slurm at all) by the SHA-256 of the final
parameters: the same seed and steps must give the same bits.

The failure drill is the one the course teaches: while the job trains, after its
first checkpoint, ``scontrol update nodename=n2 state=down reason=drill``; the
``--requeue`` job goes back to PENDING (``Restarts=1``, BeginTime two minutes
ahead, as slurmctld does), ``state=resume`` repairs the node, ``scontrol update
jobid=ID starttime=now`` lets it start at once, and it resumes from its
checkpoint (``SLURM_RESTART_COUNT=1``) to the same final parameters.

Every command has a hard timeout; the cluster is always torn down (``stop()``
ends every process that carries its state dir, the job's ranks included).
"""

from __future__ import annotations

import os
import random
import re
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest
from bench_loader import load_benchmark
from minicluster import MiniCluster, python, srun_works
from realslurm.procs import pids_with_env

from course.ddp.launch_bare import start_tasks, wait_tasks
from course.ddp.logfmt import parse_records
from course.ddp.wiring import master_port

pytest.importorskip("torch")
pytestmark = [pytest.mark.slow, pytest.mark.ddp_ports]

REPO = Path(__file__).resolve().parents[3]
JOB_SH = REPO / "course" / "ddp" / "job.sh"
STEPS = 20
TRAIN_ARGS = ("--steps", str(STEPS), "--checkpoint-every", "5", "--timeout", "60")
#: One launch or one job, end to end (2 cores shared by many processes).
LIMIT = 180.0
#: What the batch script's environment adds to MiniCluster.env: the interpreter
#: job.sh runs (``${PYTHON:-python}``) and where ``-m course.ddp.train`` imports from.
JOB_ENV = {"PYTHON": python(), "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
DRILL_NODE = "n2"


def _port_free(job_id: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("", master_port(job_id)))
        except OSError:
            return False
    return True


def fresh_first_job_id() -> int:
    """A FirstJobId (>= 100000) whose next few ids all have a free MASTER_PORT,
    so that parallel runs of this module do not rendezvous with each other."""
    for _ in range(200):
        first = random.randrange(100_000, 900_000)
        if all(_port_free(first + k) for k in range(4)):
            return first
    raise RuntimeError("no free MASTER_PORT range")


def digest_of(log: str) -> str:
    """The ``final ... sha256=`` rank 0 logs at the end of training ('' if none)."""
    finals = [f for kind, f in parse_records(log.splitlines()) if kind == "final"]
    return finals[-1]["sha256"] if finals else ""


@pytest.fixture(scope="module")
def bare_digest(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The bare launcher's 2-rank run with the same seed and steps: the reference."""
    work = tmp_path_factory.mktemp("bare")
    job_id = random.randrange(1, 90_000)
    while not _port_free(job_id):
        job_id = random.randrange(1, 90_000)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "COURSE_DDP_"))}
    env["OMP_NUM_THREADS"] = "1"
    out = str(work / "task%t.out")
    procs = start_tasks([sys.executable, "-m", "course.ddp.train", *TRAIN_ARGS,
                         "--checkpoint-dir", "ckpt"], ntasks=2, nodes=("n1", "n2"),
                        job_id=job_id, env=env, output=out, cwd=work)
    try:
        codes = wait_tasks(procs, time_limit=LIMIT, kill_on_bad_exit=True)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
    log = (work / "task0.out").read_text()
    assert codes == [0, 0], log
    assert digest_of(log), log
    return digest_of(log)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MiniCluster]:
    """One local cluster for the module, always brought down (survivors are a failure)."""
    if not srun_works():
        pytest.skip("minislurm srun is not available yet")
    mini = MiniCluster(tmp_path_factory.mktemp("mini"), first_job_id=fresh_first_job_id())
    mini.start_or_skip()
    try:
        yield mini
    finally:
        survivors = mini.stop()
        assert survivors == [], f"processes left after cluster down: {survivors}"


def job_pids(mini: MiniCluster, job_id: int) -> list[int]:
    """The processes of job ``job_id`` on ``mini`` (not of another cluster's job ``job_id``)."""
    return pids_with_env([f"SLURM_JOB_ID={job_id}", f"SLURM_CONF={mini.conf_path}"], every=True)


def submit(mini: MiniCluster, folder: str, *train_extra: str, wait: bool,
           env: dict[str, str] | None = None) -> tuple[int, Path]:
    """``sbatch [--wait] -N2 --ntasks-per-node=1 job.sh <train args>`` in a fresh
    folder of the cluster's work dir; the job id and the folder (job.sh logs to
    ``slurm-%j.out`` and checkpoints to ``checkpoints/job-%j`` there). ``env``: more
    variables for the job (besides `JOB_ENV`)."""
    work = mini.work_dir / folder
    work.mkdir(parents=True)
    cmd = ["sbatch", "--parsable", *(["--wait"] if wait else []), "-N2",
           "--ntasks-per-node=1", str(JOB_SH), *TRAIN_ARGS, *train_extra]
    res = mini.run(cmd, cwd=work, env={**JOB_ENV, **(env or {})}, timeout=LIMIT)
    match = re.match(r"(\d+)", res.stdout)
    assert match, f"sbatch printed no job id (rc {res.rc}): {res.stdout}{res.stderr}"
    job_id = int(match.group(1))
    log = work / f"slurm-{job_id}.out"
    job_log = log.read_text() if log.exists() else ""
    assert res.rc == 0, f"sbatch rc {res.rc}: {res.stderr}\n{job_log}"
    return job_id, work


def show_job(mini: MiniCluster, job_id: int) -> dict[str, str]:
    records = mini.job_records(job_id)
    assert len(records) == 1, records
    return records[0]


def wait_for(predicate: Callable[[], bool], what: str, timeout: float = LIMIT) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.2)


def test_sbatch_wait_of_job_sh_trains_to_the_end_like_the_bare_launcher(
    cluster: MiniCluster, bare_digest: str
) -> None:
    job_id, work = submit(cluster, "plain", wait=True)
    log = (work / f"slurm-{job_id}.out").read_text()
    assert "Traceback" not in log, log
    assert log.startswith(f"job {job_id} on n[1-2] restart_count=0\n"), log
    start = next(f for kind, f in parse_records(log.splitlines()) if kind == "start")
    assert (start["world"], start["launcher"]) == ("2", "slurm")
    assert start["master"] == f"127.0.0.1:{master_port(job_id)}"  # n1's NodeAddr, port from the id
    checkpoints = sorted(p.name for p in (work / "checkpoints" / f"job-{job_id}").iterdir())
    assert checkpoints == ["ckpt-00000015.pt", "ckpt-00000020.pt"]  # --keep 2
    assert digest_of(log) == bare_digest
    job = show_job(cluster, job_id)
    assert (job["JobState"], job["ExitCode"], job["Restarts"]) == ("COMPLETED", "0:0", "0")
    sacct = cluster.run(["sacct", "-j", str(job_id), "-P", "-n", "-o", "JobID,State,ExitCode"],
                        timeout=30)
    assert sacct.stdout.splitlines() == [f"{job_id}|COMPLETED|0:0",
                                         f"{job_id}.batch|COMPLETED|0:0",
                                         f"{job_id}.0|COMPLETED|0:0"], sacct


def test_a_node_set_down_requeues_the_job_which_resumes_bit_identical(
    cluster: MiniCluster, bare_digest: str
) -> None:
    # --step-time slows the steps down so that the node dies mid-run (both attempts
    # get it: a requeued job runs the same script with the same arguments)
    job_id, work = submit(cluster, "drill", "--step-time", "0.5", wait=False)
    log = work / f"slurm-{job_id}.out"
    wait_for(lambda: log.exists() and "checkpoint step=5 " in log.read_text(),
             "the first checkpoint")
    assert "final" not in log.read_text(), "the job ended before the drill could start"
    down = cluster.run(["scontrol", "update", f"nodename={DRILL_NODE}", "state=down",
                        "reason=drill"], timeout=30)
    assert down.rc == 0, down.stderr

    wait_for(lambda: show_job(cluster, job_id)["JobState"] == "PENDING", "the requeue", 60)
    job = show_job(cluster, job_id)
    assert job["Restarts"] == "1", job
    assert job["Requeue"] == "1", job

    resume = cluster.run(["scontrol", "update", f"nodename={DRILL_NODE}", "state=resume"],
                         timeout=30)
    assert resume.rc == 0, resume.stderr
    now = cluster.run(["scontrol", "update", f"jobid={job_id}", "starttime=now"], timeout=30)
    assert now.rc == 0, now.stderr
    state = cluster.wait_job(job_id, timeout=LIMIT)
    text = log.read_text()
    assert state == "COMPLETED", text
    # --open-mode=append: both attempts are in the one log
    assert f"job {job_id} on n[1-2] restart_count=0\n" in text
    assert f"job {job_id} on n[1-2] restart_count=1\n" in text
    resumed = [f for kind, f in parse_records(text.splitlines()) if kind == "resume"]
    assert len(resumed) == 1 and resumed[0]["restart_count"] == "1", text
    assert 5 <= int(resumed[0]["step"]) < STEPS, text
    assert digest_of(text) == bare_digest


def test_a_node_down_during_the_checkpoint_write_kills_every_rank_and_resumes_elsewhere(
    cluster: MiniCluster, bare_digest: str
) -> None:
    """The drill at the worst moment: rank 0 (on n1) is half way through writing
    checkpoint 10 (the test hook ``COURSE_DDP_TEST_PAUSE_IN_CHECKPOINT``, first attempt
    only) when n2 goes down. Every process of the job dies on every node -- the paused
    rank 0 on the healthy n1 as well; the requeued job starts on healthy nodes (n2 stays
    down), ignores the torn temporary, resumes from checkpoint 5 and ends bit-identical."""
    job_id, work = submit(cluster, "drill-torn", "--step-time", "0.2", wait=False,
                          env={"COURSE_DDP_TEST_PAUSE_IN_CHECKPOINT": "10"})
    log = work / f"slurm-{job_id}.out"
    try:
        wait_for(lambda: log.exists() and "checkpoint-paused step=10 " in log.read_text(),
                 "rank 0 to pause inside checkpoint 10")
        first = show_job(cluster, job_id)
        assert first["NodeList"] == "n[1-2]", first
        procs = job_pids(cluster, job_id)  # batch shell, srun, both ranks
        assert len(procs) >= 4, procs
        down = cluster.run(["scontrol", "update", f"nodename={DRILL_NODE}", "state=down",
                            "reason=drill"], timeout=30)
        assert down.rc == 0, down.stderr
        wait_for(lambda: not job_pids(cluster, job_id),
                 "every process of the job to end", 30)
        wait_for(lambda: show_job(cluster, job_id)["JobState"] == "PENDING", "the requeue", 60)
        assert show_job(cluster, job_id)["Restarts"] == "1"
        torn = list((work / "checkpoints" / f"job-{job_id}").glob(".ckpt-00000010.pt.tmp-*"))
        assert len(torn) == 1, torn
        now = cluster.run(["scontrol", "update", f"jobid={job_id}", "starttime=now"],
                          timeout=30)
        assert now.rc == 0, now.stderr
        state = cluster.wait_job(job_id, timeout=LIMIT)
        text = log.read_text()
        assert state == "COMPLETED", text
        second = show_job(cluster, job_id)
        assert DRILL_NODE not in second["NodeList"].replace("n[1-2]", "n1,n2"), second
        assert f"job {job_id} on {second['NodeList']} restart_count=1\n" in text
        records = parse_records(text.splitlines())
        resumed = [f for kind, f in records if kind == "resume"]
        assert len(resumed) == 1 and resumed[0]["step"] == "5", text
        removed = [f for kind, f in records if kind == "removed"]
        assert [Path(f["path"]).name for f in removed] == [torn[0].name], text
        assert digest_of(text) == bare_digest
    finally:
        cluster.run(["scontrol", "update", f"nodename={DRILL_NODE}", "state=resume"],
                    timeout=30)


SWEEP_SH = """#!/bin/bash
#SBATCH -N1 -n4 -o sweep-%j.out
# Lesson 4's sweep pattern: two 2-rank DDP runs side by side in one allocation,
# each an `srun --exact` step of its own (its own world, its own rank 0).
for run in a b; do
    srun --exact -n2 -o "$run-%s-%t.out" "$PYTHON" -m course.ddp.train \\
        --checkpoint-dir "ckpt-$run" "$@" &
done
wait
"""


def test_two_concurrent_exact_steps_each_rendezvous_on_their_own_port(
    cluster: MiniCluster, bare_digest: str
) -> None:
    """Two 2-rank gloo steps at once on one node of one allocation: their rank 0s
    share MASTER_ADDR (the first node of each step, n1 for both) so they must not
    share MASTER_PORT too -- with the job's port for every step the second rank 0
    fails with EADDRINUSE or the four ranks cross-wire into one broken world.
    Each step trains to the bare launcher's bits and logs its own port."""
    work = cluster.work_dir / "sweep"
    work.mkdir(parents=True)
    (work / "sweep.sh").write_text(SWEEP_SH)
    # --step-time keeps both steps alive together for a few seconds
    res = cluster.run(["sbatch", "--parsable", "--wait", "sweep.sh", *TRAIN_ARGS,
                       "--step-time", "0.1"], cwd=work, env=JOB_ENV, timeout=LIMIT)
    match = re.match(r"(\d+)", res.stdout)
    assert match, f"sbatch printed no job id (rc {res.rc}): {res.stdout}{res.stderr}"
    job_id = int(match.group(1))
    logs = {p.name: p.read_text() for p in sorted(work.glob("*.out"))}
    assert res.rc == 0, (res.stderr, logs)
    task_logs = sorted(name for name in logs if not name.startswith("sweep"))
    # run a and run b are steps 0 and 1 (in either order), two tasks each
    assert {re.sub(r"^[ab]-", "", n) for n in task_logs} == {"0-0.out", "0-1.out",
                                                            "1-0.out", "1-1.out"}, logs
    assert {n[0] for n in task_logs} == {"a", "b"}, logs
    rank0 = {name: logs[name] for name in task_logs if name.endswith("-0.out")}
    assert len(rank0) == 2, logs
    masters = set()
    for name, text in rank0.items():
        assert "Traceback" not in text and "EADDRINUSE" not in text, (name, logs)
        start = next(f for kind, f in parse_records(text.splitlines()) if kind == "start")
        assert (start["world"], start["launcher"]) == ("2", "slurm"), text
        step_id = int(name.split("-")[1])
        assert start["master"] == f"127.0.0.1:{master_port(job_id, step_id)}", text
        masters.add(start["master"])
        assert digest_of(text) == bare_digest, text
    assert len(masters) == 2, masters
    sacct = cluster.run(["sacct", "-j", str(job_id), "-P", "-n", "-o", "JobID,State,NodeList"],
                        timeout=30)
    assert sorted(sacct.stdout.splitlines()) == [
        f"{job_id}.0|COMPLETED|n1", f"{job_id}.1|COMPLETED|n1",
        f"{job_id}.batch|COMPLETED|n1", f"{job_id}|COMPLETED|n1"], sacct


# ----- the launch benchmark's srun column (benchmarks/bench_ddp_launch.py) -------------
def _bench() -> ModuleType:
    return load_benchmark("bench_ddp_launch")


def test_the_benchmark_srun_column_is_minislurm_srun_on_one_node() -> None:
    bench = _bench()
    spec = bench.Spec("/py", 4, 12345, 22345, ("--steps", "20"))
    assert bench.LAUNCHERS["srun"](spec) == [
        str(REPO / "bin" / "srun"), "-N1", "-n", "4", "/py", str(bench.SCRIPT), "--steps", "20"]
    assert bench.LAUNCHERS["srun-m"](spec) == [
        "/py", "-m", "minislurm", "srun", "-N1", "-n", "4", "/py", str(bench.SCRIPT),
        "--steps", "20"]
    assert {"srun", "srun-m"} == bench.NEEDS_CLUSTER


def test_the_benchmark_starts_its_own_cluster_and_always_brings_it_down() -> None:
    """``local_cluster`` is what the srun column runs against: srun gets an allocation
    there (job ids from the FirstJobId it picked), and nothing is left afterwards,
    not even after an exception inside the block."""
    if not srun_works():
        pytest.skip("minislurm srun is not available yet")
    bench = _bench()
    with pytest.raises(KeyError), bench.local_cluster(ntasks=2, runs=1) as env:
        state = Path(env["MINISLURM_STATE_DIR"])
        assert (state / "slurmctld.sock").exists()
        full = {**{k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}, **env}
        done = subprocess.run(
            [python(), "-m", "minislurm", "srun", "-N1", "-n", "2", "bash", "-c",
             "echo $SLURM_PROCID/$SLURM_NTASKS/$SLURM_JOB_ID"],
            env=full, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        assert done.returncode == 0, done.stderr
        lines = sorted(done.stdout.split())
        job_id = int(lines[0].split("/")[2])
        assert job_id >= 100_000 and _port_free(job_id + 1)
        assert lines == [f"0/2/{job_id}", f"1/2/{job_id}"]
        raise KeyError("an error inside the benchmark")
    assert not state.exists()  # the temporary folder is gone with its controller
    assert pids_with_env([f"MINISLURM_STATE_DIR={state}"]) == []
