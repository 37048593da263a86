"""Lesson 3: the same GPU request on a busy cluster (``--gpus`` versus per-node requests).

On an idle cluster ``--gpus=16`` lands on two whole 8-GPU nodes, but ``-G/--gpus`` only
counts GPUs for the whole job (``sbatch(1)``): on a busy cluster select/cons_tres takes
them wherever they are free, over as many nodes as it needs, while ``--gres=gpu:N`` /
``--gpus-per-node=N`` need N free GPUs on each node and pend (``Resources``) otherwise.
Each request here goes to its own fresh copy of :func:`course.lessons.gpu_layout.busy_cluster`.
"""

from __future__ import annotations

from collections.abc import Sequence

from course.lessons.gpu_layout import RequestOutcome, busy_cluster

__all__ = ["on_busy_cluster"]


def on_busy_cluster(requests: Sequence[str], time_limit: str = "30") -> list[RequestOutcome]:
    """Submit each ``sbatch`` request to its own busy cluster and report where it landed.

    An outcome's ``gpus`` lists ``(node, GPU indices)`` of the allocation (as
    ``scontrol show job -d`` prints ``GRES=...(IDX:...)``); it is empty when the job
    pends (``message`` is then ``PENDING (<reason>)``, squeue's reason) or was refused
    (``message`` is sbatch's error).
    """
    outcomes = []
    for request in requests:
        cluster = busy_cluster()
        try:
            before = {job.job_id for job in cluster.controller.jobs()}
            message = str(cluster.run(f"sbatch {request} -t {time_limit} --wrap 'srun sleep 600'"))
            cluster.advance(1)
            new = [job for job in cluster.controller.jobs() if job.job_id not in before]
            gpus: tuple[tuple[str, tuple[int, ...]], ...] = ()
            tpn = ""
            if new:
                job = new[0]
                tpn = job.tres_per_node or "N/A"
                if job.allocation is not None:
                    gpus = tuple((a.node, a.gpu_indices) for a in job.allocation.nodes)
                else:
                    message = f"{job.state.value} ({job.reason.value})"
            outcomes.append(RequestOutcome(request, message.strip(), tpn, gpus))
        finally:
            cluster.close()
    return outcomes
