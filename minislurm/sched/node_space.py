"""The time-sliced node-space map of sched/backfill (``node_space_map_t`` in backfill.c).

Slot ``s`` covers ``[times[s], times[s+1])`` and holds, per node, the CPUs,
memory and GPUs that are free during the whole slot if every running job ends
at its time limit and every reservation made so far is honoured.  Slot bounds
are rounded up to ``bf_resolution`` seconds and nothing beyond ``bf_window``
minutes is tracked: a job that cannot start inside the window gets no
reservation (Slurm: "too far in the future").

Scaling (what keeps a pass cheap on 1,000 nodes and thousands of slots):

* slot rows live in preallocated buffers in *creation* order; ``times`` (sorted)
  maps each slot to its row, so splitting a slot appends one row instead of
  re-allocating the whole map (Slurm links its slots as a list for the same reason);
* "which nodes could host one node's share of this shape in this slot" is kept per
  distinct job shape for the pass and updated only where a reservation changes the
  map (Slurm's backfill meets the same shapes over and over in a queue);
* the earliest start is found by testing only the slots where enough nodes are free,
  and for those only the run window of those nodes (like Slurm, which only tests
  the slices overlapping a job's window); on a wide map the fits are also kept as
  bits, 64 nodes to a word, and the windows are ANDed over those words;
* the map of releases only (before any reservation) is kept from one pass to the
  next and updated where jobs started or ended since (``_BuiltMap``,
  ``NodeSpaceMap._derive``); building it from every running job stays the reference
  (``_build``), used when much changed or the usable nodes did.
"""

from __future__ import annotations

import bisect
import itertools

import numpy as np
import numpy.typing as npt

from minislurm.job import Allocation
from minislurm.select.request import ResourceRequest
from minislurm.select.table import BoolArray, IntArray, NodeTable

#: A shape as the map tests it: (CPUs, memory MB, whole memory, GPUs, exclusive).
FitKey = tuple[int, int, bool, int, bool]

#: Candidate start slots whose run window is tested node by node before the map
#: falls back to testing every slot at once (prefix sums over slots x nodes).
_LAZY_TRIES = 4

#: Slots tested for "enough nodes free" in the first chunk (then 4x more each time).
_CHUNK = 16

#: Maps of at most this many nodes test a candidate start's run window on every node
#: at once: numpy's call overhead outweighs gathering only the nodes free at the start.
_NARROW = 128

#: Maps of at least this many nodes are searched over their fits packed 64 nodes to a
#: word (``NodeSpaceMap._earliest_packed``): on narrower ones the packing and the
#: popcounts cost more numpy calls than they save (256 nodes: 41 against 63 us per
#: ``earliest`` in a 256-processor trace).
_PACKED = 512

#: Maps of at most this many nodes and slots (from the first start searched) are
#: searched with each slot's nodes as the bits of an int (``_earliest_bits``; at most
#: 64: a slot's nodes are read as one uint64).
_BITS = 64

#: Maps of at most this many cells (slots x nodes) forget their cached fits when cells
#: change, and compute them again for every row in one go when next read: on a few
#: nodes one numpy call over the whole map costs less than updating the changed
#: cells (a gather, a test and a scatter per change).
_SMALL_CELLS = 2048

#: Cell type of the map: 32 bits hold any node's CPUs and MB of memory and halve the
#: memory traffic of a pass.
_CELL = np.int32
CellArray = npt.NDArray[np.int32]

#: Rows of nodes packed as bits, 64 nodes to a word (``np.packbits`` little-endian
#: bit order: node ``i`` is bit ``i % 8`` of byte ``i // 8``, read as 8-byte words).
WordArray = npt.NDArray[np.uint64]


class AllocCells:
    """Each allocation's node indices and resources (CPUs, MB, GPUs per node) as arrays,
    kept from one backfill pass to the next.

    Every pass rebuilds its map from every running job's allocation (``add_releases``),
    and a ``--procs`` job holds one 1-CPU node per processor: reading those entries
    again each pass was most of the map's cost.  An allocation never changes (a frozen
    record), so its arrays are made once, when it is first seen, and dropped when its
    job no longer runs (``keep``).  Keyed by identity, holding the allocation itself so
    that its id is not reused while it is kept.
    """

    def __init__(self, table: NodeTable) -> None:
        self.table = table
        self._cells: dict[int, tuple[Allocation, IntArray, IntArray]] = {}
        self._last_ids: list[int] = []  # the allocations of the last ``concat``
        self._last: tuple[IntArray, IntArray, IntArray] | None = None
        self._last_allocs: list[Allocation] = []
        #: The last pass's releases-only map (``NodeSpaceMap.add_releases``), kept for the next.
        self.built: _BuiltMap | None = None

    def of(self, alloc: Allocation) -> tuple[IntArray, IntArray]:
        """(node indices, rows of CPUs, memory MB and GPUs) of ``alloc``, in its node order."""
        hit = self._cells.get(id(alloc))
        if hit is not None and hit[0] is alloc:
            return hit[1], hit[2]
        nodes = alloc.nodes
        vals = np.empty((len(nodes), 3), dtype=np.int64)
        large = self.table.large_arrays(alloc)  # a large allocation in use: the table's
        if large is not None:
            idx, vals[:, 0], vals[:, 1] = large
        else:
            index = self.table.index
            idx = np.array([index[na.node] for na in nodes], dtype=np.int64)
            # a column at a time (435 nodes: 62 us, against 105 us from a list of tuples)
            vals[:, 0] = [na.cpus for na in nodes]
            vals[:, 1] = [na.mem_mb for na in nodes]
        vals[:, 2] = [len(na.gpus) for na in nodes] if alloc.num_gpus else 0
        self._cells[id(alloc)] = (alloc, idx, vals)
        return idx, vals

    def __len__(self) -> int:
        return len(self._cells)

    def keep(self, allocs: list[Allocation]) -> None:
        """Forget every allocation but ``allocs`` (the running jobs' of this pass)."""
        old = self._cells
        if len(old) > len(allocs):
            self._cells = {k: old[k] for k in map(id, allocs) if k in old}

    def prune(self, allocs: list[Allocation]) -> None:
        """``keep(allocs)`` once the cells outnumber the running jobs' (``allocs``) twice
        over, plus 64: the ended jobs' cells are forgotten now and then, not each pass."""
        if len(self._cells) > 2 * len(allocs) + 64:
            self.keep(allocs)

    def concat(self, allocs: list[Allocation], ids: list[int] | None = None,
               ) -> tuple[IntArray, IntArray, IntArray]:  # fmt: skip
        """(node indices, resources, entries per allocation) of ``allocs`` one after the
        other; the same arrays again while the running jobs are the same ones (a pass
        after a submission that started nothing).  ``ids``: their identities, if known."""
        if ids is None:
            ids = [id(a) for a in allocs]
        if ids == self._last_ids and self._last is not None:
            return self._last
        self.prune(allocs)
        parts = [self.of(a) for a in allocs]
        if parts:
            idx = np.concatenate([p[0] for p in parts])
            vals = np.concatenate([p[1] for p in parts])
        else:
            idx, vals = np.zeros(0, dtype=np.int64), np.zeros((0, 3), dtype=np.int64)
        lens = np.array([len(p[0]) for p in parts], dtype=np.int64)
        self._last_ids, self._last = ids, (idx, vals, lens)
        self._last_allocs = allocs  # alive, so that their ids are not reused
        return self._last


