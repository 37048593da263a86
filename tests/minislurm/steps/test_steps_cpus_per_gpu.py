"""``--cpus-per-gpu``: the CPUs a GPU job gets, as real Slurm 22.05.8 gives them.

Measured on a real 22.05.8 cluster configured like the reference one (``scripts/realslurm``:
n[1-4], 4 CPUs, 4000 MB, 4 a100 each, DefMemPerCPU=1000); minislurm ignored the option
(``sbatch --gpus=2 --cpus-per-gpu=2`` got 1 CPU, real Slurm 4).  The ``real_slurm`` test
at the end replays the jobs on both clusters (it skips when real Slurm cannot start here).
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from captures import capture_root
from minicluster import MiniCluster, run_case
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


@pytest.mark.realslurm
@pytest.mark.parametrize("case", sorted(REPLAYED))
def test_same_cpus_per_gpu_allocations_as_real_slurm(
    real_slurm: RealSlurm, mini_slurm: MiniCluster, case: str
) -> None:
    script = f"#!/bin/bash\n{SHOW}\n"
    real, mini = (run_case(side, REPLAYED[case], folder=f"fidelity-cpg-{case}",
                           files={"job.sh": script}, timeout=90)
                  for side in (real_slurm, mini_slurm))
    assert real.result == mini.result
    assert real.files == mini.files
