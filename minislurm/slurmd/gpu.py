"""The gres/gpu plugin's one job on a node: tell the tasks which GPUs are theirs.

Slurm's ``src/plugins/gres/gpu/gres_gpu.c`` (``gres_p_job_set_env`` for the
batch step, ``gres_p_step_set_env`` for srun steps) sets, from the indices of
the GPUs allocated on *this* node:

* ``CUDA_VISIBLE_DEVICES``, ``GPU_DEVICE_ORDINAL``, ``ROCR_VISIBLE_DEVICES``,
  ``ZE_AFFINITY_MASK`` (NVIDIA, generic, AMD and Intel runtimes): the indices
  joined with commas.  Without ``ConstrainDevices`` (task/none, as in the
  reference cluster) they are the node's global indices: a job holding GPUs 2
  and 3 sees ``CUDA_VISIBLE_DEVICES=2,3``.
* ``SLURM_JOB_GPUS`` (batch step) or ``SLURM_STEP_GPUS`` (srun step): the same
  global indices.
* ``SLURM_GPUS_ON_NODE``: how many GPUs the job/step holds on the node.

Captures: a1 (``--gres=gpu:2``: all four variables ``0,1``, ``SLURM_STEP_GPUS=0,1``,
``SLURM_GPUS_ON_NODE=2``), a2 (batch ``SLURM_JOB_GPUS=0,1``), a3
(``--gpus-per-node=1``: ``CUDA_VISIBLE_DEVICES=0``).  A job without GPUs on the
node gets none of these variables.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

__all__ = ["GPU_VISIBILITY_VARS", "gpu_environment"]

#: The runtime variables gres/gpu sets to the visible device list.
GPU_VISIBILITY_VARS = (
    "CUDA_VISIBLE_DEVICES",
    "GPU_DEVICE_ORDINAL",
    "ROCR_VISIBLE_DEVICES",
    "ZE_AFFINITY_MASK",
)


def gpu_environment(indices: Sequence[int], *, scope: Literal["job", "step"]) -> dict[str, str]:
    """The GPU variables for the GPUs ``indices`` held on one node.

    ``scope='job'`` is the batch step (``SLURM_JOB_GPUS``), ``scope='step'`` an
    srun step (``SLURM_STEP_GPUS``).

    >>> gpu_environment([1, 0], scope="step")["CUDA_VISIBLE_DEVICES"]
    '0,1'
    >>> gpu_environment([], scope="job")
    {}
    """
    if not indices:
        return {}
    listed = ",".join(str(i) for i in sorted(indices))
    env = {name: listed for name in GPU_VISIBILITY_VARS}
    env["SLURM_GPUS_ON_NODE"] = str(len(indices))
    env["SLURM_JOB_GPUS" if scope == "job" else "SLURM_STEP_GPUS"] = listed
    return env