#: The slot of a release that a map does not track (UNLIMITED, or beyond the window).
_UNTRACKED = np.iinfo(np.int64).max

#: A pass derives its map from the last one's (``NodeSpaceMap._derive``) while at most
#: ``max(_DELTA_MIN, running jobs // _DELTA_SHARE)`` releases changed since and the nodes
#: they touch are at most half the map's: past that, building it anew is cheaper.
_DELTA_MIN, _DELTA_SHARE = 16, 4

#: Maps of fewer nodes are derived only when nothing changed (a copy): what deriving
#: saves grows with the nodes, what it costs per change does not, and building anew
#: was cheaper on 8 and 256 nodes (lesson 6's what-if, a 256-processor trace).
_DERIVE_NODES = 512


class _BuiltMap:
    """A releases-only map as ``add_releases`` left it (before any reservation), kept
    for the next pass.

    Slurm's ``_attempt_backfill`` builds its ``node_space_map_t`` anew each pass from
    the running jobs; here the next pass's map is this one brought up to date where
    jobs started or ended (``NodeSpaceMap._derive``), the same map for less work.  Kept:
    the releases (allocations in the order given and their identities, each with its
    slot, ``_UNTRACKED`` when outside the window), the pass's ``now``,
    ``bf_resolution``, window and usable nodes, the slot starts after ``now``
    (``tail``), the grids (slot order; row 0 is the free resources of the first slot)
    and the events of ``start_bound``.
    """

    __slots__ = ("_by_id", "allocs", "due", "events", "grids", "ids", "now", "resolution",
                 "tail", "usable", "window")

    def __init__(self, allocs: list[Allocation], ids: list[int], due: IntArray, now: int,
                 resolution: int, window: int, usable: bytes, tail: IntArray,
                 grids: list[CellArray], events: tuple[IntArray, ...]) -> None:  # fmt: skip
        self.allocs, self.ids, self.due = allocs, ids, due
        self.now, self.resolution, self.window, self.usable = now, resolution, window, usable
        self.tail, self.grids, self.events = tail, grids, events
        self._by_id: tuple[IntArray, IntArray] | None = None

    def by_id(self) -> tuple[IntArray, IntArray] | None:
        """(identities sorted, their positions in ``allocs``); None if one is there twice."""
        if self._by_id is None:
            self._by_id = _sorted_ids(self.ids)
        return self._by_id if len(self._by_id[0]) else None

    def matches(self, usable: bytes, now: int, resolution: int, window: int) -> bool:
        """True if a map at ``now`` can be derived from this one: the same usable nodes,
        ``bf_resolution`` and window, and not earlier."""
        return (usable == self.usable and now >= self.now and resolution == self.resolution
                and window == self.window)  # fmt: skip


def _sorted_ids(ids: list[int]) -> tuple[IntArray, IntArray]:
    """(``ids`` sorted, their positions); both empty if one is there twice."""
    arr = np.fromiter(ids, dtype=np.int64, count=len(ids))
    order = np.argsort(arr, kind="stable")
    arr = arr[order]
    if len(arr) > 1 and bool((arr[1:] == arr[:-1]).any()):
        return arr[:0], order[:0]
    return arr, order


#: ``fit_key`` of the request objects seen (a pass asks it of every job it tests, and
#: each pass tests the same jobs again), by identity: a request's hash and equality
#: read its sixteen fields, several times the cost of the lookup by ``id``.  Each entry
#: holds its request, so that its id is not reused while it is kept; emptied when it
#: grows past ``_FIT_KEYS_MAX``.
_FIT_KEYS: dict[int, tuple[ResourceRequest, FitKey]] = {}
_FIT_KEYS_MAX = 4096


def fit_key(req: ResourceRequest) -> FitKey:
    """What of ``req`` decides whether one node's share fits in a slot."""
    hit = _FIT_KEYS.get(id(req))
    if hit is not None and hit[0] is req:
        return hit[1]
    cpus, mem, gpus = req.per_node()
    key = (cpus, mem, req.mem_per_node == 0, gpus, req.exclusive)
    if len(_FIT_KEYS) >= _FIT_KEYS_MAX:
        _FIT_KEYS.clear()
    _FIT_KEYS[id(req)] = (req, key)
    return key


class _Fit:
    """Where one shape fits: ``buf[row, node]`` for the buffer rows below ``valid``,
    but for the cells of ``stale`` (``(rows, nodes, cells, kept)`` a reservation or
    release changed since; ``cells``: their flat indices in the buffers, rows x nodes;
    ``kept``: for whole nodes held, the packed mask of the other nodes -- empty if no
    shape was packed then -- else None):
    those are computed again when the shape is next read, so a change costs nothing
    for the shapes the rest of the pass does not test again.

    On a wide map the same rows are also kept packed, 64 nodes to a word (``bits``,
    up to date below ``bits_valid`` but for the rows of ``bits_stale``): the search
    of `NodeSpaceMap._earliest_packed` reads them."""

    __slots__ = ("bits", "bits_stale", "bits_valid", "buf", "stale", "valid")

    def __init__(self, buf: BoolArray) -> None:
        self.buf = buf
        self.valid = 0
        self.stale: list[tuple[IntArray, IntArray, IntArray, WordArray | None]] = []
        self.bits: WordArray | None = None
        self.bits_valid = 0
        self.bits_stale: list[IntArray] = []

    def forget(self) -> None:
        """Every row is to be computed again."""
        self.valid = self.bits_valid = 0
        self.stale.clear()
        self.bits_stale.clear()


