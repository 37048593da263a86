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

An srun task may be *bound* to some of its node's GPUs (``gres_p_task_set_env``
with ``--gpu-bind``; ``--gpus-per-task=N`` implies ``--gpu-bind=per_task:N``):
:func:`bind_task_gpus` picks them and :func:`task_gpu_environment` shows only
those in the four visibility variables and ``SLURM_STEP_GPUS``, while
``SLURM_GPUS_ON_NODE`` still counts the step's GPUs on the node.  Measured on
real 22.05.8 (tests/minislurm/select/test_gpu_placement.py): ``srun -n4 --gpus-per-task=1`` gives
task *k* ``CUDA_VISIBLE_DEVICES=k`` and ``SLURM_GPUS_ON_NODE=4``;
``--gpu-bind=none`` removes the visibility variables and ``SLURM_STEP_GPUS``
altogether (even those srun inherited from the batch step).

With ``ConstrainDevices=yes`` in cgroup.conf and ``TaskPlugin=task/cgroup``
(``gres_use_local_device_index``; ``local=True`` here) the device cgroup hides the
other GPUs, so the four visibility variables number the job's (step's, task's) GPUs
from 0 in the order of the node's indices (``common_gres_set_env``'s local list),
while ``SLURM_JOB_GPUS``/``SLURM_STEP_GPUS`` keep the node's indices (its global list):
a job holding GPUs 2 and 3 sees ``CUDA_VISIBLE_DEVICES=0,1``, ``SLURM_JOB_GPUS=2,3``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

__all__ = [
    "GPU_VISIBILITY_VARS",
    "bind_task_gpus",
    "gpu_environment",
    "task_gpu_environment",
]

#: The runtime variables gres/gpu sets to the visible device list.
GPU_VISIBILITY_VARS = (
    "CUDA_VISIBLE_DEVICES",
    "GPU_DEVICE_ORDINAL",
    "ROCR_VISIBLE_DEVICES",
    "ZE_AFFINITY_MASK",
)


def gpu_environment(
    indices: Sequence[int], *, scope: Literal["job", "step"], local: bool = False,
    visible: Sequence[int] | None = None,
) -> dict[str, str]:
    """The GPU variables for the GPUs ``indices`` held on one node.

    ``scope='job'`` is the batch step (``SLURM_JOB_GPUS``), ``scope='step'`` an
    srun step (``SLURM_STEP_GPUS``). ``local``: ``ConstrainDevices`` renumbering;
    ``visible`` the local numbers to show (default ``0..len(indices)-1``).

    >>> gpu_environment([1, 0], scope="step")["CUDA_VISIBLE_DEVICES"]
    '0,1'
    >>> gpu_environment([3, 2], scope="job", local=True)["CUDA_VISIBLE_DEVICES"]
    '0,1'
    >>> gpu_environment([], scope="job")
    {}
    """
    if not indices:
        return {}
    listed = ",".join(str(i) for i in sorted(indices))
    shown = listed
    if local:
        numbers = range(len(indices)) if visible is None else visible
        shown = ",".join(str(i) for i in numbers)
    env = {name: shown for name in GPU_VISIBILITY_VARS}
    env["SLURM_GPUS_ON_NODE"] = str(len(indices))
    env["SLURM_JOB_GPUS" if scope == "job" else "SLURM_STEP_GPUS"] = listed
    return env


def _gpu_count(text: str | None) -> int | None:
    """The count of ``--gpus-per-task``-style text (``2``, ``a100:2``); ``None`` if absent."""
    if not text:
        return None
    count = text.rsplit(":", 1)[-1]
    return int(count) if count.isdigit() and int(count) > 0 else None


def _bind_spec(gpu_bind: str | None) -> str | None:
    """``--gpu-bind`` without its ``verbose`` flag (``verbose,per_task:1`` -> ``per_task:1``)."""
    if not gpu_bind:
        return None
    parts = [p for p in gpu_bind.split(",") if p.strip().lower() != "verbose"]
    return ",".join(parts).strip() or None


def _valid(spec: str) -> bool:
    """Whether minislurm models the binding ``spec`` (srun rejects the others before
    any task starts: ``--gpu-bind=bogus`` -> ``srun: error: Invalid --gpu-bind
    argument: gpu:bogus``, exit 255, measured on 22.05.8)."""
    kind, _, arg = spec.partition(":")
    kind = kind.lower()
    if kind in ("none", "closest"):
        return True
    if kind in ("per_task", "single"):
        return arg.isdigit() and int(arg) > 0
    if kind == "map_gpu":
        return bool(arg) and all(x.isdigit() for x in arg.split(","))
    if kind == "mask_gpu":
        return bool(arg) and all(_hex(x) is not None for x in arg.split(","))
    return False


def _hex(text: str) -> int | None:
    try:
        return int(text, 16)
    except ValueError:
        return None


