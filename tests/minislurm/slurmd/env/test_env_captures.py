"""Differential check: the environments minislurm builds vs. real Slurm 22.05's.

For the requests of captures a1 (srun creating its own job), a2 (sbatch + srun
inside) and a3 (``-c2 --gpus-per-node=1 --mem-per-cpu=500``), the allocation
real Slurm made is rebuilt (nodes n1,n2; CPUs and GPU indices per node) and the
environment is computed with `minislurm.slurmd.env`.  The result must equal the
captured env dump *variable for variable*.

Run-specific values (pids, srun's port) are not normalised away: they are
*inputs* (the real launcher supplies them), so the test feeds the captured ones
in.  Only these differences are normalised, each for a stated reason:
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from captures import capture_root

from minislurm.common.layout import distribute
from minislurm.job import Allocation, NodeAlloc
from minislurm.slurmd.context import JobContext, StepContext, working_cluster
from minislurm.slurmd.env import batch_environment, step_task_environment

#: Variables excluded from the comparison, with the reason.
NORMALISED = {
    "SHLVL": "bash increments it when it starts (not set by Slurm)",
    "_": "bash sets it to the last command run (/usr/bin/env)",
}

ROOT = capture_root()
pytestmark = pytest.mark.skipif(ROOT is None, reason="slurm-reference captures not found")


#: The fixed environment every captured command ran with (CAPTURES.md: "Every
#: command ran with a fixed small environment, in the case folder").
def _submit_env(case: str) -> dict[str, str]:
    return {
        "HOME": "/root",
        "LANG": "C.UTF-8",
        "LOGNAME": "root",
        "PATH": "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
        "PWD": f"/srv/slurm-ref/work/{case}",
        "SHELL": "/bin/bash",
        "USER": "root",
    }


def _read_env(path: Path) -> tuple[dict[str, str], list[str]]:
    """An ``env | sort`` dump as a dict, and the names that appear twice."""
    env: dict[str, str] = {}
    dup: list[str] = []
    for line in path.read_text().splitlines():
        name, _, value = line.partition("=")
        if name in env:
            dup.append(name)
        env[name] = value
    return env, dup


def _compare(ours: dict[str, str], theirs: dict[str, str], *, only_prefixes: bool = False) -> None:
    if only_prefixes:  # the dump was filtered with grep -E '^(SLURM_|CUDA_VISIBLE|GPU)'
        ours = {k: v for k, v in ours.items() if k.startswith(("SLURM_", "CUDA_VISIBLE", "GPU"))}
    ours = {k: v for k, v in ours.items() if k not in NORMALISED}
    theirs = {k: v for k, v in theirs.items() if k not in NORMALISED}
    missing = sorted(set(theirs) - set(ours))
    extra = sorted(set(ours) - set(theirs))
    wrong = sorted(k for k in set(ours) & set(theirs) if ours[k] != theirs[k])
    assert not (missing or extra or wrong), (
        f"missing={missing} extra={extra} wrong={[(k, ours[k], theirs[k]) for k in wrong]}"
    )


def _job(case: str, job_id: int, name: str, partition: str = "debug", **kw: Any) -> JobContext:
    return JobContext(
        job_id=job_id,
        name=name,
        partition=partition,
        cluster_name="mini",
        submit_dir=f"/srv/slurm-ref/work/{case}",
        submit_host="vm",  # single-host artefact: the host's name (CAPTURES.md)
        working_cluster=working_cluster("mini", "localhost", 16817),
        conf_path="/srv/slurm-ref/etc/slurm.conf",
        **kw,
    )


def _two_nodes(cpus: int, gpus: tuple[int, ...], mem: int) -> Allocation:
    return Allocation(
        nodes=tuple(
            NodeAlloc(node=n, cpus=cpus, mem_mb=mem, gpus=tuple(("a100", g) for g in gpus))
            for n in ("n1", "n2")
        )
    )


# --- a1: srun -N2 --ntasks-per-node=2 --gres=gpu:2 (srun creates the job) -----------------


@pytest.mark.parametrize("task", [0, 1, 2, 3])
def test_a1_full_env_of_every_task(task: int) -> None:
    assert ROOT is not None
    theirs, _ = _read_env(ROOT / "a1_srun_env" / f"fulltask{task}.env")
    job = _job("a1_srun_env", 4, "bash", ntasks_per_node=2)
    alloc = _two_nodes(2, (0, 1), 2000)
    layout = distribute(4, alloc.node_names, alloc.cpus_per_node, ntasks_per_node=2)
    step = StepContext(
        step_id=0,
        layout=layout,
        inside_allocation=False,
        ntasks_per_node=2,
        launcher_port=int(theirs["SLURM_SRUN_COMM_PORT"]),  # srun's ephemeral port
    )
    ours = step_task_environment(
        job,
        alloc,
        step,
        task,
        base_env=_submit_env("a1_srun_env"),
        task_pid=int(theirs["SLURM_TASK_PID"]),  # the task's real pid
    )
    _compare(ours, theirs)


@pytest.mark.parametrize("task", [0, 1, 2, 3])
def test_a1_filtered_env_with_label(task: int) -> None:
    """``srun -l``: same variables plus ``SLURM_LABELIO=1`` (02_srun_env_labelled)."""
    assert ROOT is not None
    lines = (ROOT / "a1_srun_env" / "02_srun_env_labelled.out").read_text().splitlines()
    prefix = f"{task}: "
    theirs = dict(
        line[len(prefix) :].partition("=")[::2] for line in lines if line.startswith(prefix)
    )
    job = _job("a1_srun_env", 2, "bash", ntasks_per_node=2)
    alloc = _two_nodes(2, (0, 1), 2000)
    step = StepContext(
        step_id=0,
        layout=distribute(4, alloc.node_names, alloc.cpus_per_node, ntasks_per_node=2),
        inside_allocation=False,
        ntasks_per_node=2,
        label=True,
        launcher_port=int(theirs["SLURM_SRUN_COMM_PORT"]),
    )
    ours = step_task_environment(
        job,
        alloc,
        step,
        task,
        base_env=_submit_env("a1_srun_env"),
        task_pid=int(theirs["SLURM_TASK_PID"]),
    )
    _compare(ours, theirs, only_prefixes=True)


# --- a2: sbatch -N 2 --ntasks-per-node=2 --gres=gpu:2, then srun inside -------------------


def _a2() -> tuple[JobContext, Allocation]:
    job = _job("a2_sbatch_env", 5, "job.sh", ntasks_per_node=2, mem_per_cpu=1000)
    return job, _two_nodes(2, (0, 1), 2000)


def test_a2_batch_environment() -> None:
    assert ROOT is not None
    theirs, _ = _read_env(ROOT / "a2_sbatch_env" / "batch.fullenv")
    job, alloc = _a2()
    ours = batch_environment(
        job,
        alloc,
        base_env=_submit_env("a2_sbatch_env"),
        task_pid=int(theirs["SLURM_TASK_PID"]),
    )
    _compare(ours, theirs)


@pytest.mark.parametrize("task", [0, 1, 2, 3])
def test_a2_step_inherits_the_batch_environment(task: int) -> None:
    assert ROOT is not None
    batch_theirs, _ = _read_env(ROOT / "a2_sbatch_env" / "batch.fullenv")
    theirs, _ = _read_env(ROOT / "a2_sbatch_env" / f"step.{task}.fullenv")
    job, alloc = _a2()
    batch = batch_environment(
        job,
        alloc,
        base_env=_submit_env("a2_sbatch_env"),
        task_pid=int(batch_theirs["SLURM_TASK_PID"]),
    )
    step = StepContext(
        step_id=0,
        layout=distribute(4, alloc.node_names, alloc.cpus_per_node),
        launcher_port=int(theirs["SLURM_SRUN_COMM_PORT"]),
    )
    ours = step_task_environment(
        job, alloc, step, task, base_env=batch, task_pid=int(theirs["SLURM_TASK_PID"])
    )
    _compare(ours, theirs)


def test_a2_batch_vs_step_difference_list() -> None:
    """The names only the step has are exactly those batch_vs_step.txt lists."""
    assert ROOT is not None
    text = (ROOT / "a2_sbatch_env" / "batch_vs_step.txt").read_text()
    section = text.split("# variable names only in the step environment")[1].split("#")[0]
    listed = {line.strip() for line in section.splitlines()[1:] if line.strip()}
    job, alloc = _a2()
    batch = batch_environment(job, alloc, base_env=_submit_env("a2_sbatch_env"), task_pid=1)
    step = StepContext(
        step_id=0, layout=distribute(4, alloc.node_names, alloc.cpus_per_node), launcher_port=1
    )
    ours = step_task_environment(job, alloc, step, 0, base_env=batch, task_pid=2)
    assert set(ours) - set(batch) == listed
    assert set(batch) - set(ours) == set()


# --- a3: -J myjob -p gpu -N2 --ntasks-per-node=1 -c2 --gpus-per-node=1 --mem-per-cpu=500 ---


def _a3() -> tuple[JobContext, Allocation]:
    job = _job(
        "a3_sbatch_env_cpus_per_task",
        6,
        "myjob",
        partition="gpu",
        ntasks_per_node=1,
        cpus_per_task=2,
        gpus_per_node="1",
        mem_per_cpu=500,
    )
    return job, _two_nodes(2, (0,), 1000)


def test_a3_batch_environment() -> None:
    assert ROOT is not None
    theirs, dup = _read_env(ROOT / "a3_sbatch_env_cpus_per_task" / "batch.env")
    assert dup == []
    job, alloc = _a3()
    ours = batch_environment(
        job,
        alloc,
        base_env=_submit_env("a3_sbatch_env_cpus_per_task"),
        task_pid=int(theirs["SLURM_TASK_PID"]),
    )
    _compare(ours, theirs, only_prefixes=True)


@pytest.mark.parametrize("task", [0, 1])
def test_a3_step_is_cyclic_with_cpus_per_task(task: int) -> None:
    assert ROOT is not None
    theirs, _ = _read_env(ROOT / "a3_sbatch_env_cpus_per_task" / f"step.{task}.env")
    job, alloc = _a3()
    batch = batch_environment(
        job, alloc, base_env=_submit_env("a3_sbatch_env_cpus_per_task"), task_pid=1
    )
    step = StepContext(
        step_id=0,
        layout=distribute(
            2, alloc.node_names, alloc.cpus_per_node, cpus_per_task=2, distribution="cyclic"
        ),
        launcher_port=int(theirs["SLURM_SRUN_COMM_PORT"]),
    )
    ours = step_task_environment(
        job, alloc, step, task, base_env=batch, task_pid=int(theirs["SLURM_TASK_PID"])
    )
    _compare(ours, theirs, only_prefixes=True)


def test_a3_second_step_on_one_node() -> None:
    """``srun -n1 -N1 --gpus=1``: step 1 on n1 only; SLURM_NNODES/NTASKS are the step's."""
    assert ROOT is not None
    theirs, _ = _read_env(ROOT / "a3_sbatch_env_cpus_per_task" / "step1.env")
    job, alloc = _a3()
    batch = batch_environment(
        job, alloc, base_env=_submit_env("a3_sbatch_env_cpus_per_task"), task_pid=1
    )
    step = StepContext(
        step_id=1,
        layout=distribute(1, ["n1"], [2], cpus_per_task=2),
        gpus=((0,),),
        launcher_port=int(theirs["SLURM_STEP_LAUNCHER_PORT"]),
    )
    ours = step_task_environment(job, alloc, step, 0, base_env=batch, task_pid=2)
    # the dump was filtered with grep -E '^(SLURM_STEP|SLURM_GPUS|CUDA_VISIBLE|...)'
    keep = ("SLURM_STEP", "SLURM_GPUS", "CUDA_VISIBLE", "SLURM_NTASKS", "SLURM_NNODES")
    _compare({k: v for k, v in ours.items() if k.startswith(keep)}, theirs)