class NodeSpaceMap:
    """Free resources over time: ``times[s]`` starts slot ``s``; rows of ``cpu``/``mem``/``gpu``."""

    def __init__(
        self, table: NodeTable, now: int, resolution: int, window: int,
        cells: AllocCells | None = None, free: list[IntArray] | None = None,
    ) -> None:
        """``free``: the CPUs, MB and GPUs free now on each node, if not the node
        table's (a map made later for a pass, as of its start: ``EasySpace``)."""
        self.table = table
        self.cells = cells if cells is not None and cells.table is table else AllocCells(table)
        self.now = now
        self.resolution = max(1, resolution)
        self.horizon = now + max(window, self.resolution)
        self.times: list[int] = [now]
        self._order: list[int] = [0]  # buffer row of each slot
        self._arrays: tuple[IntArray, IntArray] | None = None  # (times, _order) as arrays
        self._rows = 1
        rows = [np.where(table.usable, v, 0).astype(_CELL)[None, :] for v in
                (free or (table.free_cpu, table.free_mem, table.free_gpu))]
        self._set_buffers(rows, 1)
        # the releases-only map, for lower bounds of reservation starts (start_bound)
        self._base = [r[0].astype(np.int64) for r in rows]
        self._events: tuple[IntArray, ...] | None = None
        self._fit_times: dict[FitKey, IntArray] = {}

    # ---- storage -----------------------------------------------------------------
    def _set_buffers(self, grids: list[CellArray], used: int) -> None:
        """Take ``grids`` (rows x nodes, ``used`` rows filled) as the slot buffers."""
        n = len(self.table)
        bufs = []
        for g in grids:
            if g.shape[0] < _capacity(used) or not g.flags.c_contiguous:
                b = np.empty((_capacity(used), n), dtype=_CELL)  # contiguous: _add_cells
                b[:used] = g[:used]  # updates it through a flat view
                g = b
            bufs.append(g)
        self._cpu, self._mem, self._gpu = bufs
        self._rows = used
        self._fits: dict[FitKey, _Fit] = {}  # where each shape fits, per buffer row
        # (key, allowed nodes) -> {(count, duration): earliest start, None: never}
        self._bounds: dict[tuple[FitKey, bytes], dict[tuple[int, int], int | None]] = {}
        self._allowed_words: dict[bytes, WordArray] = {}  # allowed masks packed (_words)

    def _slot_arrays(self) -> tuple[IntArray, IntArray]:
        """``times`` and the buffer row of each slot as arrays (made again after a split)."""
        if self._arrays is None:
            self._arrays = (np.asarray(self.times, dtype=np.int64),
                            np.asarray(self._order, dtype=np.int64))
        return self._arrays

    def _grow(self) -> None:
        cap = self._cpu.shape[0] * 2
        for name in ("_cpu", "_mem", "_gpu"):
            old = getattr(self, name)
            new = np.empty((cap, old.shape[1]), dtype=old.dtype)
            new[: self._rows] = old[: self._rows]
            setattr(self, name, new)
        for entry in self._fits.values():
            new_fit = np.empty((cap, entry.buf.shape[1]), dtype=np.bool_)
            new_fit[: self._rows] = entry.buf[: self._rows]
            entry.buf = new_fit
            if entry.bits is not None:
                new_bits = np.zeros((cap, entry.bits.shape[1]), dtype=np.uint64)
                new_bits[: self._rows] = entry.bits[: self._rows]
                entry.bits = new_bits

    @property
    def cpu(self) -> CellArray:
        """Free CPUs per slot (rows in time order) and node."""
        return self._cpu[self._order]

    @property
    def mem(self) -> CellArray:
        """Free memory (MB) per slot and node."""
        return self._mem[self._order]

    @property
    def gpu(self) -> CellArray:
        """Free GPUs per slot and node."""
        return self._gpu[self._order]

    # ---- building ----------------------------------------------------------------
    def add_releases(self, releases: list[tuple[Allocation, int | None]]) -> None:
        """Running jobs give their resources back at their time limit (built in one go).

        Meant for a fresh map (before any reservation).  When every release is after
        now, the map is kept for the next pass (``AllocCells.built``), and a map is
        derived from the kept one (``_derive``) when that can be done cheaply; else it
        is built from every release (``_build``), the reference.
        """
        if not releases:
            return
        horizon, now, res = self.horizon, self.now, self.resolution
        allocs, ends, inside = release_ends(releases, now, horizon, res)
        if not inside.any():
            return
        if int(ends.min()) <= now:  # a release now: the first slot is not the table's
            self._build(allocs, ends, inside)
            return
        ids = [id(a) for a in allocs]
        due = np.where(inside, ends, _UNTRACKED)
        usable = self.table.usable.tobytes()
        cells = self.cells
        built = cells.built
        if built is not None and built.matches(usable, now, res, horizon - now):
            kept = self._derive(built, allocs, ids, due)
            if kept is not None:
                cells.built = kept
                cells.prune(allocs)  # forget the allocations of jobs that ended
                return
        self._build(allocs, ends, inside, ids)
        cells.built = self._kept(allocs, ids, due, usable)

    def _take(self, times: list[int], grids: list[CellArray], used: int,
              events: tuple[IntArray, ...]) -> None:  # fmt: skip
        """Make ``grids`` (``used`` rows, slot order) and ``events`` the map's."""
        self.times = times
        self._order = list(range(used))
        self._arrays = None
        self._set_buffers(grids, used)
        self._events = events
        self._fit_times.clear()

    def _build(self, allocs: list[Allocation], ends: IntArray, inside: BoolArray,
               ids: list[int] | None = None) -> None:  # fmt: skip
        """The map from every release: each slot's row is the first slot's free
        resources plus the releases due at or before it (summed down the rows)."""
        n, now, horizon = len(self.table), self.now, self.horizon
        times = sorted(set(ends[inside].tolist()))  # np.unique's overhead is most of it here
        all_times = [now, *times] if times[0] > now else times
        node_idx, row_t, v = release_cells(self.cells, allocs, ends, horizon, ids)
        row_of = np.searchsorted(np.asarray(all_times, dtype=np.int64), row_t)
        flat = row_of * n + node_idx
        used = len(all_times)
        cap = _capacity(used)
        out = []
        for k, base in enumerate((self._cpu[0], self._mem[0], self._gpu[0])):
            grid = np.zeros((cap, n), dtype=_CELL)
            np.add.at(grid.reshape(-1), flat, v[:, k].astype(_CELL))
            grid[0] += base
            cumsum_rows(grid, used)
            out.append(grid)
        self._take(all_times, out, used, release_events(node_idx, row_t, v))

    def _kept(self, allocs: list[Allocation], ids: list[int], due: IntArray,
              usable: bytes) -> _BuiltMap:  # fmt: skip
        """This map, just built or derived, as kept for the next pass."""
        assert self._events is not None
        used = len(self.times)
        return _BuiltMap(allocs, ids, due, self.now, self.resolution, self.horizon - self.now,
                         usable, np.asarray(self.times[1:], dtype=np.int64),
                         [g[:used].copy() for g in (self._cpu, self._mem, self._gpu)],
                         self._events)  # fmt: skip

    def _derive(self, built: _BuiltMap, allocs: list[Allocation], ids: list[int],
                due: IntArray) -> _BuiltMap | None:
        """This pass's map from ``built``, the last one's, and the map to keep then
        (``built`` itself when nothing changed); None (nothing done) when building it
        anew is cheaper: many releases changed, or some did on a narrow map
        (``_DERIVE_NODES``).

        Slot ``t`` holds the first slot's free resources plus every release due at or
        before ``t``.  So it is ``built``'s slot holding ``t``, plus the change of the
        first slot (the node table's free resources: jobs started or ended since), plus
        the releases due by ``t`` that ``built`` lacked (jobs started since, a limit
        that came inside the window), less those of ``built`` that are gone (jobs
        ended, a limit moved).  Releases in both cancel out, so only the nodes of the
        others and of the changed first slot are summed again, over a few columns; the
        rest of each row is a copy.  The events of ``start_bound`` of those nodes are
        read off their new columns (where a node's resources change from a slot to the
        next), the others' are kept.
        """
        n, now = len(self.table), self.now
        if ids == built.ids:  # the same jobs (in the same order): limits may have moved
            changed = np.flatnonzero(due != built.due)
            new = changed[due[changed] < _UNTRACKED].tolist()  # positions in ``allocs``
            gone = changed[built.due[changed] < _UNTRACKED].tolist()  # in ``built.allocs``
        else:  # matched by identity
            if n < _DERIVE_NODES:
                return None
            old, mine = built.by_id(), _sorted_ids(ids)
            if old is None or not len(mine[0]):
                return None  # an allocation given twice: nothing to match it to
            (old_ids, old_at), (new_ids, order) = old, mine
            at = np.minimum(np.searchsorted(old_ids, new_ids), len(old_ids) - 1)
            same = (old_ids[at] == new_ids) & (built.due[old_at[at]] == due[order])
            still = np.zeros(len(old_ids), dtype=np.bool_)
            still[at[same]] = True
            new = order[~same & (due[order] < _UNTRACKED)].tolist()
            gone = old_at[~still & (built.due[old_at] < _UNTRACKED)].tolist()
        if len(new) + len(gone) > max(_DELTA_MIN, len(allocs) // _DELTA_SHARE) or (
            (new or gone) and n < _DERIVE_NODES
        ):
            return None
        base = (self._cpu[0], self._mem[0], self._gpu[0])
        old_base = [g[0] for g in built.grids]
        moved = np.flatnonzero((base[0] != old_base[0]) | (base[1] != old_base[1])
                               | (base[2] != old_base[2]))  # fmt: skip
        if not new and not gone and not len(moved):  # the same releases: the same slots
            used = len(built.tail) + 1
            out = []  # the same map but for ``now``: a copy of it
            for g in built.grids:
                buf = np.empty((_capacity(used), n), dtype=_CELL)
                buf[:used] = g
                out.append(buf)
            self._take([now, *built.tail.tolist()], out, used, built.events)
            return built
        if len(moved) and n < _DERIVE_NODES:
            return None
        tail = np.unique(due[due < _UNTRACKED])
        used = len(tail) + 1
        cap = _capacity(used)
        times = np.concatenate(([now], tail))
        # the changes: (nodes, slot from which they count, resources per node, sign)
        usable = self.table.usable
        parts: list[tuple[IntArray, int, IntArray]] = []
        for i in new:
            idx, vals = self.cells.of(allocs[i])
            parts.append((idx, int(np.searchsorted(times, due[i])), vals * usable[idx, None]))
        for j in gone:
            row = int(np.searchsorted(times, built.due[j]))  # the first slot it counted in
            if row < used:
                idx, vals = self.cells.of(built.allocs[j])
                parts.append((idx, row, -vals * usable[idx, None]))
        if len(moved):
            diff = np.stack([b[moved].astype(np.int64) - o[moved]
                             for b, o in zip(base, old_base, strict=True)], axis=1)  # fmt: skip
            parts.append((moved, 0, diff))
        touched = np.zeros(n, dtype=np.bool_)  # the nodes summed again
        for p in parts:
            touched[p[0]] = True
        cols = np.flatnonzero(touched)
        if 2 * len(cols) > n:
            return None
        delta = np.zeros((used, len(cols), 3), dtype=np.int64)
        if parts:
            rows = np.repeat(np.array([p[1] for p in parts], dtype=np.int64),
                             [len(p[0]) for p in parts])  # fmt: skip
            col_of = (np.cumsum(touched) - 1)[np.concatenate([p[0] for p in parts])]
            np.add.at(delta, (rows, col_of), np.concatenate([p[2] for p in parts]))
            cumsum_rows(delta.reshape(used, -1), used)  # a view: delta is contiguous
        old_times = np.concatenate(([built.now], built.tail))
        rowmap = np.searchsorted(old_times, times, side="right") - 1  # slot holding each time
        out, sub = [], []
        for k, g in enumerate(built.grids):
            buf = np.empty((cap, n), dtype=_CELL)
            _copy_rows(g, rowmap, buf)
            s = buf[:used, cols] + delta[:, :, k].astype(_CELL)
            buf[:used, cols] = s
            out.append(buf)
            sub.append(s)
        # the events of the changed nodes, read off their columns, by node then time
        step = (sub[0][1:] != sub[0][:-1]) | (sub[1][1:] != sub[1][:-1])
        step |= sub[2][1:] != sub[2][:-1]
        c, r = np.nonzero(step.T)
        r += 1
        old_ev = built.events
        stay = ~touched[old_ev[0]]
        ev = [np.concatenate((old_ev[0][stay], cols[c])),
              np.concatenate((old_ev[1][stay], times[r]))]
        ev += [np.concatenate((e[stay], s[r, c].astype(np.int64) - s[0, c]))
               for e, s in zip(old_ev[2:], sub, strict=True)]
        by_node = np.argsort(ev[0], kind="stable")  # each node's events come from one side
        self._take(times.tolist(), out, used, tuple(e[by_node] for e in ev))
        return self._kept(allocs, ids, due, built.usable)

    def round_up(self, t: int) -> int:
        """``t`` rounded up to a multiple of bf_resolution (never before now)."""
        return round_up(t, self.now, self.resolution)

    def _split(self, t: int) -> int:
        """Make ``t`` a slot boundary; return the slot that starts at ``t``."""
        s = bisect.bisect_right(self.times, t) - 1
        if self.times[s] == t:
            return s
        if self._rows == self._cpu.shape[0]:
            self._grow()
        p, src = self._rows, self._order[s]
        self._cpu[p] = self._cpu[src]
        self._mem[p] = self._mem[src]
        self._gpu[p] = self._gpu[src]
        for entry in self._fits.values():  # the copy fits where its source fits
            if entry.valid == p and src < p and not entry.stale:
                entry.buf[p] = entry.buf[src]
                entry.valid = p + 1
                if entry.bits is not None and entry.bits_valid == p and not entry.bits_stale:
                    entry.bits[p] = entry.bits[src]
                    entry.bits_valid = p + 1
        self._rows += 1
        self.times.insert(s + 1, t)
        self._order.insert(s + 1, p)
        self._arrays = None
        return s + 1

    def add(self, alloc: Allocation, start: int, end: int | None, sign: int) -> None:
        """Add (``sign=+1``, a running job ending) or take (``-1``, a reservation) resources.

        ``end=None`` means "until the end of the window".
        """
        idx, vals = self.cells.of(alloc)
        self._add_cells(idx, vals[:, 0], vals[:, 1], vals[:, 2], start, end, sign)

    def hold_nodes(self, idx: IntArray, start: int, end: int) -> None:
        """Hold the *whole* nodes ``idx`` from ``start`` to ``end`` (a reservation:
        ``_add_reservation`` clears them from the bitmap of every slice it covers)."""
        t = self.table
        self._add_cells(idx, t.cpus[idx], t.mem[idx], t.gpus[idx], start, end, -1, held=True)

    def _add_cells(
        self, idx: IntArray, cpus: IntArray, mems: IntArray, gpus: IntArray, start: int,
        end: int | None, sign: int, *, held: bool = False,
    ) -> None:
        """Add ``sign`` x the resources of nodes ``idx`` over ``[start, end)``; ``held``:
        they are the nodes' whole resources taken (``hold_nodes``), so that no share of
        any shape fits in those cells any more."""
        start = self.round_up(start)
        if start >= self.horizon:
            return
        stop = self.horizon if end is None else min(self.round_up(end), self.horizon)
        if stop <= start:
            return
        if sign > 0:  # resources come back: earlier answers are no lower bounds any more
            self._bounds.clear()
        s0 = self._split(start)
        s1 = self._split(stop) if stop < self.horizon else len(self.times)
        usable = self.table.usable[idx].astype(np.int64) * sign
        rows = self._slot_arrays()[1][s0:s1]
        cells = _flat_cells(rows, idx, len(self.table))
        for grid, vals in ((self._cpu, cpus), (self._mem, mems), (self._gpu, gpus)):
            flat = grid.reshape(-1)  # a view: the buffers are contiguous (_set_buffers)
            flat[cells] += vals * usable
        if self._rows * len(self.table) <= _SMALL_CELLS:  # a small map: all rows anew
            for entry in self._fits.values():
                entry.forget()
            return
        kept = None  # held: these cells fit no share of a CPU or more now
        if held:  # the other nodes' bits, for the packed fits (none yet: no words)
            kept = np.zeros(0, dtype=np.uint64)
            if any(entry.bits is not None for entry in self._fits.values()):
                gone = np.zeros(len(self.table), dtype=np.bool_)
                gone[idx] = True
                kept = ~_pack(gone)
        for entry in self._fits.values():  # the cached fits of these cells are stale
            if entry.valid:
                entry.stale.append((rows, idx, cells, kept))

    def release_at(self, alloc: Allocation, end: int) -> None:
        """A running job gives its resources back at ``end`` (its time limit)."""
        self.add(alloc, end, None, +1)

    def reserve(self, alloc: Allocation, start: int, end: int) -> None:
        """Hold ``alloc`` from ``start`` to ``end`` for a pending job (a backfill reservation)."""
        self.add(alloc, start, end, -1)

    # ---- testing -----------------------------------------------------------------
    def _fit_cells(
        self, key: FitKey, cpu: CellArray, mem: CellArray, gpu: CellArray,
        cols: IntArray | slice,
    ) -> BoolArray:
        """Where one node's share of shape ``key`` fits, for these cells (nodes ``cols``)."""
        return fit_cells(self.table, key, cpu, mem, gpu, cols)

    def _fit_rows(self, key: FitKey) -> BoolArray:
        """The cached fit of ``key`` for every buffer row (computed where missing)."""
        entry = self._fits.get(key)
        if entry is None:
            entry = self._fits[key] = _Fit(np.empty(self._cpu.shape, dtype=np.bool_))
        fit, valid = entry.buf, entry.valid
        if entry.stale:  # cells changed since they were computed (``_add_cells``)
            cpu, mem, gpu = (g.reshape(-1) for g in (self._cpu, self._mem, self._gpu))
            for rows, idx, cells, kept in entry.stale:  # cells: flat, rows x idx
                if int(rows.max(initial=-1)) >= valid:
                    cells = cells[rows < valid]
                if not len(cells):
                    continue
                if kept is not None and key[0] >= 1:  # whole nodes held: no fit there
                    fit.reshape(-1)[cells] = False
                    if entry.bits is not None:  # it had them when the nodes were held
                        packed = rows[rows < entry.bits_valid]
                        entry.bits[packed] &= kept
                    continue
                fit.reshape(-1)[cells] = self._fit_cells(key, cpu[cells], mem[cells],
                                                         gpu[cells], idx)
                if entry.bits is not None:
                    entry.bits_stale.append(rows)
            entry.stale.clear()
        if valid < self._rows:
            a, b = valid, self._rows
            fit[a:b] = self._fit_cells(key, self._cpu[a:b], self._mem[a:b], self._gpu[a:b],
                                       slice(None))
            entry.valid = b
        return fit

    def _fit_bits(self, key: FitKey) -> WordArray:
        """The cached fit of ``key`` for every buffer row, packed (``_Fit.bits``)."""
        self._fit_rows(key)
        entry = self._fits[key]
        n_bytes = (len(self.table) + 7) // 8
        if entry.bits is None:  # (bits_valid is 0 and bits_stale empty until there are bits)
            entry.bits = np.zeros((entry.buf.shape[0], _word_count(len(self.table))),
                                  dtype=np.uint64)
        packed = entry.bits.view(np.uint8)
        fit = entry.buf
        if entry.bits_stale:
            rows = np.concatenate(entry.bits_stale)
            rows = rows[rows < entry.bits_valid]
            packed[rows, :n_bytes] = np.packbits(fit[rows], axis=1, bitorder="little")
            entry.bits_stale.clear()
        if entry.bits_valid < self._rows:
            a, b = entry.bits_valid, self._rows
            packed[a:b, :n_bytes] = np.packbits(fit[a:b], axis=1, bitorder="little")
            entry.bits_valid = b
        return entry.bits

    def fits_now(self, req: ResourceRequest, allowed: BoolArray, count: int) -> bool:
        """Could ``count`` allowed nodes host ``req`` in the first slot (ignoring duration)?"""
        row = self._fit_rows(fit_key(req))[self._order[0]]
        return int(np.count_nonzero(allowed & row)) >= count

    def _bounds_of(
        self, req: ResourceRequest, allowed: BoolArray, count: int
    ) -> tuple[FitKey, BoolArray, dict[tuple[int, int], int | None]] | None:
        """What `earliest` and `starts_now` search: the allowed nodes that can hold the
        request's GPUs per node, the request's fit key, and the answers already found
        for it on those nodes (``(count, duration)`` -> first start, None = never);
        None when fewer than ``count`` nodes are left."""
        allowed = gpu_allowed(self.table, req, allowed)
        if int(np.count_nonzero(allowed)) < count:
            return None
        key = fit_key(req)
        return key, allowed, self._bounds.setdefault((key, allowed.tobytes()), {})

    def earliest(
        self, req: ResourceRequest, allowed: BoolArray, count: int, duration: int
    ) -> tuple[int, BoolArray] | None:
        """First slot start where ``count`` allowed nodes fit ``req`` for ``duration`` seconds.

        Only slots where ``count`` nodes fit are candidates; for the first few of
        them the run window is tested on those nodes only, then (if none held) every
        slot at once: a node is good for a start slot when no slot overlapping
        ``[start, start + duration)`` lacks resources (prefix sums of the bad slots).
        A wide map (``_PACKED`` nodes or more) is searched the same way over its fits
        packed 64 nodes to a word (``_earliest_packed``).  Returns (start, nodes free
        for the whole run) or ``None`` when the job cannot start inside bf_window.
        """
        found_before = self._bounds_of(req, allowed, count)
        if found_before is None:
            return None
        key, allowed, bounds = found_before
        lower = self.now
        for (c, d), found in bounds.items():
            if c <= count and d <= duration:
                if found is None:
                    return None
                lower = max(lower, found)
        result = self._earliest(key, allowed, count, duration, lower)
        bounds[(count, duration)] = None if result is None else result[0]
        return result

    def starts_now(
        self, req: ResourceRequest, allowed: BoolArray, count: int, duration: int
    ) -> BoolArray | None:
        """The nodes free for the whole run if ``earliest`` would answer *now*, else None
        (a later start, or none inside the window: not told apart).

        The first slot's test of ``_earliest``, alone: for a job that can only start now
        or not at all in this pass (sched/backfill's jobs that get no reservation), the
        search through the later slots would be thrown away.
        """
        found_before = self._bounds_of(req, allowed, count)
        if found_before is None:
            return None
        key, allowed, bounds = found_before
        t, now = self.table, self.now
        for (c, d), found in bounds.items():
            if c <= count and d <= duration and (found is None or found > now):
                return None  # earliest would start its search after now, or say never
        order, times = self._order, self.times
        stop = bisect.bisect_left(times, now + duration)  # the slots the run overlaps
        if len(t) >= _PACKED:  # the window's packed rows ANDed (``_earliest_packed``)
            bits = self._fit_bits(key)
            window = np.asarray(order[: max(stop, 1)], dtype=np.int64)
            packed = np.bitwise_and.reduce(bits[window], axis=0)
            packed &= self._words(allowed)
            if int(_popcounts(packed)) < count:
                return None
            bounds[(count, duration)] = now
            return _unpack(packed, len(t))
        fit = self._fit_rows(key)
        row = fit[order[0]] & allowed
        if int(np.count_nonzero(row)) < count:
            return None
        nodes = np.flatnonzero(row)
        window = np.asarray(order[:stop], dtype=np.int64)
        held = _gather(fit, window, nodes).all(axis=0)
        if int(np.count_nonzero(held)) < count:
            return None
        good = np.zeros(len(t), dtype=np.bool_)
        good[nodes[held]] = True
        bounds[(count, duration)] = now
        return good

    def _earliest(
        self, key: FitKey, allowed: BoolArray, count: int, duration: int, lower: int
    ) -> tuple[int, BoolArray] | None:
        """``earliest`` for the slots starting at ``lower`` or later.

        Within a pass the map only loses resources (reservations, jobs started), so a
        job can start no earlier than a job of the same shape, allowed nodes, no more
        nodes and no longer limit tested before it: ``lower`` is that start.
        """
        all_times = self.times
        first = bisect.bisect_right(all_times, lower) - 1
        n_start = bisect.bisect_left(all_times, self.horizon) - first
        n = len(self.table)
        if n >= _PACKED:
            return self._earliest_packed(key, first, n_start, allowed, count, duration)
        fit = self._fit_rows(key)[: self._rows]
        order = self._slot_arrays()[1][first:]
        if duration > 0 and n <= _BITS and len(order) <= _BITS:
            return self._earliest_bits(fit, order, first, n_start, allowed, count, duration)
        narrow = n <= _NARROW
        pos, chunk, tries = 0, _CHUNK, 0
        while pos < n_start:  # candidate start slots, a growing chunk of slots at a time
            hi = min(n_start, pos + chunk)
            rows = fit[order[pos:hi]]
            rows &= allowed
            for s in ((rows.sum(axis=1) >= count).nonzero()[0] + pos).tolist():
                if tries == _LAZY_TRIES:  # many near misses: test the rest at once
                    times = self._slot_arrays()[0][first:]
                    ends = np.searchsorted(times, times[:n_start] + duration, side="left")
                    fit_l = fit[order[s:]]
                    fit_l &= allowed
                    later = np.flatnonzero(np.count_nonzero(fit_l[: n_start - s], axis=1) >= count)
                    return _first_window(fit_l, times[s:], ends[s:] - s, later, count, duration)
                tries += 1
                start = all_times[first + s]
                stop = bisect.bisect_left(all_times, start + duration) - first
                window = order[s : max(stop, s + 1)]  # at least the start slot itself
                if narrow:  # a few nodes: every node's window at once, no index pairs
                    good = fit[window].all(axis=0)
                    good &= allowed
                    if int(good.sum()) >= count:
                        return start, good
                    continue
                nodes = rows[s - pos].nonzero()[0]
                held = _gather(fit, window, nodes).all(axis=0)
                if int(np.count_nonzero(held)) >= count:
                    good = np.zeros(len(self.table), dtype=np.bool_)
                    good[nodes[held]] = True
                    return start, good
            pos, chunk = hi, chunk * 4
        return None

    def _earliest_packed(
        self, key: FitKey, first: int, n_start: int, allowed: BoolArray, count: int,
        duration: int,
    ) -> tuple[int, BoolArray] | None:
        """`_earliest` on a wide map, over its rows packed 64 nodes to a word.

        The candidate starts are the slots where ``count`` allowed nodes fit (a
        popcount per slot).  The first candidate's run window is ANDed row by row;
        if it does not hold, every later candidate's window is the AND of two
        overlapping power-of-two runs of rows (a sparse table of ANDs), all at once.
        On 1,000 nodes a row is 16 words, where testing the windows node by node
        (prefix sums of the bad slots) summed 1,000 counts per row.
        """
        if n_start <= 0:  # no slot starts inside the window
            return None
        bits = self._fit_bits(key)
        all_times, all_order = self._slot_arrays()
        rows = bits[all_order[first:]]
        rows &= self._words(allowed)
        cand = np.flatnonzero(_popcounts(rows[:n_start]) >= count)
        if not len(cand):
            return None
        slot_times = self.times
        c = int(cand[0])
        start = slot_times[first + c]
        e = max(bisect.bisect_left(slot_times, start + duration) - first, c + 1)
        held = np.bitwise_and.reduce(rows[c:e], axis=0)
        if int(_popcounts(held)) >= count:
            return start, _unpack(held, len(self.table))
        cand = cand[1:]
        if not len(cand):
            return None
        times = all_times[first:]
        ends = np.searchsorted(times, times[cand] + duration, side="left")
        np.maximum(ends, cand + 1, out=ends)  # at least the start slot itself
        lo, hi = int(cand[0]), int(ends.max())
        level = np.frexp(ends - cand)[1] - 1  # the largest power of two within each run
        table = np.empty((int(level.max()) + 1, hi - lo, rows.shape[1]), dtype=np.uint64)
        table[0] = rows[lo:hi]
        for k in range(1, len(table)):  # table[k][i]: the AND of rows lo+i .. lo+i+2**k-1
            h = 1 << (k - 1)
            m = hi - lo - h
            np.bitwise_and(table[k - 1, :m], table[k - 1, h : h + m], out=table[k, :m])
        windows = table[level, cand - lo]
        windows &= table[level, ends - lo - (1 << level)]
        hit = np.flatnonzero(_popcounts(windows) >= count)
        if not len(hit):
            return None
        i = int(hit[0])
        return int(times[cand[i]]), _unpack(windows[i], len(self.table))

    def _words(self, allowed: BoolArray) -> WordArray:
        """``allowed`` packed as the rows of ``_Fit.bits`` are (kept per mask)."""
        key = allowed.tobytes()
        words = self._allowed_words.get(key)
        if words is None:
            words = self._allowed_words[key] = _pack(allowed)
        return words

    def _earliest_bits(
        self, fit: BoolArray, order: IntArray, first: int, n_start: int, allowed: BoolArray,
        count: int, duration: int,
    ) -> tuple[int, BoolArray] | None:
        """`_earliest` on a small map: each slot's allowed nodes that fit as the bits of
        an int, each candidate start's run window ANDed slot by slot (numpy's call
        overhead is most of a test on a few nodes and slots)."""
        rows = fit[order]
        rows &= allowed
        packed = np.packbits(rows, axis=1, bitorder="little")
        width = packed.shape[1]  # at most 8 bytes (_BITS nodes): a slot is a uint64
        if width == 1:
            masks = packed.ravel().tolist()
        else:  # each slot's bytes as one little-endian word (not int.from_bytes per slot)
            words = np.zeros((len(packed), 8), dtype=np.uint8)
            words[:, :width] = packed
            masks = words.view("<u8").ravel().tolist()
        times = self.times
        for s in range(n_start):
            held = masks[s]
            if held.bit_count() < count:
                continue
            start = times[first + s]
            for j in range(s + 1, bisect.bisect_left(times, start + duration) - first):
                held &= masks[j]
                if held.bit_count() < count:
                    break
            else:
                bits = np.frombuffer(held.to_bytes(width, "little"), dtype=np.uint8)
                good = np.unpackbits(bits, count=fit.shape[1], bitorder="little")
                return start, good.astype(np.bool_)
        return None

    def start_bound(self, req: ResourceRequest, allowed: BoolArray, count: int) -> int:
        """A time no reservation of ``count`` nodes of ``req`` can start before, now or later.

        In the map of releases only (free resources now plus running jobs ending at
        their limits) resources only come back, so each node has a first slot from
        which one share fits; a reservation needs ``count`` such nodes, so it starts no
        earlier than the ``count``-th of those slots.  Reservations and starts only take
        resources away, so the bound holds for the map at any later point of the pass.
        Returns ``horizon`` when the job cannot start inside the window.
        """
        key = fit_key(req)
        times = self._fit_times.get(key)
        if times is None:
            times = self._fit_times[key] = self._first_fit(key)
        ft = times[allowed]
        if len(ft) < count or count <= 0:
            return self.horizon if count > 0 else self.now
        # a sort, not np.partition: the times are a few slot starts repeated over runs
        # of nodes, where introselect was 4-5x slower than sorting (8,192 processors)
        return int(np.sort(ft)[count - 1])

    def _first_fit(self, key: FitKey) -> IntArray:
        """Per node, the slot start from which one share of ``key`` fits (releases only)."""
        return first_fit(self.table, key, self._base, self._events, self.now, self.horizon)

    def anything_free_now(self) -> bool:
        """True while some usable node has a free CPU now (otherwise nothing can start)."""
        return bool((self._cpu[self._order[0]] > 0).any())


