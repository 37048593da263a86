"""What a node daemon reports about its host, beyond the node's configuration.

``scontrol show node`` prints ``Arch=``, ``OS=``, ``CPULoad=``, ``FreeMem=`` and
``Version=``, and sinfo's ``%O``/``%e``/``%v`` print load, free memory and version;
in Slurm these come from slurmd's registration message (``uname``, ``/proc``),
not from slurm.conf.  A simulated node has no such host, so `NodeHost.simulated`
gives stable values; tests of the captures pass the captured ones.
"""

from __future__ import annotations

from dataclasses import dataclass

from minislurm import SLURM_VERSION
from minislurm.node import NodeRecord


@dataclass(frozen=True, slots=True)
class NodeHost:
    """Host facts of one node: ``free_mem`` in MB, ``cpu_load`` as ``CPULoad`` prints it."""

    arch: str = "x86_64"
    os: str = "Linux"
    cpu_load: float = 0.0
    free_mem: int | None = None
    version: str = SLURM_VERSION

    @staticmethod
    def simulated(node: NodeRecord) -> NodeHost:
        """A simulated host: load 0.00, free memory = real memory minus allocated."""
        return NodeHost(free_mem=node.real_memory - node.alloc_mem)

    def free_mem_of(self, node: NodeRecord) -> int:
        """``FreeMem`` of ``node`` on this host."""
        if self.free_mem is None:
            return node.real_memory - node.alloc_mem
        return self.free_mem


__all__ = ["SLURM_VERSION", "NodeHost"]
