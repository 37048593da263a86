"""The SLURM_* environment of the batch step and of srun tasks (minislurm.slurmd.env).

The captures a1/a2/a3 are compared variable for variable in
test_env_captures.py; these tests document the rules behind the values for
requests the captures do not cover (arrays, requeue, -n with -N, --export, ...).
"""

from __future__ import annotations

from typing import Any

import pytest

from minislurm.common.layout import distribute
from minislurm.job import Allocation, NodeAlloc
from minislurm.slurmd.context import ArrayContext, JobContext, StepContext, array_step
from minislurm.slurmd.env import (
    batch_environment,
    exported_environment,
    step_environments,
    step_task_environment,
)
from minislurm.slurmd.gpu import gpu_environment

USER_ENV = {"PATH": "/usr/bin:/bin", "HOME": "/home/ada", "LANG": "C.UTF-8"}


def _job(**kw: Any) -> JobContext:
    fields: dict[str, Any] = {
        "job_id": 42,
        "name": "train.sh",
        "partition": "gpu",
        "cluster_name": "mini",
        "user": "ada",
        "uid": 1000,
        "gid": 1000,
        "account": "ml",
        "submit_dir": "/home/ada",
        "submit_host": "login1",
        "conf_path": "/etc/slurm/slurm.conf",
    }
    fields.update(kw)
    return JobContext(**fields)


def _alloc(*nodes: tuple[str, int, tuple[int, ...]]) -> Allocation:
    return Allocation(
        tuple(NodeAlloc(n, c, 1000 * c, tuple(("a100", g) for g in gpus)) for n, c, gpus in nodes)
    )


def test_gpu_variables_list_the_global_indices() -> None:
    """task/none (no ConstrainDevices): a job holding GPUs 2,3 sees 2,3, not 0,1."""
    env = gpu_environment([3, 2], scope="step")
    assert env == {
        "CUDA_VISIBLE_DEVICES": "2,3",
        "GPU_DEVICE_ORDINAL": "2,3",
        "ROCR_VISIBLE_DEVICES": "2,3",
        "ZE_AFFINITY_MASK": "2,3",
        "SLURM_GPUS_ON_NODE": "2",
        "SLURM_STEP_GPUS": "2,3",
    }
    assert gpu_environment([0], scope="job")["SLURM_JOB_GPUS"] == "0"
    assert gpu_environment([], scope="job") == {}


def test_batch_without_gpus_has_no_gpu_variables() -> None:
    env = batch_environment(_job(), _alloc(("n3", 4, ())), base_env=USER_ENV)
    assert not {k for k in env if "GPU" in k or k == "CUDA_VISIBLE_DEVICES"}


def test_batch_runs_on_the_first_node_with_job_wide_counts() -> None:
    """sbatch -N2 -n3: 2 CPUs on n1, 1 on n2 (cons_tres), SLURM_TASKS_PER_NODE=2,1."""
    env = batch_environment(
        _job(ntasks=3, mem_per_cpu=1000),
        _alloc(("n1", 2, (2, 3)), ("n2", 1, (0,))),
        base_env=USER_ENV,
        task_pid=1234,
    )
    assert env["SLURM_JOB_NODELIST"] == env["SLURM_NODELIST"] == "n[1-2]"
    assert env["SLURM_JOB_CPUS_PER_NODE"] == "2,1"
    assert env["SLURM_TASKS_PER_NODE"] == "2,1"
    assert env["SLURM_NTASKS"] == env["SLURM_NPROCS"] == "3"
    assert env["SLURM_CPUS_ON_NODE"] == "2"
    assert env["SLURM_JOB_GPUS"] == env["CUDA_VISIBLE_DEVICES"] == "2,3"
    assert env["HOSTNAME"] == env["SLURMD_NODENAME"] == env["SLURM_TOPOLOGY_ADDR"] == "n1"
    assert env["ENVIRONMENT"] == "BATCH"
    assert env["SLURM_TASK_PID"] == "1234"
    assert env["SLURM_MEM_PER_CPU"] == "1000"
    assert env["SLURM_SUBMIT_HOST"] == "login1"
    assert env["SLURM_JOB_USER"] == "ada" and env["SLURM_JOB_UID"] == "1000"
    assert env["HOME"] == "/home/ada"  # the exported user environment is kept
    for absent in (
        "SLURM_STEP_ID",
        "SLURM_STEPID",
        "SLURM_RESTART_COUNT",
        "SLURM_CPUS_PER_TASK",
        "SLURM_ARRAY_JOB_ID",
        "SLURM_NTASKS_PER_NODE",
    ):
        assert absent not in env