def _capacity(used: int) -> int:
    """Rows of a map's buffers for ``used`` slots: room for the slots that reservations
    split off before the buffers must grow (``_grow``)."""
    return max(16, used * 2)


def _flat_cells(rows: IntArray, cols: IntArray, width: int) -> IntArray:
    """The flat indices of the cells ``rows`` x ``cols`` (rows by cols) in a contiguous
    buffer ``width`` columns wide: numpy indexes by one array 1.3-2.8x faster than by
    two broadcast ones from a few hundred cells (10 slots x 2,000 of 8,192 nodes: 35
    against 59 us)."""
    return rows[:, None] * width + cols


def _gather(buf: BoolArray, rows: IntArray, cols: IntArray) -> BoolArray:
    """``buf[rows x cols]`` (rows by cols), by flat indices (``_flat_cells``)."""
    return buf.reshape(-1)[_flat_cells(rows, cols, buf.shape[1])]


def _word_count(n: int) -> int:
    """Words of a row of ``n`` nodes packed (``WordArray``)."""
    return (n + 63) // 64


def _pack(mask: BoolArray) -> WordArray:
    """``mask`` packed as a row of ``WordArray`` (the bits past its end clear)."""
    out = np.zeros(_word_count(len(mask)), dtype=np.uint64)
    packed = np.packbits(mask, bitorder="little")
    out.view(np.uint8)[: len(packed)] = packed
    return out


