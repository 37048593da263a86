"""Steps inside an allocation where minislurm differed from real Slurm 22.05.8: which GPUs
a step gets, srun's node-count error, ``srun --export`` inside a job.

Every expected value was measured on a real 22.05.8 cluster configured like the reference
one (``scripts/realslurm``: n[1-4], 4 CPUs, 4000 MB, 4 a100 each, DefMemPerCPU=1000) by
running the same command lines on it and on minislurm; the ``real_slurm`` tests at the end
replay them on both clusters (they skip when real Slurm cannot start here).
"""

from __future__ import annotations

import pytest
from minicluster import KNOWN_ENV_GAPS, MiniCluster, env_diff, env_of, run_case
from realslurm import RealSlurm

from minislurm.common.layout import distribute
from minislurm.ctld.step_mgr import plan_step
from minislurm.errors import SlurmError
from minislurm.job import Allocation, NodeAlloc
from minislurm.options import JobOptions
from minislurm.options.sbatch import parse_sbatch
from minislurm.options.srun import parse_srun
from minislurm.slurmd.context import JobContext, StepContext
from minislurm.slurmd.env import step_environments

USER_ENV = {"PATH": "/usr/bin:/bin", "HOME": "/root", "LANG": "C.UTF-8", "USER": "root"}


def _alloc(nodes: int = 1, cpus: int = 4, gpus: int = 4) -> Allocation:
    return Allocation(tuple(
        NodeAlloc(f"n{i}", cpus, 1000 * cpus, tuple(("a100", g) for g in range(gpus)))
        for i in range(1, nodes + 1)))


def _job(*argv: str) -> JobOptions:
    return parse_sbatch([*argv, "--wrap", "true"], env={}, cwd="/").options


def _srun(*argv: str, env: dict[str, str] | None = None) -> JobOptions:
    return parse_srun([*argv, "true"], env=env or {}, cwd="/").options


# ----- which GPUs a step gets -----------------------------------------------------------------
@pytest.mark.parametrize(
    ("job_argv", "srun_argv", "expected"),
    [
        # sbatch --exclusive: batch CUDA_VISIBLE_DEVICES=0,1,2,3, `srun env` no GPU at all
        (("--exclusive",), (), ((),)),
        (("--exclusive",), ("--exclusive",), ((),)),
        # the job's request, not what --exclusive added: SLURM_STEP_GPUS=0,1
        (("--exclusive", "--gres=gpu:2"), (), ((0, 1),)),
        (("--gres=gpu:2",), (), ((0, 1),)),
        # srun --gres=none: no GPU (SLURM_JOB_GPUS stays)
        (("--gres=gpu:2",), ("--gres=none",), ((),)),
        (("--exclusive", "--gpus=2"), ("--gres=none",), ((),)),
        # a step's own --gpus-per-task: tasks x N on the node (SLURM_GPUS_ON_NODE=2, not 4)
        (("--exclusive",), ("-n2", "--gpus-per-task=1"), ((0, 1),)),
        (("--exclusive",), ("--gpus=1",), ((0,),)),
    ],
)
def test_a_step_without_gpu_options_gets_what_the_job_asked_for(
    job_argv: tuple[str, ...], srun_argv: tuple[str, ...], expected: tuple[tuple[int, ...]]
) -> None:
    """step_mgr.c copies the job's TRES request to a step that names none
    (``_copy_job_tres_to_step``); minislurm gave such a step every GPU the job held."""
    plan = plan_step(1, _alloc(), _srun(*srun_argv), 0, job=_job(*job_argv))
    assert plan.gpus == expected


