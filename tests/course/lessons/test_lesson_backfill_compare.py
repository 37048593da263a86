"""Lesson 6's experiments (course/lessons/backfill_compare.py), headless.

The scenario is simulated by minislurm's controller under each scheduler; the
assertions are the textbook properties of each policy on it.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from busy_probe import assert_busy_while
from realslurm.procs import alive

from course.lessons.backfill_compare import (
    POLICIES,
    PREDICT_WINDOW,
    PREFETCH_NICE,
    PREFETCH_WORKERS,
    SCENARIO,
    WHATIF_KINDS,
    BackfillExplorer,
    WhatIf,
    compare,
    gantt_grid,
    head_job,
    longest_wait,
    reservation_bound,
    scenario_cluster,
    scenario_config,
    scenario_listing,
    start_hours,
    update_whatif_figure,
    utilisation_before,
    utilisation_figure,
    wait_figure,
    wait_table,
    whatif_figure,
    whatif_jobs,
    whatif_run,
)
from minislurm.sim.simulate import SimulationResult, simulate


@pytest.fixture(scope="module")
def results() -> dict[str, SimulationResult]:
    return compare()


def _eval_waits(r: SimulationResult) -> dict[str, int]:
    return {j.name: (j.start_time or 0) - j.submit_time for j in r.jobs
            if j.name.startswith("eval")}


def test_every_job_runs_under_every_policy(results: dict[str, SimulationResult]) -> None:
    assert list(results) == list(POLICIES)
    for r in results.values():
        assert len(r.jobs) == len(SCENARIO)
        assert all(j.start_time is not None and j.end_time is not None for j in r.jobs)


def test_fifo_starts_nothing_ahead_of_the_waiting_head_job(
        results: dict[str, SimulationResult]) -> None:
    fifo = results["fifo"]
    head = head_job(fifo)
    later = [j for j in fifo.jobs if j.job_id > head.job_id]
    assert all((j.start_time or 0) >= (head.start_time or 0) for j in later)


def test_backfill_fills_the_gaps_with_evals(results: dict[str, SimulationResult]) -> None:
    head = head_job(results["easy"])
    assert head.start_time is not None
    early = [j for j in results["easy"].jobs
             if j.name.startswith("eval") and (j.start_time or 0) < head.start_time]
    assert len(early) >= 8  # most evaluations run before the pre-training run starts
    fifo_until = head_job(results["fifo"]).start_time or 0
    for p in ("easy", "conservative", "slurm"):
        assert utilisation_before(results[p], fifo_until) > utilisation_before(
            results["fifo"], fifo_until) + 0.1


@pytest.mark.parametrize("window", [480, 1440, 2880])
@pytest.mark.parametrize("resolution", [1, 60, 600])
def test_easy_never_delays_the_head_jobs_reserved_start(window: int, resolution: int) -> None:
    """The reservation is computed from time limits: the head job starts by then."""
    r = simulate(SCENARIO, scenario_config(window, resolution), scheduler="easy")
    head = head_job(r)
    assert head.start_time is not None
    assert head.start_time <= reservation_bound(r) + resolution


def test_a_short_window_lets_backfill_starve_the_head_job() -> None:
    """bf_window shorter than the head job's wait: no reservation, later jobs overtake it."""
    ok = simulate(SCENARIO, scenario_config(1440, 60), scheduler="slurm")
    short = simulate(SCENARIO, scenario_config(60, 60), scheduler="slurm")
    assert (head_job(short).start_time or 0) > reservation_bound(short)
    assert (head_job(short).start_time or 0) > (head_job(ok).start_time or 0) + 3600
    assert start_hours(short)["ft-vit"] < start_hours(short)["pretrain"]  # overtaken


def test_conservative_waits_are_at_most_fifos(results: dict[str, SimulationResult]) -> None:
    cons, fifo = _eval_waits(results["conservative"]), _eval_waits(results["fifo"])
    assert all(cons[n] <= fifo[n] for n in cons)
    assert results["conservative"].metrics.mean_wait <= results["fifo"].metrics.mean_wait
    head = head_job(results["conservative"])
    assert (head.start_time or 0) <= reservation_bound(results["conservative"]) + 60


def test_coarse_resolution_costs_an_eval_its_gap() -> None:
    fine = simulate(SCENARIO, scenario_config(1440, 60), scheduler="conservative")
    coarse = simulate(SCENARIO, scenario_config(1440, 3600), scheduler="conservative")
    assert max(_eval_waits(coarse).values()) > max(_eval_waits(fine).values())


