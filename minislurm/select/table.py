"""The consumable-resource table select/cons_tres works on (one row per node).

Slurm's cons_tres keeps, per node, the cores, memory and GRES in use
(``node_use_record``/``gres_list``).  Here the counts live in numpy vectors so
that "which nodes could host 2 GPUs + 8 CPUs now?" is one vectorised test over
1,000 nodes; GPU *indices* are kept per node so that the allocation says which
devices a job got (``CUDA_VISIBLE_DEVICES``), as gres/gpu does.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from operator import attrgetter

import numpy as np
import numpy.typing as npt

from minislurm.job import Allocation, NodeAlloc

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True, slots=True)
class NodeShape:
    """What a node has (from ``NodeName=... CPUs= RealMemory= Gres= Weight=``).

    ``gpus`` maps a GPU type (``None`` when untyped) to its count on the node;
    indices are numbered across types in that order (gres.conf's File= order).
    """

    name: str
    cpus: int
    real_memory: int
    gpus: tuple[tuple[str | None, int], ...] = ()
    weight: int = 1


#: From this many nodes on, an allocation updates the free counts as vectors.
_VECTOR_NODES = 32


#: A ``NodeAlloc``'s node, CPU ids, CPUs and memory (``map`` over an allocation's nodes
#: without a Python loop).
_NODE, _CPU_IDS = attrgetter("node"), attrgetter("cpu_ids")
_CPUS, _MEM = attrgetter("cpus"), attrgetter("mem_mb")


#: The numbers of ``NodeTable.version``: one sequence for every table, so that no two
#: states of any two tables share a number.
_VERSIONS = itertools.count(1)


def _gpu_index(g: tuple[str | None, int]) -> int:
    return g[1]


@dataclass(frozen=True, slots=True)
class _Large:
    """A large allocation as `NodeTable._count` applies it: its node indices (a list and
    an array), the CPUs and MB of each node, and whether it holds every CPU id of each
    of its nodes (`NodeTable._whole_nodes`).  Kept from the job's start to its end, so
    that the release reads none of its hundreds of nodes again (a ``--procs`` job)."""

    alloc: Allocation
    idx: list[int]
    vec: IntArray
    cpus: IntArray
    mems: IntArray
    whole: bool


class NodeTable:
    """Total and free CPUs, memory and GPUs of every node, plus the GPU indices in use."""

    def __init__(self, shapes: Sequence[NodeShape]) -> None:
        self.shapes = tuple(shapes)
        self.names = [s.name for s in shapes]
        self.index = {s.name: i for i, s in enumerate(shapes)}
        n = len(shapes)
        self.cpus: IntArray = np.array([s.cpus for s in shapes], dtype=np.int64)
        self.mem: IntArray = np.array([s.real_memory for s in shapes], dtype=np.int64)
        self.weight: IntArray = np.array([s.weight for s in shapes], dtype=np.int64)
        types = sorted({t for s in shapes for t, _ in s.gpus if t is not None})
        self.gpu_types: tuple[str, ...] = tuple(types)
        self.gpus: IntArray = np.array([sum(c for _, c in s.gpus) for s in shapes], dtype=np.int64)
        self.gpu_total = int(self.gpus.sum())  # no GPU anywhere: the GPU counts stay 0
        self.gpus_typed: dict[str, IntArray] = {
            t: np.array([sum(c for tt, c in s.gpus if tt == t) for s in shapes], dtype=np.int64)
            for t in types
        }
        self.free_cpu: IntArray = self.cpus.copy()
        self.free_mem: IntArray = self.mem.copy()
        self.free_gpu: IntArray = self.gpus.copy()
        self.free_gpu_typed: dict[str, IntArray] = {t: a.copy() for t, a in self.gpus_typed.items()}
        self.njobs: IntArray = np.zeros(n, dtype=np.int64)
        self.usable: BoolArray = np.ones(n, dtype=np.bool_)
        #: A new number each time the free counts (CPUs, memory, GPUs of each type, jobs
        #: per node) change (`_count`, their only writer), never given to another table
        #: or state: "the same number" means "the same counts", read without the arrays.
        self.version = next(_VERSIONS)
        self._counts: tuple[int, bytes] = (0, b"")  # (version, counts_bytes then)
        self._large: dict[int, _Large] = {}  # the large allocations in use, by identity
        # free GPU indices per node, per type: (type, index) pairs in index order (a
        # whole free node holds its tuple ``_gpu_all[i]``, as for the CPU ids below)
        self._gpu_free: list[Sequence[tuple[str | None, int]]] = []
        for s in shapes:
            idx: list[tuple[str | None, int]] = []
            k = 0
            for t, c in s.gpus:
                for _ in range(c):
                    idx.append((t, k))
                    k += 1
            self._gpu_free.append(tuple(idx))
        self._gpu_all = list(self._gpu_free)
        self._all_gpus_typed = all(t is not None for s in shapes for t, _ in s.gpus)
        #: the one GPU type of the cluster when every GPU has it (gres.conf Type=h100)
        self._only_type = types[0] if len(types) == 1 and self._all_gpus_typed else None
        # free CPU (core) ids per node, in order: a job takes the lowest (CPU_IDs).  A
        # whole free node holds its shared tuple of every id (``_cpu_all``): a job on the
        # whole node takes that tuple itself (a full slice of a tuple is the tuple) and
        # gives it back, so an --exclusive job on 2,000 nodes copies no id lists.
        self._cpu_all: list[tuple[int, ...]] = [tuple(range(s.cpus)) for s in shapes]
        self._cpu_free: list[Sequence[int]] = list(self._cpu_all)
        #: per memory size, the ``NodeAlloc`` of each node taken whole (`_cpu_allocs`)
        self._whole: dict[int, list[NodeAlloc | None]] = {}

    def __deepcopy__(self, memo: dict[int, object]) -> NodeTable:
        """A copy to take jobs off and put them on (``SchedView.earliest_start``): every
        count and id list copied, but no kept `_Large` (each would copy its allocation's
        nodes; the copy makes them again for the allocations it is given)."""
        new = object.__new__(NodeTable)
        memo[id(self)] = new
        for name, value in vars(self).items():
            setattr(new, name, {} if name == "_large" else copy.deepcopy(value, memo))
        return new

    def __len__(self) -> int:
        return len(self.names)

    def free_gpus_of(self, gpu_type: str | None) -> IntArray:
        """Free GPUs per node of ``gpu_type`` (all types for ``None``)."""
        if gpu_type is None:
            return self.free_gpu
        return self.free_gpu_typed.get(gpu_type, np.zeros(len(self), dtype=np.int64))

    def total_gpus_of(self, gpu_type: str | None) -> IntArray:
        """Configured GPUs per node of ``gpu_type`` (all types for ``None``)."""
        if gpu_type is None:
            return self.gpus
        return self.gpus_typed.get(gpu_type, np.zeros(len(self), dtype=np.int64))

    def gpu_free_indices(self, i: int) -> Sequence[tuple[str | None, int]]:
        """The free (type, index) pairs of node ``i``, lowest index first."""
        return self._gpu_free[i]

    def gpu_used_indices(self, i: int) -> list[tuple[str | None, int]]:
        """The (type, index) pairs of node ``i`` in use by jobs."""
        free = set(self._gpu_free[i])
        return [g for g in self._gpu_all[i] if g not in free]

    def take_gpus(
        self, i: int, count: int, gpu_type: str | None
    ) -> tuple[tuple[str | None, int], ...]:
        """Pick the ``count`` lowest free GPU indices of ``gpu_type`` on node ``i``."""
        free = self._gpu_free[i]
        if gpu_type is None or all(g[0] == gpu_type for g in free):
            return tuple(free[:count])
        return tuple([g for g in free if g[0] == gpu_type][:count])

    def counts_bytes(self) -> bytes:
        """The free counts of every node as bytes: equal bytes for equal counts (a state
        the table comes back to gives the bytes it gave before).  Made again only when
        the counts changed since the last call (``version``); the configured resources
        are not in them (fixed for the table's life)."""
        at, data = self._counts
        if at != self.version:
            arrays = [self.free_cpu, self.free_mem, self.njobs]
            if self.gpu_total:
                arrays += [self.free_gpu, *(self.free_gpu_typed[t] for t in self.gpu_types)]
            data = b"".join([a.tobytes() for a in arrays])
            self._counts = (self.version, data)
        return data

    def _large_of(self, alloc: Allocation, sign: int) -> _Large:
        """``alloc``'s `_Large`: made when it is taken (``sign`` -1) and kept until it
        is given back (+1); made again if it was not kept (a copy of the table)."""
        key = id(alloc)
        hit = self._large.pop(key, None) if sign > 0 else None
        if hit is None or hit.alloc is not alloc:
            nodes = alloc.nodes
            idx = list(map(self.index.__getitem__, map(_NODE, nodes)))
            n = len(nodes)
            arrays = (np.array(idx, dtype=np.int64), np.fromiter(map(_CPUS, nodes), np.int64, n),
                      np.fromiter(map(_MEM, nodes), np.int64, n))
            for a in arrays:
                a.flags.writeable = False  # shared with readers (`large_arrays`)
            hit = _Large(alloc, idx, *arrays, self._whole_nodes(alloc, idx))
        if sign < 0:
            self._large[key] = hit  # holds the allocation: its id is not reused meanwhile
        return hit

    def _kept(self, alloc: Allocation) -> _Large | None:
        """The `_Large` kept for ``alloc`` itself (not for another that had its id)."""
        hit = self._large.get(id(alloc))
        return hit if hit is not None and hit.alloc is alloc else None

    def forget(self, alloc: Allocation) -> None:
        """``alloc`` is no longer given back whole (a job shrank: its nodes come back as
        two new allocations, the lost nodes now and the rest at the end): drop what was
        kept for it (`_Large`), which would otherwise stay for the table's life."""
        if self._kept(alloc) is not None:
            del self._large[id(alloc)]

    def large_arrays(self, alloc: Allocation) -> tuple[IntArray, IntArray, IntArray] | None:
        """(node indices, CPUs, MB per node) of ``alloc`` if it is a large allocation in
        use (kept from its start: `_Large`), else None.  Read-only arrays."""
        hit = self._kept(alloc)
        return None if hit is None else (hit.vec, hit.cpus, hit.mems)

    def _count(self, alloc: Allocation, sign: int) -> tuple[list[int], bool]:
        """Add ``sign`` times the CPUs, memory, jobs and GPUs of ``alloc`` to the free
        counts; the node indices, and whether it holds every CPU id of each of its nodes
        (`_whole_nodes`).  A large allocation (a frontier job on thousands of nodes) is
        applied as one vector operation per count instead of per node."""
        nodes = alloc.nodes
        self.version = next(_VERSIONS)
        if len(nodes) < _VECTOR_NODES:  # counts read as Python ints (``item``): no
            idx = list(map(self.index.__getitem__, map(_NODE, nodes)))
            free_cpu, free_mem, njobs = self.free_cpu, self.free_mem, self.njobs  # numpy
            for i, na in zip(idx, nodes, strict=True):  # scalar per update
                free_cpu[i] = free_cpu.item(i) + sign * na.cpus
                free_mem[i] = free_mem.item(i) + sign * na.mem_mb
                njobs[i] = njobs.item(i) - sign
                if na.gpus:
                    self.free_gpu[i] = self.free_gpu.item(i) + sign * len(na.gpus)
                    self._count_typed(i, na.gpus, sign)
            return idx, False
        large = self._large_of(alloc, sign)
        idx, vec, n = large.idx, large.vec, len(nodes)
        np.add.at(self.free_cpu, vec, large.cpus * sign)
        np.add.at(self.free_mem, vec, large.mems * sign)
        np.add.at(self.njobs, vec, -sign)
        if not alloc.num_gpus:  # a CPU job: the GPU counts stay
            return idx, large.whole
        gpus = np.fromiter((sign * len(na.gpus) for na in nodes), np.int64, n)
        np.add.at(self.free_gpu, vec, gpus)
        for t, free in self.free_gpu_typed.items():
            if self._only_type is not None:
                np.add.at(free, vec, gpus)  # one type, every GPU of it: the same counts
                continue
            per = np.fromiter((sign * sum(1 for g in na.gpus if g[0] == t) for na in nodes),
                              np.int64, n)
            np.add.at(free, vec, per)
        return idx, large.whole

    def _count_typed(self, i: int, gpus: Sequence[tuple[str | None, int]], sign: int) -> None:
        """Add ``sign`` per typed GPU of ``gpus`` to node ``i``'s free count of its type
        (gres/gpu keeps a count per type, the ``gres_cnt_alloc`` of each type's record):
        one numpy update per type (a node's GPUs are mostly of one type), not per GPU."""
        only = self._only_type
        if only is not None:  # every GPU of the cluster has this type
            free = self.free_gpu_typed[only]
            free[i] = free.item(i) + sign * len(gpus)
            return
        first = gpus[0][0]
        if all(t == first for t, _ in gpus):
            if first is not None:
                self.free_gpu_typed[first][i] += sign * len(gpus)
            return
        per: dict[str, int] = {}
        for t, _ in gpus:
            if t is not None:
                per[t] = per.get(t, 0) + 1
        for t, k in per.items():
            self.free_gpu_typed[t][i] += sign * k

    def allocate(self, alloc: Allocation) -> list[int]:
        """Mark ``alloc`` as in use (a job starts); returns its node indices."""
        idx, whole = self._count(alloc, -1)
        if whole:  # every CPU id of each node taken: none left
            cpu_free = self._cpu_free
            for i in idx:
                cpu_free[i] = ()
            return idx
        for i, na in zip(idx, alloc.nodes, strict=True):
            if na.cpu_ids:  # the ids are free ones: taking as many as are free takes all
                free_ids = self._cpu_free[i]
                if len(na.cpu_ids) == len(free_ids):
                    self._cpu_free[i] = ()
                else:
                    held = set(na.cpu_ids)
                    self._cpu_free[i] = [c for c in free_ids if c not in held]
            if na.gpus:
                free_gpus = self._gpu_free[i]
                if len(na.gpus) == len(free_gpus):
                    self._gpu_free[i] = ()
                else:
                    used = set(na.gpus)
                    self._gpu_free[i] = [g for g in free_gpus if g not in used]
        return idx

    def release(self, alloc: Allocation) -> list[int]:
        """Give ``alloc`` back (a job ended or was requeued); returns its node indices."""
        cpu_all, gpu_all = self._cpu_all, self._gpu_all
        idx, whole = self._count(alloc, +1)
        if whole:  # every CPU id of each node back: all of them
            cpu_free = self._cpu_free
            for i in idx:
                cpu_free[i] = cpu_all[i]
            return idx
        for i, na in zip(idx, alloc.nodes, strict=True):
            if na.cpu_ids:
                free_ids = self._cpu_free[i]
                if free_ids:
                    ids = sorted([*free_ids, *na.cpu_ids])
                    self._cpu_free[i] = cpu_all[i] if len(ids) == len(cpu_all[i]) else ids
                elif len(na.cpu_ids) == len(cpu_all[i]):  # the whole node: every id
                    self._cpu_free[i] = cpu_all[i]
                else:
                    self._cpu_free[i] = sorted(na.cpu_ids)
            if na.gpus:
                free_gpus = self._gpu_free[i]
                if free_gpus:
                    gpus = sorted([*free_gpus, *na.gpus], key=_gpu_index)
                    self._gpu_free[i] = gpu_all[i] if len(gpus) == len(gpu_all[i]) else gpus
                elif len(na.gpus) == len(gpu_all[i]):  # every GPU of the node, in order
                    self._gpu_free[i] = gpu_all[i]
                else:
                    self._gpu_free[i] = sorted(na.gpus, key=_gpu_index)
        return idx

    def _whole_nodes(self, alloc: Allocation, idx: list[int]) -> bool:
        """True when ``alloc`` (large, no GPUs) holds every CPU id of each of its nodes:
        what the loops of `allocate` and `release` do node by node then comes to "no id
        free" and "every id free" (a ``--procs`` job's one-CPU nodes).  A node's ids are
        distinct, so their total equals the nodes' CPUs only when each has all its own."""
        if len(idx) < _VECTOR_NODES or alloc.num_gpus:
            return False
        return sum(map(len, map(_CPU_IDS, alloc.nodes))) == int(self.cpus[idx].sum())

    def node_alloc(self, i: int, cpus: int, mem: int, gpus: int, gpu_type: str | None) -> NodeAlloc:
        """The ``NodeAlloc`` of ``cpus``/``mem``/``gpus`` on node ``i`` (the lowest free CPU
        ids and GPU indices chosen)."""
        return NodeAlloc(self.names[i], cpus, mem, self.take_gpus(i, gpus, gpu_type),
                         tuple(self._cpu_free[i][:cpus]))

    def node_allocs(self, idx: Sequence[int], cpus: int, mem: int, gpus: int,
                    gpu_type: str | None) -> tuple[NodeAlloc, ...]:
        """``node_alloc(i, cpus, mem, gpus, gpu_type)`` for each node ``i`` of ``idx``: the
        same share on every node (``-N``, ``--ntasks-per-node``), in one loop -- a
        ``--procs`` job is one entry per processor."""
        names, cpu_free = self.names, self._cpu_free
        if not gpus:  # take_gpus of none: ()
            return self._cpu_allocs(idx, cpus, mem)
        take = self.take_gpus
        return tuple([NodeAlloc(names[i], cpus, mem, take(i, gpus, gpu_type),
                                tuple(cpu_free[i][:cpus])) for i in idx])

    def _cpu_allocs(self, idx: Sequence[int], cpus: int, mem: int) -> tuple[NodeAlloc, ...]:
        """`node_allocs` without GPUs.  A node whose CPUs are all free and all taken
        (a ``--procs`` job's one-CPU nodes) gets its ``NodeAlloc`` of ``mem`` from
        ``_whole``, made the first time: ``NodeAlloc(name, cpus, mem, (), every id)``,
        a function of the node's configured name and CPU ids and of ``mem`` alone,
        which never change (`_whole` is emptied when it holds 64 memory sizes), so
        it is the record the readable rule makes; the other nodes get a new one."""
        names, cpu_free, cpu_all = self.names, self._cpu_free, self._cpu_all
        whole = self._whole.get(mem)
        if whole is None:
            if len(self._whole) >= 64:
                self._whole.clear()
            whole = self._whole[mem] = [None] * len(names)
        out = []
        for i in idx:
            free = cpu_free[i]
            if free is cpu_all[i] and len(free) == cpus:  # every id free, all taken
                na = whole[i]
                if na is None:
                    na = whole[i] = NodeAlloc(names[i], cpus, mem, (), free)
                out.append(na)
            else:
                out.append(NodeAlloc(names[i], cpus, mem, (), tuple(free[:cpus])))
        return tuple(out)

    def check(self) -> None:
        """Assert the invariants (tests): nothing over-allocated, nothing negative."""
        assert (self.free_cpu >= 0).all() and (self.free_cpu <= self.cpus).all()
        assert (self.free_mem >= 0).all() and (self.free_mem <= self.mem).all()
        assert (self.free_gpu >= 0).all() and (self.free_gpu <= self.gpus).all()
        for i, free in enumerate(self._gpu_free):
            assert len(free) == self.free_gpu[i]
        for i, ids in enumerate(self._cpu_free):  # every allocation made here has its ids
            assert len(ids) == self.free_cpu[i] and len(set(ids)) == len(ids)


__all__ = ["BoolArray", "IntArray", "NodeShape", "NodeTable"]
