"""GPU placement against real Slurm 22.05: ``--gpus`` totals and ``--gpus-per-task`` binding.

Every expectation below was measured on real Slurm 22.05.8 (Debian's slurm-wlm, the
reference cluster of tests/realslurm: 4 nodes n[1-4] of 4 CPUs, 4,000 MB and 4 a100
GPUs, DefMemPerCPU=1000) with ``scontrol show job -d`` (the per-node ``GRES=...(IDX:)``
lines) and ``srun -l env`` in the job.  "Holders" are jobs running first, each
``sbatch -w nX -n1 --gres=gpu:K`` (written ``nX:K``) or ``sbatch -w nX -nC`` (``nX -nC``).

* ``--gpus=N`` (select/cons_tres ``gres_per_job``): each node in turn takes as many
  free GPUs as it can while the nodes still to come keep one each (``_set_job_bits1``):
  ``-N2 --gpus=3`` -> 2 + 1, not 2 + 2.  Nodes whose GPUs are partly in use are passed
  over while other nodes can host the job (unless they have the whole job's GPUs
  free); then the nodes with most free GPUs come first.
* ``--gpus-per-task=N``: a node gets N GPUs per task, its free GPUs cap its tasks, and
  every srun task sees only its own N GPUs (``--gpu-bind=per_task:N`` implied):
  ``CUDA_VISIBLE_DEVICES``, ``GPU_DEVICE_ORDINAL``, ``ROCR_VISIBLE_DEVICES``,
  ``ZE_AFFINITY_MASK`` and ``SLURM_STEP_GPUS`` name the task's GPUs,
  ``SLURM_GPUS_ON_NODE`` the step's count on the node; ``--gpu-bind=none`` unsets them
  all but ``SLURM_GPUS_ON_NODE``.  The batch step is not bound.

minislurm's select takes the per-job and per-task counts in ``ResourceRequest``
(``gpus_per_job``/``gpus_per_task``, filled by ctld/submit.py from ``--gpus`` and
``--gpus-per-task``); a step of a ``--gpus=N`` job shares N over the job's GPUs
(ctld/step_mgr.py), and srun's own ``--gpus-per-task``/``--gpu-bind`` reach the
tasks through ``StepContext``.
"""

from __future__ import annotations

import dataclasses
import re
import shlex
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from captures import capture_root
from realslurm import RealSlurm
from realslurm.differential import parse_env, run_batch

from minislurm.common.hostlist import expand
from minislurm.ctld.step_mgr import plan_step
from minislurm.job import Allocation
from minislurm.options.model import JobOptions
from minislurm.options.sbatch import parse_sbatch
from minislurm.options.srun import parse_srun
from minislurm.select.cons_tres import select
from minislurm.select.gpu_shares import job_gpu_shares
from minislurm.select.request import ResourceRequest
from minislurm.select.table import NodeShape, NodeTable
from minislurm.sim import Cluster
from minislurm.slurmd.context import JobContext, StepContext, job_context
from minislurm.slurmd.env import batch_environment, step_environments
from minislurm.slurmd.gpu import GPU_VISIBILITY_VARS, bind_task_gpus, task_gpu_environment
from minislurm.states import Reason

