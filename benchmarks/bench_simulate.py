"""Benchmark of ``minislurm.simulate``: the generated AI mix on 1,000 nodes x 8 GPUs.

multifactor priority + sched/backfill (``--scheduler slurm``), arrival rates scaled so
the offered load is ~90 % of the GPUs.  Prints, per size: wall time, peak memory
(ru_maxrss of the process; ``--tracemalloc`` adds the peak of Python objects),
events/s, jobs/s; then the growth ratio between the smallest and largest size against
the linear ratio (quadratic growth would be the square); and the notebook case of the
what-if target (<= 150 ms): lesson 6's ``WhatIf`` re-simulating its 500 generated jobs
on the embedded default cluster (``whatif_run``, what a slider change runs) at three
slider settings.  ``--profile`` prints the cProfile hot spots.

    .venv/bin/python benchmarks/bench_simulate.py --jobs 10000 100000
    .venv/bin/python benchmarks/bench_simulate.py --jobs 2000 --profile

Measured on the shared 2-core machine (2026-12-04, other sessions busy): 2,000 jobs
1.3 s, 5,000 jobs 14.4-17.8 s (mean wait 636 s), 10,000 jobs 291 s (mean wait 4.1 h,
GPU utilisation 63 %): the queue deepens and every backfill pass then places up to
bf_max_job_test reservations, so time grows much faster than the jobs (x206 for x5);
100,000 jobs were not attempted.  What-if (lesson 6): 1.4-1.7 s at bf_window=1440 /
bf_resolution=60, 1.4-2.1 s at 4320/1, 0.8-1.2 s at 30/3600.  Targets NOT met.  The
priority recalculation and the reservation path were made cheaper this day with the
same schedules (digests of 8 simulations unchanged): 8-18 % less CPU for the what-if,
interleaved against the previous commit in one run.  2026-12-04 (quiet machine): 2,000
jobs 0.9 s, 5,000 jobs 13.5 s (x14.7 for x2.5 jobs: the queue deepens); what-if 1.23 s
(1440/60), 1.40 s (4320/1), 0.71 s (30/3600).  The day's fidelity work kept the schedules
(same digests) and, after one fix, the what-if's speed (1.05 s vs 1.18 s at its start,
interleaved).  Rescaling lesson 6's workload to 90 % of the cluster's GPUs does not make
it cheap either (0.76-0.93 s): the cost follows the simulated span (one
PriorityCalcPeriod pass every 5 minutes) and the events, not the overload.  A later session
(load ~1): trace simulations skip the PriorityCalcPeriod passes that the next pass
replaces unread (1,295 of 2,217 in the 1440/60 what-if; same schedules, priorities and
fair-share floats) and QOS checks stop copying limits: CPU time of the what-if,
interleaved 4 times against the session's start, medians 1.44 -> 1.31 s (1440/60),
1.53 -> 1.35 s (4320/1), 0.84 -> 0.65 s (30/3600).  Still ~9x over the 150 ms target;
backfill's node-space map is now 55 % of the profile.
"""

from __future__ import annotations

import argparse
import cProfile
import itertools
import pstats
import resource
import tracemalloc
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from minislurm.config import SlurmConfig, parse_config
from minislurm.simulate import SimulationResult, simulate
from minislurm.workload.generator import (
    WorkloadJob,
    WorkloadSpec,
    default_kinds,
    generate,
    total_gpu_hours,
)

CONF = """ClusterName=bench
SlurmctldHost=localhost
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=30,bf_resolution=60,bf_window=4320,bf_max_job_test=500
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
PriorityType=priority/multifactor
PriorityWeightAge=1000
PriorityWeightFairshare=10000
PriorityWeightJobSize=500
PriorityWeightPartition=1000
GresTypes=gpu
DefMemPerCPU=4000
NodeName=g[0001-{n:04d}] CPUs=64 RealMemory=512000 Gres=gpu:a100:8 State=UNKNOWN
PartitionName=gpu Nodes=g[0001-{n:04d}] Default=YES MaxTime=3-00:00:00 State=UP
PartitionName=debug Nodes=g[0001-{n:04d}] MaxTime=01:00:00 PriorityJobFactor=10 State=UP
"""


def cluster(nodes: int) -> SlurmConfig:
    """``nodes`` nodes of 64 CPUs and 8 A100s, partitions gpu (default) and debug."""
    return parse_config(CONF.format(n=nodes), "bench.conf")


def workload(n_jobs: int, nodes: int, seed: int = 1, load: float = 0.9) -> list[WorkloadJob]:
    """The first ``n_jobs`` of the generator, arrivals scaled to ``load`` of the GPUs."""
    kinds = default_kinds(max_nodes=16, gpus_per_node=8)
    day = list(generate(WorkloadSpec(seed=seed, days=1.0, kinds=kinds)))
    factor = load * nodes * 8 * 24 / max(total_gpu_hours(day), 1e-9)
    kinds = tuple(replace(k, per_day=k.per_day * factor) for k in kinds)
    per_day = max(1, len(day)) * factor
    spec = WorkloadSpec(seed=seed, days=n_jobs / per_day * 1.2 + 0.1, kinds=kinds)
    return list(itertools.islice(generate(spec), n_jobs))


