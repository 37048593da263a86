"""``--cpus-per-gpu``: the CPUs a GPU job gets, as real Slurm 22.05.8 gives them.

Measured on a real 22.05.8 cluster configured like the reference one (``scripts/realslurm``:
n[1-4], 4 CPUs, 4000 MB, 4 a100 each, DefMemPerCPU=1000); minislurm ignored the option
(``sbatch --gpus=2 --cpus-per-gpu=2`` got 1 CPU, real Slurm 4).  The ``real_slurm`` test
at the end replays the jobs on both clusters (it skips when real Slurm cannot start here).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from captures import capture_root
from minicluster import ClusterNotIdle, MiniCluster, leftovers, partitions, run_case, wait_idle
from realslurm import RealSlurm

from minislurm.sim import Cluster


def _conf() -> Path:
    root = capture_root()
    if root is None:
        pytest.skip("slurm-reference captures not found (../shared/slurm-reference)")
    return root / "slurm.conf"


#: sbatch options -> (node:CPUs:GPUs per allocated node, scontrol NumCPUs), real 22.05.8
#: (SLURM_JOB_CPUS_PER_NODE and ``scontrol show job``'s NumCPUs/TRES).
ALLOCATED = {
    "--gpus=2 --cpus-per-gpu=2": ("n1:4:2", 4),  # SLURM_TASKS_PER_NODE=4
    "-N2 --gpus-per-node=2 --cpus-per-gpu=2": ("n1:4:2 n2:4:2", 8),
    "-n2 --gpus=2 --cpus-per-gpu=1": ("n1:2:2", 2),
    "--gpus=3 --cpus-per-gpu=2": ("n1:4:2 n2:2:1", 6),  # 6 CPUs do not fit one node
    "-n2 --gpus-per-task=1 --cpus-per-gpu=2": ("n1:4:2", 4),
    "--gres=gpu:1 --cpus-per-gpu=3": ("n1:3:1", 3),
    "-N2 -n4 --gpus-per-node=1 --cpus-per-gpu=3": ("n1:3:1 n2:3:1", 6),  # 3(x2), 2 tasks each
}


@pytest.mark.parametrize("args", list(ALLOCATED))
def test_cpus_per_gpu_sizes_the_allocation(args: str) -> None:
    c = Cluster(_conf())
    jid = c.sbatch("#!/bin/bash\nsleep 60\n", *shlex.split(args), runtime=60)
    c.advance(1)
    job = c.controller.job(jid)
    assert job.allocation is not None, job.reason
    shown = " ".join(f"{n.node}:{n.cpus}:{len(n.gpu_indices)}" for n in job.allocation.nodes)
    assert (shown, job.allocation.num_cpus) == ALLOCATED[args]
    c.controller.table.check()


def test_cpus_per_gpu_beyond_a_node_is_a_node_configuration_error() -> None:
    """Real 22.05.8: ``sbatch --gres=gpu:2 --cpus-per-gpu=3`` (6 CPUs on 4-CPU nodes) ->
    only ``Requested node configuration is not available``, exit 1 (no ``CPU count per
    node`` or ``Memory specification`` line)."""
    r = Cluster(_conf()).run("sbatch --gres=gpu:2 --cpus-per-gpu=3 --wrap true")
    assert (r.stdout, r.stderr, r.returncode) == (
        "", "sbatch: error: Batch job submission failed: Requested node configuration is "
        "not available\n", 1)


# ----- replayed on real Slurm -------------------------------------------------------------------
SHOW = ("env | grep -E '^SLURM_(JOB_CPUS_PER_NODE|CPUS_ON_NODE|TASKS_PER_NODE|NODELIST)=' "
        "| sort; scontrol show job $SLURM_JOB_ID | grep -oE '(NumCPUs|TRES)=[^ ]*'")
REPLAYED = {
    "gpus-2": "sbatch --wait --gpus=2 --cpus-per-gpu=2 job.sh",
    "gpus-per-node": "sbatch --wait -N2 --gpus-per-node=2 --cpus-per-gpu=2 job.sh",
    "gpus-3-two-nodes": "sbatch --wait --gpus=3 --cpus-per-gpu=2 job.sh",
    "gpus-per-task": "sbatch --wait -n2 --gpus-per-task=1 --cpus-per-gpu=2 job.sh",
    "srun-tasks-and-gpus-per-node": ("srun -N2 -n4 --gpus-per-node=1 --cpus-per-gpu=3 bash -c "
                                     "'echo $SLURM_JOB_CPUS_PER_NODE $SLURM_CPUS_ON_NODE "
                                     "$SLURM_TASKS_PER_NODE' | sort -u > out.txt"),
    "srun-gpus-1": f"srun --gpus=1 --cpus-per-gpu=3 bash -c {shlex.quote(SHOW)} > out.txt",
    "too-many-cpus": "sbatch --gres=gpu:2 --cpus-per-gpu=3 job.sh",
}


@pytest.fixture
def idle_clusters(real_slurm: RealSlurm, mini_slurm: MiniCluster) -> None:
    """Both clusters idle before a case (waiting for the previous case's job to finish
    completing): where a job goes and how many CPUs it gets depend on every node being
    free. A job an earlier test file left fails the case here, named, not as a diff."""
    for name, side in (("real Slurm", real_slurm), ("minislurm", mini_slurm)):
        try:
            wait_idle(side, timeout=30, what=f"{name} before the case")
        except ClusterNotIdle as exc:
            busy = str(exc)
        else:
            continue
        pytest.fail(busy, pytrace=False)


@pytest.mark.realslurm
@pytest.mark.parametrize("case", sorted(REPLAYED))
@pytest.mark.usefixtures("idle_clusters")
def test_same_cpus_per_gpu_allocations_as_real_slurm(
    real_slurm: RealSlurm, mini_slurm: MiniCluster, case: str
) -> None:
    script = f"#!/bin/bash\n{SHOW}\n"
    real, mini = (run_case(side, REPLAYED[case], folder=f"fidelity-cpg-{case}",
                           files={"job.sh": script}, timeout=90)
                  for side in (real_slurm, mini_slurm))
    assert real.result == mini.result
    assert real.files == mini.files


# ----- the session's minislurm cluster between test files -----------------------------------
#: What ``gpus-2`` prints on a free cluster (real 22.05.8 and minislurm alike).
GPUS_2_ON_A_FREE_CLUSTER = (
    "SLURM_CPUS_ON_NODE=4\nSLURM_JOB_CPUS_PER_NODE=4\nSLURM_NODELIST=n1\n"
    "SLURM_TASKS_PER_NODE=4\nNumCPUs=4\nTRES=cpu=4,mem=4000M,node=1,billing=4,gres/gpu=2\n")


def test_a_job_left_by_an_earlier_file_is_gone_after_reset(mini_slurm: MiniCluster) -> None:
    """CI (4 xdist workers): a job another file left running on n1 (1 CPU) made minislurm
    split ``gpus-2`` over n[1-2], 2 CPUs each, where real Slurm (reset after each file)
    gave n1 4 CPUs. ``MiniCluster.reset`` (run after each file by tests/conftest.py) ends
    such a job, and the allocation is the free cluster's again."""
    left = mini_slurm.run("sbatch -w n1 --wrap 'sleep 300'")
    assert left.rc == 0, left
    job = left.stdout.split()[-1]
    with pytest.raises(ClusterNotIdle, match=rf"jobs: {job} (PENDING|RUNNING)"):
        wait_idle(mini_slurm, timeout=1)
    mini_slurm.reset()
    run = run_case(mini_slurm, REPLAYED["gpus-2"], folder="fidelity-cpg-after-reset",
                   files={"job.sh": f"#!/bin/bash\n{SHOW}\n"}, timeout=90)
    assert run.files == {"slurm-1.out": GPUS_2_ON_A_FREE_CLUSTER}


