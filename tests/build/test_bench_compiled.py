"""benchmarks/bench_compiled.py: both builds' environments, the child protocol, the table."""

from __future__ import annotations

import os

from bench_loader import load_benchmark

bench = load_benchmark("bench_compiled")


def test_the_interpreted_build_puts_the_hiding_hook_first() -> None:
    interpreted = bench.build_env("interpreted")["PYTHONPATH"].split(os.pathsep)
    compiled = bench.build_env("compiled")["PYTHONPATH"].split(os.pathsep)
    assert interpreted == [str(bench.HIDE), str(bench.ROOT)]
    assert compiled == [str(bench.ROOT)]


def test_the_interpreted_build_loads_sources() -> None:
    files = bench.loaded_files("interpreted")
    assert len(files) == 2 and not any(bench.is_compiled(f) for f in files)
    assert all(f.endswith(".py") for f in files)


def test_a_child_runs_the_workload_and_reports_its_figures() -> None:
    """A real what-if of 100 jobs in a fresh interpreted process (the child protocol)."""
    figures = bench.spawn("interpreted", "whatif", 100, 1)
    assert [(f.workload, f.what, f.unit) for f in figures] == [
        ("L6 what-if 100: bf_window 60", "wall", "s"), ("L6 what-if 100: bf_window 60", "CPU", "s")]
    assert all(f.value > 0 for f in figures)


def test_the_report_prints_interpreted_over_compiled() -> None:
    fig = bench.Figure
    table = bench.report({"interpreted": [fig("trace", "CPU", "s", 3.0)],
                          "compiled": [fig("trace", "CPU", "s", 1.5)]})
    line = table.splitlines()[1]
    assert line.split()[:2] == ["trace", "CPU"] and line.endswith("2.00x")
    assert "3.00 s" in line and "1.50 s" in line