def test_a_step_without_gpus_hides_the_batch_steps_gpus() -> None:
    """Real 22.05.8: in ``sbatch --exclusive`` (batch CUDA_VISIBLE_DEVICES=0,1,2,3,
    GPU_DEVICE_ORDINAL, SLURM_GPUS_ON_NODE=4) ``srun env`` shows only SLURM_JOB_GPUS;
    ``CUDA_VISIBLE_DEVICES=7 srun env`` without GPUs shows no CUDA_VISIBLE_DEVICES."""
    job = JobContext(job_id=7, name="job.sh", partition="debug", cluster_name="mini",
                     submit_dir="/w", submit_host="vm", conf_path="/etc/slurm.conf")
    inherited = {**USER_ENV, "CUDA_VISIBLE_DEVICES": "0,1,2,3", "GPU_DEVICE_ORDINAL": "0,1,2,3",
                 "ROCR_VISIBLE_DEVICES": "0,1,2,3", "ZE_AFFINITY_MASK": "0,1,2,3",
                 "SLURM_GPUS_ON_NODE": "4", "SLURM_JOB_GPUS": "0,1,2,3"}
    layout = distribute(1, ["n1"], [4])
    step = StepContext(step_id=0, layout=layout, launcher_port=40000, gpus=((),))
    (task,) = step_environments(job, _alloc(), step, base_env=inherited)
    gpu_vars = {k: v for k, v in task.items() if "GPU" in k or k.endswith("_DEVICES")
                or k == "ZE_AFFINITY_MASK"}
    assert gpu_vars == {"SLURM_JOB_GPUS": "0,1,2,3"}


def test_an_exact_step_gets_only_its_tasks_cpus() -> None:
    """Real 22.05.8, ``srun --exclusive env`` in ``sbatch --exclusive``: SLURM_CPUS_ON_NODE=1
    (a plain ``srun`` there: 4, every CPU the job has on the node)."""
    for argv in (("--exclusive",), ("--exact",), ("--exact", "-n2", "-c1")):
        plan = plan_step(1, _alloc(), _srun(*argv), 0, job=_job("--exclusive"))
        assert plan.cpus_on_node == (len(plan.layout.task_ids[0]),)
    assert plan_step(1, _alloc(), _srun(), 0, job=_job("--exclusive")).cpus_on_node == (4,)


# ----- srun -N more than the job has -------------------------------------------------------
def test_more_nodes_than_allocated_is_sruns_only_allocated_error() -> None:
    """Real 22.05.8, ``srun -N2`` / ``srun -N3 -n3`` in a 1-node job: ``srun: error: Only
    allocated 1 nodes asked for 2`` and exit 1 (minislurm: ``Unable to create step for job
    N: Requested node configuration is not available``)."""
    for argv, want in ((("-N2",), 2), (("-N3", "-n3"), 3), (("-N2", "--mem=100"), 2)):
        with pytest.raises(SlurmError) as err:
            plan_step(5, _alloc(), _srun(*argv), 0)
        assert (err.value.message, err.value.exit_code) == (
            f"srun: error: Only allocated 1 nodes asked for {want}", 1)


def test_a_nodelist_outside_the_allocation_is_refused() -> None:
    """Real 22.05.8, ``srun -w n2 true`` in a job on n1: ``srun: error: Unable to create
    step for job N: Requested node configuration is not available``, exit 1 (minislurm ran
    the step on n1)."""
    with pytest.raises(SlurmError) as err:
        plan_step(5, _alloc(), _srun("-w", "n2"), 0)
    assert (err.value.message, err.value.exit_code) == (
        "srun: error: Unable to create step for job 5: "
        "Requested node configuration is not available", 1)
    plan = plan_step(5, _alloc(nodes=2), _srun("-w", "n2"), 0)
    assert plan.layout.nodes == ("n2",)


# ----- srun --export inside an allocation ------------------------------------------------------
def test_step_context_carries_sruns_export() -> None:
    """``srun --export=FOO=bar`` typed in a batch script: real 22.05.8 gives FOO=bar and
    filters the rest (no BAR); minislurm's slurmctld dropped srun's --export."""
    job = JobContext(job_id=7, name="job.sh", partition="debug", cluster_name="mini",
                     submit_dir="/w", submit_host="vm", conf_path="/etc/slurm.conf")
    opts = _srun("--export=FOO=bar")
    step = StepContext(step_id=0, layout=distribute(1, ["n1"], [1]), launcher_port=40000,
                       export=opts.export)
    (task,) = step_environments(job, _alloc(), step, base_env={**USER_ENV, "FOO": "zz",
                                                               "BAR": "1"})
    assert task["FOO"] == "bar" and "BAR" not in task and "HOME" not in task