def test_reset_restores_jobs_reservations_nodes_and_partitions(mini_slurm: MiniCluster) -> None:
    """Everything a test file can leave: a running and a held job, a reservation, a drained
    and a down node, a partition set DOWN; after ``reset`` none is left and the controller
    reports every node ``idle`` and every partition as at start."""
    for cmd in ("sbatch -N2 --wrap 'sleep 300'",
                "sbatch -H --wrap true",
                "scontrol create reservation starttime=now duration=10 nodes=n3 users=root",
                "scontrol update nodename=n4 state=drain reason=left-by-a-test",
                "scontrol update partitionname=short state=down"):
        res = mini_slurm.run(cmd)
        assert res.rc == 0, (cmd, res)
    before = leftovers(mini_slurm, mini_slurm.partitions_at_start)
    assert {j.state for j in before.jobs} >= {"PENDING"}, before
    assert before.reservations and before.partitions, before
    assert dict(before.nodes).get("n4", "").startswith("dr"), before
    mini_slurm.reset()
    after = leftovers(mini_slurm, mini_slurm.partitions_at_start)
    assert after.idle, after.describe()
    assert partitions(mini_slurm) == mini_slurm.partitions_at_start
    down = mini_slurm.run("scontrol update nodename=n2 state=down reason=drill")
    assert down.rc == 0, down
    mini_slurm.reset()
    assert leftovers(mini_slurm).idle


def test_reset_names_what_it_cannot_undo(mini_slurm: MiniCluster) -> None:
    """A leftover reset cannot end within its timeout is named in the error (here a
    partition field reset does not set: the start table is altered for the test)."""
    saved = mini_slurm.partitions_at_start
    mini_slurm.partitions_at_start = {
        **saved, "debug": {**saved["debug"], "MaxTime": "00:01:00"}}
    try:
        with pytest.raises(ClusterNotIdle, match=r"partitions changed: "
                           r"debug MaxTime=01:00:00 \(was 00:01:00\)"):
            mini_slurm.reset(timeout=1)
    finally:
        mini_slurm.partitions_at_start = saved


LEAVES_A_JOB = """
def test_leaves_a_job(mini_slurm):
    assert mini_slurm.run("sbatch -w n1 --wrap 'sleep 300'").rc == 0
"""
FINDS_THE_CLUSTER_IDLE = """
from minicluster import leftovers

def test_finds_the_cluster_idle(mini_slurm):
    left = leftovers(mini_slurm, mini_slurm.partitions_at_start)
    assert left.idle, left.describe()
"""


@pytest.mark.usefixtures("mini_slurm")  # skips (with the reason) where it cannot start
def test_each_file_finds_the_session_cluster_idle(tmp_path: Path) -> None:
    """tests/conftest.py resets ``mini_slurm`` after each file that used it: in one pytest
    session (its own cluster), a file that leaves a job running, then a file that needs
    the cluster idle."""
    (tmp_path / "test_1_leaves.py").write_text(LEAVES_A_JOB)
    (tmp_path / "test_2_finds.py").write_text(FINDS_THE_CLUSTER_IDLE)
    tests = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join((str(tests), str(tests.parent)))}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "conftest", "-p", "no:cacheprovider",
         "-p", "no:xdist", "-q", "test_1_leaves.py", "test_2_finds.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "2 passed" in proc.stdout, proc.stdout[-3000:]
