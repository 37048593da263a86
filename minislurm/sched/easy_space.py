"""The node-space map of an EASY backfill pass, answered without its grids.

An EASY pass (``SchedulerParameters`` of ``sched/backfill`` with one reservation: the
textbook EASY of Mu'alem and Feitelson) asks its map for little: where a job can start
now for its whole run, the head job's earliest start and nodes, and a lower bound of
that start.  Its map holds the running jobs' releases, the pass's own starts (from now
to their limits) and at most one reservation of whole nodes.  Without that
reservation, each node's free resources only grow from now on: the starts take from
now and give back later, the releases give back.  So:

* a job fits its whole run on a node if and only if it fits there now (``fit_now``:
  the node table's free resources, which the starts have already taken), less the
  reserved nodes when its run reaches the reservation's first slot;
* on the map of releases only, a shape fits a node from its first fit
  (``first_fit``, from the releases' events) on, so the earliest start of ``count``
  nodes is the ``count``-th first fit, and the nodes free for the whole run then are
  those that fit by then.

`EasySpace` answers those from the node table and the events, with no slots x nodes
grids (``NodeSpaceMap`` builds three of them each pass).  It keeps every change it is
given, and any question outside that pattern (a second reservation, a start not now,
a search with a reservation in the map) is answered by the ``NodeSpaceMap`` the pass
would have had: built as of the space's creation, from the free resources then, with
the changes made again in order.  ``tests/minislurm/sched/test_easy_space.py`` asks
both the same questions; ``tests/minislurm/sim/test_pass_reuse_differential.py`` runs
traces and the GPU cluster both ways and compares every record.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from minislurm.job import Allocation
from minislurm.sched.node_space import (
    AllocCells,
    FitKey,
    NodeSpaceMap,
    first_fit,
    fit_key,
    fit_now,
    gpu_allowed,
    release_cells,
    release_ends,
    release_events,
    round_up,
)
from minislurm.select.request import ResourceRequest
from minislurm.select.table import BoolArray, IntArray, NodeTable


@dataclass(frozen=True, slots=True)
class _Add:
    """``NodeSpaceMap.add``: ``sign`` x ``alloc``'s resources over ``[start, end)``."""

    alloc: Allocation
    start: int
    end: int | None
    sign: int


@dataclass(frozen=True, slots=True)
class _Hold:
    """``NodeSpaceMap.hold_nodes``: the whole nodes ``nodes`` over ``[start, end)``."""

    nodes: IntArray
    start: int
    end: int