def test_batch_without_task_options_does_not_export_ntasks() -> None:
    """No -n, no --ntasks-per-node: SLURM_TASKS_PER_NODE from the CPUs, no SLURM_NTASKS."""
    env = batch_environment(_job(), _alloc(("n1", 4, ()), ("n2", 4, ())), base_env=USER_ENV)
    assert "SLURM_NTASKS" not in env and "SLURM_NPROCS" not in env
    assert env["SLURM_TASKS_PER_NODE"] == "4(x2)"
    env = batch_environment(_job(cpus_per_task=2), _alloc(("n1", 4, ())), base_env=USER_ENV)
    assert env["SLURM_TASKS_PER_NODE"] == "2"
    assert env["SLURM_CPUS_PER_TASK"] == "2"


def test_mem_per_node_instead_of_mem_per_cpu() -> None:
    env = batch_environment(_job(mem_per_node=2048), _alloc(("n1", 1, ())), base_env=USER_ENV)
    assert env["SLURM_MEM_PER_NODE"] == "2048"
    assert "SLURM_MEM_PER_CPU" not in env


def test_array_variables_in_the_batch_step_and_inherited_by_steps() -> None:
    """Capture f3 (--array=0-7%2): COUNT=8 MIN=0 MAX=7 STEP=1; each task its own job id."""
    array = ArrayContext.from_indices(108, 3, range(8))
    job = _job(job_id=112, array=array)
    alloc = _alloc(("n1", 1, ()))
    env = batch_environment(job, alloc, base_env=USER_ENV)
    assert {k: v for k, v in env.items() if k.startswith("SLURM_ARRAY")} == {
        "SLURM_ARRAY_JOB_ID": "108",
        "SLURM_ARRAY_TASK_ID": "3",
        "SLURM_ARRAY_TASK_COUNT": "8",
        "SLURM_ARRAY_TASK_MIN": "0",
        "SLURM_ARRAY_TASK_MAX": "7",
        "SLURM_ARRAY_TASK_STEP": "1",
    }
    assert env["SLURM_JOB_ID"] == "112"
    step = StepContext(0, distribute(1, ["n1"], [1]), launcher_port=40000)
    assert step_task_environment(job, alloc, step, 0, base_env=env)["SLURM_ARRAY_TASK_ID"] == "3"


def test_array_step_comes_from_the_array_text() -> None:
    """Real Slurm: ``0-6:3`` -> 3, but ``1,3,5`` -> 1 (not the stride of the indices)."""
    assert array_step("0-6:3") == 3
    assert array_step("1,3,5") == 1
    assert array_step("0-7%2") == 1
    assert array_step("0-10:3%2") == 3
    assert array_step(None) == 1
    ctx = ArrayContext.from_indices(10, 5, [1, 3, 5], "1-5:2")
    assert (ctx.task_count, ctx.task_min, ctx.task_max, ctx.task_step) == (3, 1, 5, 2)
    assert ArrayContext.from_indices(10, 5, [1, 3, 5]).task_step == 1