def bind_task_gpus(
    node_gpus: Sequence[int],
    local_id: int,
    *,
    gpus_per_task: str | None = None,
    gpu_bind: str | None = None,
) -> tuple[int, ...] | None:
    """The GPUs local task ``local_id`` sees of its step's ``node_gpus`` (global indices).

    ``gpu_bind`` is ``--gpu-bind`` (``None`` = not given); ``gpus_per_task`` the
    ``--gpus-per-task`` text, which implies ``per_task:N`` when ``--gpu-bind`` is
    not given.  Returns ``None`` for ``--gpu-bind=none`` (no visibility variables
    at all) and all of ``node_gpus`` when nothing binds.  ``per_task:N``: the
    ``N`` GPUs after the first ``local_id x N`` (task 1 of ``-n4
    --gpus-per-task=1`` sees GPU 1, the second GPU of the step on a busy node);
    ``single:N``: one GPU shared by ``N`` consecutive tasks; ``map_gpu:i,j``: GPU
    ``i`` for local task 0, ``j`` for 1, and so on round the list; ``mask_gpu``: the
    bits of the task's mask (bit *b* = the node's GPU *b*).  ``closest`` keeps all
    (no topology here; ``srun -n2 --gpus-per-task=1 --gpu-bind=closest`` shows
    ``0,1`` to both tasks on 22.05.8), and so does a value minislurm does not model.

    >>> bind_task_gpus([0, 1, 2, 3], 2, gpus_per_task="1")
    (2,)
    >>> bind_task_gpus([2, 3], 1, gpus_per_task="1")
    (3,)
    >>> bind_task_gpus([0, 1, 2, 3], 1, gpus_per_task="2")
    (2, 3)
    >>> bind_task_gpus([0, 1, 2, 3], 1, gpus_per_task="1", gpu_bind="none") is None
    True
    >>> bind_task_gpus([0, 1, 2, 3], 0, gpu_bind="map_gpu:1,0")
    (1,)
    """
    gpus = tuple(sorted(node_gpus))
    spec = _bind_spec(gpu_bind)
    if spec is None:
        per_task = _gpu_count(gpus_per_task)
        spec = f"per_task:{per_task}" if per_task else None
    if spec is None or not gpus or not _valid(spec):
        return gpus
    kind, _, arg = spec.partition(":")
    kind = kind.lower()
    if kind == "none":
        return None
    if kind == "per_task":
        n = int(arg)
        return tuple(gpus[(local_id * n + k) % len(gpus)] for k in range(min(n, len(gpus))))
    if kind == "single":
        return (gpus[(local_id // int(arg)) % len(gpus)],)
    if kind == "map_gpu":
        ids = [int(x) for x in arg.split(",")]
        chosen = ids[local_id % len(ids)]
        return (chosen,) if chosen in gpus else gpus
    if kind == "mask_gpu":
        masks = [_hex(x) or 0 for x in arg.split(",")]
        mask = masks[local_id % len(masks)]
        picked = tuple(g for g in gpus if mask >> g & 1)
        return picked or gpus
    return gpus  # closest: no topology to be close to


def task_gpu_environment(
    node_gpus: Sequence[int], bound: Sequence[int] | None, *, local: bool = False
) -> tuple[dict[str, str], tuple[str, ...]]:
    """An srun task's GPU variables when :func:`bind_task_gpus` gave ``bound``.

    Returns the variables to set and those to remove (the inherited ones that
    ``--gpu-bind=none`` unsets).  ``SLURM_GPUS_ON_NODE`` counts the step's GPUs on
    the node, whatever the binding. ``local`` (``ConstrainDevices``): the visibility
    variables give each bound GPU's position among the step's GPUs on the node.

    >>> task_gpu_environment([2, 3], [3], local=True)[0]["CUDA_VISIBLE_DEVICES"]
    '1'

    >>> task_gpu_environment([0, 1, 2, 3], [1])[0]["SLURM_STEP_GPUS"]
    '1'
    >>> task_gpu_environment([0, 1], None)
    ({'SLURM_GPUS_ON_NODE': '2'}, ('CUDA_VISIBLE_DEVICES', 'GPU_DEVICE_ORDINAL', \
'ROCR_VISIBLE_DEVICES', 'ZE_AFFINITY_MASK', 'SLURM_STEP_GPUS'))
    """
    if not node_gpus:
        # gres/gpu's step_set_env for a step without GPUs on the node: measured on
        # 22.05.8, ``srun env`` in ``sbatch --exclusive`` (batch: CUDA_VISIBLE_DEVICES=
        # 0,1,2,3, SLURM_GPUS_ON_NODE=4) and ``CUDA_VISIBLE_DEVICES=7 srun env`` show
        # neither; SLURM_JOB_GPUS stays.
        return {}, (*GPU_VISIBILITY_VARS, "SLURM_STEP_GPUS", "SLURM_GPUS_ON_NODE")
    if bound is None:
        unset = (*GPU_VISIBILITY_VARS, "SLURM_STEP_GPUS")
        return {"SLURM_GPUS_ON_NODE": str(len(node_gpus))}, unset
    order = sorted(node_gpus)
    visible = [order.index(g) for g in sorted(bound)] if local else None
    env = gpu_environment(bound, scope="step", local=local, visible=visible)
    env["SLURM_GPUS_ON_NODE"] = str(len(node_gpus))
    return env, ()
