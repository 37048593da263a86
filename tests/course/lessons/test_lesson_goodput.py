"""Lesson 7's experiments (course/lessons/goodput.py), headless.

The drills run on minislurm's real controller: a node set DOWN must end a
``--requeue`` job's attempt NODE_FAIL and put the job back to PENDING with
Restarts=1, a ``--no-requeue`` job must stay NODE_FAIL, and ``--signal`` must warn a
job before its time limit. The checkpoint-interval model must have Young's optimum,
and goodput measured on minislurm with random failures must agree with it.
"""

from __future__ import annotations

import itertools
import math

import pytest
import simpy
from busy_probe import assert_busy_while
from ctld_helpers import Launched

from course.lessons.goodput import (
    CHECKPOINT_MINUTES,
    MTBF_HOURS,
    PREDICT_CHECKPOINT_MINUTES,
    TRAP_SAVE,
    TRAP_WORK,
    FailureDrill,
    FailureModel,
    GoodputExplorer,
    Measured,
    SignalDrill,
    TrapRunner,
    best_interval,
    daly_interval,
    exact_goodput,
    first_order_goodput,
    goodput_figure,
    interval_grid,
    job_status,
    measure,
    measured_table,
    restart_environment,
    summary,
    sweep,
    update_goodput_figure,
    waste,
    waste_report,
    young_interval,
)
from minislurm.ctld import DEFAULT_EPOCH
from minislurm.ctld.runner import JobBody
from minislurm.job import Allocation

# ------------------------------------------------------------------ the model

M4C5 = FailureModel(mtbf=4.0, checkpoint=5 / 60)


def test_waste_is_the_documented_first_order_sum() -> None:
    m = FailureModel(mtbf=10.0, checkpoint=0.1, restart=0.2, requeue=0.05)
    assert m.downtime == pytest.approx(0.25)
    assert waste(m, 1.0) == pytest.approx(0.1 / 1 + 1 / 20 + 0.25 / 10)
    assert first_order_goodput(m, 1.0) == pytest.approx(1 - 0.175)


def test_waste_is_smallest_at_young_interval() -> None:
    """Minimise waste numerically on a fine grid: the argmin is sqrt(2 C M)."""
    for mtbf, c in ((4.0, 5 / 60), (24.0, 1 / 60), (0.5, 2 / 60)):
        m = FailureModel(mtbf, c)
        grid = [m.optimum * math.exp(k / 2000) for k in range(-3000, 3001)]
        best = min(grid, key=lambda t: waste(m, t))
        assert best == pytest.approx(math.sqrt(2 * c * mtbf), rel=1e-3)
        assert m.optimum == young_interval(c, mtbf)
        # at the optimum the two interval terms are equal: waste = sqrt(2C/M) + R/M
        assert waste(m, m.optimum) == pytest.approx(math.sqrt(2 * c / mtbf) + m.downtime / mtbf)


def test_waste_limits() -> None:
    m = M4C5
    assert waste(m, 1e-6) > 1e4  # checkpointing all the time: only writes
    assert waste(m, 1e6) > 1e4  # never checkpointing: a failure loses everything
    assert first_order_goodput(m, 1e-6) == 0.0  # floored
    reliable = FailureModel(mtbf=1e9, checkpoint=5 / 60)
    assert first_order_goodput(reliable, reliable.optimum) > 0.9999
    cheap = FailureModel(mtbf=4.0, checkpoint=1e-9)
    assert cheap.optimum < 1e-3 and waste(cheap, cheap.optimum) == pytest.approx(
        cheap.downtime / 4, abs=1e-4)
    with pytest.raises(ValueError):
        waste(m, 0)


@pytest.mark.parametrize("bad", [dict(mtbf=0, checkpoint=0.1), dict(mtbf=1, checkpoint=0),
                                 dict(mtbf=1, checkpoint=0.1, restart=-1)])
