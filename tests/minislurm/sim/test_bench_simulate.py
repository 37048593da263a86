"""The simulation benchmark's pieces that need no long run: the offered load of its
workload, its prefixes, and the CPU-time split by the controller's entry points."""

from __future__ import annotations

import subprocess
import sys
from types import ModuleType

import pytest
import simpy
from bench_loader import BENCHMARKS, load_benchmark

from minislurm.ctld import lifecycle, loops
from minislurm.ctld.controller import Controller
from minislurm.sim.simulate import procs_config, simulate
from minislurm.sim.workload.generator import WorkloadJob, total_gpu_hours


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_benchmark("bench_simulate")


def test_offered_load_is_gpu_hours_over_the_submission_span(bench: ModuleType) -> None:
    def job(i: int, t: int, gpus: int, run: int) -> WorkloadJob:
        return WorkloadJob(job_id=i, submit_time=t, user="u", account="a", partition="gpu",
                           kind="k", name="n", nodes=1, gpus_per_node=gpus, cpus=1,
                           time_limit=60, run_time=run)  # fmt: skip

    # 8 GPUs for an hour and 8 more for an hour submitted over 2 hours on 16 GPUs: 0.5
    jobs = [job(1, 0, 8, 3600), job(2, 7200, 8, 3600)]
    assert bench.offered_load(jobs, 16) == pytest.approx(0.5)
    # the limit caps a run that would go on (TIMEOUT): 2 x 8 GPU-hours at most
    jobs = [job(1, 0, 8, 99999), job(2, 7200, 8, 3600)]
    assert bench.offered_load(jobs, 16) == pytest.approx(0.5)
    assert bench.offered_load(jobs[:1], 16) == float("inf")


@pytest.mark.parametrize("load", [0.5, 0.9])
def test_the_workload_offers_the_load_asked_for(bench: ModuleType, load: float) -> None:
    jobs = bench.workload(5000, 200, load=load)
    assert len(jobs) == 5000
    assert bench.offered_load(jobs, 200 * 8) == pytest.approx(load, rel=0.02)
    span_h = (jobs[-1].submit_time - jobs[0].submit_time) / 3600
    assert total_gpu_hours(jobs) / span_h / (200 * 8) == pytest.approx(load, rel=0.02)


def test_more_load_means_faster_arrivals_of_the_same_mix(bench: ModuleType) -> None:
    low, high = bench.workload(3000, 200, load=0.3), bench.workload(3000, 200, load=0.9)
    assert high[-1].submit_time - high[0].submit_time < low[-1].submit_time - low[0].submit_time


def test_entry_points_split_the_cpu_time_and_put_everything_back(bench: ModuleType) -> None:
    before = (loops.backfill_pass, loops.main_pass, Controller.recalc_priorities,
              Controller.decay_priorities, Controller.submit, lifecycle.body_ended)
    jobs = bench.workload(300, 8, load=0.9)
    with bench.entry_points() as spent:
        result = simulate(jobs, bench.cluster(8), scheduler="slurm")
    assert len(result.jobs) >= 300
    assert {"backfill pass", "main pass", "submission", "job end"} <= set(spent)
    assert all(v >= 0 for v in spent.values())
    assert spent["submission"] > 0 and spent["main pass"] > 0
    after = (loops.backfill_pass, loops.main_pass, Controller.recalc_priorities,
             Controller.decay_priorities, Controller.submit, lifecycle.body_ended)
    assert after == before


def test_entry_points_are_put_back_after_an_error(bench: ModuleType) -> None:
    before = loops.main_pass
    with pytest.raises(RuntimeError), bench.entry_points():
        assert loops.main_pass is not before
        raise RuntimeError("boom")
    assert loops.main_pass is before


def test_an_entry_point_inside_another_is_counted_once(
    bench: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A decay pass that falls back to the full recalculation (priority/basic here) is
    one priority pass: its time is not added again by the inner entry point."""
    ticks = iter(range(100))
    monkeypatch.setattr(bench.time, "process_time", lambda: float(next(ticks)))
    ctl = Controller(procs_config(4), simpy.Environment())
    with bench.entry_points() as spent:
        ctl.decay_priorities()  # calls ctl.recalc_priorities(), also an entry point
    assert spent == {"priority pass": 1.0}  # one clock read in, one out


@pytest.mark.parametrize("argv", [["--jobs", "0"], ["--jobs", "x"], ["--nodes", "0"],
                                  ["--jobs", "10", "--load", "0"],
                                  ["--jobs", "10", "--load", "inf"]])
def test_bad_arguments_are_refused_without_a_traceback(argv: list[str]) -> None:
    res = subprocess.run([sys.executable, str(BENCHMARKS / "bench_simulate.py"), *argv,
                          "--no-what-if"], capture_output=True, text=True, timeout=60)
    assert res.returncode == 2
    assert "bench_simulate.py: error: argument --" in res.stderr
    assert "Traceback" not in res.stderr
