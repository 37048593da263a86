"""Lesson 8's elastic-job drill: what a node failure does to a job, with and without ``-k``.

``sbatch -k`` / ``--no-kill`` (sbatch(1)): "Do not automatically terminate a job if one
of the nodes it has been allocated fails."  Without it slurmctld ends the *whole*
allocation when one node fails (``kill_running_job_by_node_name`` in job_mgr.c): every
step on every node is cancelled and the job is requeued (``--requeue``) or ends
``NODE_FAIL``.  So an elastic launcher (``torchrun --nnodes=MIN:MAX``) never gets to
shrink: its agents on the healthy nodes are killed with the rest.  With ``-k`` the job
keeps running, the failed node is removed from the allocation (``_excise_node_from_job``;
sacct logs the old allocation ``RESIZING``), and the batch script may start new steps on
the nodes that are left.

Measured on Slurm 22.05.8 (scripts/realslurm, 4 nodes): ``sbatch -k -N 2-3`` ran on
n[1-3]; with n3 set DOWN the running ``srun`` printed ``srun: error: Node failure on n3``
and ``srun: Force Terminated StepId=2.0`` (exit 137), ``scontrol show job`` then said
``NodeList=n[1-2] NumNodes=2``, the next ``srun -N 2`` ran on n[1-2] and the job ended
COMPLETED; sacct had a ``RESIZING`` row for the 3-node allocation.  Without ``-k`` the
output said ``*** JOB 1 ON n1 CANCELLED ... DUE TO NODE FAILURE ***`` and the job was
PENDING again.

`ElasticDrill` plays one of the two cases on minislurm's embedded cluster: a 4-node
training job (``--requeue``, with or without ``-k``) runs for a while, an administrator
sets one of its nodes DOWN, and `outcome` reads what Slurm's commands report.
"""

from __future__ import annotations

from dataclasses import dataclass

from minislurm.sim.cluster import Cluster, CommandResult

from .goodput import DrillStep, job_status

__all__ = ["ELASTIC_SCRIPT", "ElasticDrill", "ElasticOutcome", "elastic_script"]

#: The training job of the drill; ``{no_kill}`` is empty or ``-k``.
ELASTIC_SCRIPT = """#!/bin/bash
#SBATCH --job-name=train
#SBATCH --nodes=4 --gres=gpu:8 --exclusive
#SBATCH --time=6:00:00
#SBATCH --requeue{no_kill}
#MINISLURM runtime=3:00:00
srun python train.py --resume latest
"""

def elastic_script(no_kill: bool) -> str:
    """The drill's batch script, with ``#SBATCH --no-kill`` when ``no_kill``."""
    return ELASTIC_SCRIPT.format(no_kill=" --no-kill" if no_kill else "")


@dataclass(frozen=True, slots=True)
class ElasticOutcome:
    """What ``scontrol show job`` says after the failure.

    ``state``: JobState; ``nodes``: NodeList (empty while pending); ``restarts``:
    Restarts (1 once the job was requeued); ``node_count``: the nodes it holds now.
    """

    no_kill: bool
    state: str
    nodes: str
    node_count: int
    restarts: int

    @property
    def kept_running(self) -> bool:
        """The job survived the failure on the nodes that are left."""
        return self.state == "RUNNING" and self.restarts == 0


class ElasticDrill:
    """A 4-node ``--requeue`` job (with ``-k`` or not) loses one node.

    Call `start`, then `fail`, then read `outcome`.  ``job`` is the job id.
    """

    def __init__(self, no_kill: bool, cluster: Cluster | None = None) -> None:
        self.no_kill = no_kill
        self.cluster = cluster if cluster is not None else Cluster()
        self.job = self.cluster.sbatch(elastic_script(no_kill))
        self.failed = ""

    def _run(self, *commands: str) -> tuple[CommandResult, ...]:
        return tuple(self.cluster.run(c) for c in commands)

    def start(self, minutes: int = 30) -> DrillStep:
        """The job runs for ``minutes`` on its four nodes."""
        self.cluster.advance(minutes * 60)
        return DrillStep("the job runs", self._run("squeue", "squeue -s"))

    def fail(self, reason: str = "GPU Xid 79: fell off the bus") -> DrillStep:
        """An administrator sets the job's last node DOWN (as when a GPU dies)."""
        job = self.cluster.controller.job(self.job)
        if job.allocation is None:
            raise RuntimeError("the job must be running before its node fails")
        self.failed = job.allocation.nodes[-1].node
        down = self.cluster.run(
            f"scontrol update nodename={self.failed} state=down reason='{reason}'")
        self.cluster.advance(1)
        return DrillStep("one node goes down", (down, *self._run("squeue"), self.show_job()))

    def show_job(self) -> CommandResult:
        """``scontrol show job``, cut to the lines that say what the job holds now."""
        show = self.cluster.run(f"scontrol show job {self.job}")
        keep = ("JobState=", "Restarts=", " NodeList=")
        lines = [ln for ln in show.stdout.splitlines() if any(k in ln for k in keep)]
        return CommandResult(f"scontrol show job {self.job}  # ({len(lines)} of its lines)",
                             "\n".join(lines) + "\n", show.stderr, show.returncode)

    def outcome(self) -> ElasticOutcome:
        """The job's state, nodes and restarts as ``scontrol show job`` prints them."""
        status = job_status(self.cluster, self.job)
        job = self.cluster.controller.job(self.job)
        count = len(job.allocation.nodes) if job.allocation is not None else 0
        return ElasticOutcome(self.no_kill, status.state, status.nodes, count,
                              status.restarts)