#: (holders, sbatch options) -> ``node:cpus:GPU indices`` per node, real 22.05.8.
ALLOCATIONS: dict[tuple[tuple[str, ...], str], str] = {
    ((), '-N2 --gpus=3'): 'n1:1:0,1 n2:1:0',
    ((), '-N2 --gpus=5'): 'n1:1:0,1,2,3 n2:1:0',
    ((), '-N3 --gpus=6'): 'n1:1:0,1,2,3 n2:1:0 n3:1:0',
    ((), '-N2 --gpus=4'): 'n1:1:0,1,2 n2:1:0',
    ((), '-N2 --gpus=2'): 'n1:1:0 n2:1:0',
    ((), '-N2 --gpus=7'): 'n1:1:0,1,2,3 n2:1:0,1,2',
    ((), '-N2 -n4 --gpus=3'): 'n1:3:0,1 n2:1:0',
    ((), '--gpus=5'): 'n1:1:0,1,2,3 n2:1:0',
    ((), '--gpus=3'): 'n1:1:0,1,2',
    ((), '-N2 --gpus=8'): 'n1:1:0,1,2,3 n2:1:0,1,2,3',
    ((), '-N4 --gpus=6'): 'n1:1:0,1,2 n2:1:0 n3:1:0 n4:1:0',
    (('n1:2',), '-N2 --gpus=3'): 'n2:1:0,1 n3:1:0',
    (('n1:2',), '-N2 --gpus=5'): 'n2:1:0,1,2,3 n3:1:0',
    (('n1:2', 'n2:1'), '-N2 --gpus=5'): 'n3:1:0,1,2,3 n4:1:0',
    (('n1:2', 'n2:1'), '-N2 --gpus=3'): 'n2:1:1,2 n3:1:0',
    (('n1:2',), '-N2 --gpus=4'): 'n2:1:0,1,2 n3:1:0',
    (('n1 -n1',), '-N2 --gpus=3'): 'n1:1:0,1 n2:1:0',
    (('n1 -n3',), '-N2 --gpus=3'): 'n1:1:0,1 n2:1:0',
    (('n1:3',), '-N2 --gpus=4'): 'n2:1:0,1,2 n3:1:0',
    (('n1:4',), '-N2 --gpus=3'): 'n2:1:0,1 n3:1:0',
    (('n2:2',), '-N2 --gpus=3'): 'n3:1:0,1 n4:1:0',
    (('n1:2', 'n2:2', 'n3:2'), '-N2 --gpus=5'): 'n1:1:2,3 n4:1:0,1,2',
    (('n1:1',), '-N3 --gpus=6'): 'n2:1:0,1,2,3 n3:1:0 n4:1:0',
    (('n1:2',), '--gpus=3'): 'n2:1:0,1,2',
    (('n1:2',), '--gpus=5'): 'n2:1:0,1,2,3 n3:1:0',
    (('n1:2',), '-N3 --gpus=3'): 'n2:1:0 n3:1:0 n4:1:0',
    (('n1:3',), '-N2 --gpus=2'): 'n2:1:0 n3:1:0',
    (('n1:2',), '-N2 --gpus=2'): 'n1:1:2 n2:1:0',
    (('n2:2',), '-N1 --gpus=3'): 'n1:1:0,1,2',
    (('n1:2', 'n3:2'), '-N2 --gpus=3'): 'n2:1:0,1 n4:1:0',
    (('n1:2', 'n2:2', 'n3:2', 'n4:2'), '-N2 --gpus=4'): 'n1:1:2,3 n2:1:2,3',
    (('n1:3', 'n2:2', 'n3:2', 'n4:2'), '-N2 --gpus=4'): 'n2:1:2,3 n3:1:2,3',
    (('n1:1', 'n2:1'), '-N2 --gpus=5'): 'n3:1:0,1,2,3 n4:1:0',
    (('n1:3', 'n2:1', 'n3:2', 'n4:2'), '-N2 --gpus=4'): 'n2:1:1,2,3 n3:1:2',
    (('n1:2', 'n2:3', 'n3:3', 'n4:3'), '-N2 --gpus=3'): 'n1:1:2,3 n2:1:3',
    (('n1:1', 'n2:2', 'n3:1', 'n4:4'), '-N2 --gpus=5'): 'n1:1:1,2,3 n3:1:1,2',
    (('n1:2', 'n2:2', 'n3:2', 'n4:3'), '-N3 --gpus=5'): 'n1:1:2,3 n2:1:2,3 n3:1:2',
    (('n1 -n4',), '-N2 --gpus=3'): 'n2:1:0,1 n3:1:0',
    ((), '-n4 --gpus-per-task=1'): 'n1:4:0,1,2,3',
    ((), '-N2 --ntasks-per-node=2 --gpus-per-task=1'): 'n1:2:0,1 n2:2:0,1',
    ((), '-n2 --gpus-per-task=2'): 'n1:2:0,1,2,3',
    ((), '-n4 --gpus-per-task=2'): 'n1:2:0,1,2,3 n2:2:0,1,2,3',
    ((), '-N2 -n4 --gpus-per-task=2'): 'n1:2:0,1,2,3 n2:2:0,1,2,3',
    (('n1:3',), '-n3 --gpus-per-task=1'): 'n2:3:0,1,2',
    (('n1:3',), '-N2 -n4 --gpus-per-task=1'): 'n2:3:0,1,2 n3:1:0',
    (('n1:2',), '-N2 --ntasks-per-node=2 --gpus-per-task=1'): 'n2:2:0,1 n3:2:0,1',
    ((), '-n6 --gpus-per-task=1'): 'n1:4:0,1,2,3 n2:2:0,1',
    ((), '-N2 -n2 --gpus=3 --ntasks-per-node=1'): 'n1:1:0,1 n2:1:0',
    (('n1:2', 'n2:2', 'n3:2', 'n4:2'), '-n4 --gpus-per-task=1'): 'n1:2:2,3 n2:2:2,3',
    (('n1:3', 'n2:2', 'n3:2', 'n4:2'), '-n3 --gpus-per-task=1'): 'n2:2:2,3 n3:1:2',
    (('n1:3', 'n2:2', 'n3:2', 'n4:2'), '-N2 -n3 --gpus-per-task=1'): 'n2:2:2,3 n3:1:2',
    (('n1:2',), '-n2 --gpus-per-task=1'): 'n1:2:2,3',
}

