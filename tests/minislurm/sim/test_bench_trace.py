"""benchmarks/bench_trace.py's pieces that need no long run: the profile grouping, the
reading of AccaSim's dispatching plan, and a small end-to-end run of its trace part."""

from __future__ import annotations

import cProfile
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from bench_loader import BENCHMARKS, load_benchmark


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_benchmark("bench_trace")


def test_module_of_groups_by_minislurm_module(bench: ModuleType) -> None:
    assert bench.module_of("/x/minislurm/sched/backfill.py") == "minislurm.sched.backfill"
    assert bench.module_of("/x/minislurm/ctld/__init__.py") == "minislurm.ctld"
    assert bench.module_of("/v/lib/python3.11/site-packages/simpy/core.py") == "simpy"
    assert bench.module_of("~") == "(built-ins)"
    assert bench.module_of("/r/tests/minislurm/sim/test_x.py") == "test_x"
    import heapq
    import sysconfig

    assert bench.module_of(heapq.__file__) == "(stdlib) heapq"
    assert sysconfig.get_paths()["stdlib"] in heapq.__file__
    assert bench.module_of("/work/benchmarks/bench_trace.py") == "bench_trace"


def test_profile_lines_sum_own_time_by_module(bench: ModuleType) -> None:
    from minislurm.sim.workload.lublin import LublinSpec, generate_lublin

    prof = cProfile.Profile()
    prof.enable()
    list(generate_lublin(LublinSpec(jobs=300)))
    prof.disable()
    lines = bench.profile_lines(prof)
    assert lines[0].startswith("  own CPU time by module, built-ins charged to their callers")
    end = lines.index("  top functions by time with callees (drivers above 90 % left out):")
    rows = lines[1:end]
    modules = [line.split("  ")[-1] for line in rows]
    assert "minislurm.sim.workload.lublin" in modules
    assert "(stdlib) random" in modules  # gammavariate
    # built-ins (math.exp, Random.random) are charged to their callers: time is conserved
    total = float(lines[0].split("(cProfile, ")[1].split(" s")[0])
    assert sum(float(r.split()[0]) for r in rows) == pytest.approx(total, abs=0.05)


def test_accasim_plan_gives_wait_and_bounded_slowdown(bench: ModuleType, tmp_path: Path) -> None:
    plan = tmp_path / "sched-x.swf"
    # {job_id};{user};{queue_time}__{assignations}__{start_time};{end_time};...
    plan.write_text(  # as AccaSim 1.1.3 writes it: str_datetime times, ';' in assignations
        "1;-1;1970-01-01 00:01:40__11;1#12;1#__1970-01-01 00:01:40;1970-01-01 00:01:45;2;2;NA;5;\n"
        "2;-1;1970-01-01 00:01:40__6;1#__1970-01-01 00:03:20;1970-01-01 00:05:00;1;1;NA;100;\n"
    )
    n, wait, bsld = bench.accasim_metrics(plan)
    assert (n, wait) == (2, 50.0)
    # job 1: max(1, 5 / 10) = 1; job 2: (100 + 100) / 100 = 2
    assert bsld == pytest.approx(1.5)


def test_trace_part_runs_minislurm_and_the_textbook_side_by_side() -> None:
    out = subprocess.run(
        [sys.executable, str(BENCHMARKS / "bench_trace.py"), "--jobs", "300", "--no-accasim",
         "--no-growth"], capture_output=True, text=True, timeout=600, check=True,
    ).stdout  # fmt: skip
    assert "textbook EASY (tests/easy_reference.py): mean wait" in out
    assert "minislurm simulate: 300 jobs in" in out
    assert "AccaSim 1.1.3: not run: skipped (--no-accasim)" in out


def test_a_builtins_time_goes_to_its_caller(bench: ModuleType) -> None:
    def work() -> None:  # a profiled frame of this file calling built-ins only
        sorted(range(2_000_000), key=abs, reverse=True)

    prof = cProfile.Profile()
    prof.enable()
    work()
    prof.disable()
    lines = bench.profile_lines(prof)
    end = lines.index("  top functions by time with callees (drivers above 90 % left out):")
    rows = {line.split("  ")[-1]: float(line.split()[0]) for line in lines[1:end]}
    assert max(rows, key=lambda k: rows[k]) == "test_bench_trace", lines


def test_phase_timers_count_the_controllers_steps(bench: ModuleType,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    from minislurm.sim.simulate import simulate
    from minislurm.sim.workload.lublin import LublinSpec, lublin_workload

    for module, cls, attr, _label in bench.PHASES:  # put every wrapped step back afterwards
        mod = importlib.import_module(module)
        owner = getattr(mod, cls) if cls else mod
        monkeypatch.setattr(owner, attr, getattr(owner, attr))
    acc = bench.install_phase_timers()
    result = simulate(lublin_workload(LublinSpec(jobs=300, procs=16, seed=1)), procs=16,
                      scheduler="easy")
    assert set(acc) == {label for *_, label in bench.PHASES}  # every step still exists
    assert acc["submit (sbatch)"][1] == 300 == len(result.jobs)
    assert acc["job start (both passes)"][1] == 300 and acc["job end"][1] == 300
    assert acc["main scheduler pass"][1] > 0 and acc["backfill pass"][1] > 0
    lines = bench.phase_lines({"submit (sbatch)": [0.3, 120], "job end": [0.1, 120]}, 1.2,
                              120, 250.0)
    assert lines[0] == ("  phases (CPU time, own timers, inclusive): 1.20 s, 10,000 us/job; "
                        "the x10 target leaves 250 us/job for everything")
    assert lines[1].split() == ["0.30", "s", "25.0%", "120", "calls", "2,500", "us/job",
                                "submit", "(sbatch)"]
    assert "job end" in lines[2]