def test_squeue_start_shows_the_reservation() -> None:
    c = scenario_cluster("slurm", until=3 * 3600)
    out = c.run("squeue --start -h -o '%j %S'").stdout
    starts = dict(line.split() for line in out.splitlines())
    assert starts["pretrain"] == "2026-01-05T16:00:00"  # 08:00 + sft's 8-hour limit


def test_table_and_figures(results: dict[str, SimulationResult]) -> None:
    table = wait_table(results)
    assert [line.split()[0] for line in table.splitlines()[1:]] == list(POLICIES)
    grid = gantt_grid(results)
    axes = {t.xaxis for t in grid.data}
    assert len(axes) == 4
    util = utilisation_figure(results)
    assert [t.name for t in util.data] == list(POLICIES)
    assert util.data[0].y != util.data[1].y  # FIFO leaves GPUs idle that EASY fills
    waits = wait_figure(results)
    assert min(waits.data[0].y) > 5 * max(waits.data[1].y)  # every FIFO eval waits longer


def test_explorer_sliders_resimulate(results: dict[str, SimulationResult]) -> None:
    e = BackfillExplorer()
    assert e.result.metrics.mean_wait == results["slurm"].metrics.mean_wait
    before = e.figure.to_dict()
    e.window.value = 60
    after = e.figure.to_dict()
    assert after["data"] != before["data"]
    assert after["layout"]["title"]["text"] != before["layout"]["title"]["text"]
    assert (head_job(e.result).start_time or 0) > reservation_bound(e.result)
    assert e.figure_view.outputs[0]["data"]["application/vnd.plotly.v1+json"]["data"] == \
        after["data"]
    e.policy.value = "fifo"
    assert e.result.scheduler == "fifo"
    e.window.value, e.policy.value = 1440, "slurm"
    assert e.figure.to_dict()["data"] == before["data"]


def test_whatif_size_and_knobs() -> None:
    assert len(whatif_jobs(100)) == 100
    w = WhatIf(size=100)
    assert w.current is not None and w.current.size == 100
    base = w.figure.to_dict()["data"]
    w.resolution.value = 3600
    assert w.current.resolution == 3600
    after = w.figure.to_dict()["data"]
    assert after[1]["y"] != base[1]["y"]  # the coarse map changes the waits
    assert after[0]["y"] == base[0]["y"]  # the default stays as the reference


@pytest.mark.parametrize("lang", ["en", "pt-BR"])
def test_the_whatif_redraws_its_figure_in_place(lang: str) -> None:
    w = WhatIf(size=100, prefetch=False, lang=lang)
    fig = w.figure
    w.window.value = 60
    w.resolution.value = 600
    assert w.figure is fig  # built once: a move updates its data
    assert w.current is not None
    fresh = whatif_figure(w.current, w.run(100, *w.default), lang=lang)
    assert fig.to_dict() == fresh.to_dict()  # the same figure as one drawn anew
    assert fig.to_dict()["data"][1]["name"].startswith("60 min, 600 s")


def test_update_whatif_figure_needs_a_whatif_figure() -> None:
    r = whatif_run(100, 1440, 60)
    with pytest.raises(ValueError, match="one bar trace per run"):
        update_whatif_figure(wait_figure({}), r, r)


def test_the_whatif_generates_each_workload_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from course.lessons import backfill_compare

    first = whatif_run(100, 1440, 60)
    jobs = whatif_jobs(100)
    assert jobs == whatif_jobs(100) and jobs is not whatif_jobs(100)  # a list of one's own

    def no_generate(*_a: object, **_k: object) -> None:
        raise AssertionError("the workload was generated again")

    monkeypatch.setattr(backfill_compare, "generate", no_generate)
    again = whatif_run(100, 1440, 60)  # a slider move: simulated again, not generated
    assert again.waits == first.waits and whatif_jobs(100) == jobs


def test_scenario_listing_gives_minutes_after_the_first_submission() -> None:
    lines = scenario_listing().splitlines()
    assert len(lines) == len(SCENARIO)
    assert lines[0].startswith("+  0 min  ") and "sbatch -p gpu" in lines[0]
    pretrain = next(line for line in lines if "-J pretrain" in line)
    assert pretrain.startswith("+  1 min  alice  sbatch -p gpu -N4 ")
    minutes = [int(line[1:4]) for line in lines]
    assert minutes == sorted(minutes) and minutes[-1] > 60