@pytest.mark.parametrize("restarts, expected", [(0, None), (1, "1"), (3, "3")])
def test_restart_count_only_after_a_requeue(restarts: int, expected: str | None) -> None:
    job = _job(restart_count=restarts)
    alloc = _alloc(("n1", 2, ()))
    batch = batch_environment(job, alloc, base_env=USER_ENV)
    step = StepContext(0, distribute(2, ["n1"], [2]), launcher_port=40000)
    task = step_task_environment(job, alloc, step, 1, base_env=batch)
    assert batch.get("SLURM_RESTART_COUNT") == expected
    assert task.get("SLURM_RESTART_COUNT") == expected


def test_a_step_on_part_of_the_allocation() -> None:
    """SLURM_NNODES/NTASKS/TASKS_PER_NODE become the step's; the JOB_* ones stay."""
    job = _job(ntasks_per_node=2)
    alloc = _alloc(("n1", 2, (0, 1)), ("n2", 2, (2, 3)), ("n3", 2, (0, 1)))
    batch = batch_environment(job, alloc, base_env=USER_ENV)
    step = StepContext(
        3, distribute(2, ["n2", "n3"], [2, 2]), launcher_port=40001, gpus=((3,), (0,))
    )
    envs = step_environments(job, alloc, step, base_env=batch)
    assert [e["SLURM_PROCID"] for e in envs] == ["0", "1"]
    first, second = envs
    assert first["SLURM_STEP_NODELIST"] == "n[2-3]"
    assert first["SLURM_JOB_NODELIST"] == first["SLURM_NODELIST"] == "n[1-3]"
    assert first["SLURM_NNODES"] == first["SLURM_STEP_NUM_NODES"] == "2"
    assert first["SLURM_JOB_NUM_NODES"] == "3"
    assert first["SLURM_NTASKS"] == first["SLURM_STEP_NUM_TASKS"] == "2"
    assert first["SLURM_TASKS_PER_NODE"] == first["SLURM_STEP_TASKS_PER_NODE"] == "1(x2)"
    assert first["SLURM_DISTRIBUTION"] == "cyclic"  # 2 tasks on 2 nodes
    assert (first["SLURMD_NODENAME"], first["SLURM_NODEID"]) == ("n2", "0")
    assert (second["SLURMD_NODENAME"], second["SLURM_NODEID"]) == ("n3", "1")
    assert first["SLURM_STEP_GPUS"] == first["CUDA_VISIBLE_DEVICES"] == "3"
    assert first["SLURM_JOB_GPUS"] == "0,1"  # inherited from the batch step on n1
    assert first["SLURM_STEP_ID"] == first["SLURM_STEPID"] == "3"
    assert first["HOSTNAME"] == "n1"  # srun passes the batch environment on (capture a2)


def test_tmpdir_is_set_for_the_first_task_of_each_node_only() -> None:
    """slurmstepd's _make_tmpdir runs for its task 0 (capture a1: fulltask0/2 only)."""
    job = _job()
    alloc = _alloc(("n1", 2, ()), ("n2", 2, ()))
    step = StepContext(
        0, distribute(4, ["n1", "n2"], [2, 2]), launcher_port=1, inside_allocation=False
    )
    envs = step_environments(job, alloc, step, base_env=USER_ENV)
    assert ["TMPDIR" in e for e in envs] == [True, False, True, False]
    with_tmpdir = step_environments(job, alloc, step, base_env={**USER_ENV, "TMPDIR": "/scratch"})
    assert {e["TMPDIR"] for e in with_tmpdir} == {"/scratch"}


