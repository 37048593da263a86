"""The cyclic garbage collector widened while a simulation runs (``collector_widened``).

A simulation keeps every ended attempt for sacct (``JobRecord``, its ``Allocation``,
one ``NodeAlloc`` per node), so the heap grows from about 52,000 to 287,000 container
objects in a 10,000-job run on 1,000 nodes.  CPython's default thresholds
(``gc.get_threshold()`` = 700, 10, 10) run a young collection every 700 allocations and
promote what survives it; the events and records that live a little longer than that
reach the old generation, and the full collections they bring traverse the whole heap,
the workload read before the run included.  That was about 18 % of the 10,000-job run's
CPU (measured with ``gc.callbacks``), and almost nothing it traverses is garbage:
reference counting frees what is not in a cycle.

So ``simulate`` runs inside ``collector_widened``:

- ``gc.freeze()`` moves what exists before the run (the workload, the modules, a
  notebook's objects) out of every collection for the run's length;
- the thresholds become ``WIDE`` (10,000, 20, 100): a young collection every 10,000
  allocations, so most events die before one sees them, and fewer full collections.

Cycles are still collected during the run (simpy's events and processes make some), so
the peak memory stays what it was.  Both are put back after the run (``gc.unfreeze`` only
if the run froze: a caller's own freeze, as slurmctld's of its recovered state, stays;
runs that overlap put it back when the last one ends).
Nothing the engine computes depends on when the collector runs; the schedule digests
pinned by the tests are the same either way.

Measured (fresh processes in turn, CPU time, medians): the 10,000-job growth run
(``benchmarks/bench_simulate.py``) 2.87 -> 2.45 s; 30,000 jobs 23.4 -> 21.2 s.  Gen 0 at
700 with only the freeze gained nothing, the thresholds alone about half of it, and
``gc.disable`` less than the two together (the cyclic garbage then stays until the end,
and new objects no longer reuse its memory).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

#: The collector's thresholds while a simulation runs (``gc.set_threshold``).
WIDE = (10_000, 20, 100)

_lock = threading.Lock()
_depth = 0  # simulations running now (nested, or in other threads)
_saved: tuple[tuple[int, int, int], bool] = ((700, 10, 10), False)  # (thresholds, froze)


@contextmanager
def collector_widened() -> Iterator[None]:
    """Run the body with what exists frozen and the thresholds at ``WIDE``; put both back.

    The collector is one per process: the first of simulations that overlap (nested,
    or in threads) widens it, and the last to end puts it back as it was."""
    global _depth, _saved
    with _lock:
        if _depth == 0:
            freeze = gc.get_freeze_count() == 0
            _saved = (gc.get_threshold(), freeze)
            if freeze:
                gc.freeze()
            gc.set_threshold(*WIDE)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                thresholds, froze = _saved
                gc.set_threshold(*thresholds)
                if froze:
                    gc.unfreeze()


__all__ = ["WIDE", "collector_widened"]
