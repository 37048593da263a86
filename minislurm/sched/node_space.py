"""The time-sliced node-space map of sched/backfill (``node_space_map_t`` in backfill.c).

Slot ``s`` covers ``[times[s], times[s+1])`` and holds, per node, the CPUs,
memory and GPUs that are free during the whole slot if every running job ends
at its time limit and every reservation made so far is honoured.  Slot bounds
are rounded up to ``bf_resolution`` seconds and nothing beyond ``bf_window``
minutes is tracked: a job that cannot start inside the window gets no
reservation (Slurm: "too far in the future").
"""

from __future__ import annotations

import bisect

import numpy as np

from minislurm.job import Allocation
from minislurm.select.cons_tres import ResourceRequest
from minislurm.select.table import BoolArray, IntArray, NodeTable


class NodeSpaceMap:
    """Free resources over time: ``times[s]`` starts slot ``s``; rows of ``cpu``/``mem``/``gpu``."""

    def __init__(self, table: NodeTable, now: int, resolution: int, window: int) -> None:
        self.table = table
        self.now = now
        self.resolution = max(1, resolution)
        self.horizon = now + max(window, self.resolution)
        self.times: list[int] = [now]
        self.cpu: IntArray = np.where(table.usable, table.free_cpu, 0)[None, :].copy()
        self.mem: IntArray = np.where(table.usable, table.free_mem, 0)[None, :].copy()
        self.gpu: IntArray = np.where(table.usable, table.free_gpu, 0)[None, :].copy()

    def add_releases(self, releases: list[tuple[Allocation, int | None]]) -> None:
        """Running jobs give their resources back at their time limit (built in one go)."""
        index = self.table.index
        rows: list[int] = []
        nodes: list[int] = []
        vals: list[tuple[int, int, int]] = []
        ends: dict[int, int] = {}
        for alloc, end in releases:
            t = self.horizon if end is None else self.round_up(end)
            if t >= self.horizon:
                continue
            for na in alloc.nodes:
                rows.append(t)
                nodes.append(index[na.node])
                vals.append((na.cpus, na.mem_mb, len(na.gpus)))
            ends[t] = 1
        if not ends:
            return
        times = sorted(ends)
        head = times[0] > self.now
        all_times = [self.now, *times] if head else times
        row_of = np.searchsorted(np.asarray(all_times, dtype=np.int64), np.asarray(rows))
        node_idx = np.asarray(nodes, dtype=np.int64)
        v = np.asarray(vals, dtype=np.int64) * self.table.usable[node_idx][:, None]
        n = len(self.table)
        flat = row_of * n + node_idx
        size = len(all_times) * n
        out = []
        for k, base in enumerate((self.cpu[0], self.mem[0], self.gpu[0])):
            delta = np.bincount(flat, weights=v[:, k], minlength=size).astype(np.int64)
            grid = delta.reshape(len(all_times), n)
            np.cumsum(grid, axis=0, out=grid)
            grid += base
            out.append(grid)
        self.times = all_times
        self.cpu, self.mem, self.gpu = out

    def round_up(self, t: int) -> int:
        """``t`` rounded up to a multiple of bf_resolution (never before now)."""
        if t <= self.now:
            return self.now
        return max(self.now, -(-t // self.resolution) * self.resolution)

    def _split(self, t: int) -> int:
        """Make ``t`` a slot boundary; return the slot that starts at ``t``."""
        s = bisect.bisect_right(self.times, t) - 1
        if self.times[s] == t:
            return s
        self.times.insert(s + 1, t)
        self.cpu = np.insert(self.cpu, s + 1, self.cpu[s], axis=0)
        self.mem = np.insert(self.mem, s + 1, self.mem[s], axis=0)
        self.gpu = np.insert(self.gpu, s + 1, self.gpu[s], axis=0)
        return s + 1

    def add(self, alloc: Allocation, start: int, end: int | None, sign: int) -> None:
        """Add (``sign=+1``, a running job ending) or take (``-1``, a reservation) resources.

        ``end=None`` means "until the end of the window".
        """
        start = self.round_up(start)
        if start >= self.horizon:
            return
        stop = self.horizon if end is None else min(self.round_up(end), self.horizon)
        if stop <= start:
            return
        s0 = self._split(start)
        s1 = self._split(stop) if stop < self.horizon else len(self.times)
        index = self.table.index
        idx = np.fromiter((index[na.node] for na in alloc.nodes), dtype=np.int64)
        usable = self.table.usable[idx].astype(np.int64) * sign
        cpus = np.fromiter((na.cpus for na in alloc.nodes), dtype=np.int64) * usable
        mems = np.fromiter((na.mem_mb for na in alloc.nodes), dtype=np.int64) * usable
        gpus = np.fromiter((len(na.gpus) for na in alloc.nodes), dtype=np.int64) * usable
        self.cpu[s0:s1, idx] += cpus
        self.mem[s0:s1, idx] += mems
        self.gpu[s0:s1, idx] += gpus

    def release_at(self, alloc: Allocation, end: int) -> None:
        """A running job gives its resources back at ``end`` (its time limit)."""
        self.add(alloc, end, None, +1)

    def reserve(self, alloc: Allocation, start: int, end: int) -> None:
        """Hold ``alloc`` from ``start`` to ``end`` for a pending job (a backfill reservation)."""
        self.add(alloc, start, end, -1)

    def fits_now(self, req: ResourceRequest, allowed: BoolArray, count: int) -> bool:
        """Could ``count`` allowed nodes host ``req`` in the first slot (ignoring duration)?"""
        return int((allowed & self._fit(0, 1, req)[0]).sum()) >= count

    def _fit(self, s0: int, s1: int, req: ResourceRequest) -> BoolArray:
        cpus, mem, gpus = req.per_node()
        t = self.table
        if req.exclusive:
            ok = (self.cpu[s0:s1] == t.cpus) & (t.cpus >= cpus)
        else:
            ok = self.cpu[s0:s1] >= cpus
        ok &= self.mem[s0:s1] >= (t.mem if req.mem_per_node == 0 else mem)
        if gpus:
            ok &= self.gpu[s0:s1] >= gpus
        return ok

    def earliest(
        self, req: ResourceRequest, allowed: BoolArray, count: int, duration: int
    ) -> tuple[int, BoolArray] | None:
        """First slot start where ``count`` allowed nodes fit ``req`` for ``duration`` seconds.

        Vectorised over slots and nodes: a node is good for a start slot when no slot
        overlapping ``[start, start + duration)`` lacks resources (prefix sums of the
        bad slots).  Returns (start, nodes free for the whole run) or ``None`` when the
        job cannot start inside bf_window.
        """
        t = self.table
        if req.gpus_per_node:
            allowed = allowed & (t.total_gpus_of(req.gpu_type) >= req.gpus_per_node)
        if int(allowed.sum()) < count:
            return None
        times = np.asarray(self.times, dtype=np.int64)
        n_start = int(np.searchsorted(times, self.horizon, side="left"))
        fit = self._fit(0, len(times), req) & allowed
        bad = np.zeros((len(times) + 1, fit.shape[1]), dtype=np.int32)
        np.cumsum(~fit, axis=0, out=bad[1:])
        starts = np.arange(n_start)
        ends = np.searchsorted(times, times[:n_start] + duration, side="left")
        good = (bad[ends] - bad[starts]) == 0
        counts = good.sum(axis=1)
        hit = np.flatnonzero(counts >= count)
        if not len(hit):
            return None
        s = int(hit[0])
        return int(times[s]), good[s] & allowed

    def anything_free_now(self) -> bool:
        """True while some usable node has a free CPU now (otherwise nothing can start)."""
        return bool((self.cpu[0] > 0).any())


__all__ = ["NodeSpaceMap"]