def test_standalone_srun_sets_the_job_variables_itself() -> None:
    """Capture a1: no SLURM_DISTRIBUTION, no SLURM_MEM_PER_CPU, no SLURM_NODE_ALIASES."""
    job = _job(name="hostname", mem_per_cpu=1000)
    alloc = _alloc(("n1", 1, ()))
    step = StepContext(
        0,
        distribute(1, ["n1"], [1]),
        launcher_port=5,
        inside_allocation=False,
        label=True,
        umask=0o027,
    )
    env = step_task_environment(job, alloc, step, 0, base_env=USER_ENV, task_pid=99)
    assert env["SLURM_JOB_NAME"] == "hostname"
    assert env["SLURM_LABELIO"] == "1"
    assert env["SLURM_UMASK"] == "0027"
    assert env["SRUN_DEBUG"] == "3"
    assert env["SLURM_SRUN_COMM_PORT"] == env["SLURM_STEP_LAUNCHER_PORT"] == "5"
    for absent in (
        "SLURM_DISTRIBUTION",
        "SLURM_MEM_PER_CPU",
        "SLURM_NODE_ALIASES",
        "SLURM_JOB_GPUS",
        "ENVIRONMENT",
        "HOSTNAME",
        "SLURM_JOB_CPUS_PER_NODE_PACK_GROUP_0",
    ):
        assert absent not in env
    explicit = StepContext(
        0,
        distribute(1, ["n1"], [1]),
        launcher_port=5,
        inside_allocation=False,
        distribution="cyclic",
    )
    assert step_task_environment(job, alloc, explicit, 0, base_env={})["SLURM_DISTRIBUTION"] == (
        "cyclic"
    )


def test_step_node_outside_the_allocation_is_an_error() -> None:
    step = StepContext(0, distribute(1, ["n9"], [1]), launcher_port=5)
    with pytest.raises(ValueError, match="n9"):
        step_task_environment(_job(), _alloc(("n1", 1, ())), step, 0, base_env={})


@pytest.mark.parametrize(
    "export, expected",
    [
        (None, {"PATH", "HOME", "SLURM_CONF_X"}),
        ("ALL", {"PATH", "HOME", "SLURM_CONF_X"}),
        ("NONE", {"SLURM_CONF_X"}),
        ("HOME,FOO=bar", {"HOME", "FOO", "SLURM_CONF_X"}),
        ("ALL,FOO=bar", {"PATH", "HOME", "FOO", "SLURM_CONF_X"}),
    ],
)
def test_export(export: str | None, expected: set[str]) -> None:
    submit = {"PATH": "/bin", "HOME": "/home/ada", "SLURM_CONF_X": "1"}
    env = exported_environment(submit, export)
    assert set(env) == expected
    if "FOO" in expected:
        assert env["FOO"] == "bar"


def test_export_is_recorded_for_srun_inside_the_job() -> None:
    env = batch_environment(
        _job(export="NONE"), _alloc(("n1", 1, ())), base_env=exported_environment(USER_ENV, "NONE")
    )
    assert env["SLURM_EXPORT_ENV"] == "NONE"
    assert "HOME" not in env


def test_job_context_from_the_parsed_options() -> None:
    """The options that were given decide which variables appear (a3's request)."""
    from minislurm.options.model import JobOptions
    from minislurm.slurmd.context import job_context

    options = JobOptions(
        nodes_min=2,
        nodes_max=2,
        ntasks_per_node=1,
        cpus_per_task=2,
        gpus_per_node="1",
        mem_per_cpu_mb=500,
        partition="gpu",
        job_name="myjob",
        chdir="/work/sub",
    )
    job = job_context(
        options,
        job_id=6,
        name="myjob",
        partition="gpu",
        cluster_name="mini",
        submit_dir="/work",
        submit_host="vm",
    )
    assert (job.cpus_per_task, job.ntasks_per_node, job.gpus_per_node) == (2, 1, "1")
    assert (job.mem_per_cpu, job.cwd, job.submit_host) == (500, "/work/sub", "vm")
    env = batch_environment(job, _alloc(("n1", 2, (0,)), ("n2", 2, (0,))), base_env={})
    assert env["SLURM_CPUS_PER_TASK"] == "2" and env["SLURM_GPUS_PER_NODE"] == "1"
    assert env["SLURM_SUBMIT_DIR"] == "/work"
    # DefMemPerCPU applies when --mem-per-cpu was not given
    assert (
        job_context(
            JobOptions(), job_id=1, name="x", partition="p", cluster_name="c", mem_per_cpu=1000
        ).mem_per_cpu
        == 1000
    )