def test_the_explorer_asks_when_the_big_run_starts_before_it_opens() -> None:
    e = BackfillExplorer()
    body = e.box.children[1]
    assert body.layout.display == "none"
    truth = e.predicted_start()
    short = simulate(SCENARIO, scenario_config(PREDICT_WINDOW), scheduler="slurm")
    assert truth == start_hours(short)["pretrain"]
    assert truth > start_hours(e.baseline)["pretrain"]  # no reservation: it starts later
    score = e.predict.check(8.0)
    assert score is not None and not score.correct
    assert score.error == pytest.approx(8.0 - truth)
    assert f"{truth - 8:.2f} h too early" in score.message
    assert body.layout.display is None and e.window.value == PREDICT_WINDOW
    assert start_hours(e.result)["pretrain"] == truth  # the figure shows that run


def test_the_explorer_is_busy_while_it_resimulates(monkeypatch: pytest.MonkeyPatch) -> None:
    from course.lessons import backfill_compare

    e = BackfillExplorer()
    windows = iter((120, 240))
    assert_busy_while(monkeypatch, backfill_compare, "simulate", e.busy,
                      lambda: setattr(e.window, "value", next(windows)))


def test_longest_wait_is_the_kind_with_the_largest_mean_wait() -> None:
    r = whatif_run(100, 1440, 60)
    assert set(r.waits) == set(WHATIF_KINDS)
    kind = longest_wait(r)
    assert all(r.waits[kind] >= v for v in r.waits.values())


def test_the_whatif_asks_which_kind_waits_longest_before_it_opens() -> None:
    w = WhatIf(size=100)
    body = w.box.children[1]
    assert body.layout.display == "none" and w.predict.question.options == WHATIF_KINDS
    truth = longest_wait(whatif_run(100, 1440, 60))
    wrong = next(k for k in WHATIF_KINDS if k != truth)
    score = w.predict.check(wrong)
    assert score is not None and not score.correct
    assert score.message.endswith(f"the simulation says {truth}.")
    assert body.layout.display is None


def test_the_whatif_is_busy_while_it_simulates(monkeypatch: pytest.MonkeyPatch) -> None:
    from course.lessons import backfill_compare

    w = WhatIf(size=100)
    windows = iter((60, 120))
    assert_busy_while(monkeypatch, backfill_compare, "whatif_run", w.busy,
                      lambda: setattr(w.window, "value", next(windows)))


def test_the_whatif_prefetches_the_other_sizes_reference_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from course.lessons import backfill_compare

    w = WhatIf(size=100)
    keys = {(s, *w.default) for s in backfill_compare.WHATIF_SIZES if s != 100}
    assert set(w._ahead) == keys
    for future in w._ahead.values():
        future.result(timeout=300)

    def again(*_args: object, **_kwargs: object) -> object:
        raise AssertionError("a prefetched setting was simulated again")

    monkeypatch.setattr(backfill_compare, "whatif_run", again)
    w.size.value = 250
    monkeypatch.undo()
    direct = whatif_run(250, *w.default)
    assert w.current is not None
    assert (w.current.size, w.current.waits, w.current.gpu_utilisation) == (
        250, direct.waits, direct.gpu_utilisation)


def test_run_takes_a_prefetched_setting_or_simulates_a_queued_one_itself() -> None:
    w = WhatIf(size=100, prefetch=False)
    assert w._pool is None and not w._ahead
    queued = (100, 60, 60)  # behind 250 and 500, one per worker (one core: behind 250)
    w.prefetch([(250, *w.default), (500, *w.default), queued])
    got = w.run(*queued)  # not started: simulated here, the queued one dropped
    assert queued not in w._ahead and got.size == 100
    assert got.waits == whatif_run(*queued).waits
    w.close()


def test_the_prefetch_workers_are_niced() -> None:
    import os

    w = WhatIf(size=100, prefetch=False)
    w.prefetch([])  # the workers, without the reference runs' CPU
    assert w._pool is not None
    assert w._pool.submit(os.nice, 0).result(timeout=300) == os.nice(0) + PREFETCH_NICE
    w.close()