#: ``--gres``/``--gpus-per-node`` jobs do take a node whose GPUs are partly used
#: (real 22.05.8, same holders): select must not change for them.
PER_NODE_ALLOCATIONS: dict[tuple[tuple[str, ...], str], str] = {
    (("n1:2",), "-N2 --gres=gpu:2"): "n1:1:2,3 n2:1:0,1",
    (("n1:2",), "--gres=gpu:2"): "n1:1:2,3",
    (("n1:2",), "-N2 --gpus-per-node=2"): "n1:1:2,3 n2:1:0,1",
}

def _conf() -> Path:
    root = capture_root()
    if root is None:
        pytest.skip("slurm-reference captures not found (../shared/slurm-reference)")
    return root / "slurm.conf"


def _holder(spec: str) -> list[str]:
    """``n1:2`` -> ``-w n1 -n1 --gres=gpu:2``; ``n1 -n3`` -> ``-w n1 -n3``."""
    if ":" in spec:
        node, gpus = spec.split(":")
        return ["-w", node, "-n1", f"--gres=gpu:{gpus}"]
    return ["-w", *shlex.split(spec)]


def _count(text: str | None) -> int:
    return int(text.rsplit(":", 1)[-1]) if text else 0


def _cluster(holders: tuple[str, ...]) -> Cluster:
    c = Cluster(_conf())
    for h in holders:
        c.sbatch("#!/bin/bash\nsleep 600\n", *_holder(h), runtime=600)
    c.advance(1)
    return c


def _allocate(c: Cluster, args: str) -> int:
    """Submit ``args`` (held), then release it: it starts on what is free then."""
    jid = c.sbatch("#!/bin/bash\nsleep 60\n", "--hold", *shlex.split(args), runtime=60)
    c.run(f"scontrol release {jid}")
    c.advance(1)
    return jid


def _shown(c: Cluster, jid: int) -> str:
    job = c.controller.job(jid)
    if job.allocation is None:
        return f"{job.state.value} ({job.reason.value})"
    return " ".join(f"{n.node}:{n.cpus}:{','.join(map(str, n.gpu_indices))}"
                    for n in job.allocation.nodes)


@pytest.mark.parametrize("case", list(ALLOCATIONS), ids=lambda c: f"{'+'.join(c[0])}|{c[1]}")
def test_gpu_jobs_get_the_nodes_and_gpus_real_slurm_gives(
    case: tuple[tuple[str, ...], str],
) -> None:
    holders, args = case
    c = _cluster(holders)
    assert _shown(c, _allocate(c, args)) == ALLOCATIONS[case]
    c.controller.table.check()