def test_invalid_models_are_refused(bad: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        FailureModel(**bad)


def test_daly_interval() -> None:
    # small C/M: Daly's optimum is Young's, slightly shifted
    assert daly_interval(1 / 60, 100) == pytest.approx(young_interval(1 / 60, 100), rel=0.02)
    assert daly_interval(3, 1) == 1  # C >= 2M: checkpoint once per MTBF
    x = (5 / 60) / 8
    assert daly_interval(5 / 60, 4) == pytest.approx(
        math.sqrt(2 * 5 / 60 * 4) * (1 + math.sqrt(x) / 3 + x / 9) - 5 / 60)
    with pytest.raises(ValueError):
        daly_interval(0, 1)


def test_daly_optimum_maximises_the_exact_model() -> None:
    m = FailureModel(mtbf=2.0, checkpoint=10 / 60)
    grid = [m.optimum * math.exp(k / 400) for k in range(-400, 401)]
    best = max(grid, key=lambda t: exact_goodput(m, t))
    d = daly_interval(m.checkpoint, m.mtbf)
    assert best == pytest.approx(d, rel=0.05)
    assert abs(best - d) < abs(best - m.optimum)  # Daly's is the better estimate


def test_exact_model_meets_first_order_when_failures_are_rare() -> None:
    m = FailureModel(mtbf=1000.0, checkpoint=0.05, restart=0.1)
    assert exact_goodput(m, m.optimum) == pytest.approx(first_order_goodput(m, m.optimum),
                                                        abs=2e-3)
    # the first order is pessimistic far from the optimum at short MTBF (C/tau on work)
    assert exact_goodput(M4C5, M4C5.optimum / 4) > first_order_goodput(M4C5,
                                                                       M4C5.optimum / 4) + 0.1


def test_interval_grid() -> None:
    g = interval_grid(M4C5)
    assert len(g) == 7 and g[3] == pytest.approx(M4C5.optimum)
    assert g[0] == pytest.approx(M4C5.optimum / 4) and g[-1] == pytest.approx(4 * M4C5.optimum)
    assert all(a < b for a, b in itertools.pairwise(g))
    with pytest.raises(ValueError):
        interval_grid(M4C5, 1)
    with pytest.raises(ValueError):
        interval_grid(M4C5, 5, 1.5, 4)


# ------------------------------------------------------------ measured on minislurm

#: Measured goodput (one run, ~100 failures) against the models at tau*. Measured
#: spread between seeds is about +-1.5 points; the first-order model is within about
#: 1 point of the exact one at this setting.
TOLERANCE_FIRST_ORDER = 0.03
TOLERANCE_EXACT = 0.025


def test_measured_goodput_matches_the_model_at_the_optimum() -> None:
    m = FailureModel(mtbf=8.0, checkpoint=2 / 60)
    runs = [measure(m, m.optimum, seed=s) for s in (0, 1)]
    for r in runs:
        assert r.failures >= 60  # enough failures for a stable estimate
        assert r.work == pytest.approx(100 * 8.0)
        assert r.goodput == pytest.approx(first_order_goodput(m, m.optimum),
                                          abs=TOLERANCE_FIRST_ORDER)
        assert r.goodput == pytest.approx(exact_goodput(m, m.optimum), abs=TOLERANCE_EXACT)
        assert r.goodput == pytest.approx(r.work / r.wall)
    assert runs[0] != runs[1]  # different failure draws
    assert measure(m, m.optimum, seed=0) == runs[0]  # fixed seed: deterministic


def test_measured_goodput_peaks_near_young_interval() -> None:
    m = FailureModel(mtbf=8.0, checkpoint=5 / 60)
    points = sweep(m, interval_grid(m), 0)
    best = max(range(len(points)), key=lambda i: points[i].goodput)
    assert best in (2, 3, 4)  # tau*/1.6 .. 1.6 tau*
    assert points[0].goodput < points[best].goodput - 0.05  # too often: writes
    assert points[-1].goodput < points[best].goodput - 0.05  # too rarely: lost work
    assert sweep(m, interval_grid(m), 0) is points  # cached


# ------------------------------------------------------------ the failure drill


def test_failure_drill_requeues_the_requeue_job_and_fails_the_other() -> None:
    d = FailureDrill()
    c = d.cluster
    assert "R" in d.start().results[0].stdout.split()
    assert job_status(c, d.train).state == "RUNNING"

    step = d.fail()
    assert step.results[0].returncode == 0 and "state=down" in step.results[0].command
    assert "GPU Xid 79" in step.results[1].stdout  # sinfo -R
    train, ev = job_status(c, d.train), job_status(c, d.evaluation)
    assert (train.state, train.restarts, train.reason, train.nodes) == (
        "PENDING", 1, "BeginTime", "")
    assert (ev.state, ev.restarts) == ("NODE_FAIL", 0)

    shown = str(d.inspect())
    assert "JobState=PENDING Reason=BeginTime" in shown and "Restarts=1" in shown
    sacct = [ln.split() for ln in d.inspect().results[1].stdout.splitlines()[2:]]
    assert [(r[0], r[2]) for r in sacct] == [
        (str(d.train), "NODE_FAIL"), (str(d.train), "PENDING"), (str(d.evaluation), "NODE_FAIL")]

    d.resume()
    assert job_status(c, d.train).state == "RUNNING"
    assert "down" not in c.run("sinfo").stdout
    env = restart_environment(c, d.train)
    assert env == {"SLURM_JOB_ID": str(d.train), "SLURM_RESTART_COUNT": "1"}

    end = d.finish().results[0].stdout
    train, ev = job_status(c, d.train), job_status(c, d.evaluation)
    assert (train.state, train.restarts) == ("COMPLETED", 1)
    assert (ev.state, ev.reason) == ("NODE_FAIL", "NodeDown")  # --no-requeue: stays failed
    states = [ln.split()[2] for ln in end.splitlines()[2:]]
    assert states == ["NODE_FAIL", "COMPLETED", "NODE_FAIL"]
    # the second attempt started after slurmctld's requeue delay (BeginTime +121 s)
    job = c.controller.job(d.train)
    assert job.start_time is not None and job.start_time >= DEFAULT_EPOCH + 3600 + 121


def test_failure_drill_steps_need_their_order() -> None:
    d = FailureDrill()
    with pytest.raises(RuntimeError):
        d.resume()
    with pytest.raises(ValueError):
        restart_environment(d.cluster, d.train)  # not started yet: no batch environment


# ------------------------------------------------------------ the signal drill


def test_signal_drill_warns_then_times_out_or_requeues() -> None:
    s = SignalDrill()
    s.run()
    ctl = s.cluster.controller
    # the job that ignores USR1 is killed at its limit: TIMEOUT, ExitCode 0:15 (SIGTERM)
    no_trap = ctl.job(s.untrapped)
    assert no_trap.state.value == "TIMEOUT"
    assert s.timed_out is not None
    assert "JobState=TIMEOUT Reason=TimeLimit" in s.timed_out.stdout
    assert "ExitCode=0:15" in s.timed_out.stdout
    batch = [ln.split() for ln in s.accounting().stdout.splitlines()
             if ln.startswith(f"{s.untrapped}.batch")]
    assert [(r[2], r[3]) for r in batch] == [("CANCELLED", "0:15")]
    sigs = [(t, sig) for t, j, sig in s.runner.signals if j == s.untrapped]
    assert [sig for _, sig in sigs] == [10, 15]  # USR1, then TERM at the limit
    lead = 600 - sigs[0][0]
    assert 120 <= lead <= 180  # @120, up to 60 s earlier (sbatch(1))
    # the trapping job checkpoints and requeues itself until its 20 minutes are done
    trap = ctl.job(s.trapped)
    assert trap.state.value == "COMPLETED" and trap.restart_count == 2
    assert s.runner.saved(s.trapped) == TRAP_WORK
    records = [ln.split() for ln in s.accounting().stdout.splitlines()[2:]]
    assert [r[2] for r in records if r[0] == str(s.trapped)] == [
        "REQUEUED", "REQUEUED", "COMPLETED"]
    assert [e.get("SLURM_RESTART_COUNT") for e in s.restart_env] == [None, "1", "2"]
    log = s.signal_log()
    assert "no-trap   SIGTERM" in log and log.count("trap      SIGUSR1") == 2
    fields = s.timeout_fields().splitlines()
    assert len(fields) == 2 and "JobState=TIMEOUT" in fields[0] and "ExitCode=0:15" in fields[1]


def test_timeout_fields_need_the_drill_to_have_run() -> None:
    with pytest.raises(RuntimeError, match="run"):
        SignalDrill().timeout_fields()


def test_trap_runner_resumes_saved_work_and_ignores_other_jobs() -> None:
    env = simpy.Environment()
    r = TrapRunner(env)
    requeued: list[int] = []
    r.requeue = requeued.append
    r.plan(5, work=1000, save=60)

    first = r.start(Launched(5), Allocation(()), JobBody(run_time=99999))
    other = r.start(Launched(6), Allocation(()), JobBody(run_time=500))
    env.run(until=400)
    r.warn_signal(5, 10)
    r.warn_signal(6, 10)  # not trapped: logged only
    env.run(until=460 + 1)
    assert requeued == [5] and r.saved(5) == 400  # worked until the signal, then saved
    r.kill(5, 9)  # the requeue kills the attempt
    env.run(until=600)
    assert first.value == (0, 9) and other.value == (0, 0)
    again = r.start(Launched(5), Allocation(()), JobBody(run_time=99999))
    env.run(until=again)
    assert env.now == 600 + 600  # only the 600 s not yet saved
    assert TRAP_SAVE == 60


# ------------------------------------------------------------ figure and widget


def test_goodput_figure_draws_models_points_and_optimum() -> None:
    points = sweep(M4C5, interval_grid(M4C5), 0)
    fig = goodput_figure(M4C5, points).to_dict()["data"]
    names = [t["name"] for t in fig]
    assert names[0].startswith("first order") and names[1].startswith("exact")
    assert names[2] == "measured on minislurm" and len(fig[2]["x"]) == 7
    assert names[3].startswith("Young") and fig[3]["x"][0] == pytest.approx(
        M4C5.optimum * 60)
    assert names[4].startswith("Daly")
    assert len(goodput_figure(M4C5).to_dict()["data"]) == 4  # no measured points
    assert "τ* = √(2CM) = 49 min" in summary(M4C5)
    table = measured_table(M4C5, points)
    assert len(table.splitlines()) == 8 and "49 min" in table


def test_explorer_slider_remeasures_and_redraws() -> None:
    e = GoodputExplorer()
    assert e.model == FailureModel(4.0, 5 / 60, restart=10 / 60)
    before = e.figure.to_dict()["data"]
    e.mtbf.value = 12  # what a learner's drag does: observe -> refresh
    after = e.figure.to_dict()["data"]
    assert after[0]["y"] != before[0]["y"] and after[2]["y"] != before[2]["y"]
    assert after[3]["x"][0] == pytest.approx(math.sqrt(2 * 5 / 60 * 12) * 60)
    assert min(after[2]["y"]) > min(before[2]["y"])  # rarer failures: better goodput
    assert e.figure_view.outputs[0]["data"]["application/vnd.plotly.v1+json"]["data"] == after
    assert "1st order" in e.table.value
    shown = e.figure.to_dict()["data"]
    e.checkpoint.value = 15  # not cached yet: seven runs on minislurm (speed: benchmarks/)
    assert e.model.checkpoint == pytest.approx(0.25)
    assert e.figure.to_dict()["data"][2]["y"] != shown[2]["y"]  # re-measured and redrawn
    assert 4 in MTBF_HOURS and 5 in CHECKPOINT_MINUTES


@pytest.mark.parametrize("lang", ["en", "pt-BR"])
def test_the_explorer_redraws_its_figure_in_place(lang: str) -> None:
    e = GoodputExplorer(lang=lang)
    fig = e.figure
    e.mtbf.value = 8
    e.checkpoint.value = 1
    assert e.figure is fig  # built once: a move updates its data
    fresh = goodput_figure(e.model, e.points, lang=lang)
    assert fig.to_dict() == fresh.to_dict()  # the same figure as one drawn anew
    shown = e.figure_view.outputs[0]["data"]["application/vnd.plotly.v1+json"]
    assert shown["data"] == fresh.to_dict()["data"]
    assert shown["layout"]["title"] == fresh.to_dict()["layout"]["title"]


def test_update_goodput_figure_needs_one_with_measured_points() -> None:
    points = sweep(M4C5, interval_grid(M4C5))
    with pytest.raises(ValueError, match="measured points"):
        update_goodput_figure(goodput_figure(M4C5), M4C5, points)
    with pytest.raises(ValueError, match="measured points"):
        update_goodput_figure(goodput_figure(M4C5, points), M4C5, ())


def test_best_interval_is_the_measured_run_with_the_highest_goodput() -> None:
    runs = [Measured(0.5, 0.6, 10, 100, 60), Measured(1, 0.7, 9, 100, 70),
            Measured(2, 0.7, 8, 100, 70), Measured(4, 0.5, 8, 100, 50)]
    assert best_interval(runs) is runs[1]
    with pytest.raises(ValueError, match="no measured run"):
        best_interval([])


def test_the_explorer_asks_for_the_best_interval_before_it_opens() -> None:
    e = GoodputExplorer()
    body = e.box.children[1]
    assert body.layout.display == "none"
    m = FailureModel(4.0, PREDICT_CHECKPOINT_MINUTES / 60, restart=10 / 60)
    truth = best_interval(sweep(m, interval_grid(m), 0)).tau * 60
    assert truth == pytest.approx(120)  # the measured peak sits at Young's sqrt(2CM)
    assert e.predicted_interval() == truth
    score = e.predict.check(60.0)
    assert score is not None and not score.correct
    assert "60 min too short (50% of the true value)" in score.message
    assert body.layout.display is None and e.checkpoint.value == PREDICT_CHECKPOINT_MINUTES
    assert best_interval(e.points).tau * 60 == truth  # the figure shows that sweep


def test_the_explorer_is_busy_while_it_measures(monkeypatch: pytest.MonkeyPatch) -> None:
    from course.lessons import goodput

    e = GoodputExplorer()
    mtbfs = iter((6, 8))
    assert_busy_while(monkeypatch, goodput, "sweep", e.busy,
                      lambda: setattr(e.mtbf, "value", next(mtbfs)))


def test_waste_report_terms_add_up_and_name_both_optima() -> None:
    lines = waste_report(M4C5).splitlines()
    assert len(lines) == 4
    young = M4C5.optimum
    assert lines[1].startswith(f"tau = {young * 60:4.0f} min: waste {waste(M4C5, young):.1%}")
    # at Young's optimum the checkpoint and lost-work terms are equal
    assert "(checkpoints 10.2%, lost work 10.2%, restarts 5.0%)" in lines[1]
    assert lines[-1] == (f"Young: {M4C5.optimum * 60:.0f} min, "
                         f"Daly: {daly_interval(M4C5.checkpoint, M4C5.mtbf) * 60:.0f} min")
    one = waste_report(M4C5, [1.0]).splitlines()
    assert len(one) == 2 and one[0].startswith("tau =   60 min: ")


def test_the_pt_br_explorers_figure_and_table_are_portuguese() -> None:
    """pt-BR: title, axes, legend, hover words and the table's headers through the
    course catalogue, the decimal comma; MTBF, goodput, minislurm, τ* stay; English
    unchanged."""
    e = GoodputExplorer(lang="pt-BR")
    fig = e.figure.to_dict()
    layout = fig["layout"]
    assert layout["title"]["text"] == (
        "MTBF do job 4,0 h, checkpoint 5 min: τ* = √(2CM) = 49 min → goodput 74,6% "
        "(primeira ordem), 77,0% (exato)")
    assert layout["xaxis"]["title"]["text"] == ("intervalo entre checkpoints τ (minutos de "
                                                "trabalho, escala log)")
    assert layout["yaxis"]["title"]["text"] == "goodput (útil / tempo de relógio)"
    assert layout["separators"] == ",."                  # the % ticks and hover: 74,6%
    assert [t["name"] for t in fig["data"]] == [
        "primeira ordem: 1 − C/τ − τ/2M − R/M", "exato, falhas exponenciais (Daly)",
        "medido no minislurm", "τ* de Young = 49 min", "ótimo de Daly 46 min"]
    assert fig["data"][2]["text"][0].split()[1:3] == ["falhas", "em"]
    head, *rows = e.table.value.removeprefix("<pre>").splitlines()
    assert head.split() == ["tau", "falhas", "medido", "1ª", "ordem", "exato"]
    assert rows[0].endswith("%") and "," in rows[0] and "." not in rows[0]
    en = GoodputExplorer(lang="en")
    assert en.figure.to_dict()["layout"]["title"]["text"] == summary(en.model) == (
        "job MTBF 4.0 h, checkpoint 5 min: τ* = √(2CM) = 49 min → goodput 74.6% "
        "(first order), 77.0% (exact)")
    assert "separators" not in en.figure.to_dict()["layout"]
    assert en.table.value.removeprefix("<pre>").splitlines()[0].split() == \
        ["tau", "failures", "measured", "1st", "order", "exact"]
    # the same numbers in both languages
    assert [t["y"] for t in fig["data"]] == [t["y"] for t in en.figure.to_dict()["data"]]