def test_open_mode_is_exported_as_one_letter() -> None:
    """Real Slurm (test_env_realslurm.py): ``--open-mode=append`` -> SLURM_OPEN_MODE=a."""
    alloc = _alloc(("n1", 1, ()))
    assert batch_environment(_job(open_mode="append"), alloc, base_env={})["SLURM_OPEN_MODE"] == "a"
    assert (
        batch_environment(_job(open_mode="truncate"), alloc, base_env={})["SLURM_OPEN_MODE"] == "t"
    )
    assert "SLURM_OPEN_MODE" not in batch_environment(_job(), alloc, base_env={})


def test_salloc_shell_environment() -> None:
    """salloc's command runs on the submit host: job variables, no task/node/GPU ones."""
    from minislurm.slurmd.env import allocation_environment

    job = _job(name="interactive", ntasks_per_node=2, mem_per_cpu=1000)
    alloc = _alloc(("n1", 2, (0, 1)), ("n2", 2, (0, 1)))
    env = allocation_environment(job, alloc, base_env=USER_ENV)
    assert env["SLURM_JOB_NAME"] == "interactive"
    assert env["SLURM_TASKS_PER_NODE"] == env["SLURM_JOB_CPUS_PER_NODE"] == "2(x2)"
    assert env["SLURM_NTASKS"] == "4" and env["SLURM_NTASKS_PER_NODE"] == "2"
    assert env["SLURM_NODE_ALIASES"] == "(null)"
    for absent in (
        "SLURM_PROCID",
        "SLURMD_NODENAME",
        "CUDA_VISIBLE_DEVICES",
        "SLURM_JOB_UID",
        "SLURM_PRIO_PROCESS",
        "SLURM_MEM_PER_CPU",
        "ENVIRONMENT",
    ):
        assert absent not in env
    given = allocation_environment(
        _job(mem_per_cpu=300, mem_per_cpu_given=True), alloc, base_env={}
    )
    assert given["SLURM_MEM_PER_CPU"] == "300"
    # srun inside salloc adds what the batch step would otherwise have set
    step = StepContext(0, distribute(1, ["n1"], [2]), launcher_port=9)
    task = step_task_environment(job, alloc, step, 0, base_env=env)
    assert task["SLURM_PRIO_PROCESS"] == "0" and task["SLURM_JOB_UID"] == "1000"
    assert task["SLURM_STEP_GPUS"] == "0,1" and "SLURM_JOB_GPUS" not in task


def test_gpu_bind_is_exported_by_sbatch_and_salloc_not_by_a_standalone_srun() -> None:
    """Real 22.05.8: ``#SBATCH --gpu-bind=single:1`` gives the batch step
    ``SLURM_GPU_BIND=single:1`` (srun inside reads it back as its --gpu-bind, so each
    task sees one GPU); salloc's shell has it too; ``srun --gpu-bind=single:1``
    creating its own job puts none in its tasks' environment."""
    from minislurm.options.model import JobOptions
    from minislurm.slurmd.context import job_context
    from minislurm.slurmd.env import allocation_environment

    job = job_context(JobOptions(other=(("gpu-bind", "single:1"),)), job_id=7, name="x",
                      partition="gpu", cluster_name="mini")
    alloc = _alloc(("n1", 2, (0, 1)))
    assert batch_environment(job, alloc, base_env={})["SLURM_GPU_BIND"] == "single:1"
    assert allocation_environment(job, alloc, base_env={})["SLURM_GPU_BIND"] == "single:1"
    own = StepContext(0, distribute(2, ["n1"], [2]), launcher_port=5, inside_allocation=False,
                      gpu_bind="single:1")
    assert "SLURM_GPU_BIND" not in step_task_environment(job, alloc, own, 0, base_env={})
    assert "SLURM_GPU_BIND" not in batch_environment(_job(), alloc, base_env={})
