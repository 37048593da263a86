"""``#SBATCH --gpu-bind=single:1`` on the wall clock: real processes, real environment.

Measured on 22.05.8 (``--nodes=1 --gres=gpu:2 --ntasks-per-node 2``): the batch step
has ``SLURM_GPU_BIND=single:1``; the plain ``srun`` inside reads it as its own
``--gpu-bind``, so task 0 sees ``CUDA_VISIBLE_DEVICES=0`` and task 1 ``1`` (and both
still see ``SLURM_GPU_BIND=single:1``).
"""

from __future__ import annotations

import pytest
from minicluster import MiniCluster, srun_works

SCRIPT = """#!/bin/bash
#SBATCH --nodes=1 --gres=gpu:2 --ntasks-per-node 2 --gpu-bind=single:1 -o out.txt
echo "batch gb=$SLURM_GPU_BIND"
srun bash -c 'echo "$SLURM_PROCID $CUDA_VISIBLE_DEVICES gb=$SLURM_GPU_BIND"' | sort
"""


def test_each_task_of_a_single_1_job_sees_one_gpu(tmp_path_factory: pytest.TempPathFactory,
                                                  ) -> None:
    if not srun_works():
        pytest.skip("minislurm srun is not available")
    mini = MiniCluster(tmp_path_factory.mktemp("gpubind"))
    mini.start_or_skip()
    try:
        work = mini.work_dir / "gb"
        work.mkdir(parents=True)
        (work / "job.sh").write_text(SCRIPT)
        res = mini.run(["sbatch", "--parsable", "job.sh"], cwd=work, timeout=30)
        assert res.rc == 0, res.stderr
        assert mini.wait_job(int(res.stdout.strip()), timeout=120) == "COMPLETED"
        assert (work / "out.txt").read_text().splitlines() == [
            "batch gb=single:1", "0 0 gb=single:1", "1 1 gb=single:1"]
    finally:
        assert mini.stop() == []
