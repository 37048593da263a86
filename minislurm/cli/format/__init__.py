"""Pure formatters: what squeue, sinfo, scontrol show and sacct print for records.

One module per command (``squeue`` with ``squeue_order``, ``sinfo``, ``scontrol``,
``sacct``), ``fields`` (the ``%``-format and ``-O`` machinery they share) and
``hostinfo`` (host facts a node daemon reports: load, free memory, OS).  Every function
takes frozen records (``minislurm.job``, ``minislurm.node``) and returns the
exact text Slurm 22.05 prints; the command modules only parse options and fetch
records.
"""

from minislurm.cli.format.hostinfo import NodeHost
from minislurm.cli.format.sacct import format_sacct
from minislurm.cli.format.scontrol import (
    format_scontrol_job,
    format_scontrol_node,
    format_scontrol_partition,
    format_scontrol_reservation,
)
from minislurm.cli.format.sinfo import format_sinfo
from minislurm.cli.format.squeue import format_squeue

__all__ = [
    "NodeHost",
    "format_sacct",
    "format_scontrol_job",
    "format_scontrol_node",
    "format_scontrol_partition",
    "format_scontrol_reservation",
    "format_sinfo",
    "format_squeue",
]