def measure(
    n_jobs: int, nodes: int, profile: bool = False, trace: bool = False,
    progress: bool = False,
    load: float = 0.9,
) -> tuple[SimulationResult, float]:
    """Simulate; returns the result and the tracemalloc peak in MiB (0 unless ``trace``).

    tracemalloc slows Python down about twice, so it is off unless asked for; the
    process's ru_maxrss is printed either way.
    """
    jobs = workload(n_jobs, nodes, load=load)
    cfg = cluster(nodes)
    if trace:
        tracemalloc.start()
    prof = cProfile.Profile() if profile else None
    if prof is not None:
        prof.enable()
    result = simulate(jobs, cfg, scheduler="slurm", progress=progress)
    if prof is not None:
        prof.disable()
    peak = 0
    if trace:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    if prof is not None:
        stats = pstats.Stats(prof)
        stats.sort_stats("cumulative").print_stats(25)
        stats.sort_stats("tottime").print_stats(15)
    return result, peak / 2**20


#: Slider settings of lesson 6's what-if timed: (bf_window minutes, bf_resolution seconds).
WHAT_IF_SETTINGS = ((1440, 60), (4320, 1), (30, 3600))


def what_if(repeats: int = 3) -> list[tuple[int, int, float]]:
    """The notebook case: lesson 6's ``WhatIf`` re-simulating its 500 generated jobs on
    the embedded default cluster (``course.lessons.backfill_compare.whatif_run``, the
    call a slider change makes) -- best of ``repeats`` seconds per slider setting."""
    from course.lessons.backfill_compare import whatif_run

    out = []
    for window, resolution in WHAT_IF_SETTINGS:
        best = min(whatif_run(500, window, resolution).seconds for _ in range(repeats))
        out.append((window, resolution, best))
    return out


def what_if_breakdown(window: int = 1440, resolution: int = 60, repeats: int = 3) -> None:
    """Where the what-if's time goes, by the controller's entry points (CPU time).

    Each entry point is wrapped with a CPU-time accumulator: the backfill pass, the
    main scheduler pass, the PriorityCalcPeriod pass, a submission (its priority
    included) and a job's end; the rest is SimPy, the feeder and the result.  It
    answers "what if X were free": the target can only be met if the rest is within it.
    """
    import time

    from course.lessons.backfill_compare import whatif_run
    from minislurm.ctld import lifecycle, loops
    from minislurm.ctld.controller import Controller

    spent: dict[str, float] = {}

    def timed(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            t = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[name] = spent.get(name, 0.0) + time.process_time() - t
        return wrapper

    patches = [(loops, "backfill_pass", "backfill pass"), (loops, "main_pass", "main pass"),
               (Controller, "recalc_priorities", "priority pass"),
               (Controller, "decay_priorities", "priority pass"),
               (Controller, "submit", "submission"), (lifecycle, "body_ended", "job end")]
    saved = [(obj, attr, getattr(obj, attr)) for obj, attr, _ in patches]
    try:
        for obj, attr, name in patches:
            setattr(obj, attr, timed(name, getattr(obj, attr)))
        whatif_run(500, window, resolution)  # warm up (imports, caches)
        spent.clear()
        t = time.process_time()
        for _ in range(repeats):
            whatif_run(500, window, resolution)
        total = (time.process_time() - t) / repeats
    finally:
        for obj, attr, fn in saved:
            setattr(obj, attr, fn)
    parts = {k: v / repeats for k, v in spent.items()}
    parts["rest (SimPy, feeder, result)"] = total - sum(parts.values())
    print(f"what-if CPU time by entry point (bf_window={window}, bf_resolution={resolution}, "
          f"mean of {repeats}): {total * 1000:.0f} ms")
    for name, sec in sorted(parts.items(), key=lambda kv: -kv[1]):
        print(f"  {name:<30} {sec * 1000:6.0f} ms  {sec / total:5.1%}  "
              f"(all else: {(total - sec) * 1000:.0f} ms)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, nargs="*", default=[10_000, 100_000])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--no-what-if", action="store_true")
    parser.add_argument("--tracemalloc", action="store_true", help="peak of Python objects")
    parser.add_argument("--load", type=float, default=0.9,
                        help="offered load: GPU-hours submitted per GPU-hour of the cluster")
    parser.add_argument("--progress", action="store_true", help="progress bar (jobs submitted)")
    parser.add_argument("--breakdown", action="store_true",
                        help="the what-if's CPU time by controller entry point")
    args = parser.parse_args()
    rows = []
    for n in args.jobs:
        result, peak = measure(
            n, args.nodes, args.profile, args.tracemalloc, args.progress, args.load
        )
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        m = result.metrics
        rows.append((n, result.wall_seconds))
        mem = f"tracemalloc peak {peak:.0f} MiB, " if args.tracemalloc else ""
        print(f"{n:>7} jobs ({len(result.jobs)} records, {result.rejected} rejected) on "
              f"{args.nodes} nodes: wall {result.wall_seconds:.1f} s, "
              f"{result.jobs_per_second:,.0f} jobs/s, {result.events_per_second:,.0f} events/s, "
              f"{mem}maxrss {rss:.0f} MiB; "
              f"GPU util {m.gpu_utilization:.1%}, mean wait {m.mean_wait:.0f} s", flush=True)
    if len(rows) >= 2:
        (n0, t0), (n1, t1) = rows[0], rows[-1]
        print(f"growth {n0} -> {n1} jobs: time x{t1 / t0:.1f} for jobs x{n1 / n0:.1f} "
              f"(linear x{n1 / n0:.1f}, quadratic x{(n1 / n0) ** 2:.0f})")
    if not args.no_what_if:
        for window, resolution, t in what_if():
            print(f"what-if (lesson 6, 500 jobs, bf_window={window} min, "
                  f"bf_resolution={resolution} s): re-simulates in {t * 1000:.0f} ms "
                  f"(target <= 150 ms: {'ok' if t <= 0.150 else 'MISSED'})", flush=True)
    if args.breakdown:
        what_if_breakdown()

if __name__ == "__main__":
    main()