@pytest.mark.parametrize("case", list(PER_NODE_ALLOCATIONS), ids=lambda c: c[1])
def test_per_node_gpu_jobs_still_take_partly_used_nodes(case: tuple[tuple[str, ...], str]) -> None:
    holders, args = case
    c = _cluster(holders)
    assert _shown(c, _allocate(c, args)) == PER_NODE_ALLOCATIONS[case]


#: sbatch OPTIONS -> (stderr, exit code) on real 22.05.8 (no job is created).
REJECTED = {
    "--gpus=17": ("sbatch: error: Batch job submission failed: Requested node configuration "
                  "is not available\n", 1),
}
REJECTED |= {
    "-N2 --gpus=9": REJECTED["--gpus=17"],
    "-N1 -n2 --gpus-per-task=3": REJECTED["--gpus=17"],
    "-n5 --gpus-per-task=4": REJECTED["--gpus=17"],
    "-N3 --gpus=2": ("sbatch: error: Failed to validate job spec, --gpus < -N\n"
                     "sbatch: error: Invalid generic resource (gres) specification\n", 1),
}


@pytest.mark.parametrize("args", list(REJECTED))
def test_gpu_requests_no_nodes_can_hold_are_rejected(args: str) -> None:
    r = _cluster(()).run(f"sbatch {args} --wrap true")
    assert (r.stdout, r.stderr, r.returncode) == ("", *REJECTED[args])


def test_job_gpu_shares_leave_one_for_every_node_to_come() -> None:
    """cons_tres ``_set_job_bits1``/``_set_job_bits2`` on the chosen nodes' free GPUs."""
    assert job_gpu_shares([4, 4], 3) == [2, 1]
    assert job_gpu_shares([4, 4], 5) == [4, 1]
    assert job_gpu_shares([4, 4, 4], 6) == [4, 1, 1]
    assert job_gpu_shares([4, 4, 4, 4], 6) == [3, 1, 1, 1]
    assert job_gpu_shares([2, 4], 5) == [2, 3]          # n1 holds 2 free (measured)
    assert job_gpu_shares([3, 3], 5) == [3, 2]
    assert job_gpu_shares([1, 4], 4) == [1, 3]
    assert job_gpu_shares([4, 4], 8) == [4, 4]


def _table() -> NodeTable:
    return NodeTable([NodeShape(f"n{i + 1}", 4, 4000, (("a100", 4),)) for i in range(4)])


def test_a_gpu_total_that_no_nodes_can_hold_waits() -> None:
    """-N2 --gpus=9 on 4-GPU nodes cannot start (Resources); --gpus=8 takes 4 + 4."""
    t = _table()
    allowed = np.ones(4, dtype=np.bool_)
    req = ResourceRequest(min_nodes=2, ntasks=2, gpus_per_job=9, mem_per_cpu=1000)
    assert select(req, t, allowed) is Reason.RESOURCES
    fits = select(dataclasses.replace(req, gpus_per_job=8), t, allowed)
    assert isinstance(fits, Allocation) and fits.num_gpus == 8


def test_per_task_gpus_cap_the_tasks_of_a_node() -> None:
    """``-N2 -n4 --gpus-per-task=1`` on n1 (2 of 4 GPUs held) and n2 only: n1 is not
    roomy, so the second try orders by free GPUs: n2 takes 3 tasks (cpus_to_use leaves
    one for n1), n1 one; ``-n4 --gpus-per-task=2`` on idle nodes: the GPUs, not the
    CPUs, cap a node at 2 tasks."""
    t = _table()
    allowed = np.ones(4, dtype=np.bool_)
    held = select(ResourceRequest(ntasks=1, gpus_per_node=2, req_nodes=frozenset({0}),
                                  mem_per_cpu=1000), t, allowed)
    assert isinstance(held, Allocation)
    t.allocate(held)
    res = select(ResourceRequest(min_nodes=2, ntasks=4, gpus_per_task=1, mem_per_cpu=1000),
                 t, np.array([True, True, False, False]))
    assert isinstance(res, Allocation)
    assert [(n.node, n.cpus, n.gpu_indices) for n in res.nodes] == [
        ("n1", 1, (2,)), ("n2", 3, (0, 1, 2))]
    idle = select(ResourceRequest(ntasks=4, spread=True, gpus_per_task=2, mem_per_cpu=1000),
                  _table(), allowed)
    assert isinstance(idle, Allocation)
    assert [(n.node, n.cpus, n.gpu_indices) for n in idle.nodes] == [
        ("n1", 2, (0, 1, 2, 3)), ("n2", 2, (0, 1, 2, 3))]


