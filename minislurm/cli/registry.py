"""The one list of minislurm's commands: which exist, where each lives, who answers it.

Read by ``python -m minislurm`` (`minislurm.__main__`), the ``bin/`` wrappers'
test, the embedded `minislurm.sim.cluster.Cluster` and the slurmctld daemon.  The
forwarded command's quick path imports this module: it imports nothing.

Slurm's clients are separate programs (src/sbatch, src/squeue, ...); here each
is a module under ``minislurm.cli`` with ``run(argv, ctx)`` and ``main(argv)``.
"""

from __future__ import annotations

#: Slurm's client commands minislurm provides, each ``minislurm.cli.<name>`` and ``bin/<name>``.
SLURM_COMMANDS = ("sbatch", "srun", "salloc", "squeue", "sinfo", "scancel", "scontrol", "sacct",
                  "sprio", "sshare", "sstat")

#: The commands slurmctld answers for its clients (``transport.run_command`` forwards them
#: over its socket) and the ones an embedded `Cluster` runs in-process.  srun and salloc
#: are not among them: they talk to the controller through allocation and step requests.
FORWARDED = ("sbatch", "squeue", "sinfo", "scancel", "scontrol", "sacct", "sprio", "sshare",
             "sstat")

#: Forwarded commands that may change the controller's state (slurmctld saves after them).
CHANGING = ("sbatch", "scancel", "scontrol")

#: minislurm's own entry points of ``python -m minislurm``: name -> module with ``main(argv)``.
TOOLS = {
    "cluster": "minislurm.cli.cluster",
    "simulate": "minislurm.sim.command",
    "slurmctld": "minislurm.daemon.slurmctld",
}


def module_of(name: str) -> str | None:
    """The module providing ``main(argv)`` for command ``name`` (None: no such command)."""
    if name in SLURM_COMMANDS:
        return f"minislurm.cli.{name}"
    return TOOLS.get(name)
