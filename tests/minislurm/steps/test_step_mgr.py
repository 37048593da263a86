"""Job steps inside an allocation (`minislurm.ctld.step_mgr.plan_step`, slurmctld's step_mgr.c).

`plan_step` is a pure function: the job's allocation and one srun's options
give the step's nodes, task layout, CPUs and GPUs per node. The cases follow
the captures of real Slurm 22.05: a1 (``srun -N2 --ntasks-per-node=2
--gres=gpu:2``), a2 (a plain ``srun`` in a batch job holding 2 GPUs per
node) and a3 (``-N2 --ntasks-per-node=1 -c2 --gpus-per-node=1``, then
``srun -n1 -N1 --gpus=1``).
"""

from __future__ import annotations

import pytest

from minislurm.ctld.step_mgr import plan_step
from minislurm.errors import SlurmError
from minislurm.job import Allocation, NodeAlloc
from minislurm.options import JobOptions
from minislurm.options.srun import parse_srun


def _alloc(cpus: int, gpus: int, nodes: int = 2) -> Allocation:
    """``nodes`` nodes n1.. each holding ``cpus`` CPUs and GPUs 0..gpus-1 (a100)."""
    return Allocation(tuple(
        NodeAlloc(f"n{i}", cpus, cpus * 1000, tuple(("a100", g) for g in range(gpus)))
        for i in range(1, nodes + 1)))


def _srun(*argv: str) -> JobOptions:
    return parse_srun([*argv, "true"], env={}).options


def test_capture_a1_two_tasks_per_node_block_with_two_gpus_each() -> None:
    plan = plan_step(1, _alloc(cpus=2, gpus=2), _srun("-N2", "--ntasks-per-node=2",
                                                      "--gres=gpu:2"), 0)
    assert plan.layout.nodes == ("n1", "n2")
    assert plan.layout.task_ids == ((0, 1), (2, 3))      # PROCID 0,1 on n1; 2,3 on n2
    assert plan.distribution == "block"
    assert plan.gpus == ((0, 1), (0, 1))                 # CUDA_VISIBLE_DEVICES=0,1 everywhere
    assert plan.cpus_on_node == (2, 2)                   # SLURM_CPUS_ON_NODE=2


def test_capture_a2_a_plain_srun_runs_one_task_per_allocated_task_slot() -> None:
    """In a2 the batch job has -N2 --ntasks-per-node=2; ``srun`` (no options)
    inherits them through the environment (SLURM_NTASKS etc.): 4 tasks, block,
    and the step sees every GPU of the job (SLURM_STEP_GPUS=0,1)."""
    env = {"SLURM_NTASKS": "4", "SLURM_NTASKS_PER_NODE": "2", "SLURM_NNODES": "2",
           "SLURM_JOB_NUM_NODES": "2", "SLURM_JOB_ID": "5"}
    opts = parse_srun(["true"], env=env).options
    plan = plan_step(5, _alloc(cpus=2, gpus=2), opts, 0)
    assert plan.layout.task_ids == ((0, 1), (2, 3))
    assert plan.distribution == "block"
    assert plan.gpus == ((0, 1), (0, 1))


def test_capture_a3_one_task_per_node_is_cyclic() -> None:
    plan = plan_step(9, _alloc(cpus=2, gpus=1), _srun("-N2", "--ntasks-per-node=1", "-c2"), 0)
    assert plan.layout.task_ids == ((0,), (1,))
    assert plan.distribution == "cyclic"                 # SLURM_DISTRIBUTION=cyclic


def test_capture_a3_second_step_takes_one_gpu_on_one_node() -> None:
    plan = plan_step(9, _alloc(cpus=2, gpus=2), _srun("-n1", "-N1", "--gpus=1"), 1)
    assert plan.step_id == 1                             # SLURM_STEP_ID=1
    assert plan.layout.nodes == ("n1",)
    assert plan.gpus == ((0,),)


def test_a_step_without_gpu_options_sees_all_the_jobs_gpus_on_its_nodes() -> None:
    plan = plan_step(3, _alloc(cpus=4, gpus=4), _srun("-n1"), 0)
    assert plan.gpus == ((0, 1, 2, 3),)


def test_gpus_per_node_takes_the_first_ones_of_each_node() -> None:
    plan = plan_step(3, _alloc(cpus=4, gpus=4), _srun("-N2", "--gpus-per-node=2"), 0)
    assert plan.gpus == ((0, 1), (0, 1))


def test_tasks_fill_as_few_nodes_as_hold_them() -> None:
    """``srun -n3`` in a 2-node job of 4 CPUs per node stays on n1."""
    plan = plan_step(3, _alloc(cpus=4, gpus=0), _srun("-n3"), 0)
    assert plan.layout.nodes == ("n1",)
    assert plan.layout.task_ids == ((0, 1, 2),)


def test_tasks_spill_to_the_next_node_when_the_first_is_full() -> None:
    plan = plan_step(3, _alloc(cpus=2, gpus=0), _srun("-n3"), 0)
    assert plan.layout.nodes == ("n1", "n2")
    assert plan.layout.ntasks == 3


def test_no_options_means_one_task_per_node() -> None:
    plan = plan_step(3, _alloc(cpus=4, gpus=0, nodes=3), _srun(), 0)
    assert plan.layout.task_ids == ((0,), (1,), (2,))


def test_the_plan_is_a_pure_function() -> None:
    alloc, opts = _alloc(cpus=2, gpus=2), _srun("-N2", "--ntasks-per-node=2")
    assert plan_step(1, alloc, opts, 0) == plan_step(1, alloc, opts, 0)


@pytest.mark.parametrize(("argv", "why"), [
    (("-n5",), "More processors requested than permitted"),
    (("-n1", "-c3"), "More processors requested than permitted"),
    (("--gpus-per-node=3",), "Invalid generic resource (gres) specification"),
])
def test_a_step_bigger_than_the_allocation_is_refused_with_sruns_words(
    argv: tuple[str, ...], why: str,
) -> None:
    with pytest.raises(SlurmError) as err:
        plan_step(7, _alloc(cpus=2, gpus=2), _srun(*argv), 0)
    assert err.value.message == f"srun: error: Unable to create step for job 7: {why}"
    assert err.value.exit_code == 1


def test_more_nodes_than_the_job_has_is_sruns_own_error() -> None:
    """Measured on 22.05.8: ``srun -N3`` in a 2-node job
    (tests/minislurm/steps/test_steps_gpus.py)."""
    with pytest.raises(SlurmError) as err:
        plan_step(7, _alloc(cpus=2, gpus=2), _srun("-N3"), 0)
    assert (err.value.message, err.value.exit_code) == (
        "srun: error: Only allocated 2 nodes asked for 3", 1)


def test_gres_gpu_zero_step_runs_without_gpus() -> None:
    """22.05.8: ``srun --gres=gpu:0`` runs in a GPU job (and in a job holding no GPU),
    its tasks see no GPU; ``--gres=gpu`` (no count) still means one GPU."""
    job = JobOptions(gres="gpu:2")
    plan = plan_step(3, _alloc(cpus=2, gpus=2, nodes=1), _srun("--gres=gpu:0"), 0, job=job)
    assert plan.gpus == ((),)
    none_held = plan_step(4, _alloc(cpus=2, gpus=0, nodes=1), _srun("--gres=gpu:0"), 0,
                          job=JobOptions(gres="gpu:0"))
    assert none_held.gpus == ((),)
    one = plan_step(5, _alloc(cpus=2, gpus=2, nodes=1), _srun("--gres=gpu"), 0, job=job)
    assert one.gpus == ((0,),)