# ---- the environment of the tasks -------------------------------------------------

#: One task as ``srun -l env`` showed it: (node, CUDA_VISIBLE_DEVICES = GPU_DEVICE_ORDINAL
#: = ROCR_VISIBLE_DEVICES = ZE_AFFINITY_MASK = SLURM_STEP_GPUS, SLURM_GPUS_ON_NODE,
#: SLURM_GPUS_PER_TASK); ``None`` = not set.
Task = tuple[str, str | None, str, str | None]

#: srun creating its own job, real 22.05.8 (holders, srun options) -> tasks by SLURM_PROCID.
SRUN: dict[tuple[tuple[str, ...], str], list[Task]] = {
    ((), "-n4 --gpus-per-task=1"): [("n1", "0", "4", None), ("n1", "1", "4", None),
                                    ("n1", "2", "4", None), ("n1", "3", "4", None)],
    ((), "-N2 -n4 --gpus-per-task=1"): [("n1", "0", "3", None), ("n1", "1", "3", None),
                                        ("n1", "2", "3", None), ("n2", "0", "1", None)],
    ((), "-n2 --gpus-per-task=2"): [("n1", "0,1", "4", None), ("n1", "2,3", "4", None)],
    ((), "-N2 -n4 --gpus-per-task=1 -m cyclic"): [
        ("n1", "0", "3", None), ("n2", "0", "1", None),
        ("n1", "1", "3", None), ("n1", "2", "3", None)],
    ((), "-N2 -n3 --gpus-per-task=1"): [("n1", "0", "2", None), ("n1", "1", "2", None),
                                        ("n2", "0", "1", None)],
    ((), "-N2 -n2 --gpus-per-task=2"): [("n1", "0,1", "2", None), ("n2", "0,1", "2", None)],
    (("n1:2",), "-n2 --gpus-per-task=1"): [("n1", "2", "2", None), ("n1", "3", "2", None)],
    ((), "-n2 --gpus-per-task=1 --gpu-bind=single:1"): [("n1", "0", "2", None),
                                                        ("n1", "1", "2", None)],
    ((), "-n2 --gpus=2"): [("n1", "0,1", "2", None), ("n1", "0,1", "2", None)],
    ((), "-N2 --gpus-per-node=1"): [("n1", "0", "1", None), ("n2", "0", "1", None)],
}

#: Cases that need srun's own --gpu-bind in the StepContext (real 22.05.8).
SRUN_BIND: dict[tuple[tuple[str, ...], str], list[Task]] = {
    ((), "-n4 --gpus-per-task=1 --gpu-bind=none"): [("n1", None, "4", None)] * 4,
    ((), "-n4 --gpus-per-task=1 --gpu-bind=map_gpu:1,0"): [
        ("n1", "1", "4", None), ("n1", "0", "4", None),
        ("n1", "1", "4", None), ("n1", "0", "4", None)],
}

#: sbatch OPTIONS; srun [SRUN] inside: (batch step's variables, tasks), real 22.05.8.
BATCH: dict[tuple[str, str], tuple[dict[str, str], list[Task]]] = {
    ("-n4 --gpus-per-task=1", ""): (
        {"CUDA_VISIBLE_DEVICES": "0,1,2,3", "SLURM_JOB_GPUS": "0,1,2,3",
         "SLURM_GPUS_ON_NODE": "4", "SLURM_GPUS_PER_TASK": "1"},
        [("n1", "0", "4", "1"), ("n1", "1", "4", "1"), ("n1", "2", "4", "1"),
         ("n1", "3", "4", "1")]),
    ("-N2 --ntasks-per-node=2 --gpus-per-task=1", ""): (
        {"CUDA_VISIBLE_DEVICES": "0,1", "SLURM_JOB_GPUS": "0,1", "SLURM_GPUS_ON_NODE": "2",
         "SLURM_GPUS_PER_TASK": "1"},
        [("n1", "0", "2", "1"), ("n1", "1", "2", "1"), ("n2", "0", "2", "1"),
         ("n2", "1", "2", "1")]),
}

