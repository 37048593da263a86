"""Batch jobs and srun steps started end to end (minislurm.slurmd.stepd).

The f4_output_patterns captures are replayed: same job ids, same options, and
the files the real batch steps wrote are compared with ours.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from captures import capture_root

from minislurm.common.layout import distribute
from minislurm.job import Allocation, NodeAlloc
from minislurm.slurmd.context import ArrayContext, JobContext, StepContext
from minislurm.slurmd.launch import RunningStep
from minislurm.slurmd.stdio import StdioSpec
from minislurm.slurmd.stepd import start_batch_job, start_step, step_tasks
from minislurm.states import LAUNCH_FAILED_STATUS

TIMEOUT = 15.0
ROOT = capture_root()
WRAP = "#!/bin/sh\n# This script was created by sbatch --wrap.\n\n{}\n"
USER_ENV = {"PATH": "/usr/bin:/bin", "HOME": "/root", "USER": "root"}
ONE_NODE = Allocation((NodeAlloc("n1", 1, 1000),))


@pytest.fixture
def running() -> Iterator[list[RunningStep]]:
    started: list[RunningStep] = []
    yield started
    for step in started:
        step.signal(signal.SIGKILL)
        step.wait(TIMEOUT)


def _job(tmp_path: Path, job_id: int, name: str = "wrap", **kw: Any) -> JobContext:
    return JobContext(
        job_id=job_id,
        name=name,
        partition="debug",
        cluster_name="mini",
        submit_dir=str(tmp_path),
        submit_host="vm",
        **kw,
    )


def _batch(
    running: list[RunningStep],
    tmp_path: Path,
    job: JobContext,
    body: str,
    stdio: StdioSpec | None = None,
    alloc: Allocation = ONE_NODE,
) -> int:
    step = start_batch_job(
        job,
        alloc,
        WRAP.format(body),
        spool_dir=str(tmp_path / ".spool"),
        base_env=USER_ENV,
        stdio=stdio,
        hostname_of=lambda _node: "vm",
    )
    running.append(step)
    (result,) = step.wait(TIMEOUT)
    return result.exit_code


def _files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if not p.name.startswith("."))


def test_f4_01_every_pattern_symbol(tmp_path: Path, running: list[RunningStep]) -> None:
    """``-J pat -o 'o-%j-%x-%u-%N-%n-%t-%s-%%.out' -e 'e-%j.err'`` (job 122)."""
    job = _job(tmp_path, 122, "pat")
    stdio = StdioSpec(output="o-%j-%x-%u-%N-%n-%t-%s-%%.out", error="e-%j.err")
    assert _batch(running, tmp_path, job, "echo out; echo err >&2", stdio) == 0
    assert _files(tmp_path) == ["e-122.err", "o-122-pat-root-vm-0-0-batch-%.out"]
    assert (tmp_path / "o-122-pat-root-vm-0-0-batch-%.out").read_text() == "out\n"
    assert (tmp_path / "e-122.err").read_text() == "err\n"


def test_f4_03_array_symbols_outside_an_array(tmp_path: Path, running: list[RunningStep]) -> None:
    _batch(running, tmp_path, _job(tmp_path, 124), "echo x", StdioSpec(output="na-%A-%a.out"))
    assert _files(tmp_path) == ["na-124-4294967294.out"]


def test_f4_05_nonexistent_directory_fails_without_a_file(
    tmp_path: Path, running: list[RunningStep]
) -> None:
    code = _batch(
        running, tmp_path, _job(tmp_path, 126), "echo x", StdioSpec(output="nosuchdir/out-%j.out")
    )
    (result,) = running[-1].wait(TIMEOUT)
    # the launch fails: status 53 (sacct FAILED 0:53, JobLaunchFailure; sbatch --wait 1)
    assert (code, result.signal) == (0, LAUNCH_FAILED_STATUS)
    assert "Could not open stdout file" in result.error
    assert _files(tmp_path) == []


def test_f4_07_stderr_joins_stdout(tmp_path: Path, running: list[RunningStep]) -> None:
    _batch(
        running,
        tmp_path,
        _job(tmp_path, 128),
        "echo out; echo err >&2",
        StdioSpec(output="both-%j.txt"),
    )
    expected = "out\nerr\n"
    if ROOT is not None:
        expected = (ROOT / "f4_output_patterns" / "both-128.txt").read_text()
    assert (tmp_path / "both-128.txt").read_text() == expected


def test_f4_09_exit_code(tmp_path: Path, running: list[RunningStep]) -> None:
    assert _batch(running, tmp_path, _job(tmp_path, 131), "exit 7") == 7


def test_default_output_file_and_chdir(tmp_path: Path, running: list[RunningStep]) -> None:
    """``slurm-%j.out`` in the working directory; ``-D sub`` moves it, not SUBMIT_DIR."""
    _batch(running, tmp_path, _job(tmp_path, 9), 'echo "$SLURM_SUBMIT_DIR $(pwd)"')
    assert (tmp_path / "slurm-9.out").read_text() == f"{tmp_path} {tmp_path}\n"
    sub = tmp_path / "sub"
    sub.mkdir()
    _batch(
        running, tmp_path, _job(tmp_path, 10, work_dir=str(sub)), 'echo "$SLURM_SUBMIT_DIR $(pwd)"'
    )
    assert (sub / "slurm-10.out").read_text() == f"{tmp_path} {sub}\n"


def test_array_task_default_output(tmp_path: Path, running: list[RunningStep]) -> None:
    """Capture f3: ``-o slurm-%A_%a.out`` is the default for arrays; the env says who we are."""
    array = ArrayContext.from_indices(108, 7, range(8))
    _batch(
        running,
        tmp_path,
        _job(tmp_path, 108, "arr", array=array),
        'echo "task $SLURM_ARRAY_TASK_ID of $SLURM_ARRAY_JOB_ID (job $SLURM_JOB_ID)"',
    )
    assert (tmp_path / "slurm-108_7.out").read_text() == "task 7 of 108 (job 108)\n"


def test_open_mode_append_keeps_a_requeued_jobs_output(
    tmp_path: Path, running: list[RunningStep]
) -> None:
    for restart in (0, 1):
        job = _job(tmp_path, 12, restart_count=restart)
        _batch(
            running,
            tmp_path,
            job,
            'echo "run ${SLURM_RESTART_COUNT:-0}"',
            StdioSpec(open_mode="append"),
        )
    assert (tmp_path / "slurm-12.out").read_text() == "run 0\nrun 1\n"


def test_batch_environment_reaches_the_script(tmp_path: Path, running: list[RunningStep]) -> None:
    alloc = Allocation(
        (
            NodeAlloc("n3", 2, 2000, (("a100", 2), ("a100", 3))),
            NodeAlloc("n4", 2, 2000, (("a100", 0), ("a100", 1))),
        )
    )
    job = _job(tmp_path, 20, "job.sh", ntasks_per_node=2)
    body = 'echo "$HOSTNAME $SLURM_JOB_NODELIST $SLURM_NTASKS $CUDA_VISIBLE_DEVICES $HOME"'
    _batch(running, tmp_path, job, body, alloc=alloc)
    assert (tmp_path / "slurm-20.out").read_text() == "n3 n[3-4] 4 2,3 /root\n"


def test_srun_step_with_label(tmp_path: Path, running: list[RunningStep]) -> None:
    """srun -l inside an allocation: 4 tasks on 2 nodes, each line ``N: ``."""
    alloc = Allocation(tuple(NodeAlloc(n, 2, 2000) for n in ("n1", "n2")))
    job = _job(tmp_path, 30, "job.sh", ntasks_per_node=2)
    step = StepContext(0, distribute(4, alloc.node_names, alloc.cpus_per_node), 40000, label=True)
    argv = ("sh", "-c", 'echo "$SLURMD_NODENAME $SLURM_LOCALID"')
    out = tmp_path / "step.out"
    started = start_step(
        job, alloc, step, argv, base_env=USER_ENV, stdio=StdioSpec(output=str(out), label=True)
    )
    running.append(started)
    assert [r.exit_code for r in started.wait(TIMEOUT)] == [0, 0, 0, 0]
    assert sorted(out.read_text().splitlines()) == ["0: n1 0", "1: n1 1", "2: n2 0", "3: n2 1"]
    specs = step_tasks(job, alloc, step, argv, base_env=USER_ENV)
    assert [(s.task_id, s.node, s.node_index) for s in specs] == [
        (0, "n1", 0),
        (1, "n1", 0),
        (2, "n2", 1),
        (3, "n2", 1),
    ]
    assert {s.env["SLURM_STEP_NODELIST"] for s in specs} == {"n[1-2]"}
