"""Lesson 8's scaling model, its minislurm simulation and the widget around them."""

from __future__ import annotations

import itertools
import math
import random
from typing import Any

import pytest
from busy_probe import assert_busy_while
from ctld_helpers import Launched

from course.lessons.checkpointing import CheckpointRunner, RunBreakdown
from course.lessons.scaling import (
    REQUEUE_WAIT_HOURS,
    ScaleParams,
    StudyPoint,
    expected_run,
    frontier_cluster,
    job_mtbf,
    mean_breakdown,
    segments,
    simulate_run,
    size_table,
    young_interval,
)
from course.lessons.scaling_view import (
    GPU_STEPS,
    PREDICT_CHECKPOINT_MINUTES,
    PREDICT_GPUS,
    ScalingExplorer,
    goodput_percent,
    scaling_figure,
    study_table,
    update_scaling_figure,
)
from minislurm.ctld.runner import JobBody
from minislurm.job import Allocation
from minislurm.states import JobState


def test_job_mtbf_is_node_mtbf_over_nodes() -> None:
    assert job_mtbf(6000, 12500) == pytest.approx(0.48)
    assert ScaleParams(100_000).nodes == 12_500
    assert ScaleParams(100_000).job_mtbf == pytest.approx(0.48)
    assert ScaleParams(9).nodes == 2  # whole nodes
    with pytest.raises(ValueError):
        job_mtbf(6000, 0)


def test_young_interval_and_its_default() -> None:
    assert young_interval(5 / 60, 8) == pytest.approx(math.sqrt(2 * 5 / 60 * 8))
    assert young_interval(0, 8) == math.inf
    p = ScaleParams(16384, checkpoint=0.1)
    assert p.tau == pytest.approx(math.sqrt(2 * 0.1 * p.job_mtbf))
    assert ScaleParams(16384, interval=0.5).tau == 0.5


@pytest.mark.parametrize("bad", [dict(gpus=0), dict(gpus=8, node_mtbf=0),
                                 dict(gpus=8, interval=0), dict(gpus=8, checkpoint=-1)])
