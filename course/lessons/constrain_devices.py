"""Lesson 3: what a job's GPU variables say with and without ``ConstrainDevices=yes``.

``cgroup.conf(5)`` ``ConstrainDevices=yes`` (with ``TaskPlugin=task/cgroup`` in slurm.conf)
puts each job in a device cgroup: it can open only its own GPUs, which CUDA then numbers
from 0, so slurmd's gres/gpu plugin counts ``CUDA_VISIBLE_DEVICES`` and
``GPU_DEVICE_ORDINAL`` from 0 (gres.c ``gres_use_local_device_index``) while
``SLURM_JOB_GPUS`` keeps the node's indices. Without it (the default; the course's embedded
cluster) every variable carries the node's indices.

The same request goes to two copies of the lesson's busy cluster (the jobs of
:data:`course.lessons.gpu_layout.BUSY_JOBS`), one with each setting, and the batch step's
variables are read from minislurm's slurmd environment builder.
"""

from __future__ import annotations

import dataclasses
import shlex
from dataclasses import dataclass
from importlib import resources

from course.lessons.gpu_layout import BUSY_JOBS
from minislurm.conf import SlurmConfig, parse_cgroup_conf, parse_config
from minislurm.options.sbatch import parse_sbatch
from minislurm.sim import Cluster
from minislurm.slurmd.context import job_context
from minislurm.slurmd.env import batch_environment
from minislurm.states import JobState

__all__ = ["GpuView", "busy", "compare", "constrained_config", "format_views", "gpu_view"]

#: The slurm.conf line that makes slurmd read cgroup.conf's ``Constrain*`` settings.
TASK_CGROUP = "TaskPlugin=task/affinity,task/cgroup"
#: The cgroup.conf of a production GPU cluster (the part that matters here).
CGROUP_CONF = "ConstrainDevices=yes\n"
#: The command the compared jobs run (its length does not matter here).
COMMAND = "srun python train.py"


@dataclass(frozen=True, slots=True)
class GpuView:
    """The GPU variables of one job's batch step under one setting."""

    setting: str  # "ConstrainDevices=yes" or "ConstrainDevices=no"
    node: str
    slurm_job_gpus: str
    cuda_visible_devices: str
    gpu_device_ordinal: str


def constrained_config() -> SlurmConfig:
    """The embedded cluster with ``TaskPlugin=task/affinity,task/cgroup`` and a cgroup.conf
    saying ``ConstrainDevices=yes``."""
    etc = resources.files("minislurm") / "etc"
    text = (etc / "slurm.conf").read_text(encoding="utf-8") + f"\n{TASK_CGROUP}\n"
    gres = (etc / "gres.conf").read_text(encoding="utf-8")
    config = parse_config(text, "slurm.conf", gres, "gres.conf")
    config = dataclasses.replace(config, cgroup=parse_cgroup_conf(CGROUP_CONF, "cgroup.conf"))
    if not config.use_local_device_index:  # task/cgroup + ConstrainDevices=yes
        raise RuntimeError("minislurm did not enable ConstrainDevices for this configuration")
    return config


def busy(constrained: bool) -> Cluster:
    """The lesson's busy cluster (10 free GPUs as 2, 2, 3, 3), with or without device cgroups."""
    cluster = Cluster(constrained_config()) if constrained else Cluster()
    for args, minutes in BUSY_JOBS:
        cluster.sbatch(f"#!/bin/bash\n#SBATCH {args}\n{COMMAND}\n", runtime=minutes * 60)
    cluster.advance(60)
    return cluster


def gpu_view(cluster: Cluster, job_id: int, sbatch_args: str) -> GpuView:
    """What the batch step of running job ``job_id`` sees (slurmd's batch environment)."""
    job = cluster.controller.job(job_id)
    if job.state is not JobState.RUNNING or job.allocation is None:
        raise ValueError(f"job {job_id} is {job.state.value}, not running")
    ctx = cluster.context()
    options = parse_sbatch([*shlex.split(sbatch_args), "--wrap", COMMAND], env=ctx.env,
                           cwd=ctx.cwd, now=cluster.now).options
    local = cluster.config.use_local_device_index
    job_ctx = job_context(options, job_id=job_id, name=job.name, partition=job.partition,
                          cluster_name=cluster.config.cluster_name,
                          mem_per_cpu=job.mem_per_cpu, user=job.user, uid=job.uid,
                          gid=job.gid, account=job.account, submit_dir=job.work_dir,
                          local_device_index=local)
    env = batch_environment(job_ctx, job.allocation, base_env=ctx.env)
    return GpuView(f"ConstrainDevices={'yes' if local else 'no'}",
                   job.allocation.nodes[0].node, env.get("SLURM_JOB_GPUS", "(unset)"),
                   env.get("CUDA_VISIBLE_DEVICES", "(unset)"),
                   env.get("GPU_DEVICE_ORDINAL", "(unset)"))


def compare(sbatch_args: str = "-N1 --gres=gpu:3") -> list[GpuView]:
    """Submit ``sbatch SBATCH_ARGS`` to the busy cluster without and with device cgroups."""
    views = []
    for constrained in (False, True):
        cluster = busy(constrained)
        try:
            job_id = cluster.sbatch(f"#!/bin/bash\n#SBATCH {sbatch_args} -t 30\n{COMMAND}\n",
                                    runtime=600)
            cluster.advance(1)
            views.append(gpu_view(cluster, job_id, f"{sbatch_args} -t 30"))
        finally:
            cluster.close()
    return views


def format_views(views: list[GpuView]) -> str:
    """One row per setting: the node and the three variables."""
    rows = [("setting", "node", "SLURM_JOB_GPUS", "CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL")]
    rows += [(v.setting, v.node, v.slurm_job_gpus, v.cuda_visible_devices, v.gpu_device_ordinal)
             for v in views]
    widths = [max(len(r[c]) for r in rows) for c in range(5)]
    return "\n".join("  ".join(f"{cell:<{w}}" for cell, w in zip(r, widths, strict=True)).rstrip()
                     for r in rows)