#: srun inside a ``--gpus=N`` job inherits ``SLURM_GPUS=N`` and asks for N GPUs: the
#: step must share them over the job's as the job got them (2 + 1), not evenly.
BATCH_GPUS_TOTAL: dict[tuple[str, str], tuple[dict[str, str], list[Task]]] = {
    ("-N2 --gpus=3", ""): (
        {"CUDA_VISIBLE_DEVICES": "0,1", "SLURM_JOB_GPUS": "0,1", "SLURM_GPUS_ON_NODE": "2",
         "SLURM_GPUS": "3"},
        [("n1", "0,1", "2", None), ("n2", "0", "1", None)]),
    ("-N2 -n4 --gpus=3", ""): (
        {"CUDA_VISIBLE_DEVICES": "0,1", "SLURM_JOB_GPUS": "0,1", "SLURM_GPUS_ON_NODE": "2",
         "SLURM_GPUS": "3"},
        [("n1", "0,1", "2", None), ("n1", "0,1", "2", None), ("n1", "0,1", "2", None),
         ("n2", "0", "1", None)]),
}

#: Steps that need srun's own --gpus-per-task/--gpu-bind in the StepContext.
BATCH_STEP_OPTIONS: dict[tuple[str, str], tuple[dict[str, str], list[Task]]] = {
    ("-N1 -n4 --gres=gpu:4", "--gpus-per-task=1"): (
        {"CUDA_VISIBLE_DEVICES": "0,1,2,3", "SLURM_JOB_GPUS": "0,1,2,3",
         "SLURM_GPUS_ON_NODE": "4"},
        [("n1", "0", "4", None), ("n1", "1", "4", None), ("n1", "2", "4", None),
         ("n1", "3", "4", None)]),
    ("-n2 --gpus-per-task=2", "--gpu-bind=none"): (
        {"CUDA_VISIBLE_DEVICES": "0,1,2,3", "SLURM_JOB_GPUS": "0,1,2,3",
         "SLURM_GPUS_ON_NODE": "4", "SLURM_GPUS_PER_TASK": "2"},
        [("n1", None, "4", "2"), ("n1", None, "4", "2")]),
}


def _task(env: dict[str, str]) -> Task:
    seen = {env.get(v) for v in (*GPU_VISIBILITY_VARS, "SLURM_STEP_GPUS")}
    assert len(seen) == 1, env  # the four visibility variables and SLURM_STEP_GPUS agree
    return (env["SLURMD_NODENAME"], seen.pop(), env["SLURM_GPUS_ON_NODE"],
            env.get("SLURM_GPUS_PER_TASK"))


def _job_ctx(c: Cluster, jid: int, opts: JobOptions) -> JobContext:
    job = c.controller.job(jid)
    return job_context(opts, job_id=jid, name=job.name,
                       partition=job.partition, cluster_name=c.config.cluster_name,
                       mem_per_cpu=job.mem_per_cpu)


def _step(plan_args: tuple[int, Allocation, JobOptions], inside: bool,
          **extra: Any) -> StepContext:
    jid, alloc, opts = plan_args
    plan = plan_step(jid, alloc, opts, 0)
    return StepContext(step_id=0, layout=plan.layout, launcher_port=40000,
                       inside_allocation=inside, cpus_on_node=plan.cpus_on_node,
                       gpus=plan.gpus, distribution=opts.distribution, **extra)