def test_invalid_parameters_are_refused(bad: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        ScaleParams(**bad)


def test_segments_cover_the_work() -> None:
    assert segments(10, 3) == [3, 3, 3, 1]
    assert segments(9, 3) == [3, 3, 3]
    assert segments(2, 5) == [2]
    assert segments(2, math.inf) == [2]
    with pytest.raises(ValueError):
        segments(0, 1)


def test_model_without_failures_is_work_plus_checkpoints() -> None:
    p = ScaleParams(8, node_mtbf=1e12, interval=2, checkpoint=0.25)
    e = expected_run(p, 10)
    assert e.useful == pytest.approx(10)
    assert e.checkpoint == pytest.approx(5 * 0.25)
    assert e.lost == pytest.approx(0, abs=1e-6) and e.failures == pytest.approx(0, abs=1e-9)
    assert e.goodput == pytest.approx(10 / 11.25)


def test_model_matches_daly_closed_form() -> None:
    """T = segments (M + Q) e^(R/M) (e^((tau + C)/M) - 1) for whole segments."""
    p = ScaleParams(100_000, interval=0.25)
    m, q, r, c = p.job_mtbf, p.requeue, p.restart, p.checkpoint
    e = expected_run(p, 10)  # 40 whole segments
    closed = 40 * (m + q) * math.exp(r / m) * math.expm1((0.25 + c) / m)
    assert e.wall == pytest.approx(closed, rel=1e-9)
    assert q == pytest.approx(121 / 3600) and q == REQUEUE_WAIT_HOURS


def test_model_monte_carlo_agrees_with_closed_form() -> None:
    """An independent event-by-event draw of the same process gives the same mean."""
    p = ScaleParams(100_000, interval=0.3)
    m, q, r, c = p.job_mtbf, p.requeue, p.restart, p.checkpoint
    rng = random.Random(7)
    total = 0.0
    trials = 4000
    for _ in range(trials):
        t, need_restart = 0.0, False
        for seg in segments(3, p.tau):
            while True:
                span = (r if need_restart else 0) + seg + c
                x = rng.expovariate(1 / m)
                if x >= span:
                    t += span
                    need_restart = False
                    break
                t += x + q
                need_restart = True
        total += t
    assert total / trials == pytest.approx(expected_run(p, 3).wall, rel=0.03)


def test_goodput_falls_with_scale_and_cheaper_checkpoints_help() -> None:
    g = [expected_run(ScaleParams(n), 24).goodput for n in GPU_STEPS]
    assert all(a > b for a, b in itertools.pairwise(g))
    assert g[0] > 0.99 and g[-1] < 0.45
    fast = expected_run(ScaleParams(100_000, checkpoint=10 / 3600, restart=2 / 60), 24)
    assert fast.goodput > 0.75 > 2 * g[-1]


def test_model_adds_each_segments_terms_in_order() -> None:
    """`expected_run` computes a segment's terms once per length: the sums are those of
    the formula evaluated segment after segment, to the last bit."""
    for p, work in ((ScaleParams(32, interval=0.29), 800.0), (ScaleParams(8), 77.7),
                    (ScaleParams(100_000, checkpoint=10 / 3600), 24.0)):
        m, q, r, c = p.job_mtbf, p.requeue, p.restart, p.checkpoint
        sums = [0.0] * 6
        for seg in segments(work, p.tau):
            s = seg + c
            fails = math.expm1(s / m)
            for k, term in enumerate((seg, c, m * math.expm1(s / m) - s,
                                      fails * m * math.expm1(r / m),
                                      fails * q * math.exp(r / m), fails * math.exp(r / m))):
                sums[k] += term
        assert expected_run(p, work) == RunBreakdown(*sums)


def test_runner_books_saved_and_lost_work() -> None:
    import simpy

    env = simpy.Environment()
    runner = CheckpointRunner(env)
    runner.plan([1.0, 1.0], checkpoint=600, restart=900)

    first = runner.start(Launched(7), Allocation(()), JobBody(run_time=None))
    env.run(until=3600 + 600 + 1800)  # segment 1 saved, half of segment 2 done
    runner.kill(7, 9)
    assert first.triggered
    env.run(until=env.now + 121)
    runner.start(Launched(7), Allocation(()), JobBody(run_time=None))
    env.run(until=runner.finished)
    b = runner.breakdown()
    assert b.useful == pytest.approx(2.0) and b.checkpoint == pytest.approx(2 / 6)
    assert b.lost == pytest.approx(0.5) and b.restart == pytest.approx(0.25)
    assert b.requeue == pytest.approx(121 / 3600) and b.failures == 1
    assert b.wall == pytest.approx(env.now / 3600)


def test_an_attempts_length_is_its_phases_added_in_order() -> None:
    import simpy

    runner = CheckpointRunner(simpy.Environment())
    assert runner._length() == 0.0  # nothing planned
    # thousands of uneven phases: any other order of the additions rounds differently
    runner.plan([0.1 + k / 7919 for k in range(3000)] + [1 / 3], checkpoint=61.7,
                restart=599.9)
    for attempts, done in ((1, 0), (2, 0), (2, 1234), (3, 2999), (2, 3001)):
        runner.attempts, runner._done = attempts, done
        total = 0.0
        for _kind, seconds in runner._timeline():  # one addition after another
            total += seconds
        assert runner._length() == total  # to the last bit


def test_a_restarted_attempts_length_over_equal_intervals() -> None:
    """The lesson's plans (`segments`: equal intervals, then a remainder or none): a
    restarted attempt's length starts from the restart's sums made once by `plan`, and
    is still `_timeline`'s phases added one after another, for every number saved."""
    import simpy

    for work, tau in ((800.0, 0.2893), (64.0, 0.25), (30.0, 4.6), (0.5, 2.0)):
        runner = CheckpointRunner(simpy.Environment())
        runner.plan(segments(work, tau), checkpoint=300.0, restart=0.1 * 3600 + 1 / 3)
        n = len(runner._segments)
        for attempts, done in [(1, 0), *((a, d) for a in (2, 5) for d in range(n + 1))]:
            runner.attempts, runner._done = attempts, done
            total = 0.0
            for _kind, seconds in runner._timeline():
                total += seconds
            assert runner._length() == total, (work, tau, attempts, done)


def _account_by_timeline(runner: CheckpointRunner, now: float) -> dict[str, float]:
    """The booking of an attempt walked phase by phase over `_timeline` (the reference
    `CheckpointRunner._account` follows), on a copy of the accounts."""
    acc = dict(runner._acc)
    assert runner._attempt_start is not None
    left, pending, done = now - runner._attempt_start, 0.0, runner._done
    for kind, dur in runner._timeline():
        if left <= 0:
            break
        used = min(left, dur)
        left -= used
        if kind == "restart":
            acc["restart"] += used
        elif kind == "work":
            pending = used
        elif used >= dur - 1e-6:
            acc["useful"] += pending
            acc["checkpoint"] += dur
            done += 1
            pending = 0.0
        else:
            pending += used
    acc["lost"] += pending
    acc["done"] = done
    return acc


def test_an_attempts_booking_is_its_timeline_walked_in_order() -> None:
    import simpy

    runner = CheckpointRunner(simpy.Environment())
    runner.plan([0.1 + k / 7919 for k in range(300)] + [1 / 3], checkpoint=61.7,
                restart=599.9)
    rng = random.Random(3)
    for attempts, done in ((1, 0), (2, 0), (2, 17), (3, 299), (2, 300), (2, 301)):
        for now in (0.0, 300.0, 599.9, 650.0, rng.uniform(0, 4e4), rng.uniform(0, 4e6)):
            runner.attempts, runner._done, runner._attempt_start = attempts, done, 0.0
            runner._acc = {k: rng.uniform(0, 1e5) for k in runner._acc}
            want = _account_by_timeline(runner, now)
            runner._account(now)
            assert {**runner._acc, "done": runner._done} == want  # to the last bit


def test_simulation_on_minislurm_requeues_and_accounts() -> None:
    p = ScaleParams(4096)
    cluster = frontier_cluster(p)
    try:
        run = simulate_run(p, 24, seed=3, cluster=cluster)
        states = cluster.run(f"sacct -D -X -n -j {run.job_id} --format=State").stdout.split()
        assert states[-1] == "COMPLETED"
        assert states.count("NODE_FAIL") == run.breakdown.failures >= 1
        job = cluster.controller.job(run.job_id)
        assert job.state is JobState.COMPLETED and job.restart_count == run.breakdown.failures
        assert run.breakdown.useful == pytest.approx(24)
        # Slurm's requeue delay separates the attempts
        assert run.breakdown.requeue >= run.breakdown.failures * 121 / 3600
        assert "down" in cluster.run("sinfo").stdout or run.node_failures > 0
    finally:
        cluster.close()


def test_simulation_agrees_with_model_on_average() -> None:
    p = ScaleParams(16384)
    point = StudyPoint(tuple(simulate_run(p, 24, seed=s) for s in range(4)))
    assert point.breakdown.goodput == pytest.approx(expected_run(p, 24).goodput, abs=0.06)
    assert point.breakdown.failures == pytest.approx(expected_run(p, 24).failures, rel=0.5)


def test_simulation_is_deterministic() -> None:
    p = ScaleParams(2048)
    assert simulate_run(p, 12, seed=5).breakdown == simulate_run(p, 12, seed=5).breakdown


def test_mean_breakdown_and_study_point_checks() -> None:
    a, b = RunBreakdown(1, 1, 0, 0, 0, 0), RunBreakdown(3, 1, 2, 0, 0, 2)
    assert mean_breakdown([a, b]) == RunBreakdown(2, 1, 1, 0, 0, 1)
    with pytest.raises(ValueError):
        mean_breakdown([])
    with pytest.raises(ValueError):
        StudyPoint(())


def test_figure_has_model_curves_points_and_breakdown() -> None:
    runs = [StudyPoint((simulate_run(ScaleParams(g), 24, seed=1),)) for g in (8, 512)]
    fig = scaling_figure(ScaleParams(512), 24, runs)
    names = [t.name for t in fig.data]
    assert names[:3] == ["goodput", "lost to failures", "checkpoint writes"]
    assert "goodput on minislurm" in names and "selected" in names
    bars = [t for t in fig.data if t.type == "bar"]
    assert len(bars) == 5 and list(bars[0].x) == ["model", "minislurm"]
    assert "512 GPUs" in fig.layout.title.text
    # other costs: the simulated points do not apply and are left out
    other = scaling_figure(ScaleParams(512, checkpoint=0.5), 24, runs)
    assert "goodput on minislurm" not in [t.name for t in other.data]
    assert "interruptions" in study_table(runs)


def test_explorer_slider_redraws_the_figure() -> None:
    ex = ScalingExplorer(work=24)
    before = ex.figure.to_dict()
    ex.gpus.value = 100_000
    after = ex.figure.to_dict()
    assert before != after and "100,000 GPUs" in after["layout"]["title"]["text"]
    (shown,) = ex.out.outputs  # set from the kernel side: the widget shows the new figure
    assert "100,000 GPUs" in shown["data"]["application/vnd.plotly.v1+json"]["layout"][
        "title"]["text"]
    ex.checkpoint.value = 1.0
    assert ex.params.checkpoint == pytest.approx(1 / 60)
    ex.gpus.value = 64
    point = ex.simulate()
    assert point.params.gpus == 64 and "minislurm:" in ex.status.value
    assert "goodput on minislurm" in [t.name for t in ex.figure.data]


@pytest.mark.parametrize("lang", ["en", "pt-BR"])
def test_the_explorer_redraws_its_figure_in_place(lang: str) -> None:
    runs = [StudyPoint((simulate_run(ScaleParams(g), 24, seed=1),)) for g in (8, 512)]
    ex = ScalingExplorer(work=24, sims=runs, base=ScaleParams(512), lang=lang)
    fig = ex.figure
    ex.gpus.value = 8  # another size: the same traces, new data and titles
    ex.restart.value = 20  # other costs: minislurm's points no longer apply
    assert ex.figure is not fig  # fewer traces: drawn anew
    fig = ex.figure
    ex.gpus.value = 100_000
    assert ex.figure is fig  # the same traces: updated in place
    fresh = scaling_figure(ex.params, 24, runs, lang=lang)
    assert fig.to_dict() == fresh.to_dict()  # the same figure as one drawn anew
    (shown,) = ex.out.outputs
    assert shown["data"]["application/vnd.plotly.v1+json"]["data"] == fresh.to_dict()["data"]


def test_update_scaling_figure_leaves_a_figure_with_other_traces() -> None:
    runs = [StudyPoint((simulate_run(ScaleParams(8), 24, seed=1),))]
    fig = scaling_figure(ScaleParams(8), 24, runs)  # minislurm's points apply
    before = fig.to_dict()
    assert not update_scaling_figure(fig, ScaleParams(8, checkpoint=0.5), 24, runs)
    assert fig.to_dict() == before
    assert update_scaling_figure(fig, ScaleParams(16), 24, runs)
    assert fig.to_dict() == scaling_figure(ScaleParams(16), 24, runs).to_dict()


def test_goodput_percent_is_the_models_goodput() -> None:
    p = ScaleParams(100_000)
    assert goodput_percent(p, 24) == pytest.approx(100 * expected_run(p, 24).goodput)
    assert 30 < goodput_percent(p, 24) < 40  # a failure every 29 min: a third is useful
    assert goodput_percent(ScaleParams(8), 24) > 97


def test_the_explorer_asks_for_the_goodput_at_100k_gpus_before_it_opens() -> None:
    ex = ScalingExplorer(work=24, base=ScaleParams(16384))
    body = ex.box.children[1]
    assert body.layout.display == "none"
    prompt = ex.predict.view.children[0].value
    assert "100,000 GPUs (12,500 nodes: a failure every 29 min)" in prompt
    assert "from 5 min to 30 s" in prompt
    truth = goodput_percent(ScaleParams(PREDICT_GPUS, checkpoint=0.5 / 60), 24)
    assert truth > goodput_percent(ScaleParams(PREDICT_GPUS), 24) + 10  # cheaper: better
    score = ex.predict.check(80)
    assert score is not None and not score.correct
    assert f"the simulation says {truth:.0f} %" in score.message
    assert body.layout.display is None and ex.gpus.value == PREDICT_GPUS
    assert ex.checkpoint.value == PREDICT_CHECKPOINT_MINUTES
    assert ex.figure.layout.title.text.endswith(f"goodput {truth:.0f}%")
    assert ex.predict.check(80) is score


def test_the_explorer_is_busy_while_it_redraws_and_simulates(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from course.lessons import scaling_view

    ex = ScalingExplorer(work=24)
    sizes = iter((16, 32))
    assert_busy_while(monkeypatch, scaling_view, "update_scaling_figure", ex.busy,
                      lambda: setattr(ex.gpus, "value", next(sizes)))
    assert_busy_while(monkeypatch, scaling_view, "simulate_run", ex.busy, ex.simulate)


def test_size_table_rows() -> None:
    rows = size_table([8, 100_000]).splitlines()
    assert rows[0] == ("      8 GPUs =      1 nodes: a failure every  6000.00 h, "
                       f"checkpoint every {ScaleParams(8).tau * 60:6.0f} min of work")
    assert rows[1].startswith("100,000 GPUs = 12,500 nodes: a failure every     0.48 h")


def test_the_pt_br_explorers_figure_is_portuguese() -> None:
    """pt-BR: titles, axis, legend and hover words through the course catalogue, the
    thousands dot and decimal comma; goodput, minislurm, BeginTime stay; English unchanged."""
    runs = [StudyPoint((simulate_run(ScaleParams(g), 24, seed=1),)) for g in (8, 16384)]
    ex = ScalingExplorer(work=24, sims=runs, base=ScaleParams(16384), lang="pt-BR")
    fig = ex.figure
    assert fig.layout.title.text.startswith("16.384 GPUs (2.048 nós): uma falha a cada ")
    assert "checkpoint a cada " in fig.layout.title.text
    assert [a.text for a in fig.layout.annotations] == [
        "fração do tempo de relógio vs tamanho do job", "para onde vai o tempo com 16.384 GPUs"]
    assert fig.layout.xaxis.title.text == "GPUs no job"
    assert fig.layout.separators == ",."
    names = [t.name for t in fig.data]
    assert names[:3] == ["goodput", "perdido com falhas", "gravações de checkpoint"]
    assert "goodput no minislurm" in names and "selecionado" in names
    assert "espera do requeue (BeginTime, nós livres)" in names
    bars = [t for t in fig.data if t.type == "bar"]
    assert list(bars[0].x) == ["modelo", "minislurm"]
    points = next(t for t in fig.data if t.name == "goodput no minislurm")
    assert points.text[0].startswith("1 execuções, ") and "interrupções por execução" in \
        points.text[0]
    en = ScalingExplorer(work=24, sims=runs, base=ScaleParams(16384), lang="en")
    assert en.figure.layout.title.text.startswith("16,384 GPUs (2,048 nodes): a failure every ")
    assert en.figure.layout.separators is None
    assert [t.name for t in en.figure.data][:3] == ["goodput", "lost to failures",
                                                    "checkpoint writes"]
    assert en.figure.to_dict()["data"][0]["y"] == fig.to_dict()["data"][0]["y"]


def test_an_attempts_length_in_any_order_of_attempts() -> None:
    """`CheckpointRunner._length` lends the restart the slot before the phases left and
    gives it back: lengths asked in any order, with or without a plan, are the phases
    of `_timeline` added one after another."""
    import simpy

    runner = CheckpointRunner(simpy.Environment())
    for attempts in (1, 2):  # nothing planned: the restart alone, or nothing
        runner.attempts = attempts
        assert runner._length() == (0.0 if attempts == 1 else runner._restart)
    runner.plan([0.3 + k / 911 for k in range(40)] + [1 / 7], checkpoint=61.7, restart=599.9)
    rng = random.Random(5)
    for _ in range(200):
        runner.attempts, runner._done = rng.choice((1, 2, 3)), rng.randrange(0, 42)
        total = 0.0
        for _kind, seconds in runner._timeline():
            total += seconds
        assert runner._length() == total