def _unpack(words: WordArray, n: int) -> BoolArray:
    """The first ``n`` bits of ``words`` as booleans (``_pack`` undone)."""
    bits = np.unpackbits(np.ascontiguousarray(words).view(np.uint8), count=n, bitorder="little")
    return bits.view(np.bool_)


def _popcounts(words: WordArray) -> npt.NDArray[np.uint64]:
    """The set bits of each row of ``words`` (of a single row: one count)."""
    return np.bitwise_count(words).sum(axis=-1, dtype=np.uint64)


def _run_starts(values: IntArray) -> IntArray:
    """The positions where a run of equal ``values`` begins (the first of each value,
    when equal values are together)."""
    return np.flatnonzero(np.concatenate(([True], values[1:] != values[:-1])))


def round_up(t: int, now: int, resolution: int) -> int:
    """``t`` rounded up to a multiple of ``resolution`` (bf_resolution), never before ``now``."""
    if t <= now:
        return now
    return max(now, -(-t // resolution) * resolution)


def release_ends(releases: list[tuple[Allocation, int | None]], now: int, horizon: int,
                 resolution: int) -> tuple[list[Allocation], IntArray, BoolArray]:  # fmt: skip
    """(allocations, the slot start of each one's release, which of those are inside the
    window) of ``releases`` (allocation, limit end or None: UNLIMITED): each end rounded
    up to ``resolution`` and never before ``now``; ``horizon`` when not tracked
    (UNLIMITED, or beyond the window)."""
    allocs = [alloc for alloc, _ in releases]
    ends = np.fromiter((horizon if e is None else e for _, e in releases), dtype=np.int64,
                       count=len(releases))
    ends = np.where(ends <= now, now, np.maximum(now, -(-ends // resolution) * resolution))
    ends[ends >= horizon] = horizon  # UNLIMITED, or beyond the window: not tracked
    return allocs, ends, ends < horizon


def release_cells(cells: AllocCells, allocs: list[Allocation], ends: IntArray, horizon: int,
                  ids: list[int] | None = None) -> tuple[IntArray, IntArray, IntArray]:  # fmt: skip
    """(node, slot start, resources given back) of every node of every release inside
    the window (``release_ends``), in the allocations' order; nothing on unusable nodes."""
    idx_all, vals_all, lens = cells.concat(allocs, ids)
    row_t = np.repeat(ends, lens)
    keep = row_t < horizon
    node_idx, row_t = idx_all[keep], row_t[keep]
    return node_idx, row_t, vals_all[keep] * cells.table.usable[node_idx][:, None]


def release_events(node_idx: IntArray, row_t: IntArray, v: IntArray) -> tuple[IntArray, ...]:
    """The events of ``start_bound`` from ``release_cells``: per release of a node, by node
    then time, (node, time, CPUs, MB and GPUs the node got back by then)."""
    width = int(node_idx.max()) + 1 if len(node_idx) else 0
    if len(node_idx) and int(np.bincount(node_idx, minlength=width).max()) == 1:
        # one release per node (one-CPU nodes, whole nodes): placed by node, no sort, and
        # each is all its node got back
        at = np.full(width, -1, dtype=np.int64)
        at[node_idx] = np.arange(len(node_idx))
        by = at[at >= 0]
        ev_v = v[by]
        return node_idx[by], row_t[by], ev_v[:, 0], ev_v[:, 1], ev_v[:, 2]
    by = np.lexsort((row_t, node_idx))  # by node, then time
    ev_node, ev_time, ev_v = node_idx[by], row_t[by], v[by]
    cum = np.cumsum(ev_v, axis=0)
    starts = _run_starts(ev_node)
    before = np.zeros_like(cum)
    before[starts[1:]] = cum[starts[1:] - 1]
    cum -= np.maximum.accumulate(before, axis=0)  # released on the node so far
    return ev_node, ev_time, cum[:, 0], cum[:, 1], cum[:, 2]


def first_fit(table: NodeTable, key: FitKey, base: list[IntArray],
              events: tuple[IntArray, ...] | None, now: int, horizon: int) -> IntArray:  # fmt: skip
    """Per node, the slot start from which one share of ``key`` fits in a map of releases
    only (``base``: each node's free CPUs, MB and GPUs now; ``events``: `release_events`);
    ``horizon`` for a node where it never fits inside the window."""
    cpu0, mem0, gpu0 = base
    out = np.full(len(table), horizon, dtype=np.int64)
    if events is not None and len(events[0]):
        node, when, c, m, g = events
        ok = fit_cells(table, key, cpu0[node] + c, mem0[node] + m, gpu0[node] + g, node)
        idx = np.flatnonzero(ok)
        if len(idx):  # the events are by node, then time: each node's first that fits
            hit = node[idx]  # (where the node changes; np.unique sorted them again)
            first = _run_starts(hit)
            out[hit[first]] = when[idx[first]]
    out[fit_cells(table, key, cpu0, mem0, gpu0, slice(None))] = now
    return out


def gpu_allowed(table: NodeTable, req: ResourceRequest, allowed: BoolArray) -> BoolArray:
    """``allowed`` less the nodes with fewer GPUs (of the type) than ``req`` asks per node."""
    if req.gpus_per_node:
        return allowed & (table.total_gpus_of(req.gpu_type) >= req.gpus_per_node)
    return allowed


def cumsum_rows(grid: CellArray | IntArray, used: int) -> None:
    """``grid[:used]`` replaced by its running sum down the rows (``np.cumsum(axis=0)``).

    Row by row past 128 columns: numpy's cumsum along the first axis of a wide array
    walks it column by column and was 2-3x slower than ``used`` row additions on 256 to
    1,000 nodes (5x from a boolean array, 30x on a slots x nodes x 3 array: 1,594
    against 52 us for 21 x 2,048 x 3); on narrow maps the call overhead wins.
    """
    if grid.shape[1] < 128:
        np.cumsum(grid[:used], axis=0, out=grid[:used])
        return
    for r in range(1, used):
        np.add(grid[r], grid[r - 1], out=grid[r])


def _copy_rows(src: CellArray, rows: IntArray, out: CellArray) -> None:
    """``out[i] = src[rows[i]]`` for every ``i``, ``rows`` non-decreasing: a slice copy per
    run of consecutive rows (a map kept from the last pass is mostly one or two runs,
    and numpy's gather of rows was twice as slow as copying them as blocks)."""
    cut = np.flatnonzero(np.diff(rows) != 1) + 1
    if len(cut) > 16:
        np.take(src, rows, axis=0, out=out[: len(rows)])
        return
    bounds = [0, *cut.tolist(), len(rows)]
    for a, b in itertools.pairwise(bounds):
        r = int(rows[a])
        out[a:b] = src[r : r + b - a]


def fit_cells(
    table: NodeTable, key: FitKey, cpu: IntArray | CellArray, mem: IntArray | CellArray,
    gpu: IntArray | CellArray, cols: IntArray | slice,
) -> BoolArray:
    """Where one node's share of shape ``key`` fits in these free resources (nodes ``cols``)."""
    cpus, mem_need, whole_mem, gpus, exclusive = key
    t = table
    ok = (cpu == t.cpus[cols]) & (t.cpus[cols] >= cpus) if exclusive else cpu >= cpus
    ok &= mem >= (t.mem[cols] if whole_mem else mem_need)
    if gpus:
        ok &= gpu >= gpus
    return ok


def fit_now(table: NodeTable, key: FitKey) -> BoolArray:
    """The first slot of a map built now, without the map: where one share fits now.

    A pass only takes resources from the first slot by starting jobs (which the node
    table holds too) -- reservations start one slot later at the earliest -- so the
    first slot always equals the table's free resources on usable nodes.
    """
    u = table.usable
    return fit_cells(table, key, np.where(u, table.free_cpu, 0), np.where(u, table.free_mem, 0),
                     np.where(u, table.free_gpu, 0), slice(None))  # fmt: skip


def _first_window(
    fit: BoolArray, times: IntArray, ends: IntArray, cand: IntArray, count: int,
    duration: int,
) -> tuple[int, BoolArray] | None:
    """The first of the ``cand`` start slots whose run window ``count`` nodes fit.

    Prefix sums of the bad slots tell, for every node and start slot at once, if a
    slot of the window lacks resources.  They are taken over the candidates in
    growing batches (a few run lengths ahead first), so that a job that can start
    soon does not pay for the whole window of the map.
    """
    i, span = 0, 4 * duration
    while i < len(cand):
        a = int(cand[i])
        j = max(i + 1, int(np.searchsorted(times[cand], times[a] + span, side="right")))
        batch = cand[i:j]
        b = int(ends[batch].max())
        bad = np.zeros((b - a + 1, fit.shape[1]), dtype=np.int32)
        np.logical_not(fit[a:b], out=bad[1:], casting="unsafe")
        cumsum_rows(bad, b - a + 1)
        ok = (bad[ends[batch] - a] - bad[batch - a]) == 0
        hit = np.flatnonzero(np.count_nonzero(ok, axis=1) >= count)
        if len(hit):
            return int(times[batch[hit[0]]]), ok[hit[0]]
        i, span = j, span * 4
    return None


__all__ = [
    "AllocCells",
    "FitKey",
    "NodeSpaceMap",
    "cumsum_rows",
    "first_fit",
    "fit_cells",
    "fit_key",
    "fit_now",
    "gpu_allowed",
    "release_cells",
    "release_ends",
    "release_events",
    "round_up",
]
