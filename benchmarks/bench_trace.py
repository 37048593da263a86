"""Benchmark of trace replay (issue 21): minislurm against AccaSim 1.1.3, the growth line,
and where the time goes.

1. **Public-format trace, side by side.**  A Lublin–Feitelson 1999 trace in SWF
   (``minislurm.sim.workload.lublin``: ``--jobs`` jobs on ``--procs`` processors, the
   ``lublin_256`` family by default), or any SWF file (``--swf``), is replayed with EASY
   backfilling by ``simulate --procs N --scheduler easy`` (``read_swf`` + ``simulate``)
   and by AccaSim 1.1.3 (``EASYBackfilling(FirstFit())``, one single-core node per
   processor), each in a fresh Python process, in the same run.  Printed: wall time,
   CPU time (with children: AccaSim forks its output writers), jobs/s, the ratio
   minislurm/AccaSim (target >= 10), mean wait and mean bounded slowdown (tau = 10 s)
   of each, and of the textbook EASY of the tests (``tests/easy_reference.py``),
   which ``--scheduler easy`` must match within 1 %.
2. **Growth.**  The generated AI mix at ``--load`` (0.9) offered load on ``--nodes``
   (1,000) x 8-GPU nodes, multifactor priority + Slurm's backfill (``bench_simulate``'s
   cluster and workload: prefixes of one trace), 10k and 30k jobs; ``--with-100k`` adds
   100k (minutes today).  Each size runs in its own process, so its peak memory
   (``ru_maxrss``; ``--tracemalloc`` adds Python's own peak, at about twice the time) is
   its own.  Then the ratio of the largest to the smallest (target: 100k/10k <= 12).
3. ``--breakdown``: cProfile of the trace replay and of the smallest growth size, its
   own time grouped by minislurm module (other code by top-level package), then the top
   functions: the next optimisation's target.
4. ``--phases``: the trace replay's CPU time per controller step (submit, main and
   backfill passes, select, job start and end, record snapshots, node-space map build and
   earliest start), measured by timers around those steps instead of cProfile (which
   slows Python-heavy code most and shifts the shares), in microseconds per job beside
   the budget the x10 target leaves per job (AccaSim's CPU per job / 10).

AccaSim 1.1.3 (2021, ``pip install 'minislurm-course[bench]'``) installs on Python 3.11
but does not import there: ``accasim/utils/misc.py`` does ``from collections import
Mapping`` (moved to ``collections.abc`` in 3.3, removed in 3.10).  Its process here
aliases ``collections.Mapping`` to ``collections.abc.Mapping`` before the import and
changes nothing else.  Without AccaSim the run says so and goes on.

    .venv/bin/python benchmarks/bench_trace.py                    # 10k Lublin + growth 10k, 30k
    .venv/bin/python benchmarks/bench_trace.py --breakdown --growth 10000
    .venv/bin/python benchmarks/bench_trace.py --swf trace.swf --procs 128 --no-growth
    .venv/bin/python benchmarks/bench_trace.py --no-growth --jobs 3000 --phases
Baseline, 2026-12-06 (this 2-core machine at load 4-11, before issue 21's optimisation;
seed-1 trace, 10,000 jobs, 256 processors; three runs): minislurm 13.8-19.9 s wall,
9.4-10.0 s CPU, its loop 13.4-19.2 s, maxrss 154 MiB; AccaSim 20.8-22.9 s wall, 9.7-10.6
s CPU, its loop 7.1-11.7 s, maxrss 68 MiB.  Ratio minislurm/AccaSim: x1.07-1.66 wall,
x1.03-1.06 CPU, x0.53-0.61 loop against loop: about AccaSim's speed, as the issue says;
the >= 10x target is missed 6-10x (wall), ~10x (CPU), ~17x (loops).  Mean wait / bounded
slowdown: textbook 4,953 s / 181.93; minislurm +0.03 % / +0.12 %; AccaSim -6.0 % / +1.4 %
(its EASY keeps a reservation once made and counts dispatching time as simulated time).
Growth (AI mix, 0.9 load, 1,000 x 8 GPUs, slurm): 10k jobs 18.1 s (6.6 s CPU, maxrss 179
MiB, no queue), 30k jobs 145.7 s (47.5 s CPU, maxrss 465 MiB, mean wait 228 s): x8.1 for
x3 jobs -- the time follows the queue (see bench_simulate's notes for 100k).
--breakdown (cProfile on CPU time, about 8x slower under the profiler), trace replay:
backfill passes 44 % (8,518 passes), main passes 26 % (19,805), and 25 % in
``Job.snapshot`` (30,000 calls: the frozen record slurmdbd keeps, ``ctld/controller.py``
``accounting_store.record`` at submit, start and end).  By module (built-ins charged to
their callers): ``minislurm.job`` 17 % (``Allocation.num_cpus``/``mem_mb``/``num_gpus``
sum over one entry per node, and ``--procs 256`` makes a 256-processor job 256 one-CPU
nodes), ``sched.node_space`` 16 % (``add_releases`` rebuilds the map from every running
job each pass), numpy 8 %, ``ctld.controller`` 7 %, ``select.cons_tres`` 7 %,
``ctld.eligibility`` 7 % (``blocker`` on every pending job of every pass), hostlist 6 %.
AI mix (10k): main passes 39 %, ``Job.snapshot`` 31 %, job ends 26 %.  AccaSim's time
is its allocator (44 %) and resource manager (29 %: a dict comprehension of the
availability of every node at every dispatch).
"""

