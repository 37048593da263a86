"""Real launches of the captured requests, compared with what real Slurm wrote.

Capture a1 03/04 ran ``srun -N2 --ntasks-per-node=2 --gres=gpu:2 -o task%t.env
bash -c "env | ..."``; capture a2 ran an sbatch script whose batch step and
srun step dumped their environments.  Here the same commands run as real local
processes through `minislurm.slurmd.launch` with the environments of
`minislurm.slurmd.env`, and the files they write are compared with the
captured files.  Values that differ from run to run are not dropped: each is
checked against the real value of *this* run:

* ``SLURM_TASK_PID``: the pid of the task that wrote the file;
* ``SLURM_SRUN_COMM_PORT`` / ``SLURM_STEP_LAUNCHER_PORT``: the port of the
  launcher socket this run opened;
* ``PWD``: bash resets it to the real working directory, a temporary folder here.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from captures import capture_root

from minislurm.common.layout import distribute
from minislurm.job import Allocation, NodeAlloc
from minislurm.slurmd.context import JobContext, StepContext, working_cluster
from minislurm.slurmd.env import batch_environment, step_task_environment
from minislurm.slurmd.launch import (
    StepIdentity,
    TaskResult,
    TaskSpec,
    launch_step,
    launcher_socket,
)
from minislurm.slurmd.stdio import StdioSpec

ROOT = capture_root()
pytestmark = [
    pytest.mark.skipif(ROOT is None, reason="slurm-reference captures not found"),
    pytest.mark.skipif(shutil.which("bash") is None, reason="bash is needed to run the captures"),
]
TIMEOUT = 20.0
FILTER = "env | grep -E '^(SLURM_|CUDA_VISIBLE|GPU)' | sort"


def _user_env(case: str) -> dict[str, str]:
    """The fixed environment the captured commands ran with (srun's shell: SHLVL=1)."""
    return {
        "HOME": "/root",
        "LANG": "C.UTF-8",
        "LOGNAME": "root",
        "PATH": "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
        "PWD": f"/srv/slurm-ref/work/{case}",
        "SHELL": "/bin/bash",
        "USER": "root",
        "SHLVL": "1",
    }


def _job(case: str, job_id: int, name: str, **kw: Any) -> JobContext:
    return JobContext(
        job_id=job_id,
        name=name,
        partition="debug",
        cluster_name="mini",
        submit_dir=f"/srv/slurm-ref/work/{case}",
        submit_host="vm",
        working_cluster=working_cluster("mini", "localhost", 16817),
        conf_path="/srv/slurm-ref/etc/slurm.conf",
        **kw,
    )


ALLOC = Allocation(tuple(NodeAlloc(n, 2, 2000, (("a100", 0), ("a100", 1))) for n in ("n1", "n2")))


def _parse(text: str) -> dict[str, str]:
    return dict(line.partition("=")[::2] for line in text.splitlines())


def _check_run_specific(env: dict[str, str], result: TaskResult, port: int) -> None:
    assert env.pop("SLURM_TASK_PID") == str(result.pid)
    for name in ("SLURM_SRUN_COMM_PORT", "SLURM_STEP_LAUNCHER_PORT"):
        assert env.pop(name) == str(port)


def _run_a1(tmp_path: Path, job_id: int, command: str, pattern: str) -> tuple[TaskResult, ...]:
    job = _job("a1_srun_env", job_id, "bash", ntasks_per_node=2)
    layout = distribute(4, ALLOC.node_names, ALLOC.cpus_per_node, ntasks_per_node=2)
    sock = launcher_socket()
    try:
        step = StepContext(
            0, layout, sock.getsockname()[1], inside_allocation=False, ntasks_per_node=2
        )
        tasks = [
            TaskSpec(
                t,
                layout.nodes[layout.node_index(t)],
                layout.node_index(t),
                ("bash", "-c", command),
                step_task_environment(job, ALLOC, step, t, base_env=_user_env("a1_srun_env")),
                str(tmp_path),
            )
            for t in range(4)
        ]
        running = launch_step(
            StepIdentity(job_id, 0, "bash", "root"), tasks, StdioSpec(output=pattern)
        )
        try:
            results = running.wait(TIMEOUT)
        finally:
            running.signal(9)
        assert [r.exit_code for r in results] == [0, 0, 0, 0]
        return results
    finally:
        sock.close()


@pytest.mark.parametrize("task", range(4))
def test_a1_per_task_files_match_real_slurm(tmp_path: Path, task: int) -> None:
    """a1 03: ``-o task%t.env`` with the filtered env of each task."""
    assert ROOT is not None
    results = _run_a1(tmp_path, 3, FILTER, "task%t.env")
    port = int(_parse((tmp_path / "task0.env").read_text())["SLURM_SRUN_COMM_PORT"])
    ours = _parse((tmp_path / f"task{task}.env").read_text())
    theirs = _parse((ROOT / "a1_srun_env" / f"task{task}.env").read_text())
    _check_run_specific(ours, results[task], port)
    _check_run_specific(
        theirs,
        TaskResult(task, "", int(theirs["SLURM_TASK_PID"]), 0),
        int(theirs["SLURM_SRUN_COMM_PORT"]),
    )
    assert ours == theirs


@pytest.mark.parametrize("task", range(4))
def test_a1_full_environment_matches_real_slurm(tmp_path: Path, task: int) -> None:
    """a1 04: ``env | sort`` of each task, user variables and bash's own included."""
    assert ROOT is not None
    results = _run_a1(tmp_path, 4, "env | sort", "fulltask%t.env")
    port = int(_parse((tmp_path / "fulltask0.env").read_text())["SLURM_SRUN_COMM_PORT"])
    ours = _parse((tmp_path / f"fulltask{task}.env").read_text())
    theirs = _parse((ROOT / "a1_srun_env" / f"fulltask{task}.env").read_text())
    _check_run_specific(ours, results[task], port)
    _check_run_specific(
        theirs,
        TaskResult(task, "", int(theirs["SLURM_TASK_PID"]), 0),
        int(theirs["SLURM_SRUN_COMM_PORT"]),
    )
    assert ours.pop("PWD") == str(tmp_path)
    theirs.pop("PWD")
    assert ours == theirs


def test_a2_batch_step_and_its_srun_step_match_real_slurm(tmp_path: Path) -> None:
    """a2: the batch script dumps its env, then an srun step (4 tasks) dumps theirs."""
    assert ROOT is not None
    job = _job("a2_sbatch_env", 5, "job.sh", ntasks_per_node=2, mem_per_cpu=1000)
    batch_env = batch_environment(job, ALLOC, base_env=_user_env("a2_sbatch_env"))
    batch_env["SHLVL"] = "0"  # sbatch's environment as the batch shell received it
    spec = TaskSpec(0, "n1", 0, ("bash", "-c", f"{FILTER} > batch.env"), batch_env, str(tmp_path))
    running = launch_step(
        StepIdentity(5, "batch", "job.sh", "root"), [spec], StdioSpec(output="slurm-%j.out")
    )
    (batch_result,) = running.wait(TIMEOUT)
    assert batch_result.exit_code == 0
    ours = _parse((tmp_path / "batch.env").read_text())
    theirs = _parse((ROOT / "a2_sbatch_env" / "batch.env").read_text())
    assert ours.pop("SLURM_TASK_PID") == str(batch_result.pid)
    theirs.pop("SLURM_TASK_PID")
    assert ours == theirs

    # srun inside the batch script: srun's environment is the batch shell's
    srun_env = {**batch_env, "SLURM_TASK_PID": str(batch_result.pid), "SHLVL": "1"}
    layout = distribute(4, ALLOC.node_names, ALLOC.cpus_per_node)
    sock = launcher_socket()
    try:
        port = sock.getsockname()[1]
        step = StepContext(0, layout, port)
        tasks = [
            TaskSpec(
                t,
                layout.nodes[layout.node_index(t)],
                layout.node_index(t),
                ("bash", "-c", f"{FILTER} > step.$SLURM_PROCID.env"),
                step_task_environment(job, ALLOC, step, t, base_env=srun_env),
                str(tmp_path),
            )
            for t in range(4)
        ]
        running = launch_step(StepIdentity(5, 0, "job.sh", "root"), tasks, StdioSpec())
        results = running.wait(TIMEOUT)
    finally:
        sock.close()
    for r in results:
        ours = _parse((tmp_path / f"step.{r.task_id}.env").read_text())
        theirs = _parse((ROOT / "a2_sbatch_env" / f"step.{r.task_id}.env").read_text())
        _check_run_specific(ours, r, port)
        _check_run_specific(
            theirs,
            TaskResult(r.task_id, "", int(theirs["SLURM_TASK_PID"]), 0),
            int(theirs["SLURM_SRUN_COMM_PORT"]),
        )
        assert ours == theirs
