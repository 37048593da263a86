"""Benchmark of the compiled build (issue 21): the same workloads, interpreted and compiled,
side by side in one run.

``scripts/compile`` compiles modules of ``minislurm`` with mypyc, in place: each
``module.cpython-311-*.so`` sits beside its ``module.py`` and Python imports it first.
This benchmark runs each workload twice in the same run, in fresh processes, one build
after the other:

- **interpreted**: ``PYTHONPATH=scripts/interpreted:<repo>``, whose ``sitecustomize``
  hides the compiled modules of this checkout (the ``.py`` files are imported, in the
  benchmark's own subprocesses too);
- **compiled**: ``PYTHONPATH=<repo>``, the ``.so`` files.

Workloads, each in a fresh process per build, inputs made before the clock starts, the
median of ``--repeats`` runs (wall, and CPU of that process: ``time.process_time``):

- ``trace``: ``bench_trace``'s replay, ``simulate --procs 256 --scheduler easy`` on a
  Lublin 256 trace of ``--trace-jobs`` jobs (read_swf + simulate);
- ``simulate``: ``bench_simulate``'s AI mix of ``--simulate-jobs`` jobs on 1,000 x 8
  GPUs, multifactor + Slurm's backfill;
- ``whatif``: lesson 6's what-if of 500 jobs at ``bf_window`` 60 (``whatif_run``: the
  simulation the widget's move waits for);
- ``widgets``: ``bench_widgets``' first move of the L7 and L8 cases (``-k``; its
  ``measure``: wall and CPU milliseconds).

Printed: each figure for both builds and the ratio interpreted/compiled (above 1: the
compiled build is faster).  CPU time is the figure to read on a shared machine.

    .venv/bin/python benchmarks/bench_compiled.py                 # all, small sizes
    .venv/bin/python benchmarks/bench_compiled.py --only trace --trace-jobs 10000
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
HIDE = ROOT / "scripts" / "interpreted"
BUILDS = ("interpreted", "compiled")
WIDGET_CASES = ("L7 goodput", "L8 scaling")
_PROBE = ("import minislurm.sched.backfill as m, minislurm.common.hostlist as h; "
          "print(m.__file__); print(h.__file__)")


@dataclass(frozen=True)
class Figure:
    """One measured figure of one workload under one build (seconds or ms)."""

    workload: str
    what: str
    unit: str
    value: float


def build_env(build: str) -> dict[str, str]:
    """The environment of a child of ``build``: the repo on PYTHONPATH, with the hiding
    ``sitecustomize`` first for the interpreted build."""
    env = dict(os.environ)
    paths = [str(ROOT)] if build == "compiled" else [str(HIDE), str(ROOT)]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    return env


def loaded_files(build: str) -> list[str]:
    """Where a child of ``build`` imports two of the compiled modules from."""
    out = subprocess.run([sys.executable, "-c", _PROBE], env=build_env(build), cwd=ROOT,
                         capture_output=True, text=True, check=True)
    return out.stdout.split()


def is_compiled(path: str) -> bool:
    """Whether a module's ``__file__`` is an extension module (the compiled build)."""
    return path.endswith(".so") or path.endswith(".pyd")


RESULT = "RESULT "


