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

``--kernels`` also compiles five small loops (`KERNELS`) in a temporary folder and times
them both ways (the best of 3 processes of the best of 5: one process's numpy timings
vary by 1.5x here).  2026-12-06: loops over a list of ints x11, over attributes of
native objects x13.5, dict lookups x3.5, but numpy element access x1.1 and numpy calls
x1.0.  The engine's hot paths are numpy on small per-node arrays, simpy generators and
interpreted objects (``Job``), so compiling it gains nothing yet: x0.87-1.16 CPU for the
8-10 modules of the list and for a 26-module build alike (the list's comment in
pyproject.toml says what each module left out needs).

    .venv/bin/python benchmarks/bench_compiled.py                 # all, small sizes
    .venv/bin/python benchmarks/bench_compiled.py --only trace --trace-jobs 10000
    .venv/bin/python benchmarks/bench_compiled.py --kernels --only kernels
"""

from __future__ import annotations

import argparse
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

from script_module import load_script as _load  # benchmarks/ is the script's folder

ROOT = Path(__file__).resolve().parent.parent
HIDE = ROOT / "scripts" / "interpreted"
BUILDS = ("interpreted", "compiled")
WIDGET_CASES = ("L7 goodput", "L8 scaling")
_PROBE = ("import minislurm.select.cons_tres as m, minislurm.common.hostlist as h; "
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

#: Small loops of the kinds the engine runs, compiled by `kernels` (mypyc, temp folder).
KERNELS = '''
from __future__ import annotations

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]


class Node:
    def __init__(self, cpus: int) -> None:
        self.cpus = cpus
        self.free = cpus


def numpy_elements(a: IntArray) -> int:
    t = 0
    for i in range(len(a)):
        if a[i] > 3:
            t += int(a[i])
    return t


def numpy_calls(a: IntArray) -> int:
    t = 0
    for _ in range(100):
        t += int(np.flatnonzero(a > 3).size)
    return t


def list_of_ints(a: list[int]) -> int:
    t = 0
    for x in a:
        if x > 3:
            t += x
    return t


def native_objects(nodes: list[Node]) -> int:
    t = 0
    for nd in nodes:
        if nd.free > 3:
            t += nd.cpus - nd.free
    return t


def dict_lookups(d: dict[str, int], keys: list[str]) -> int:
    t = 0
    for k in keys:
        t += d.get(k, 0)
    return t
'''

_KERNEL_RUN = '''
import json, sys, time
import numpy as np
import kernels as k
a = np.arange(2000, dtype=np.int64) % 8
d = {f"k{i}": i for i in range(2000)}
cases = {"numpy array elements": lambda: k.numpy_elements(a),
         "numpy calls (flatnonzero)": lambda: k.numpy_calls(a),
         "list of ints": lambda l=a.tolist(): k.list_of_ints(l),
         "attributes of objects": lambda n=[k.Node(8) for _ in range(2000)]: k.native_objects(n),
         "dict lookups": lambda keys=list(d): k.dict_lookups(d, keys)}
out = {}
for name, fn in cases.items():
    best = float("inf")
    for _ in range(5):
        t = time.process_time()
        for _ in range(50):
            fn()
        best = min(best, time.process_time() - t)
    out[name] = best * 1000
print(json.dumps({"file": k.__file__, "ms": out}))
'''


def kernels() -> dict[str, list[Figure]]:
    """`KERNELS` timed interpreted, then compiled with mypyc (CPU ms: the best of 3
    processes of the best of 5 rounds of 50 calls)."""
    results: dict[str, list[Figure]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "kernels.py").write_text(KERNELS)
        for build in BUILDS:
            if build == "compiled":
                mypyc = Path(sys.executable).with_name("mypyc")
                subprocess.run([str(mypyc), "kernels.py"], cwd=tmp, capture_output=True,
                               check=True, timeout=600)
            best: dict[str, float] = {}
            for _ in range(3):
                out = subprocess.run([sys.executable, "-c", _KERNEL_RUN], cwd=tmp, check=True,
                                     capture_output=True, text=True).stdout
                data = json.loads(out)
                assert is_compiled(data["file"]) == (build == "compiled"), data["file"]
                for name, ms in data["ms"].items():
                    best[name] = min(best.get(name, ms), ms)
            results[build] = [Figure(f"kernel: {name}", "50 calls, CPU (best)", "ms", ms)
                              for name, ms in best.items()]
    return results


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
    parser.add_argument("--kernels", action="store_true",
                        help="also time KERNELS interpreted and compiled (mypyc, temp folder)")
    parser.add_argument("--only", choices=("trace", "simulate", "whatif", "widgets", "kernels"),
                        action="append", help="only these workloads (repeatable; default all)")
    parser.add_argument("--trace-jobs", type=int, nargs="*", default=[3000])
    parser.add_argument("--simulate-jobs", type=int, default=2000)
    parser.add_argument("--whatif-jobs", type=int, default=500)
    parser.add_argument("-k", "--widget", action="append",
                        help=f"bench_widgets cases (default: {', '.join(WIDGET_CASES)})")
    parser.add_argument("-r", "--repeats", type=int, default=3)
    a = parser.parse_args(args)
    only = set(a.only or ("trace", "simulate", "whatif", "widgets", "kernels"))
    results: dict[str, list[Figure]] = {b: [] for b in BUILDS}
    if a.kernels and "kernels" in only:
        for build, figures in kernels().items():
            results[build] += figures
    if only == {"kernels"}:
        print(report(results))
        return 0
    files = {b: loaded_files(b) for b in BUILDS}
    for b in BUILDS:
        print(f"{b} build loads {', '.join(os.path.relpath(f, ROOT) for f in files[b])}")
    if any(is_compiled(f) for f in files["interpreted"]):
        raise SystemExit("the interpreted build loaded a compiled module: scripts/interpreted")
    if not any(is_compiled(f) for f in files["compiled"]):
        raise SystemExit("no compiled build in place: run scripts/compile first")
    runs: list[tuple[str, int, str]] = []
    if "trace" in only:
        runs += [("trace", n, "") for n in a.trace_jobs]
    if "simulate" in only:
        runs.append(("simulate", a.simulate_jobs, ""))
    if "whatif" in only:
        runs.append(("whatif", a.whatif_jobs, ""))
    if "widgets" in only:
        runs += [("widgets", 0, k) for k in a.widget or WIDGET_CASES]
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
