"""slurmctld's node records (``src/slurmctld/node_mgr.c``): states, drain, down, resume.

A node's *base* state follows from what is allocated on it (IDLE, MIXED when
some CPUs are in use, ALLOCATED when all are) unless it is DOWN; flags are set
by the administrator (``scontrol update nodename=n4 state=drain reason=...``
sets DRAIN: sinfo prints ``drng`` while jobs still run there, ``drain`` once it
is empty) or by events (NOT_RESPONDING when slurmd stops answering, shown
``down*``).  ``state=resume`` clears DRAIN and brings a DOWN node back to IDLE.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

from minislurm.common.jobarray import format_indices
from minislurm.conf import NodeConfig
from minislurm.errors import Errno, SlurmError
from minislurm.job import Allocation
from minislurm.node import NodeRecord
from minislurm.select.table import NodeTable
from minislurm.states import NodeBase, NodeFlag, NodeState

#: scontrol's refusal of state=down/drain without reason= (scontrol/update_node.c).
NEED_REASON = "You must specify a reason when DOWNING or DRAINING a node. Request denied"
#: slurmctld's refusal of a state change that does not apply (ESLURM_INVALID_NODE_STATE).
INVALID_STATE = "slurm_update error: " + Errno.ESLURM_INVALID_NODE_STATE


class NodeInfo:
    """The parts of a node that are not consumable resources (state, reason, config)."""

    def __init__(self, cfg: NodeConfig, partitions: tuple[str, ...], boot_time: int) -> None:
        self.name: str = cfg.name
        self.sockets = cfg.sockets or 1
        self.boards = cfg.boards or 1
        self.cores_per_socket = cfg.cores_per_socket or 1
        self.threads_per_core = cfg.threads_per_core or 1
        self.gres_text = ",".join(
            f"{g.name}:{g.type}:{g.count}" if g.type else f"{g.name}:{g.count}" for g in cfg.gres
        )
        self.features: tuple[str, ...] = tuple(cfg.features)
        self.node_addr = cfg.node_addr or self.name
        self.node_hostname = cfg.node_hostname or self.name
        self.port: int | None = cfg.port
        self.partitions = partitions
        self.down = False
        self.flags = NodeFlag.NONE
        self.reason = ""
        self.reason_time: int | None = None
        self.reason_user = ""
        self.boot_time = boot_time
        self.slurmd_start_time = boot_time
        self.last_busy_time = boot_time
        self.jobs: set[int] = set()
        cfg_state = (cfg.state or "").upper()
        if cfg_state in ("DOWN", "DRAIN", "FAIL"):
            self.down = cfg_state == "DOWN"
            if cfg_state == "DRAIN":
                self.flags |= NodeFlag.DRAIN
            self.reason = "Set in slurm.conf"
            self.reason_user = "slurm"
            self.reason_time = boot_time


#: The flags that keep a node from new jobs besides DOWN (``IS_NODE_DRAIN``/``IS_NODE_FAIL``).
_NOT_FOR_JOBS = NodeFlag.DRAIN | NodeFlag.FAIL
#: Their bits: `_accepts_jobs` tests them on the flags' integer value (``_value_``), as
#: node_mgr.c tests ``node_state & NODE_STATE_DRAIN``; ``Flag.__and__`` builds a flag
#: object per test (about 1.5 us, twice per node failure and repair).
_NOT_FOR_JOBS_BITS = _NOT_FOR_JOBS.value
_NOT_RESPONDING_BITS = NodeFlag.NOT_RESPONDING.value


def _accepts_jobs(info: NodeInfo) -> bool:
    """Neither DOWN nor DRAIN nor FAIL."""
    return not (info.down or info.flags._value_ & _NOT_FOR_JOBS_BITS)


@functools.cache
def _flag_of(value: int) -> NodeFlag:
    """``NodeFlag(value)``: the flags of these bits (a pure function of the integer, so
    the cache never goes stale; at most one entry per combination of flags in use)."""
    return NodeFlag(value)


def _with_bits(flags: NodeFlag, add: int = 0, clear: int = 0) -> NodeFlag:
    """``(flags | add) & ~clear`` on the flags' bits: the same `NodeFlag` as the operators
    give, without building the operands' flag objects (a node failure and its repair
    set and clear NOT_RESPONDING: ``Flag.__or__`` costs about 1.5 us)."""
    return _flag_of((flags._value_ | add) & ~clear)


class NodeManager:
    """All nodes: their consumable resources (``table``) and their states."""

    def __init__(self, table: NodeTable, infos: Sequence[NodeInfo]) -> None:
        self.table = table
        self.infos = list(infos)
        self.by_name = {n.name: n for n in self.infos}
        #: when slurmctld started (the phase of its 5-s reservation checks)
        self.origin = self.infos[0].boot_time if self.infos else 0
        #: node index -> (reserved, maint) from active reservations (set by the controller)
        self.resv_flags: Callable[[int], tuple[bool, bool]] | None = None
        self.refresh_usable()

    def refresh_usable(self, i: int | None = None) -> None:
        """Recompute which nodes accept new jobs (not DOWN, DRAIN or FAIL): slurmctld's
        ``avail_node_bitmap``, whose bit node_mgr.c sets or clears for one node as its
        state changes (``make_node_avail``, ``set_node_down``).  Node ``i`` only when
        only its state changed (a failure, repair or update of one node), else all."""
        usable = self.table.usable
        if i is not None:
            usable[i] = _accepts_jobs(self.infos[i])
            return
        for k, info in enumerate(self.infos):
            usable[k] = _accepts_jobs(info)

    def state_of(self, i: int) -> NodeState:
        """The node's base state + flags as Slurm reports them."""
        info = self.infos[i]
        t = self.table
        if info.down:
            base = NodeBase.DOWN
        elif t.njobs[i] == 0:
            base = NodeBase.IDLE
        elif t.free_cpu[i] == 0:
            base = NodeBase.ALLOCATED
        else:
            base = NodeBase.MIXED
        flags = info.flags
        if self.resv_flags is not None:
            reserved, maint = self.resv_flags(i)
            if reserved:
                flags |= NodeFlag.RESERVED
            if maint:
                flags |= NodeFlag.MAINTENANCE
        return NodeState(base, flags)

    def names(self, expr_names: Sequence[str]) -> list[int]:
        """Indices of the named nodes; unknown names raise scontrol's error."""
        out = []
        for name in expr_names:
            if name not in self.table.index:
                raise SlurmError("slurm_update error: " + Errno.ESLURM_INVALID_NODE_NAME, 1)
            out.append(self.table.index[name])
        return out

    def set_state(self, i: int, state: str, reason: str, user: str, now: int) -> bool:
        """``scontrol update nodename=... state=STATE reason=...``; True if jobs must die.

        As ``update_node`` in 22.05.8's node_mgr.c (measured on the reference cluster):
        a non-empty ``reason`` is stored with user and time first, then the state must
        be a valid change (``_valid_node_state_change``: RESUME only for a DOWN, DRAIN or
        FAIL node, IDLE only for a DOWN or IDLE one) or the request fails with
        ``slurm_update error: Invalid node state specified``.  At the end a node that
        is neither DOWN, DRAIN nor FAIL loses its reason (``clusteracct_storage_g_node_up``),
        so ``reason=`` alone only changes the reason of a drained/down node.  ``state=""``
        changes only the reason.
        """
        info = self.infos[i]
        state = state.upper()
        kill = False
        if state in ("DOWN", "DRAIN", "FAIL") and not reason:
            raise SlurmError(NEED_REASON, 1)
        if reason:
            info.reason, info.reason_user, info.reason_time = reason, user, now
        base = self.state_of(i).base
        drain_fail = bool(info.flags & (NodeFlag.DRAIN | NodeFlag.FAIL))
        if state == "DOWN":
            info.down = True
            kill = bool(info.jobs)
        elif state == "DRAIN":
            info.flags &= ~NodeFlag.FAIL
            info.flags |= NodeFlag.DRAIN
        elif state == "FAIL":
            info.flags &= ~NodeFlag.DRAIN
            info.flags |= NodeFlag.FAIL
        elif state == "RESUME":
            if not (info.down or drain_fail):
                raise SlurmError(INVALID_STATE, 1)
            info.down = False
            info.flags &= ~(NodeFlag.DRAIN | NodeFlag.FAIL | NodeFlag.NOT_RESPONDING)
        elif state == "IDLE":
            if not (info.down or base is NodeBase.IDLE):
                raise SlurmError(INVALID_STATE, 1)
            info.down = False
            info.flags &= ~(NodeFlag.DRAIN | NodeFlag.FAIL | NodeFlag.NOT_RESPONDING)
        elif state == "UNDRAIN":
            info.flags &= ~NodeFlag.DRAIN
        elif state:
            raise SlurmError(INVALID_STATE, 1)
        if _accepts_jobs(info):  # nothing left that a reason explains
            info.reason, info.reason_user, info.reason_time = "", "", None
        self.refresh_usable(i)
        return kill

    def fail(self, i: int, now: int, reason: str = "Not responding") -> None:
        """slurmd stopped answering: DOWN + NOT_RESPONDING (``down*``)."""
        info = self.infos[i]
        info.down = True
        info.flags = _with_bits(info.flags, add=_NOT_RESPONDING_BITS)  # |= NOT_RESPONDING
        info.reason, info.reason_user, info.reason_time = reason, "slurm", now
        self.refresh_usable(i)

    def repair(self, i: int, now: int, return_to_service: int) -> None:
        """slurmd registers again; with ReturnToService=1 a node DOWN for no answer returns."""
        info = self.infos[i]
        info.flags = _with_bits(info.flags, clear=_NOT_RESPONDING_BITS)  # &= ~NOT_RESPONDING
        info.slurmd_start_time = now
        info.boot_time = now
        if return_to_service >= 1 and info.reason == "Not responding":
            info.down = False
            info.reason, info.reason_user, info.reason_time = "", "", None
        self.refresh_usable(i)

    def allocate(self, job_id: int, alloc: Allocation, now: int) -> None:
        """Record a job's allocation on its nodes."""
        infos = self.infos
        for i in self.table.allocate(alloc):
            info = infos[i]
            info.jobs.add(job_id)
            info.last_busy_time = now

    def release(self, job_id: int, alloc: Allocation, now: int) -> None:
        """Give a job's resources back."""
        infos = self.infos
        for i in self.table.release(alloc):
            info = infos[i]
            info.jobs.discard(job_id)
            info.last_busy_time = now

    def snapshot(self, i: int) -> NodeRecord:
        """The ``NodeRecord`` of node ``i``."""
        info, t = self.infos[i], self.table
        gpu_used = t.gpu_used_indices(i)
        shape = t.shapes[i]
        used_parts = []
        for gtype, total in shape.gpus:
            idx = [k for tt, k in gpu_used if tt == gtype]
            head = f"gpu:{gtype}" if gtype else "gpu"
            if total:
                used_parts.append(f"{head}:{len(idx)}(IDX:{format_indices(idx) or 'N/A'})")
        return NodeRecord(
            name=info.name,
            state=self.state_of(i),
            cpus=int(t.cpus[i]),
            alloc_cpus=int(t.cpus[i] - t.free_cpu[i]),
            real_memory=int(t.mem[i]),
            alloc_mem=int(t.mem[i] - t.free_mem[i]),
            sockets=info.sockets,
            boards=info.boards,
            cores_per_socket=info.cores_per_socket,
            threads_per_core=info.threads_per_core,
            gres=info.gres_text,
            gpus_total=int(t.gpus[i]),
            gpus_used=int(t.gpus[i] - t.free_gpu[i]),
            gres_used=",".join(used_parts),
            partitions=info.partitions,
            reason=info.reason,
            reason_time=info.reason_time,
            reason_user=info.reason_user,
            features=info.features,
            weight=int(t.weight[i]),
            node_addr=info.node_addr,
            node_hostname=info.node_hostname,
            port=info.port,
            boot_time=info.boot_time,
            slurmd_start_time=info.slurmd_start_time,
            last_busy_time=info.last_busy_time,
            jobs=tuple(sorted(info.jobs)),
        )


__all__ = ["INVALID_STATE", "NEED_REASON", "NodeInfo", "NodeManager"]