def _srun_tasks(holders: tuple[str, ...], args: str, **extra: str) -> list[Task]:
    """``srun ARGS env`` creating its own job: the tasks' GPU variables."""
    c = _cluster(holders)
    jid = _allocate(c, args)
    alloc = c.controller.job(jid).allocation
    assert alloc is not None
    opts = parse_srun([*shlex.split(args), "env"], env={}, cwd="/tmp").options
    step = _step((jid, alloc, opts), False, **extra)
    envs = step_environments(_job_ctx(c, jid, opts), alloc, step, base_env={})
    return [_task(e) for e in envs]


def _batch_tasks(sbatch_args: str, srun_args: str,
                 **extra: str) -> tuple[dict[str, str], list[Task]]:
    """The batch step's GPU variables and the tasks of ``srun SRUN_ARGS env`` inside."""
    c = _cluster(())
    jid = _allocate(c, sbatch_args)
    alloc = c.controller.job(jid).allocation
    assert alloc is not None
    sopts = parse_sbatch([*shlex.split(sbatch_args), "--wrap", "true"], env={},
                         cwd="/tmp").options
    job_ctx = _job_ctx(c, jid, sopts)
    batch = batch_environment(job_ctx, alloc, base_env={})
    opts = parse_srun([*shlex.split(srun_args), "env"], env=batch, cwd="/tmp").options
    step = _step((jid, alloc, opts), True, **extra)
    envs = step_environments(job_ctx, alloc, step, base_env=batch)
    shown = {k: v for k, v in batch.items()
             if k in ("CUDA_VISIBLE_DEVICES", "SLURM_JOB_GPUS", "SLURM_GPUS_ON_NODE",
                      "SLURM_GPUS", "SLURM_GPUS_PER_TASK")}
    return shown, [_task(e) for e in envs]


@pytest.mark.parametrize("case", list(SRUN), ids=lambda c: f"{'+'.join(c[0])}|{c[1]}")
def test_srun_tasks_see_their_gpus_like_real_slurm(case: tuple[tuple[str, ...], str]) -> None:
    assert _srun_tasks(*case) == SRUN[case]


@pytest.mark.parametrize("case", list(BATCH), ids=lambda c: c[0])
def test_batch_and_step_gpus_like_real_slurm(case: tuple[str, str]) -> None:
    assert _batch_tasks(*case) == BATCH[case]


@pytest.mark.parametrize("case", list(BATCH_GPUS_TOTAL), ids=lambda c: c[0])
def test_steps_of_a_gpu_total_job_like_real_slurm(case: tuple[str, str]) -> None:
    assert _batch_tasks(*case) == BATCH_GPUS_TOTAL[case]


@pytest.mark.parametrize("case", list(SRUN_BIND), ids=lambda c: c[1])
def test_srun_gpu_bind_like_real_slurm(case: tuple[tuple[str, ...], str]) -> None:
    bind = re.search(r"--gpu-bind=(\S+)", case[1])
    assert bind is not None
    assert _srun_tasks(*case, gpu_bind=bind.group(1)) == SRUN_BIND[case]


@pytest.mark.parametrize("case", list(BATCH_STEP_OPTIONS), ids=lambda c: f"{c[0]}|{c[1]}")
def test_step_options_bind_like_real_slurm(case: tuple[str, str]) -> None:
    srun = parse_srun([*shlex.split(case[1]), "env"], env={}, cwd="/tmp").options
    extra = {k: v for k, v in (("gpus_per_task", srun.gpus_per_task),
                               ("gpu_bind", re.sub(r".*--gpu-bind=(\S+).*", r"\1", case[1])
                                if "--gpu-bind" in case[1] else None)) if v}
    assert _batch_tasks(*case, **extra) == BATCH_STEP_OPTIONS[case]