def _load(path: Path, name: str) -> Any:
    """A benchmark script of this folder as a module (benchmarks/ is not a package)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _timed(fn: Callable[[], object], repeats: int) -> tuple[float, float]:
    """Median wall and CPU seconds (this process: ``time.process_time``) of ``fn``."""
    walls, cpus = [], []
    for _ in range(repeats):
        w, c = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return statistics.median(walls), statistics.median(cpus)


def child(kind: str, size: int, repeats: int, keyword: str) -> list[Figure]:
    """One workload in this process, inputs made before the clock starts."""
    import minislurm.sim.simulate as sim

    if kind == "trace":  # bench_trace: simulate --procs 256 --scheduler easy on Lublin 256
        from minislurm.sim.workload.lublin import LublinSpec, lublin_swf
        from minislurm.sim.workload.swf import read_swf

        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / f"lublin_256_{size}_s1.swf"
            path.write_text(lublin_swf(LublinSpec(size, 256, 1)))
            wall, cpu = _timed(lambda: sim.simulate(read_swf(path), procs=256,
                                                    scheduler="easy"), repeats)
        name = f"trace Lublin {size}, --procs 256 easy"
    elif kind == "simulate":  # bench_simulate: the AI mix, multifactor + Slurm backfill
        bench = _load(ROOT / "benchmarks" / "bench_simulate.py", "bench_simulate")
        jobs, config = bench.workload(size, 1000), bench.cluster(1000)
        wall, cpu = _timed(lambda: sim.simulate(jobs, config, scheduler="slurm"), repeats)
        name = f"simulate AI mix {size}, 1000 nodes"
    elif kind == "whatif":  # lesson 6's what-if: the simulation bench_widgets' move waits for
        from course.lessons.backfill_compare import whatif_jobs, whatif_run

        whatif_jobs(size)
        wall, cpu = _timed(lambda: whatif_run(size, 60, 60), repeats)
        name = f"L6 what-if {size}: bf_window 60"
    else:  # bench_widgets: the first move of each case whose name has ``keyword``
        bench = _load(ROOT / "benchmarks" / "bench_widgets.py", "bench_widgets")
        figures = []
        for case in bench.CASES:
            if keyword.lower() in case.name.lower():
                f = bench.measure(case, repeats)
                figures += [Figure(case.name, "first move wall", "ms", f.first),
                            Figure(case.name, "first move CPU", "ms", f.first_cpu)]
        return figures
    return [Figure(name, "wall", "s", wall), Figure(name, "CPU", "s", cpu)]


def spawn(build: str, kind: str, size: int, repeats: int, keyword: str = "") -> list[Figure]:
    """Run `child` in a fresh interpreter of ``build``; its figures."""
    argv = [sys.executable, __file__, "--child", kind, str(size), str(repeats), keyword]
    proc = subprocess.run(argv, env=build_env(build), cwd=ROOT, capture_output=True,
                          text=True, timeout=3600)
    for line in proc.stdout.splitlines():
        if line.startswith(RESULT):
            return [Figure(**f) for f in json.loads(line[len(RESULT):])]
    raise SystemExit(f"{build} {kind} {size} failed ({proc.returncode}):\n"
                     f"{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")


def report(results: dict[str, list[Figure]]) -> str:
    """The side-by-side table: each figure per build and interpreted/compiled."""
    lines = [f"{'workload':<44} {'figure':<28} {'interpreted':>12} {'compiled':>12} {'ratio':>7}"]
    for a, b in zip(results["interpreted"], results["compiled"], strict=True):
        ratio = a.value / b.value if b.value else float("nan")
        lines.append(f"{a.workload:<44} {a.what:<28} {a.value:>10.2f} {a.unit:<1} "
                     f"{b.value:>10.2f} {b.unit:<1} {ratio:>6.2f}x")
    lines.append("ratio: interpreted / compiled (above 1: the compiled build is faster)")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--child"]:
        kind, size, repeats, keyword = args[1], int(args[2]), int(args[3]), args[4]
        figures = child(kind, size, repeats, keyword)
        print(RESULT + json.dumps([asdict(f) for f in figures]), flush=True)
        return 0
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--only", choices=("trace", "simulate", "whatif", "widgets"),
                        action="append", help="only these workloads (repeatable; default all)")
    parser.add_argument("--trace-jobs", type=int, nargs="*", default=[3000])
    parser.add_argument("--simulate-jobs", type=int, default=2000)
    parser.add_argument("--whatif-jobs", type=int, default=500)
    parser.add_argument("-k", "--widget", action="append",
                        help=f"bench_widgets cases (default: {', '.join(WIDGET_CASES)})")
    parser.add_argument("-r", "--repeats", type=int, default=3)
    a = parser.parse_args(args)
    files = {b: loaded_files(b) for b in BUILDS}
    for b in BUILDS:
        print(f"{b} build loads {', '.join(os.path.relpath(f, ROOT) for f in files[b])}")
    if any(is_compiled(f) for f in files["interpreted"]):
        raise SystemExit("the interpreted build loaded a compiled module: scripts/interpreted")
    if not any(is_compiled(f) for f in files["compiled"]):
        raise SystemExit("no compiled build in place: run scripts/compile first")
    only = set(a.only or ("trace", "simulate", "whatif", "widgets"))
    runs: list[tuple[str, int, str]] = []
    if "trace" in only:
        runs += [("trace", n, "") for n in a.trace_jobs]
    if "simulate" in only:
        runs.append(("simulate", a.simulate_jobs, ""))
    if "whatif" in only:
        runs.append(("whatif", a.whatif_jobs, ""))
    if "widgets" in only:
        runs += [("widgets", 0, k) for k in a.widget or WIDGET_CASES]
    results: dict[str, list[Figure]] = {b: [] for b in BUILDS}
    for kind, size, keyword in runs:
        for build in BUILDS:  # one after the other, per workload: the same machine load
            figures = spawn(build, kind, size, a.repeats, keyword)
            results[build] += figures
            shown = "; ".join(f"{f.workload} {f.what} {f.value:.2f} {f.unit}" for f in figures)
            print(f"  {build}: {shown}", flush=True)
    print(report(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
