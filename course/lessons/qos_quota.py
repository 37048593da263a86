"""Lesson 5's QOS demo: a per-user GPU quota holds a job PENDING with ``QOSMaxGRESPerUser``.

The embedded cluster's QOS ``high`` has ``MaxTRESPerUser=gres/gpu=8`` (as ``sacctmgr
modify qos high set MaxTRESPerUser=gres/gpu=8`` would set it; minislurm/etc/
associations.yaml).  slurmctld checks a QOS's limits before it starts a job
(``acct_policy_job_runnable_pre_select``/``_post_select`` in acct_policy.c); a job that
would take its user past the quota stays PENDING with the reason Slurm's
``job_state_reason`` table names ``WAIT_QOS_MAX_GRES_PER_USER``: ``QOSMaxGRESPerUser``.
Another user in the same QOS is not held back, and the job starts as soon as the
user's other jobs free enough GPUs.  (On a real cluster the limits apply only with
``AccountingStorageEnforce=limits`` in slurm.conf.)
"""

from __future__ import annotations

from minislurm.sim import Cluster

__all__ = ["QUOTA_SQUEUE", "quota_cluster"]

#: ``squeue`` with the columns the lesson reads: QOS, GRES per node and the reason.
QUOTA_SQUEUE = 'squeue -o "%.5i %.6u %.5q %.8j %.2t %.12b %r"'


def quota_cluster(minutes: int = 2) -> Cluster:
    """alice runs 8 GPUs in QOS ``high`` and asks for 4 more; carol asks for 4.

    Returns the embedded cluster ``minutes`` after the three submissions: jobs 1
    (alice, 8 GPUs, one hour) and 3 (carol, 4 GPUs) run; job 2 (alice, 4 GPUs) pends
    ``QOSMaxGRESPerUser`` although a node has free GPUs.
    """
    cluster = Cluster()
    submit = 'sbatch --qos=high -p gpu -N1 --gres=gpu:{n} -t {t} -J {name} --wrap "sleep {s}"'
    cluster.run(submit.format(n=8, t="1:00:00", name="pretrain", s=3600), user="alice")
    cluster.run(submit.format(n=4, t="30:00", name="ablation", s=1800), user="alice")
    cluster.run(submit.format(n=4, t="30:00", name="vit", s=1800), user="carol")
    cluster.advance(minutes * 60)
    return cluster
