"""``simulate --procs 256 --scheduler easy`` on 10,000-job Lublin traces against the
textbook EASY of tests/easy_reference.py (issue 21: mean wait and mean bounded slowdown
within 1 %).

Measured (2026-12-06), seed 1 / seed 2: textbook mean wait 4,952.6 / 6,057.7 s, bounded
slowdown 181.93 / 208.56; minislurm 4,954 / 6,089 s, 182.14 / 211.07: seed 2's slowdown
is 1.2 % above the textbook.  The gap is Slurm's semantics, which ``--procs`` mode keeps
today: time limits in whole minutes (the SWF requested time is rounded up) and backfill
in a pass ``bf_interval=1`` second after the event instead of at it.  The textbook with
those two changes (``limit_unit=60, backfill_delay=1``) is within 0.15 % of minislurm on
both traces; either change alone leaves 0.5-1 %.  Issue 21 asks ``--scheduler easy`` of
``--procs`` mode to follow the textbook: when it does, the strict xfail below passes
(and fails as XPASS until its mark is removed) and the Slurm-semantics test fails.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from easy_reference import RefJob, easy_schedule, mean_bounded_slowdown, mean_wait

from minislurm.sim.simulate import simulate
from minislurm.sim.workload.lublin import LublinSpec, lublin_swf
from minislurm.sim.workload.swf import read_swf

pytestmark = pytest.mark.slow

PROCS = 256


@dataclass(frozen=True)
class Run:
    jobs: list[RefJob]
    wait: float
    bsld: float
    started: int


@pytest.fixture(scope="module", params=[1, 2], ids=["seed1", "seed2"])
def run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Run:
    spec = LublinSpec(jobs=10_000, procs=PROCS, seed=request.param)
    path: Path = tmp_path_factory.mktemp("lublin") / "lublin_256.swf"
    path.write_text(lublin_swf(spec))
    swf = read_swf(path)
    result = simulate(swf, procs=PROCS, scheduler="easy")
    jobs = [RefJob(r.job_number, r.submit_time, r.procs, r.run_time, r.requested_time)
            for r in swf.records]  # fmt: skip
    m = result.metrics
    return Run(jobs, m.mean_wait, m.mean_bounded_slowdown, m.started)


def gaps(run: Run, **knobs: int) -> tuple[float, float]:
    out = easy_schedule(run.jobs, PROCS, **knobs)
    assert run.started == len(out) == len(run.jobs)
    return run.wait / mean_wait(out) - 1, run.bsld / mean_bounded_slowdown(out) - 1


def test_simulate_easy_follows_the_textbook_within_1_percent(
    run: Run, request: pytest.FixtureRequest
) -> None:
    if request.node.callspec.id == "seed2":
        request.applymarker(pytest.mark.xfail(strict=True, reason=(
            "bounded slowdown +1.2 % (211.07 vs 208.56): --procs mode keeps Slurm's "
            "minute limits and bf_interval=1 (see the module docstring)")))  # fmt: skip
    wait_gap, bsld_gap = gaps(run)
    assert abs(wait_gap) <= 0.01 and abs(bsld_gap) <= 0.01, (wait_gap, bsld_gap)


def test_the_gap_is_slurms_minute_limits_and_backfill_interval(run: Run) -> None:
    wait_gap, bsld_gap = gaps(run, limit_unit=60, backfill_delay=1)
    assert abs(wait_gap) <= 0.003 and abs(bsld_gap) <= 0.003, (wait_gap, bsld_gap)
