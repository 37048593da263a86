"""The cyclic garbage collector held off while a widget re-runs the controller.

A simulation allocates many small container objects that live until it ends (job
records, allocations, one ``NodeAlloc`` per node of a frontier job, simpy events).
CPython's cyclic collector runs a young-generation pass every 700 such allocations
and traverses every container the survivors hold: on lesson 8's 2,089-node run
that was about 40 % of the CPU time (measured with ``gc.callbacks``), and it frees
almost nothing, as reference counting already frees what is not in a cycle.  So a
widget's re-simulation runs with the collector paused (``gc.disable``) and turns it
back on after; the cycles made meanwhile are collected then.  Nothing the engine
computes depends on when the collector runs.

Used where it pays (measured): lesson 7's and lesson 8's runs (`scaling.simulate_run`:
L8 Simulate 407 -> 260 ms CPU, L7 554 -> 394 ms).

Hold one pause over a batch of runs, not one per run (lesson 7's `goodput.sweep`
measures seven).  A pause that ends while its run's cluster is still referenced makes
the first young collection after it traverse that whole cluster and move it to an older
generation, where a later collection must traverse it again to free it (the cluster is
cyclic: simpy's events and their environment refer to each other); those promotions
also bring the next full collection closer, which in a notebook kernel traverses every
module's objects (50-70 ms measured).  A pause that ends after the runs have returned
finds them garbage in the young generation and frees them in one pass: the sweep's
CPU fell by 10-15 % (`bench_widgets -k L7`, interleaved with the previous code).

Lesson 6's what-if and explorer runs gained nothing measurable (500 jobs: 679 vs
698 ms, 100 jobs: 91 vs 95 ms, medians of interleaved runs; a pause over the whole
500-job run, 2026-12-07: no difference either), so they are not paused; they go
through ``minislurm.sim.simulate``, which widens the collector's thresholds for the run
(``minislurm.sim.collector``; neutral there, 10 % on 10,000 jobs).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Run the body with ``gc`` disabled; restore the collector's state after (nested
    pauses keep it off until the outermost ends)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


__all__ = ["collector_paused"]
