"""The DDP example as real processes on real gloo: determinism, kill, resume.

Every launch goes through the bare launcher (``course.ddp.launch_bare``: the
``SLURM_*`` variables ``srun`` would set, no Slurm) and has a hard wall-clock
limit; every test compares the SHA-256 of the final parameters, so "resumed
equals uninterrupted" means bit for bit. Jobs get random ids whose port
(``20000 + id % 10000``) is free, so parallel test runs never cross-wire.
"""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from course.ddp.launch_bare import start_tasks, wait_tasks
from course.ddp.logfmt import loss_curve, parse_records
from course.ddp.wiring import master_port

pytest.importorskip("torch")
pytestmark = [pytest.mark.slow, pytest.mark.ddp_ports]

PY = sys.executable
LIMIT = 240.0  # seconds per launch: 2 cores shared by many processes
STEPS = 20
TRAIN = (PY, "-m", "course.ddp.train", "--steps", str(STEPS), "--checkpoint-every", "5",
         "--timeout", "60")


def fresh_job_id() -> int:
    """A random job id whose MASTER_PORT is free right now."""
    for _ in range(100):
        job_id = random.randrange(1, 10**6)
        with socket.socket() as sock:
            try:
                sock.bind(("", master_port(job_id)))
            except OSError:
                continue
        return job_id
    raise RuntimeError("no free port")


@dataclass(frozen=True)
class Run:
    """One launch: each task's return code and rank 0's log."""

    returncodes: list[int]
    log: str

    @property
    def records(self) -> list[tuple[str, dict[str, str]]]:
        return parse_records(self.log.splitlines())

    def first(self, kind: str) -> dict[str, str]:
        return next(fields for k, fields in self.records if k == kind)

    @property
    def digest(self) -> str:
        return self.first("final")["sha256"]


def launch(
    workdir: Path,
    *,
    args: Sequence[str] = (),
    ntasks: int = 2,
    nodes: Sequence[str] = ("n1",),
    restart_count: int = 0,
    env: dict[str, str] | None = None,
    kill_when: str | None = None,
    kill_ranks: Sequence[int] | None = None,
) -> Run:
    """Run the training under the bare launcher in ``workdir`` (checkpoints in
    ``workdir/ckpt``). With ``kill_when``: as soon as that text appears in rank 0's
    log, SIGKILL the tasks ``kill_ranks`` (default: all, like ``scancel``)."""
    job_id = fresh_job_id()
    workdir.mkdir(parents=True, exist_ok=True)
    child_env = {k: v for k, v in os.environ.items() if not k.startswith("COURSE_DDP_")}
    child_env.update({"OMP_NUM_THREADS": "1", **(env or {})})
    pattern = str(workdir / f"job{job_id}-task%t.out")
    procs = start_tasks([*TRAIN, "--checkpoint-dir", "ckpt", *args], ntasks=ntasks,
                        nodes=nodes, job_id=job_id, restart_count=restart_count,
                        env=child_env, output=pattern, cwd=workdir)
    log0 = Path(pattern.replace("%t", "0"))
    try:
        if kill_when is not None:
            _kill_on(procs, log0, kill_when, kill_ranks)
        codes = wait_tasks(procs, time_limit=LIMIT)
    finally:
        _kill_group(procs)
    log = log0.read_text()
    assert "Traceback" not in log, log
    return Run(codes, log)


def _kill_on(
    procs: list[subprocess.Popen[bytes]], log: Path, text: str, ranks: Sequence[int] | None
) -> None:
    deadline = time.monotonic() + LIMIT
    while text not in log.read_text():
        if time.monotonic() > deadline or procs[0].poll() is not None:
            _kill_group(procs)
            pytest.fail(f"{text!r} never appeared in rank 0's log:\n{log.read_text()}")
        time.sleep(0.05)
    if ranks is None:
        os.killpg(procs[0].pid, signal.SIGKILL)
    else:
        for rank in ranks:
            procs[rank].kill()