def test_bind_task_gpus_per_task_single_map_mask_none() -> None:
    gpus = (0, 1, 2, 3)
    assert [bind_task_gpus(gpus, t, gpus_per_task="1") for t in range(4)] == [
        (0,), (1,), (2,), (3,)]
    assert [bind_task_gpus(gpus, t, gpus_per_task="2") for t in range(2)] == [(0, 1), (2, 3)]
    assert bind_task_gpus((2, 3), 1, gpus_per_task="a100:1") == (3,)
    assert bind_task_gpus(gpus, 2, gpus_per_task="1", gpu_bind="none") is None
    assert bind_task_gpus(gpus, 1, gpus_per_task="1", gpu_bind="single:1") == (1,)
    assert bind_task_gpus(gpus, 3, gpu_bind="single:2") == (1,)
    assert bind_task_gpus(gpus, 2, gpu_bind="map_gpu:1,0") == (1,)
    assert bind_task_gpus(gpus, 1, gpu_bind="mask_gpu:0x3,0xC") == (2, 3)
    assert bind_task_gpus(gpus, 1, gpu_bind="closest") == gpus   # measured: 0,1 for both
    assert bind_task_gpus(gpus, 1, gpu_bind="verbose,per_task:1") == (1,)
    assert bind_task_gpus(gpus, 1) == gpus                        # no binding asked
    assert bind_task_gpus((), 0, gpus_per_task="1") == ()


def test_gpu_bind_none_unsets_what_srun_inherited() -> None:
    env, unset = task_gpu_environment((0, 1, 2, 3), None)
    assert env == {"SLURM_GPUS_ON_NODE": "4"}
    assert set(unset) == {*GPU_VISIBILITY_VARS, "SLURM_STEP_GPUS"}
    bound, none = task_gpu_environment((0, 1, 2, 3), (2,))
    assert none == ()
    assert bound["CUDA_VISIBLE_DEVICES"] == bound["SLURM_STEP_GPUS"] == "2"
    assert bound["SLURM_GPUS_ON_NODE"] == "4"


# ---- the same on the real cluster ---------------------------------------------------

REAL_SCRIPT = """#!/bin/bash
scontrol show job -d $SLURM_JOB_ID | grep ' Nodes=.*GRES=' > gres.txt
srun bash -c 'env | grep -E "^(CUDA_VISIBLE_DEVICES|GPU_DEVICE_ORDINAL|ROCR_VISIBLE_DEVICES|\\
ZE_AFFINITY_MASK|SLURM_STEP_GPUS|SLURM_GPUS_ON_NODE|SLURM_GPUS_PER_TASK|SLURMD_NODENAME)=" \\
| sort > step.$SLURM_PROCID.env'
"""


def _real_gres(text: str) -> str:
    """``scontrol show job -d`` per-node lines as ``node:cpus:indices``."""
    shown: list[str] = []
    for m in re.finditer(r"Nodes=(\S+) CPU_IDs=(\S+) Mem=\d+ GRES=\S+\(IDX:([\d,-]+)\)", text):
        cpus = sum(int(b or a) - int(a) + 1
                   for a, _, b in (p.partition("-") for p in m.group(2).split(",")))
        idx = [str(i) for a, _, b in (p.partition("-") for p in m.group(3).split(","))
               for i in range(int(a), int(b or a) + 1)]
        shown += [f"{node}:{cpus}:{','.join(idx)}" for node in expand(m.group(1))]
    return " ".join(shown)


@pytest.mark.realslurm
@pytest.mark.parametrize("args", ["-N2 -n4 --gpus-per-task=1", "-n2 --gpus-per-task=2",
                                  "-N2 --gpus=3"])
def test_gpu_placement_and_binding_on_both(real_slurm: RealSlurm, args: str) -> None:
    """The same job on the real cluster and on minislurm: GPUs per node and per task."""
    real_slurm.cancel_all()
    run = run_batch(real_slurm, REAL_SCRIPT, args=shlex.split(args))
    assert run.state == "COMPLETED", run.submit
    c = _cluster(())
    assert _shown(c, _allocate(c, args)) == _real_gres(run.files["gres.txt"])
    if "--gpus=" in args:
        return  # srun inside a --gpus job: ctld/step_mgr.py (test_steps_of_a_gpu_total_job...)
    steps = sorted((k for k in run.files if k.startswith("step.")),
                   key=lambda k: int(k.split(".")[1]))
    real_tasks = [_task(parse_env(run.files[k])) for k in steps]
    assert _batch_tasks(args, "")[1] == real_tasks