def test_the_prefetch_workers_end_with_their_kernel(tmp_path: Path) -> None:
    """A kernel that dies (here: ``os._exit``, no exit handler) takes its prefetch workers
    with it; they do not wait on the pool's queue for ever."""
    script, pids = tmp_path / "kernel.py", tmp_path / "workers"
    script.write_text(
        "import os, pathlib, sys\n"
        "from course.lessons.backfill_compare import WhatIf\n"
        "w = WhatIf(size=100, prefetch=False)\n"
        "w.prefetch([])\n"
        "assert w._pool is not None\n"
        "w._pool.submit(os.getpid).result(timeout=300)\n"
        f"pathlib.Path({str(pids)!r}).write_text(' '.join(map(str, w._pool._processes)))\n"
        "os._exit(0)\n")
    # no pipe to the kernel: workers left behind would hold it open
    subprocess.run([sys.executable, str(script)], stdout=subprocess.DEVNULL, timeout=300,
                   check=True, cwd=Path(__file__).resolve().parents[3])
    workers = [int(p) for p in pids.read_text().split()]
    assert len(workers) == PREFETCH_WORKERS
    deadline = time.monotonic() + 30
    while any(alive(p) for p in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(alive(p) for p in workers)


def test_close_drops_what_is_queued_and_keeps_what_is_done() -> None:
    w = WhatIf(size=100)
    w.close()
    assert w._pool is None
    assert all(f.done() and not f.cancelled() for f in w._ahead.values())
    w.size.value = 500  # a dropped prefetch is simulated when asked for
    assert w.current is not None and w.current.size == 500


def test_the_pt_br_explorers_figure_is_portuguese_and_keeps_slurms_words() -> None:
    e = BackfillExplorer(lang="pt-BR")
    e.window.value = 60
    fig = e.figure.to_dict()
    title = fig["layout"]["title"]["text"]
    assert title.startswith("pretrain começa após ") and "; espera média " in title
    assert fig["layout"]["separators"] == ",."
    assert "," in title.split(" h ")[0] and "." not in title.split(" h ")[0]   # 2,50 h
    assert re.search(r" em \d+,\d\d s$", e.status.value), e.status.value
    subtitles = [a["text"] for a in fig["layout"]["annotations"]]
    assert subtitles == ["escalonamento: slurm, bf_window=60 min, bf_resolution=60 s",
                         "espera por job (horas): estes ajustes vs o padrão"]
    bars = [t for t in fig["data"] if t.get("legendgroup") == "waits"]
    assert [t["name"] for t in bars] == ["padrão (1440 min, 60 s)", "estes ajustes"]
    hover = next(t for t in fig["data"] if t["type"] == "bar" and t.get("hovertext"))
    assert hover["hovertext"][0].startswith("job ")
    assert "<br>usuário " in hover["hovertext"][0] and "<br>espera " in hover["hovertext"][0]
    assert hover["hovertext"][0].endswith("<br>COMPLETED")           # Slurm's state stays
    en = BackfillExplorer(lang="en")
    en.window.value = 60
    english = en.figure.to_dict()
    assert english["layout"]["title"]["text"].startswith("pretrain starts ")
    assert "separators" not in english["layout"]
    assert [a["text"] for a in english["layout"]["annotations"]][1] == \
        "wait per job (hours): these settings vs the default"
    assert "<br>user " in next(t for t in english["data"]
                               if t["type"] == "bar" and t.get("hovertext"))["hovertext"][0]
    # the same schedule in both languages: only the words differ
    assert [t["y"] for t in fig["data"]] == [t["y"] for t in english["data"]]


def test_the_pt_br_whatif_figure_is_portuguese() -> None:
    w = WhatIf(size=100, prefetch=False, lang="pt-BR")
    fig = w.figure.to_dict()
    assert fig["layout"]["title"]["text"] == "E se: 100 jobs gerados, backfill do Slurm"
    assert fig["layout"]["yaxis"]["title"]["text"] == "espera média (horas)"
    seconds = w.status.value.split(" s ")[0].rsplit(" ", 1)[-1]
    assert re.fullmatch(r"\d+,\d\d", seconds), w.status.value      # decimal comma
    assert fig["layout"]["separators"] == ",."
    names = [t["name"] for t in fig["data"]]
    assert names[0].startswith("slurm.conf (1440 min, 60 s): uso das GPUs ")
    assert names[1].startswith("1440 min, 60 s: uso das GPUs ")
    en = WhatIf(size=100, prefetch=False, lang="en")
    assert en.figure.to_dict()["layout"]["title"]["text"] == \
        "What if: 100 generated jobs, Slurm's backfill"
    assert en.figure.to_dict()["data"][0]["name"].startswith("slurm.conf (1440 min, 60 s): "
                                                             "GPU util. ")
