"""Lesson 5's billing demo: what a job costs in fair share, with and without TRESBillingWeights.

Fair-share usage is billing TRES × seconds (priority_multifactor.c ``_apply_new_usage``
charges ``job_ptr->billable_tres``).  Without ``TRESBillingWeights`` on the partition a
job's billing TRES is its CPU count, so GPUs cost nothing; with, e.g.,
``TRESBillingWeights="CPU=1.0,GRES/gpu=8.0"`` billing is the weighted sum
(``assoc_mgr_tres_weighted``).  Measured on 22.05.8: ``CPU=1.0,Mem=0.25G,GRES/gpu=4.0``
gives a 2-CPU, 2 GB, 2-GPU job ``billing=10`` (10.5 truncated).

`billing_cluster` runs the same two jobs on minislurm's embedded cluster, whose gpu
partition gets the weights given (none by default): alice's fine-tune (8 GPUs, 8 CPUs)
and bob's preprocessing (64 CPUs, no GPU), ten hours each.  `BILLING_COMMANDS` are what a
learner types to see the charge.
"""

from __future__ import annotations

from importlib import resources

from minislurm.conf import parse_config
from minislurm.sim import Cluster

__all__ = ["BILLING_COMMANDS", "GPU_WEIGHTS", "billing_cluster", "billing_conf"]

#: The weights the lesson shows: a GPU costs as much as 8 CPUs.
GPU_WEIGHTS = "CPU=1.0,GRES/gpu=8.0"

#: The commands that show each job's billing TRES and the users' usage.
BILLING_COMMANDS = (
    "sacct -a -X --format=JobID,User,JobName,Elapsed,AllocTRES%45",
    "sshare -a -o Account,User,RawShares,RawUsage,FairShare",
)

_GPU_LINE = "PartitionName=gpu "


def billing_conf(weights: str | None) -> str:
    """The embedded slurm.conf, its gpu partition with ``TRESBillingWeights=weights``."""
    text = (resources.files("minislurm") / "etc" / "slurm.conf").read_text(encoding="utf-8")
    if weights is None:
        return text
    lines = text.splitlines()
    i = next(n for n, ln in enumerate(lines) if ln.startswith(_GPU_LINE))
    lines[i] += f' TRESBillingWeights="{weights}"'
    return "\n".join(lines) + "\n"


def billing_cluster(weights: str | None = None) -> Cluster:
    """alice (8 GPUs, 8 CPUs) and bob (64 CPUs) each run ten hours on the gpu partition.

    Returns the cluster after both jobs ended (usage is charged, decayed for a few
    minutes at most).
    """
    etc = resources.files("minislurm") / "etc"
    gres = (etc / "gres.conf").read_text(encoding="utf-8")
    config = parse_config(billing_conf(weights), "slurm.conf", gres, "gres.conf")
    cluster = Cluster(config)
    job = 'sbatch -p gpu -N1 {opts} -t 10:00:00 -J {name} --wrap "sleep 36000"'
    cluster.run(job.format(opts="--gres=gpu:8 -c 8", name="finetune"), user="alice")
    cluster.run(job.format(opts="-c 64", name="preproc"), user="bob")
    cluster.advance(10 * 3600 + 120)
    return cluster