def _kill_group(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """The uninterrupted 2-rank run with seed 0 everything is compared with."""
    run = launch(tmp_path_factory.mktemp("reference"), args=["--out", "final.pt"])
    assert run.returncodes == [0, 0], run.log
    return run


def test_an_uninterrupted_run_logs_every_step_and_checkpoints(reference: Run) -> None:
    start = reference.first("start")
    assert (start["world"], start["launcher"], start["master"].split(":")[0]) == (
        "2", "slurm", "127.0.0.1")
    assert [step for step, _ in loss_curve(reference.log.splitlines())] == list(
        range(1, STEPS + 1))
    checkpoints = [int(f["step"]) for k, f in reference.records if k == "checkpoint"]
    assert checkpoints == [5, 10, 15, 20]
    assert reference.first("final")["step"] == str(STEPS)


def test_the_final_tensors_hash_to_the_logged_digest(
    reference: Run, tmp_path_factory: pytest.TempPathFactory
) -> None:
    import torch

    final_files = list(tmp_path_factory.getbasetemp().glob("reference*/final.pt"))
    saved = torch.load(final_files[0], weights_only=True)
    assert saved["sha256"] == reference.digest and saved["step"] == STEPS
    import hashlib

    digest = hashlib.sha256()
    for tensor in saved["params"].values():
        digest.update(tensor.contiguous().view(torch.uint8).numpy().tobytes())
    assert digest.hexdigest() == reference.digest


def test_same_seed_gives_identical_parameters_another_seed_does_not(
    reference: Run, tmp_path: Path
) -> None:
    again = launch(tmp_path / "again")
    other = launch(tmp_path / "other", args=["--seed", "1"])
    assert again.returncodes == other.returncodes == [0, 0]
    assert again.digest == reference.digest
    assert loss_curve(again.log.splitlines()) == loss_curve(reference.log.splitlines())
    assert other.digest != reference.digest


def test_a_node_killed_after_a_checkpoint_then_a_requeue_resumes_bit_identical(
    reference: Run, tmp_path: Path
) -> None:
    """Like ``scontrol update nodename=n2 state=down``: the task on n2 dies with
    SIGKILL; the survivor fails (no hang); the requeued job resumes exactly."""
    killed = launch(tmp_path, nodes=("n1", "n2"), args=["--step-time", "0.3"],
                    kill_when="checkpoint step=10 ", kill_ranks=[1])
    assert killed.returncodes[1] == -signal.SIGKILL
    assert killed.returncodes[0] == 1  # "train: error: rank 0: ... Connection closed by peer"
    assert "final" not in {kind for kind, _ in killed.records}

    resumed = launch(tmp_path, nodes=("n1", "n2"), restart_count=1)
    assert resumed.returncodes == [0, 0], resumed.log
    resume = resumed.first("resume")
    assert 10 <= int(resume["step"]) < STEPS and resume["restart_count"] == "1"
    assert resumed.digest == reference.digest
    # the steps run again after the resume have exactly the reference's losses
    reference_losses = dict(loss_curve(reference.log.splitlines()))
    for step, loss in loss_curve(resumed.log.splitlines()):
        assert loss == reference_losses[step]


def test_a_kill_during_the_checkpoint_write_never_loads_a_torn_file(
    reference: Run, tmp_path: Path
) -> None:
    """The test hook stops rank 0 half way through writing checkpoint 15; the whole
    job is SIGKILLed there. Only a torn temporary exists; the resume uses 10."""
    from course.ddp import checkpoint as ckpt

    killed = launch(tmp_path, env={"COURSE_DDP_TEST_PAUSE_IN_CHECKPOINT": "15"},
                    kill_when="checkpoint-paused step=15 ")
    assert killed.returncodes == [-signal.SIGKILL] * 2
    torn = list((tmp_path / "ckpt").glob(".ckpt-00000015.pt.tmp-*"))
    assert len(torn) == 1 and not (tmp_path / "ckpt" / "ckpt-00000015.pt").exists()
    with pytest.raises(ckpt.CheckpointError, match="truncated"):
        ckpt.decode(torn[0].read_bytes())
    found = ckpt.latest_checkpoint(tmp_path / "ckpt")
    assert found is not None and found.step == 10

    resumed = launch(tmp_path, restart_count=1)
    assert resumed.returncodes == [0, 0], resumed.log
    assert resumed.first("resume")["step"] == "10"
    assert resumed.first("removed")["path"].endswith(torn[0].name)
    assert resumed.digest == reference.digest


def test_a_torchrun_launch_of_the_same_script_gives_the_same_parameters(
    reference: Run, tmp_path: Path
) -> None:
    """The script accepts torchrun's RANK/WORLD_SIZE/LOCAL_RANK when SLURM_* are absent."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "COURSE_DDP_"))}
    script = Path(__file__).resolve().parents[3] / "course" / "ddp" / "train.py"
    port = master_port(fresh_job_id())
    done = subprocess.run(
        [PY, "-m", "torch.distributed.run", "--nproc_per_node=2", f"--master_port={port}",
         str(script), *TRAIN[3:], "--checkpoint-dir", "ckpt"],
        cwd=tmp_path, env={**env, "OMP_NUM_THREADS": "1"}, capture_output=True, text=True,
        timeout=LIMIT, check=False,
    )
    assert done.returncode == 0, done.stderr
    run = Run([done.returncode], done.stdout)
    assert run.first("start")["launcher"] == "torchrun"
    assert run.digest == reference.digest


@pytest.fixture
def four_rank_dirs(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    yield tmp_path / "uninterrupted", tmp_path / "requeued"


def test_four_ranks_on_two_nodes_requeued_after_scancel_end_bit_identical(
    four_rank_dirs: tuple[Path, Path],
) -> None:
    """4 gloo ranks, 2 per node: the whole job SIGKILLed after checkpoint 5, then
    started again as a requeued job (SLURM_RESTART_COUNT=1)."""
    plain_dir, requeued_dir = four_rank_dirs
    nodes = ("n1", "n2")
    plain = launch(plain_dir, ntasks=4, nodes=nodes)
    assert plain.returncodes == [0] * 4, plain.log
    assert plain.first("start")["world"] == "4"

    killed = launch(requeued_dir, ntasks=4, nodes=nodes, args=["--step-time", "0.2"],
                    kill_when="checkpoint step=5 ")
    assert killed.returncodes == [-signal.SIGKILL] * 4
    resumed = launch(requeued_dir, ntasks=4, nodes=nodes, restart_count=1)
    assert resumed.returncodes == [0] * 4, resumed.log
    assert 5 <= int(resumed.first("resume")["step"]) < STEPS
    assert resumed.digest == plain.digest


JOB_SH = Path(__file__).resolve().parents[3] / "course" / "ddp" / "job.sh"
#: Stands in for ``srun`` inside a batch step: drops srun's options and starts
#: SLURM_NTASKS tasks on the allocation's nodes with the bare launcher.
FAKE_SRUN = """#!/bin/sh
while [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; do shift; done
exec "$PYTHON" -m course.ddp.launch_bare -n "$SLURM_NTASKS" -w "$SLURM_JOB_NODELIST" \\
    --job-id "$SLURM_JOB_ID" -t 240 -K -- "$@"
"""


def test_job_sh_runs_the_training_through_srun(reference: Run, tmp_path: Path) -> None:
    """job.sh in a batch environment of 2 tasks on n[1-2], ``srun`` being the bare
    launcher: it exports OMP_NUM_THREADS, checkpoints to checkpoints/job-<id>."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "srun").write_text(FAKE_SRUN)
    (bin_dir / "srun").chmod(0o755)
    job_id = fresh_job_id()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "COURSE_DDP_"))}
    env.update({"PATH": f"{bin_dir}:{env['PATH']}", "PYTHON": PY, "SLURM_JOB_ID": str(job_id),
                "SLURM_NTASKS": "2", "SLURM_JOB_NODELIST": "n[1-2]", "SLURM_PROCID": "0"})
    done = subprocess.run(["bash", str(JOB_SH), *TRAIN[3:]], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=LIMIT + 30, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith(f"job {job_id} on n[1-2] restart_count=0\n")
    run = Run([0], done.stdout)
    assert run.first("start")["master"] == f"127.0.0.1:{master_port(job_id)}"
    assert (tmp_path / "checkpoints" / f"job-{job_id}" / "ckpt-00000020.pt").is_file()
    assert run.digest == reference.digest


@pytest.mark.realslurm
def test_job_sh_runs_unmodified_under_real_slurm(real_slurm: Any, reference: Run) -> None:
    """Real Slurm 22.05: ``sbatch -N2 --ntasks-per-node=1 job.sh``; the ranks are
    wired from the real SLURM_* variables and end with the bare launcher's result."""
    work = real_slurm.work_dir / "ddp"
    work.mkdir(parents=True, exist_ok=True)
    submitted = real_slurm.run(
        ["sbatch", "--parsable", "-N2", "--ntasks-per-node=1", str(JOB_SH), *TRAIN[3:]],
        cwd=work, env={"PYTHON": PY}, timeout=30)
    assert submitted.rc == 0, submitted.stderr
    job_id = int(submitted.stdout.strip().split(";")[0])
    state = real_slurm.wait_job(job_id, timeout=LIMIT)
    log = (work / f"slurm-{job_id}.out").read_text()
    assert state == "COMPLETED", log
    run = Run([0], log)
    start = run.first("start")
    assert (start["world"], start["launcher"]) == ("2", "slurm")
    assert start["master"] == f"127.0.0.1:{master_port(job_id)}"
    assert run.digest == reference.digest


@pytest.mark.realslurm
def test_a_requeued_real_slurm_job_resumes_bit_identical(real_slurm: Any, reference: Run) -> None:
    """The failure drill on real Slurm: ``scontrol requeue`` after checkpoint 10
    kills every task; the job comes back with SLURM_RESTART_COUNT=1, appends to its
    log (``--open-mode=append``), resumes and ends with the uninterrupted result.
    (A requeued job waits ~2 min for its BeginTime; ``StartTime=now`` skips that.)"""
    work = real_slurm.work_dir / "ddp-requeue"
    work.mkdir(parents=True, exist_ok=True)
    submitted = real_slurm.run(
        ["sbatch", "--parsable", "-N2", "--ntasks-per-node=1", str(JOB_SH), *TRAIN[3:],
         "--step-time", "0.3"], cwd=work, env={"PYTHON": PY}, timeout=30)
    assert submitted.rc == 0, submitted.stderr
    job_id = int(submitted.stdout.strip().split(";")[0])
    log = work / f"slurm-{job_id}.out"
    deadline = time.monotonic() + LIMIT
    while not (log.exists() and "checkpoint step=10 " in log.read_text()):
        assert time.monotonic() < deadline, log.read_text() if log.exists() else "no log"
        time.sleep(0.1)
    assert real_slurm.run(["scontrol", "requeue", str(job_id)], timeout=15).rc == 0
    while real_slurm.job_records(job_id)[0].get("JobState") != "PENDING":
        assert time.monotonic() < deadline
        time.sleep(0.2)
    # the killed attempt must be gone from the nodes before the job may start again
    # (Slurm keeps them COMPLETING while slurmstepd cleans up; under load that takes
    # a few seconds, and releasing the job earlier can fail its relaunch)
    while real_slurm.run(["sinfo", "-h", "-n", "n[1-2]", "-o", "%T"], timeout=15
                         ).stdout.split() != ["idle"]:
        assert time.monotonic() < deadline, "nodes still busy after the requeue"
        time.sleep(0.2)
    # slurmd revoked the old attempt's credential; a relaunch within the same second is
    # refused ("Job 100001 already killed, do not launch batch job" / "Killing
    # non-startable batch JobId=100001: Job credential revoked", seen on 22.05.8), which
    # is what Slurm's 121 s requeue BeginTime normally avoids: wait past that second.
    time.sleep(2.5)
    released = real_slurm.run(["scontrol", "update", f"jobid={job_id}", "StartTime=now"],
                              timeout=15)
    assert released.rc == 0, released.stderr
    state = real_slurm.wait_job(job_id, timeout=LIMIT)
    text = log.read_text()
    assert state == "COMPLETED", text
    assert real_slurm.job_records(job_id)[0]["Restarts"] == "1"
    run = Run([0], text)
    assert f"job {job_id} on n[1-2] restart_count=1" in text
    resume = run.first("resume")
    assert 10 <= int(resume["step"]) < STEPS and resume["restart_count"] == "1"
    assert run.digest == reference.digest


@pytest.mark.realslurm
def test_job_sh_wires_the_ranks_alike_on_real_slurm_and_minislurm(
    real_slurm: Any, tmp_path: Path
) -> None:
    """The same ``sbatch -N2 --ntasks-per-node=1 job.sh --log-ranks all`` on real Slurm
    22.05, then on minislurm's local cluster with the same job id (``FirstJobId``):
    every rank logs its wiring (rank, world size, launcher, MASTER_ADDR:MASTER_PORT,
    restart count), and both runs must agree on it, on the job's first line (id and
    nodes) and on the final parameters, bit for bit."""
    from minicluster import MiniCluster

    argv = [*TRAIN[3:], "--log-ranks", "all"]

    def run(cluster: Any, work: Path, env: dict[str, str]) -> tuple[int, str]:
        work.mkdir(parents=True, exist_ok=True)
        done = cluster.run(["sbatch", "--parsable", "-N2", "--ntasks-per-node=1", str(JOB_SH),
                            *argv], cwd=work, env=env, timeout=30)
        assert done.rc == 0, done.stderr
        job_id = int(done.stdout.strip().split(";")[0])
        state = cluster.wait_job(job_id, timeout=LIMIT)
        out = work / f"slurm-{job_id}.out"
        # the state first: a job that never started has no output file to show
        assert state == "COMPLETED", (
            out.read_text() if out.exists() else f"{out.name} missing; "
            f"{cluster.job_records(job_id)}\n{getattr(cluster, 'log_tail', str)()}")
        return job_id, out.read_text()

    def wiring(log: str) -> list[tuple[str, ...]]:
        starts = [f for kind, f in parse_records(log.splitlines()) if kind == "start"]
        return sorted(tuple(f[k] for k in ("rank", "world", "launcher", "master",
                                           "restart_count")) for f in starts)

    real_id, real_log = run(real_slurm, real_slurm.work_dir / "ddp-wiring", {"PYTHON": PY})
    mini = MiniCluster(tmp_path / "mini", first_job_id=real_id)
    mini.start_or_skip()
    try:
        mini_id, mini_log = run(mini, mini.work_dir / "ddp-wiring",
                                {"PYTHON": PY, "PYTHONPATH": str(JOB_SH.parents[2])})
    finally:
        assert mini.stop() == []
    assert mini_id == real_id
    assert wiring(real_log) == wiring(mini_log) == [
        (str(r), "2", "slurm", f"127.0.0.1:{master_port(real_id)}", "0") for r in range(2)]
    assert real_log.splitlines()[0] == mini_log.splitlines()[0] == \
        f"job {real_id} on n[1-2] restart_count=0"
    assert Run([0], real_log).digest == Run([0], mini_log).digest