# ----- replayed on real Slurm -------------------------------------------------------------------
VOLATILE = {
    "SLURM_TASK_PID", "SLURM_SRUN_COMM_PORT", "SLURM_STEP_LAUNCHER_PORT",
    "SLURM_JOB_START_TIME", "SLURM_JOB_END_TIME", "SLURM_JOB_ID", "SLURM_JOBID",
    *KNOWN_ENV_GAPS,
}
STEP = "srun {opts} bash -c 'env | sort > step{tag}.$SLURM_PROCID.env'\n"


def _script(*steps: tuple[str, str]) -> str:
    return "#!/bin/bash\nenv | sort > batch.env\n" + "".join(
        STEP.format(opts=opts, tag=tag) for opts, tag in steps)


REPLAYED = {
    "exclusive": ("sbatch --wait --exclusive job.sh",
                  _script(("", "a"), ("--exclusive", "b"), ("--gpus=1", "c"))),
    "exclusive-gres2": ("sbatch --wait --exclusive --gres=gpu:2 job.sh",
                        _script(("", "a"), ("--gres=none", "b"))),
    "exclusive-gpus-per-task": ("sbatch --wait --exclusive -n2 --gpus-per-task=1 job.sh",
                                _script(("", "a"))),
    "gres2-none": ("sbatch --wait --gres=gpu:2 job.sh", _script(("", "a"), ("--gres=none", "b"))),
    "srun-export": ("sbatch --wait job.sh",
                    "#!/bin/bash\nFOO=zz BAR=1 srun --export=FOO=bar /usr/bin/env | sort > x.env\n"
                    "srun --export=NONE /usr/bin/env | sort > n.env\n"),
}
ERRORS = {
    "srun-N2-in-1-node-job": "srun -N2 true",
    "srun-N3-n3-in-1-node-job": "srun -N3 -n3 true",
    "srun-w-outside-job": "srun -w n4 true",
}


@pytest.mark.realslurm
@pytest.mark.parametrize("case", sorted(REPLAYED))
def test_same_step_environments_as_real_slurm(
    real_slurm: RealSlurm, mini_slurm: MiniCluster, case: str
) -> None:
    cmd, script = REPLAYED[case]
    real, mini = (run_case(side, cmd, folder=f"fidelity-steps-{case}", files={"job.sh": script},
                           timeout=90) for side in (real_slurm, mini_slurm))
    assert (real.result.rc, mini.result.rc) == (0, 0), (real.result, mini.result)
    envs = sorted(f for f in real.files if f.endswith(".env"))
    assert envs and envs == sorted(f for f in mini.files if f.endswith(".env"))
    for name in envs:
        diff = env_diff(env_of(real.files[name]), env_of(mini.files[name]))
        assert {k: v for k, v in diff.items() if k not in VOLATILE} == {}, name


@pytest.mark.realslurm
@pytest.mark.parametrize("case", sorted(ERRORS))
def test_same_step_errors_as_real_slurm(
    real_slurm: RealSlurm, mini_slurm: MiniCluster, case: str
) -> None:
    """srun's words and exit code, inside ``sbatch -w n1`` (slurm-N.out and rc)."""
    script = f"#!/bin/bash\n{ERRORS[case]}\necho rc=$?\n"
    real, mini = (run_case(side, "sbatch --wait -w n1 job.sh", folder=f"fidelity-steps-{case}",
                           files={"job.sh": script}, timeout=90)
                  for side in (real_slurm, mini_slurm))
    assert (real.result.rc, mini.result.rc) == (0, 0), (real.result, mini.result)
    assert real.files == mini.files