from __future__ import annotations

import argparse
import cProfile
import datetime
import json
import os
import pstats
import resource
import subprocess
import sys
import sysconfig
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from script_module import load_script as _load  # benchmarks/ is the script's folder

ROOT = Path(__file__).resolve().parents[1]
RESULT = "RESULT "
TAU = 10


# ------------------------------------------------------------------ measured in a child


def _cpu() -> float:
    """CPU seconds of this process and of its waited-for children."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _maxrss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def module_of(filename: str) -> str:
    """``.../minislurm/sched/backfill.py`` -> ``minislurm.sched.backfill``; other code:
    its top-level package (``simpy``, ``numpy``), ``~`` for built-ins."""
    if filename == "~" or filename.startswith("<"):
        return "(built-ins)"
    parts = Path(filename).with_suffix("").parts
    for top in ("minislurm", "accasim"):
        if top in parts:
            i = len(parts) - 1 - parts[::-1].index(top)
            if parts[i - 1] != "tests":  # tests/minislurm/... are tests, not the package
                return ".".join(parts[i:]).removesuffix(".__init__")
    if "site-packages" in parts:
        return parts[parts.index("site-packages") + 1]
    if filename.startswith(sysconfig.get_paths()["stdlib"]):
        return "(stdlib) " + parts[-1]
    return parts[-1]


def profile_lines(prof: cProfile.Profile, top: int = 15) -> list[str]:
    """Own time by module (a built-in's time charged to the modules calling it, so that
    ``sum``/``len``/numpy calls count where they are made), then the top functions."""
    stats = pstats.Stats(prof)
    raw: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    total = sum(v[2] for v in raw.values()) or 1e-9
    by_module: dict[str, float] = {}
    for (filename, _line, _name), (_cc, _nc, tt, _ct, callers) in raw.items():
        if module_of(filename) == "(built-ins)" and callers:
            for (caller_file, _l, _n), caller_stats in callers.items():
                key = module_of(caller_file)
                by_module[key] = by_module.get(key, 0.0) + caller_stats[2]
            continue
        key = module_of(filename)
        by_module[key] = by_module.get(key, 0.0) + tt
    out = [f"  own CPU time by module, built-ins charged to their callers "
           f"(cProfile, {total:.1f} s profiled):"]
    for mod, tt in sorted(by_module.items(), key=lambda kv: -kv[1])[:top]:
        out.append(f"    {tt:7.2f} s  {tt / total:5.1%}  {mod}")
    out.append("  top functions by time with callees (drivers above 90 % left out):")
    inner = [kv for kv in raw.items() if kv[1][3] <= 0.9 * total]
    funcs = sorted(inner, key=lambda kv: -kv[1][3])[:top]
    for (filename, line, name), (_cc, nc, tt, ct, _c) in funcs:
        out.append(f"    {ct:7.2f} s  {ct / total:5.1%}  {module_of(filename)}:{line} {name} "
                   f"({nc} calls, own {tt:.2f} s)")
    return out


def _timed(run: Callable[[], dict[str, Any]], breakdown: bool, trace: bool) -> dict[str, Any]:
    """Run in this (child) process; wall, CPU, memory; the profile when asked."""
    # CPU time, not wall time: the machine is shared, and AccaSim's writer threads wait
    prof = cProfile.Profile(time.process_time) if breakdown else None
    if trace:
        tracemalloc.start()
    wall, cpu = time.perf_counter(), _cpu()
    if prof is not None:
        prof.enable()
    out = run()
    if prof is not None:
        prof.disable()
    out["wall"] = time.perf_counter() - wall
    out["cpu"] = _cpu() - cpu
    out["maxrss"] = _maxrss_mib()
    if trace:
        out["tracemalloc"] = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    if prof is not None:
        out["profile"] = profile_lines(prof)
    return out


#: The controller's steps ``--phases`` times (owner module, class or None, attribute,
#: label).  They nest (a job start happens inside a pass): each figure is inclusive.
PHASES = (
    ("minislurm.ctld.controller", "Controller", "submit", "submit (sbatch)"),
    ("minislurm.ctld.loops", None, "main_pass", "main scheduler pass"),
    ("minislurm.ctld.loops", None, "backfill_pass", "backfill pass"),
    ("minislurm.ctld.sched_view", "SchedView", "try_select", "select/cons_tres (both passes)"),
    ("minislurm.ctld.sched_view", "SchedView", "start", "job start (both passes)"),
    ("minislurm.ctld.lifecycle", None, "body_ended", "job end"),
    ("minislurm.ctld.job_mgr", "Job", "snapshot", "Job.snapshot (records)"),
    ("minislurm.sched.node_space", "NodeSpaceMap", "add_releases", "node-space map build"),
    ("minislurm.sched.node_space", "NodeSpaceMap", "earliest", "node-space earliest start"),
    ("minislurm.sched.node_space", "NodeSpaceMap", "starts_now", "node-space starts now?"),
)


def install_phase_timers() -> dict[str, list[float]]:
    """Wrap each of ``PHASES`` with a CPU-time accumulator: {label: [seconds, calls]}.

    Unlike cProfile (which slows the Python-heavy parts most and so shifts the shares),
    this costs two clock reads per call of a few steps."""
    import importlib

    acc: dict[str, list[float]] = {}

    def wrap(owner: Any, attr: str, label: str) -> None:
        func = getattr(owner, attr)
        cell = acc[label] = [0.0, 0.0]
        clock = time.process_time

        def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = clock()
            try:
                return func(*args, **kwargs)
            finally:
                cell[0] += clock() - t0
                cell[1] += 1

        setattr(owner, attr, timed)

    for module, cls, attr, label in PHASES:
        mod = importlib.import_module(module)
        owner = getattr(mod, cls) if cls else mod
        if hasattr(owner, attr):
            wrap(owner, attr, label)
    return acc


def phase_lines(acc: dict[str, list[float]], cpu: float, jobs: int,
                budget: float | None) -> list[str]:  # fmt: skip
    """The ``--phases`` table: seconds, share, calls and microseconds per job of each step;
    ``budget``: the microseconds per job the x10 target leaves (AccaSim's CPU / 10)."""
    head = (f"  phases (CPU time, own timers, inclusive): {cpu:.2f} s, "
            f"{1e6 * cpu / jobs:,.0f} us/job")
    if budget is not None:
        head += f"; the x10 target leaves {budget:,.0f} us/job for everything"
    out = [head]
    for label, (secs, calls) in sorted(acc.items(), key=lambda kv: -kv[1][0]):
        if calls:
            out.append(f"    {secs:6.2f} s {secs / cpu:6.1%} {int(calls):7d} calls "
                       f"{1e6 * secs / jobs:8,.0f} us/job  {label}")
    return out


def child_minislurm(swf_path: str, procs: int) -> dict[str, Any]:
    """``simulate --procs N --scheduler easy`` as the CLI runs it: read, simulate."""
    from minislurm.sim.simulate import simulate
    from minislurm.sim.workload.swf import read_swf

    result = simulate(read_swf(swf_path), procs=procs, scheduler="easy")
    m = result.metrics
    return {"jobs": len(result.jobs), "mean_wait": m.mean_wait,
            "bsld": m.mean_bounded_slowdown, "sim_wall": result.wall_seconds}  # fmt: skip


ACCASIM_SYSTEM = {"groups": {"p": {"core": 1}}, "equivalence": {"processor": {"core": 1}},
                  "start_time": 0}  # fmt: skip


def _accasim_time(text: str) -> int:
    """A time of AccaSim's plan: ``str_datetime`` (``1970-01-01 00:13:26``, UTC) or seconds."""
    if text.lstrip("-").isdigit():
        return int(text)
    when = datetime.datetime.fromisoformat(text).replace(tzinfo=datetime.UTC)
    return int(when.timestamp())


def accasim_metrics(sched_file: Path) -> tuple[int, float, float]:
    """Jobs, mean wait and mean bounded slowdown from AccaSim's dispatching plan
    (``{job_id};{user};{queue_time}__{assignations}__{start_time};{end_time};...``)."""
    waits: list[int] = []
    slow: list[float] = []
    for line in sched_file.read_text().splitlines():
        if not line.strip():
            continue
        head, _assign, tail = line.split("__")
        queued = _accasim_time(head.split(";")[2])
        start, end = (_accasim_time(x) for x in tail.split(";")[:2])
        waits.append(start - queued)
        run = end - start
        slow.append(max(1.0, (start - queued + run) / max(run, TAU)))
    n = len(waits)
    return n, sum(waits) / n if n else 0.0, sum(slow) / n if n else 0.0


def child_accasim(swf_path: str, procs: int) -> dict[str, Any]:
    """AccaSim 1.1.3's EASY (``EASYBackfilling(FirstFit())``) on ``procs`` 1-core nodes."""
    import collections
    import collections.abc

    collections.Mapping = collections.abc.Mapping  # type: ignore[attr-defined]
    from accasim.base.allocator_class import FirstFit
    from accasim.base.scheduler_class import EASYBackfilling
    from accasim.base.simulator_class import Simulator

    work = Path(tempfile.mkdtemp(prefix="bench-accasim-"))
    os.chdir(work)
    (work / "sys.json").write_text(json.dumps({**ACCASIM_SYSTEM, "resources": {"p": procs}}))
    sim = Simulator(swf_path, str(work / "sys.json"), EASYBackfilling(FirstFit()),
                    RESULTS_FOLDER_PATH=str(work / "results"), show_statistics=False)  # fmt: skip
    sim.start_simulation()
    n, wait, bsld = accasim_metrics(work / "results" / f"sched-{Path(swf_path).name}")
    return {"jobs": n, "mean_wait": wait, "bsld": bsld,
            "sim_wall": sim.end_simulation_time - sim.start_simulation_time}  # fmt: skip


def growth_jobs(n_jobs: int, nodes: int, load: float) -> list[Any]:
    """The AI mix (``bench_simulate.workload``), generated before the clock starts."""
    bench = _load(ROOT / "benchmarks" / "bench_simulate.py", "bench_simulate")
    jobs: list[Any] = bench.workload(n_jobs, nodes, load=load)
    return jobs


def child_growth(jobs: list[Any], nodes: int) -> dict[str, Any]:
    """The AI mix with multifactor + Slurm backfill on ``nodes`` x 8 GPUs."""
    bench = _load(ROOT / "benchmarks" / "bench_simulate.py", "bench_simulate")
    from minislurm.sim.simulate import simulate

    offered = bench.offered_load(jobs, nodes * 8)
    result = simulate(jobs, bench.cluster(nodes), scheduler="slurm")
    m = result.metrics
    return {"jobs": len(result.jobs), "offered": offered, "mean_wait": m.mean_wait,
            "gpu_util": m.gpu_utilization, "events_per_s": result.events_per_second,
            "sim_wall": result.wall_seconds}  # fmt: skip


def _preimport(kind: str) -> None:
    """Import what a child runs (and compile it) before it is timed."""
    import minislurm.sim.simulate
    import minislurm.sim.workload.swf  # noqa: F401

    if kind == "accasim":
        import collections
        import collections.abc

        collections.Mapping = collections.abc.Mapping  # type: ignore[attr-defined]
        import accasim.base.simulator_class  # noqa: F401
    if kind == "growth":
        _load(ROOT / "benchmarks" / "bench_simulate.py", "bench_simulate")


def run_child(argv: list[str]) -> None:
    """``--child KIND ...``: measure one thing and print it as a ``RESULT`` JSON line."""
    parser = argparse.ArgumentParser()
    parser.add_argument("kind", choices=("minislurm", "accasim", "growth"))
    parser.add_argument("--swf")
    parser.add_argument("--procs", type=int, default=256)
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--load", type=float, default=0.9)
    parser.add_argument("--breakdown", action="store_true")
    parser.add_argument("--tracemalloc", action="store_true")
    parser.add_argument("--phases", action="store_true")
    a = parser.parse_args(argv)
    _preimport(a.kind)  # imports are not the simulator's speed: done before the clock starts
    if a.kind == "minislurm":
        acc = install_phase_timers() if a.phases else None
        out = _timed(lambda: child_minislurm(a.swf, a.procs), a.breakdown, a.tracemalloc)
        if acc is not None:
            out["phases"] = acc
    elif a.kind == "accasim":
        out = _timed(lambda: child_accasim(a.swf, a.procs), a.breakdown, a.tracemalloc)
    else:
        jobs = growth_jobs(a.jobs, a.nodes, a.load)
        out = _timed(lambda: child_growth(jobs, a.nodes), a.breakdown, a.tracemalloc)
    print(RESULT + json.dumps(out), flush=True)


def spawn(args: Sequence[str]) -> dict[str, Any] | str:
    """Run ``--child args`` in a fresh interpreter; its RESULT, or the error it printed."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}
    proc = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True,
                          text=True, env=env, cwd=ROOT)  # fmt: skip
    for line in proc.stdout.splitlines():
        if line.startswith(RESULT):
            result: dict[str, Any] = json.loads(line[len(RESULT):])
            return result
    lines = (proc.stderr or proc.stdout).strip().splitlines()
    return lines[-1] if lines else f"exit status {proc.returncode}"


# ------------------------------------------------------------------ the parent


def textbook(swf_path: Path, procs: int) -> tuple[float, float]:
    """Mean wait and bounded slowdown of the tests' textbook EASY on the trace."""
    from minislurm.sim.workload.swf import read_swf

    ref = _load(ROOT / "tests" / "easy_reference.py", "easy_reference")
    swf = read_swf(swf_path)
    jobs = [ref.RefJob(r.job_number, r.submit_time, r.procs, max(0, r.run_time),
                       r.time_limit_seconds) for r in swf.records]  # fmt: skip
    out = ref.easy_schedule(jobs, procs)
    return ref.mean_wait(out), ref.mean_bounded_slowdown(out)


def _pct(value: float, ref: float) -> str:
    return f"{(value - ref) / ref:+.2%}" if ref else "n/a"


def trace_part(args: argparse.Namespace, swf_path: Path) -> None:
    flags = ["--breakdown"] if args.breakdown else []
    flags += ["--tracemalloc"] if args.tracemalloc else []
    common = ["--swf", str(swf_path), "--procs", str(args.procs), *flags]
    ms = spawn(["minislurm", *common, *(["--phases"] if args.phases else [])])
    acc: dict[str, Any] | str = "skipped (--no-accasim)"
    if not args.no_accasim:
        acc = spawn(["accasim", *common])
    ref_wait, ref_bsld = textbook(swf_path, args.procs)
    print(f"trace {swf_path.name}: EASY on {args.procs} processors")
    print(f"  textbook EASY (tests/easy_reference.py): mean wait {ref_wait:,.0f} s, "
          f"mean bounded slowdown {ref_bsld:.2f}")
    for name, r in (("minislurm simulate", ms), ("AccaSim 1.1.3", acc)):
        if isinstance(r, str):
            print(f"  {name}: not run: {r}")
            continue
        mem = f", tracemalloc peak {r['tracemalloc']:.0f} MiB" if "tracemalloc" in r else ""
        print(f"  {name}: {r['jobs']} jobs in {r['wall']:.1f} s wall ({r['cpu']:.1f} s CPU, "
              f"its own loop {r['sim_wall']:.1f} s): {r['jobs'] / r['wall']:,.0f} jobs/s; "
              f"maxrss {r['maxrss']:.0f} MiB{mem}; mean wait {r['mean_wait']:,.0f} s "
              f"({_pct(r['mean_wait'], ref_wait)} vs textbook), bounded slowdown "
              f"{r['bsld']:.2f} ({_pct(r['bsld'], ref_bsld)})")
    if isinstance(ms, dict) and isinstance(acc, dict):
        ratio = (ms["jobs"] / ms["wall"]) / (acc["jobs"] / acc["wall"])
        cpu_ratio = (ms["jobs"] / ms["cpu"]) / (acc["jobs"] / acc["cpu"])
        loop_ratio = acc["sim_wall"] / ms["sim_wall"]
        print(f"  ratio minislurm/AccaSim jobs/s: x{ratio:.2f} wall, x{cpu_ratio:.2f} CPU, "
              f"x{loop_ratio:.2f} by each one's own simulation loop (setup and output "
              f"excluded) (target >= 10 on wall: {'ok' if ratio >= 10 else 'MISSED'})")
    if isinstance(ms, dict) and "phases" in ms:
        budget = 1e6 * acc["cpu"] / acc["jobs"] / 10 if isinstance(acc, dict) else None
        print("\n".join(phase_lines(ms["phases"], ms["cpu"], ms["jobs"], budget)))
    for name, r in (("minislurm", ms), ("AccaSim", acc)):
        if isinstance(r, dict) and "profile" in r:
            print(f"  breakdown of {name} (trace replay):")
            print("\n".join(r["profile"]))
    sys.stdout.flush()


def growth_part(args: argparse.Namespace) -> None:
    sizes = sorted(set(args.growth + ([100_000] if args.with_100k else [])))
    rows: list[tuple[int, float]] = []
    for k, n in enumerate(sizes):
        flags = ["--breakdown"] if args.breakdown and k == 0 else []
        flags += ["--tracemalloc"] if args.tracemalloc else []
        r = spawn(["growth", "--jobs", str(n), "--nodes", str(args.nodes),
                   "--load", str(args.load), *flags])  # fmt: skip
        if isinstance(r, str):
            print(f"growth {n} jobs: failed: {r}")
            continue
        mem = f", tracemalloc peak {r['tracemalloc']:.0f} MiB" if "tracemalloc" in r else ""
        print(f"growth {n:>7} jobs (AI mix, offered load {r['offered']:.2f}, {args.nodes} x "
              f"8 GPUs, multifactor + backfill): simulate {r['sim_wall']:.1f} s "
              f"(process {r['wall']:.1f} s wall, {r['cpu']:.1f} s CPU), "
              f"{r['jobs'] / r['sim_wall']:,.0f} jobs/s, {r['events_per_s']:,.0f} events/s, "
              f"maxrss {r['maxrss']:.0f} MiB{mem}; GPU util {r['gpu_util']:.1%}, "
              f"mean wait {r['mean_wait']:,.0f} s", flush=True)
        rows.append((n, r["sim_wall"]))
        if "profile" in r:
            print(f"  breakdown ({n} jobs, AI mix):")
            print("\n".join(r["profile"]), flush=True)
    if len(rows) >= 2:
        (n0, t0), (n1, t1) = rows[0], rows[-1]
        note = " (target for 100k/10k: <= 12)" if (n0, n1) == (10_000, 100_000) else ""
        print(f"growth {n0} -> {n1} jobs: time x{t1 / t0:.1f} for jobs x{n1 / n0:.1f}{note}")


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        run_child(argv[1:])
        return
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=10_000, help="jobs of the Lublin trace")
    parser.add_argument("--procs", type=int, default=256)
    parser.add_argument("--seed", type=int, default=1, help="seed of the Lublin trace")
    parser.add_argument("--swf", type=Path, help="replay this SWF file instead")
    parser.add_argument("--no-accasim", action="store_true")
    parser.add_argument("--no-trace", action="store_true", help="only the growth line")
    parser.add_argument("--growth", type=int, nargs="*", default=[10_000, 30_000],
                        help="sizes of the growth line (none: skip it)")
    parser.add_argument("--no-growth", action="store_true")
    parser.add_argument("--with-100k", action="store_true",
                        help="add 100,000 jobs to the growth line (minutes today)")
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--load", type=float, default=0.9)
    parser.add_argument("--breakdown", action="store_true",
                        help="cProfile own time by minislurm module, top functions")
    parser.add_argument("--tracemalloc", action="store_true", help="peak of Python objects")
    parser.add_argument("--phases", action="store_true",
                        help="CPU time of the controller's steps (timers, no profiler)")
    args = parser.parse_args(argv)
    if args.jobs < 1 or args.procs < 2 or args.nodes < 1 or not args.load > 0:
        parser.error("--jobs, --nodes must be >= 1, --procs >= 2, --load > 0")
    if not args.no_trace:
        if args.swf is not None:
            trace_part(args, args.swf.resolve())
        else:
            from minislurm.sim.workload.lublin import LublinSpec, lublin_swf

            with tempfile.TemporaryDirectory(prefix="bench-trace-") as tmp:
                path = Path(tmp) / f"lublin_{args.procs}_{args.jobs}_s{args.seed}.swf"
                path.write_text(lublin_swf(LublinSpec(args.jobs, args.procs, args.seed)))
                trace_part(args, path)
    if not args.no_growth and (args.growth or args.with_100k):
        growth_part(args)


if __name__ == "__main__":
    main()