class EasySpace:
    """What an EASY pass asks of its node-space map (the module docstring's rules)."""

    def __init__(self, table: NodeTable, now: int, resolution: int, window: int,
                 cells: AllocCells | None = None) -> None:  # fmt: skip
        self.table = table
        self.cells = cells if cells is not None and cells.table is table else AllocCells(table)
        self.now = now
        self.resolution = max(1, resolution)
        self.horizon = now + max(window, self.resolution)  # as NodeSpaceMap's
        u = table.usable
        #: the map's first slot when it was made (the node table's free resources then,
        #: int64 as the table's: ``first_fit``'s base as ``NodeSpaceMap._base``)
        self._free = [np.where(u, v, 0) for v in (table.free_cpu, table.free_mem, table.free_gpu)]
        self._releases: list[tuple[Allocation, int | None]] = []
        self._due_now = False  # a release due now (a running job past its limit)
        self._events: tuple[IntArray, ...] | None = None
        self._first: dict[FitKey, IntArray] = {}
        self._log: list[_Add | _Hold] = []
        self._in = 0  # the pass's starts in the map
        self._out = 0  # the pass's starts taken out again (a postponed reservation's)
        self._hold: tuple[BoolArray, int] | None = None  # (nodes, first slot held)
        self._map: NodeSpaceMap | None = None  # the map itself, once a question needs it

    # ---- the map, when a question is outside the pattern ------------------------------
    def _full(self) -> NodeSpaceMap:
        """The ``NodeSpaceMap`` of the pass: made as of this space's creation (its first
        slot from the free resources then), with every change since made again in order."""
        if self._map is None:
            space = NodeSpaceMap(self.table, self.now, self.resolution, self.horizon - self.now,
                                 self.cells, free=self._free)  # fmt: skip
            space.add_releases(self._releases)
            for change in self._log:
                if isinstance(change, _Hold):
                    space.hold_nodes(change.nodes, change.start, change.end)
                else:
                    space.add(change.alloc, change.start, change.end, change.sign)
            self._map = space
        return self._map

    # ---- building ------------------------------------------------------------------
    def add_releases(self, releases: list[tuple[Allocation, int | None]]) -> None:
        """Running jobs give their resources back at their time limit."""
        self._releases = releases
        self._due_now = any(e is not None and e <= self.now for _, e in releases)

    def _first_fit(self, key: FitKey) -> IntArray:
        """Per node, the first slot start where one share of ``key`` fits (releases only)."""
        hit = self._first.get(key)
        if hit is None:
            if self._events is None and self._releases:
                allocs, ends, _inside = release_ends(self._releases, self.now, self.horizon,
                                                     self.resolution)  # fmt: skip
                self._events = release_events(*release_cells(self.cells, allocs, ends,
                                                             self.horizon))  # fmt: skip
            hit = self._first[key] = first_fit(self.table, key, self._free, self._events,
                                               self.now, self.horizon)  # fmt: skip
        return hit

    def _table_is_first_slot(self) -> bool:
        """True if the map's first slot is the node table's free resources now: every
        start of the pass in it, and no release due now (a job past its limit)."""
        return not self._out and not self._due_now

    # ---- changes -------------------------------------------------------------------
    def add(self, alloc: Allocation, start: int, end: int | None, sign: int) -> None:
        """Add (``+1``) or take (``-1``) ``alloc``'s resources over ``[start, end)``."""
        if self._map is not None:
            self._map.add(alloc, start, end, sign)
            return
        self._log.append(_Add(alloc, start, end, sign))
        if start != self.now or end is None or (sign > 0 and not self._in):
            self._full()  # not a start of this pass taken or given back: outside
            return
        if sign < 0:  # a start, or one taken out and put back
            if self._out:
                self._out -= 1
            self._in += 1
        else:
            self._in -= 1
            self._out += 1

    def reserve(self, alloc: Allocation, start: int, end: int) -> None:
        """A job of the pass starts (``start`` is now) and holds ``alloc`` until ``end``."""
        self.add(alloc, start, end, -1)

    def hold_nodes(self, idx: IntArray, start: int, end: int) -> None:
        """Hold the whole nodes ``idx`` from ``start`` to ``end`` (the reservation)."""
        if self._map is not None:
            self._map.hold_nodes(idx, start, end)
            return
        self._log.append(_Hold(idx, start, end))
        if self._hold is not None:
            self._full()  # a second reservation: outside the pattern
            return
        first = round_up(start, self.now, self.resolution)
        if first >= self.horizon or min(round_up(end, self.now, self.resolution),
                                         self.horizon) <= first:  # fmt: skip
            return  # NodeSpaceMap holds nothing then either
        nodes = np.zeros(len(self.table), dtype=np.bool_)
        nodes[idx] = True
        self._hold = (nodes, first)

    # ---- questions -----------------------------------------------------------------
    def start_bound(self, req: ResourceRequest, allowed: BoolArray, count: int) -> int:
        """``NodeSpaceMap.start_bound``: the ``count``-th first fit of the allowed nodes."""
        if self._map is not None:
            return self._map.start_bound(req, allowed, count)
        ft = self._first_fit(fit_key(req))[allowed]
        if len(ft) < count or count <= 0:
            return self.horizon if count > 0 else self.now
        return int(np.sort(ft)[count - 1])

    def starts_now(self, req: ResourceRequest, allowed: BoolArray, count: int,
                   duration: int) -> BoolArray | None:  # fmt: skip
        """``NodeSpaceMap.starts_now``: the allowed nodes that fit now, less the reserved
        ones when the run reaches the reservation; None when fewer than ``count``."""
        if self._map is None and not self._table_is_first_slot():
            self._full()
        if self._map is not None:
            return self._map.starts_now(req, allowed, count, duration)
        allowed = gpu_allowed(self.table, req, allowed)
        if int(np.count_nonzero(allowed)) < count:
            return None
        nodes = fit_now(self.table, fit_key(req)) & allowed
        if self._hold is not None and self._hold[1] < self.now + duration:
            nodes &= ~self._hold[0]
        return nodes if int(np.count_nonzero(nodes)) >= count else None

    def earliest(self, req: ResourceRequest, allowed: BoolArray, count: int,
                 duration: int) -> tuple[int, BoolArray] | None:  # fmt: skip
        """``NodeSpaceMap.earliest`` with no reservation in the map: on the map of
        releases only (no start of the pass in it), the ``count``-th first fit and the
        nodes that fit by then; with the pass's starts in it, now on the nodes that fit
        now, if enough do."""
        if self._map is None and (self._hold is not None or count <= 0
                                  or (self._in and not self._table_is_first_slot())):
            self._full()
        if self._map is not None:
            return self._map.earliest(req, allowed, count, duration)
        allowed = gpu_allowed(self.table, req, allowed)
        if int(np.count_nonzero(allowed)) < count:
            return None
        key = fit_key(req)
        if self._in:  # the starts are in: the table is the first slot
            nodes = fit_now(self.table, key) & allowed
            if int(np.count_nonzero(nodes)) >= count:
                return self.now, nodes
            return self._full().earliest(req, allowed, count, duration)
        ft = self._first_fit(key)
        start = int(np.sort(ft[allowed])[count - 1])
        if start >= self.horizon:
            return None
        return start, allowed & (ft <= start)


__all__ = ["EasySpace"]
