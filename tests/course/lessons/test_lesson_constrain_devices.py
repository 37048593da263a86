"""Lesson 3: ConstrainDevices=yes renumbers the CUDA variables from 0, SLURM_JOB_GPUS does not."""

from __future__ import annotations

import pytest

from course.lessons.constrain_devices import (
    busy,
    compare,
    constrained_config,
    format_views,
    gpu_view,
)


def test_the_constrained_config_uses_local_device_indices() -> None:
    config = constrained_config()
    assert config.use_local_device_index
    assert config.cgroup.constrain_devices


def test_same_gpus_node_indices_without_and_renumbered_with_device_cgroups() -> None:
    plain, constrained = compare("-N1 --gres=gpu:3")
    assert plain.setting == "ConstrainDevices=no" and constrained.setting == "ConstrainDevices=yes"
    # the same allocation on both copies of the busy cluster: GPUs 5-7 of one node
    assert plain.node == constrained.node
    assert plain.slurm_job_gpus == constrained.slurm_job_gpus == "5,6,7"
    assert plain.cuda_visible_devices == plain.gpu_device_ordinal == "5,6,7"
    assert constrained.cuda_visible_devices == constrained.gpu_device_ordinal == "0,1,2"


def test_table_has_one_row_per_setting() -> None:
    lines = format_views(compare("-N1 --gres=gpu:2")).splitlines()
    assert lines[0].split() == ["setting", "node", "SLURM_JOB_GPUS", "CUDA_VISIBLE_DEVICES",
                                "GPU_DEVICE_ORDINAL"]
    assert lines[1].split()[2:] == ["6,7", "6,7", "6,7"]
    assert lines[2].split()[2:] == ["6,7", "0,1", "0,1"]


def test_a_pending_job_has_no_view() -> None:
    cluster = busy(constrained=True)
    try:
        job_id = cluster.sbatch("#!/bin/bash\n#SBATCH -N1 --gres=gpu:8 -t 30\nsrun true\n",
                                runtime=60)
        cluster.advance(1)
        with pytest.raises(ValueError, match="PENDING"):
            gpu_view(cluster, job_id, "-N1 --gres=gpu:8 -t 30")
    finally:
        cluster.close()
