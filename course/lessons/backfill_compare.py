"""Lesson 6's experiments: FIFO, EASY, conservative and Slurm's backfill side by side.

Everything runs on minislurm's controller (`minislurm.sim.simulate`, the scheduler switch
``fifo|easy|conservative|slurm`` of `minislurm.sched.backfill`):

* `SCENARIO`: a 4-node pre-training run waits for the whole GPU partition while three
  fine-tunes drain; a dozen short evaluations arrive behind it. `scenario_config`
  is the embedded default cluster with ``priority/basic`` (first come, first served,
  so only the scheduler differs) and the chosen ``bf_window`` / ``bf_resolution``;
* `compare` simulates it under each policy; `gantt_grid`, `utilisation_figure`,
  `wait_figure` and `wait_table` draw and tabulate the results;
* `scenario_cluster` submits the same jobs to an embedded `Cluster`, so that
  ``squeue --start`` shows the reservation backfill made for the pre-training run;
* `BackfillExplorer`: sliders for ``bf_window`` and ``bf_resolution`` (and the policy)
  re-simulate the scenario (tens of milliseconds);
* `WhatIf`: the same knobs on a generated AI-cluster workload of 100 to 500 jobs
  (`minislurm.sim.workload.generate`), results cached per setting.

Widget callbacks are plain methods (`BackfillExplorer.refresh`, `WhatIf.refresh`),
tested headless.
"""

from __future__ import annotations

import ctypes
import itertools
import multiprocessing
import os
import shlex
import signal
import sys
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

import ipywidgets as widgets
import plotly.graph_objects as go
import plotly.io as pio
from plotly.subplots import make_subplots

from course.i18n import N_, t, widget_lang
from minislurm.conf import SlurmConfig, load_config
from minislurm.job import JobRecord
from minislurm.sim import Cluster
from minislurm.sim.metrics import mean
from minislurm.sim.plots import PALETTE, UIREVISION, gantt, gpu_utilisation, wait_times
from minislurm.sim.simulate import SimulationResult, simulate
from minislurm.sim.workload.generator import DEFAULT_START, WorkloadJob, WorkloadSpec, generate

from .figure_words import decimal, localise, translator
from .predict import BusyIndicator, ChoiceQuestion, NumberQuestion, PredictStep

__all__ = [
    "POLICIES",
    "PREDICT_WINDOW",
    "PREFETCH_NICE",
    "PREFETCH_WORKERS",
    "RESOLUTIONS",
    "SCENARIO",
    "WHATIF_KINDS",
    "WHATIF_SIZES",
    "WINDOWS",
    "BackfillExplorer",
    "WhatIf",
    "WhatIfResult",
    "compare",
    "explorer_figure",
    "gantt_grid",
    "head_job",
    "longest_wait",
    "plotly_output",
    "reservation_bound",
    "sbatch_line",
    "scenario_cluster",
    "scenario_config",
    "scenario_listing",
    "start_hours",
    "update_whatif_figure",
    "utilisation_before",
    "utilisation_figure",
    "wait_figure",
    "wait_table",
    "whatif_figure",
    "whatif_jobs",
    "whatif_run",
]

HOUR = 3600

#: The policies in the order the lesson shows them.
POLICIES = ("fifo", "easy", "conservative", "slurm")

#: Slider stops: ``bf_window`` (minutes) and ``bf_resolution`` (seconds).
WINDOWS = (30, 60, 120, 240, 480, 720, 1440, 2880, 4320)
RESOLUTIONS = (1, 30, 60, 300, 600, 1800, 3600)

#: Generated what-if sizes (jobs).
WHATIF_SIZES = (100, 250, 500)


def _job(i: int, t: int, user: str, account: str, kind: str, name: str, nodes: int,
         gpus: int, limit: int, run: int) -> WorkloadJob:
    return WorkloadJob(i, DEFAULT_START + t, user, account, "gpu", kind, name, nodes, gpus,
                       nodes * gpus * 8, limit, run)


def _scenario() -> tuple[WorkloadJob, ...]:
    jobs = [
        _job(1, 0, "carol", "vision", "finetune", "ft-vision", 1, 8, 180, int(2.5 * HOUR)),
        _job(2, 0, "bob", "llm", "finetune", "ft-llm", 1, 8, 300, 4 * HOUR),
        _job(3, 0, "bob", "llm", "finetune", "sft", 2, 8, 480, 7 * HOUR),
        _job(4, 60, "alice", "llm", "train", "pretrain", 4, 8, 24 * 60, 20 * HOUR),
        _job(5, 120, "carol", "vision", "finetune", "ft-vit", 2, 8, 360, 4 * HOUR),
    ]
    # (GPUs, --time minutes, run minutes): short evaluations, one every 10 minutes
    evals = [(2, 60, 40), (4, 90, 60), (8, 30, 20), (1, 120, 100), (2, 45, 30), (4, 60, 50),
             (8, 90, 70), (2, 30, 25), (1, 240, 200), (4, 120, 90), (2, 60, 45), (8, 45, 30)]
    for k, (g, limit, run) in enumerate(evals):
        user = "dave" if k % 2 else "erin"
        jobs.append(_job(6 + k, 300 + k * 600, user, "eval", "eval", f"eval-{k + 1}", 1, g,
                         limit, run * 60))
    return tuple(jobs)


#: The lesson's scenario (times relative to Monday 08:00 of the simulated clock).
SCENARIO: tuple[WorkloadJob, ...] = _scenario()


def scenario_config(bf_window: int | None = None, bf_resolution: int | None = None,
                    base: SlurmConfig | None = None) -> SlurmConfig:
    """The embedded default cluster, ``priority/basic``, with these backfill knobs."""
    cfg = base or load_config(None)
    sched = cfg.scheduler
    sched = replace(sched, bf_window=sched.bf_window if bf_window is None else bf_window,
                    bf_resolution=sched.bf_resolution if bf_resolution is None
                    else bf_resolution)
    return replace(cfg, scheduler=sched, priority=replace(cfg.priority, type="priority/basic"))


def compare(jobs: Sequence[WorkloadJob] = SCENARIO, config: SlurmConfig | None = None,
            policies: Sequence[str] = POLICIES) -> dict[str, SimulationResult]:
    """Simulate ``jobs`` under each policy (same cluster, same knobs)."""
    cfg = config or scenario_config()
    return {p: simulate(jobs, cfg, scheduler=p) for p in policies}


def head_job(result: SimulationResult, name: str = "pretrain") -> JobRecord:
    """The record of the scenario's big job."""
    return next(j for j in result.jobs if j.name == name)


def start_hours(result: SimulationResult) -> dict[str, float]:
    """Each job's start, hours after the first submission (never started: ``nan``)."""
    return {j.name: (j.start_time - result.epoch) / HOUR if j.start_time is not None
            else float("nan") for j in result.jobs}


def reservation_bound(result: SimulationResult, name: str = "pretrain") -> int:
    """The latest start backfill may give the head job: when the running jobs' *time
    limits* free enough nodes (the map knows limits, not real run times)."""
    head = head_job(result, name)
    before = [j for j in result.jobs if j.start_time is not None and j.job_id < head.job_id]
    return max(j.start_time + (j.time_limit or 0) * 60 for j in before if j.start_time)


def utilisation_before(result: SimulationResult, until: int) -> float:
    """Allocated GPU-seconds / available GPU-seconds from the first submission to ``until``."""
    span = until - result.epoch
    if span <= 0 or not result.total_gpus:
        return 0.0
    used = 0.0
    for j in result.jobs:
        if j.start_time is None or j.end_time is None:
            continue
        lo, hi = max(j.start_time, result.epoch), min(j.end_time, until)
        if hi > lo:
            gpus = sum(int(v) for k, v in j.tres_alloc.items() if k == "gres/gpu")
            used += gpus * (hi - lo)
    return used / (span * result.total_gpus)


def _waits(jobs: Sequence[JobRecord], kind: str | None = None) -> list[float]:
    return [float(j.start_time - j.submit_time) for j in jobs if j.start_time is not None
            and (kind is None or j.name.startswith(kind))]


def wait_table(results: Mapping[str, SimulationResult]) -> str:
    """Per policy: the pre-training run's start, eval waits, utilisation, makespan."""
    fifo_head = min(head_job(r).start_time or 0 for r in results.values())
    head = (f"{'policy':<13}{'pretrain starts':>16}{'eval wait mean':>16}{'eval wait max':>15}"
            f"{'GPU util. until pretrain':>26}{'all done':>10}")
    lines = [head]
    for name, r in results.items():
        h = head_job(r)
        ev = _waits(r.jobs, "eval")
        end = max(j.end_time or 0 for j in r.jobs)
        lines.append(
            f"{name:<13}{((h.start_time or r.epoch) - r.epoch) / HOUR:>14.2f} h"
            f"{mean(ev) / 60:>12.0f} min{max(ev, default=0) / 60:>11.0f} min"
            f"{utilisation_before(r, max(fifo_head, h.start_time or 0)):>26.0%}"
            f"{(end - r.epoch) / HOUR:>8.1f} h")
    return "\n".join(lines) + "\n"


def gantt_grid(results: Mapping[str, SimulationResult]) -> go.Figure:
    """One Gantt chart (by node, coloured by user) per policy, on a common time axis."""
    names = list(results)
    cols = 2 if len(names) > 1 else 1
    rows = -(-len(names) // cols)
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=names, shared_xaxes=True,
                        shared_yaxes=True, vertical_spacing=0.12, horizontal_spacing=0.05)
    shown: set[str] = set()
    for i, name in enumerate(names):
        g = gantt(results[name].jobs)
        for trace in g.data:
            trace.showlegend = trace.name not in shown
            shown.add(trace.name)
            fig.add_trace(trace, i // cols + 1, i % cols + 1)
        fig.update_yaxes(categoryorder="category ascending", autorange="reversed",
                         row=i // cols + 1, col=i % cols + 1)
        fig.update_xaxes(type="date", row=i // cols + 1, col=i % cols + 1)
    fig.update_layout(barmode="overlay", template="plotly_white", uirevision=UIREVISION,
                      height=260 * rows + 80, title="Schedules (rows: GPU nodes; colour: user)",
                      legend_title_text="user")
    return fig


def utilisation_figure(results: Mapping[str, SimulationResult], bin_seconds: int = 1800,
                       hours: float = 12) -> go.Figure:
    """GPU utilisation over the first ``hours`` of each schedule, one line per policy."""
    fig = go.Figure()
    for i, (name, r) in enumerate(results.items()):
        until = r.epoch + int(hours * HOUR)
        jobs = [j for j in r.jobs if j.start_time is None or j.start_time < until]
        clipped = [replace(j, end_time=min(j.end_time, until)) if j.end_time else j
                   for j in jobs]
        line = gpu_utilisation(clipped, r.total_gpus, bin_seconds=bin_seconds).data[0]
        line.name, line.line.color = name, PALETTE[i % len(PALETTE)]
        fig.add_trace(line)
    fig.update_layout(template="plotly_white", uirevision=UIREVISION, height=360,
                      title=f"GPU utilisation, first {hours:g} hours "
                      f"({bin_seconds // 60} min bins)",
                      xaxis={"type": "date", "title": "time (UTC)"},
                      yaxis={"title": "allocated / total", "range": [0, 1.05],
                             "tickformat": ".0%"})
    return fig


def wait_figure(results: Mapping[str, SimulationResult]) -> go.Figure:
    """Wait times of the evaluation jobs, one box per policy (minutes)."""
    return wait_times({n: [j for j in r.jobs if j.name.startswith("eval")]
                       for n, r in results.items()}, unit="min").update_layout(
        title="Wait times of the evaluation jobs", height=360)


def sbatch_line(job: WorkloadJob) -> str:
    """The sbatch command line of a scenario job (its run time as ``srun sleep``)."""
    return (f"sbatch -p {job.partition} -N{job.nodes} --ntasks-per-node=1 "
            f"-c {job.cpus // job.nodes} --gres=gpu:{job.gpus_per_node} -t {job.time_limit} "
            f"-J {job.name} --wrap {shlex.quote(f'srun sleep {job.run_time}')}")


def scenario_listing(jobs: Sequence[WorkloadJob] = SCENARIO) -> str:
    """Each scenario job as the notebook prints it: minutes after the first submission,
    the user and the sbatch command line."""
    first = min(j.submit_time for j in jobs)
    return "\n".join(f"+{(j.submit_time - first) // 60:>3} min  {j.user:<6} {sbatch_line(j)}"
                     for j in jobs)


def scenario_cluster(policy: str = "slurm", until: int = 15 * 60,
                     config: SlurmConfig | None = None,
                     jobs: Sequence[WorkloadJob] = SCENARIO) -> Cluster:
    """An embedded cluster running the scenario under ``policy``, ``until`` seconds in."""
    c = Cluster(config or scenario_config(), policy=policy, epoch=DEFAULT_START)
    for job in sorted(jobs, key=lambda j: j.submit_time):
        if job.submit_time - DEFAULT_START > until:
            break
        c.advance(job.submit_time - c.now)
        out = c.run(sbatch_line(job), user=job.user)
        if out.returncode:
            raise RuntimeError(str(out))
    c.advance(DEFAULT_START + until - c.now)
    return c


def plotly_output(fig: go.Figure) -> dict[str, Any]:
    """``fig`` as a ``display_data`` output (plotly's notebook mimetype only)."""
    bundle = pio.renderers["plotly_mimetype"].to_mimebundle(fig.to_dict())
    return {"output_type": "display_data", "data": bundle, "metadata": {}}


def explorer_figure(result: SimulationResult, baseline: SimulationResult, label: str, *,
                    lang: str = "en") -> go.Figure:
    """The schedule under the sliders' settings, and each job's wait next to the default's.

    ``lang``: the language of the titles, legend and hover words (``label``, the policy
    and ``bf_*`` settings, job names and users stay as they are).
    """
    fig = make_subplots(rows=2, cols=1, row_heights=[0.6, 0.4], vertical_spacing=0.14,
                        subplot_titles=(t(lang, "schedule: {label}").format(label=label),
                                        t(lang, "wait per job (hours): these settings vs the "
                                                "default")))
    for trace in gantt(result.jobs, tr=translator(lang)).data:
        fig.add_trace(trace, 1, 1)
    names = [j.name for j in baseline.jobs]
    for i, (r, name) in enumerate(((baseline, t(lang, "default (1440 min, 60 s)")),
                                   (result, t(lang, "these")))):
        w = {j.name: round((j.start_time - j.submit_time) / HOUR, 4) for j in r.jobs
             if j.start_time is not None}
        fig.add_trace(go.Bar(x=names, y=[w.get(n) for n in names], name=name,
                             marker_color=("#BBBBBB", PALETTE[3])[i], offset=-0.4 + 0.4 * i,
                             width=0.4, legendgroup="waits"), 2, 1)
    h = head_job(result)
    start = (h.start_time - result.epoch) / HOUR if h.start_time else float("nan")
    fig.update_xaxes(type="date", row=1, col=1)
    fig.update_yaxes(categoryorder="category ascending", autorange="reversed", row=1, col=1)
    bound = (reservation_bound(result) - result.epoch) / HOUR
    fig.update_layout(barmode="overlay", template="plotly_white", uirevision=UIREVISION,
                      height=640,
                      title=t(lang, "pretrain starts {start} h in (the running jobs' limits "
                                    "free its nodes at {bound} h); mean wait {wait} min").format(
                          start=decimal(start, ".2f", lang), bound=decimal(bound, ".2f", lang),
                          wait=decimal(result.metrics.mean_wait / 60, ".0f", lang)),
                      legend={"y": 0.5})
    return localise(fig, lang)



def _bf_sliders(window: int, resolution: int, lang: str = "en") -> tuple[Any, Any]:
    """The ``bf_window`` and ``bf_resolution`` sliders both explorers show."""

    style, layout = {"description_width": "130px"}, {"width": "480px"}
    return (
        widgets.SelectionSlider(options=list(WINDOWS), value=window,
                                description=t(lang, "bf_window (min)"),
                                continuous_update=False,
                                style=style, layout=widgets.Layout(**layout)),
        widgets.SelectionSlider(options=list(RESOLUTIONS), value=resolution,
                                description=t(lang, "bf_resolution (s)"),
                                continuous_update=False,
                                style=style, layout=widgets.Layout(**layout)),
    )

#: The explorer's prediction: the pre-training run's start with this ``bf_window``.
PREDICT_WINDOW = 60


class BackfillExplorer:
    """``bf_window`` / ``bf_resolution`` sliders and a policy choice; the scenario is
    re-simulated on every change (`refresh`, a plain method).

    Before it opens, the learner predicts when the pre-training run starts with
    ``bf_window`` = `PREDICT_WINDOW` minutes (`start_hours` of that simulation); the
    check moves the slider there.
    """

    def __init__(self, policy: str = "slurm", jobs: Sequence[WorkloadJob] = SCENARIO,
                 lang: str | None = None) -> None:
        self.lang = lang = widget_lang(lang)
        self.jobs = tuple(jobs)
        d = scenario_config().scheduler
        self.window, self.resolution = _bf_sliders(d.bf_window, d.bf_resolution, lang)
        self.policy = widgets.Dropdown(options=list(POLICIES), value=policy,
                                       description=t(lang, "policy"))
        for w in (self.window, self.resolution, self.policy):
            w.observe(lambda _c: self.refresh(), names="value")
        self.status = widgets.HTML()
        self.figure_view = widgets.Output()
        self.busy = BusyIndicator(lang)
        body = widgets.VBox([widgets.HBox([widgets.VBox([self.window, self.resolution]),
                                           widgets.VBox([self.policy, self.busy.view])]),
                             self.status, self.figure_view])
        question = NumberQuestion(
            t(lang, "With bf_window = {window} minutes ({policy}, bf_resolution {resolution} "
              "s), when does the pre-training run start? Hours after 08:00 (16:00 is 8).")
            .format(window=PREDICT_WINDOW, policy=policy, resolution=d.bf_resolution),
            self.predicted_start, unit="h", tolerance=0.5, low=N_("early"), high=N_("late"))
        self.predict = PredictStep(question, body, on_checked=self._show_prediction,
                                   busy=self.busy)
        self.box = widgets.VBox([self.predict.view, body])
        self._cache: dict[tuple[str, int, int], SimulationResult] = {}
        self.baseline = self.run("slurm", d.bf_window, d.bf_resolution)
        self.result = self.baseline
        self.figure = go.Figure()
        self.refresh()

    def run(self, policy: str, window: int, resolution: int) -> SimulationResult:
        """The scenario under these settings (cached)."""
        key = (policy, window, resolution)
        if key not in self._cache:
            self._cache[key] = simulate(self.jobs, scenario_config(window, resolution),
                                        scheduler=policy)
        return self._cache[key]

    def predicted_start(self) -> float:
        """Hours from 08:00 to the pre-training run's start with ``bf_window`` =
        `PREDICT_WINDOW` (the policy and resolution the explorer starts with)."""
        d = scenario_config().scheduler
        result = self.run(str(self.policy.value), PREDICT_WINDOW, d.bf_resolution)
        return start_hours(result)["pretrain"]

    def _show_prediction(self) -> None:
        self.window.value = PREDICT_WINDOW

    def refresh(self) -> None:
        """Re-simulate for the controls' values and redraw."""
        w, r, p = int(self.window.value), int(self.resolution.value), str(self.policy.value)
        label = f"{p}, bf_window={w} min, bf_resolution={r} s"
        with self.busy.working("simulating {n} jobs under {label}…", n=len(self.jobs),
                               label=label):
            t0 = time.perf_counter()
            self.result = self.run(p, w, r)
            self.figure = explorer_figure(self.result, self.baseline, label, lang=self.lang)
            self.figure_view.outputs = (plotly_output(self.figure),)
            self.status.value = t(self.lang, "simulated {n} jobs under {label} in {seconds} s"
                                  ).format(n=len(self.jobs), label=label,
                                           seconds=decimal(time.perf_counter() - t0, ".2f",
                                                           self.lang))

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.box)


# ------------------------------------------------------------------- what-if


def whatif_jobs(size: int, seed: int = 1) -> list[WorkloadJob]:
    """The first ``size`` jobs of a generated AI-cluster workload (about 70 a day)."""
    return list(_whatif_workload(size, seed))


@lru_cache(maxsize=16)
def _whatif_workload(size: int, seed: int) -> tuple[WorkloadJob, ...]:
    """`whatif_jobs`, generated once per (size, seed): a pure function of both (frozen
    records), so a slider move re-simulates without generating the workload again."""
    spec = WorkloadSpec(seed=seed, days=size / 50 + 1)
    return tuple(itertools.islice(generate(spec), size))


@dataclass(frozen=True, slots=True)
class WhatIfResult:
    """One what-if run: the knobs, mean waits by kind of job, utilisation, time taken."""

    size: int
    window: int
    resolution: int
    waits: Mapping[str, float]  # kind -> mean wait (hours)
    gpu_utilisation: float
    seconds: float


def whatif_run(size: int, window: int, resolution: int, *, policy: str = "slurm",
               seed: int = 1) -> WhatIfResult:
    """Simulate the generated workload on the default cluster with these knobs."""
    jobs = _whatif_workload(size, seed)
    kinds = {j.job_id: j.kind for j in jobs}
    base = load_config(None)
    cfg = replace(base, scheduler=replace(base.scheduler, bf_window=window,
                                          bf_resolution=resolution))
    t = time.perf_counter()
    r = simulate(jobs, cfg, scheduler=policy)
    seconds = time.perf_counter() - t
    by_kind: dict[str, list[float]] = {}
    for j in r.jobs:
        if j.start_time is None or j.restart_count:
            continue
        by_kind.setdefault(kinds.get(r.workload_id(j), "other"), []).append(
            (j.start_time - j.submit_time) / HOUR)
    return WhatIfResult(size, window, resolution,
                        {k: mean(v) for k, v in sorted(by_kind.items())},
                        r.metrics.gpu_utilization, seconds)


def _whatif_bars(current: WhatIfResult, baseline: WhatIfResult,
                 lang: str) -> tuple[list[str], list[tuple[list[float], str]]]:
    """The kinds of job (x) and, per bar trace (slurm.conf's, then the sliders'), its
    mean waits (y) and legend name: what `whatif_figure` draws and `WhatIf` updates."""
    kinds = sorted(set(baseline.waits) | set(current.waits))
    bars = [([round(r.waits.get(k, 0.0), 4) for k in kinds],
             t(lang, "{name}: GPU util. {util}").format(
                 name=name, util=decimal(r.gpu_utilisation, ".0%", lang)))
            for r, name in ((baseline, "slurm.conf (1440 min, 60 s)"),
                            (current, f"{current.window} min, {current.resolution} s"))]
    return kinds, bars


def _whatif_title(current: WhatIfResult, lang: str) -> str:
    return t(lang, "What if: {size} generated jobs, Slurm's backfill").format(size=current.size)


def whatif_figure(current: WhatIfResult, baseline: WhatIfResult, *,
                  lang: str = "en") -> go.Figure:
    """Mean wait by kind of job: the sliders' settings next to slurm.conf's (``lang``:
    the language of the title, axis and legend; slurm.conf, the settings, the kinds of job
    and Slurm's backfill stay)."""
    kinds, bars = _whatif_bars(current, baseline, lang)
    fig = go.Figure()
    for i, (ys, name) in enumerate(bars):
        fig.add_trace(go.Bar(x=kinds, y=ys, name=name, marker_color=("#BBBBBB", PALETTE[0])[i]))
    fig.update_layout(barmode="group", template="plotly_white", uirevision=UIREVISION,
                      height=380, yaxis={"title": t(lang, "mean wait (hours)"),
                                         "rangemode": "tozero"},
                      title=_whatif_title(current, lang),
                      legend={"orientation": "h", "y": -0.2})
    return localise(fig, lang)


def update_whatif_figure(fig: go.Figure, current: WhatIfResult, baseline: WhatIfResult, *,
                         lang: str = "en") -> go.Figure:
    """``fig`` (a `whatif_figure`) redrawn in place for these runs: the bars' data, legend
    names and the title change (one ``batch_update``), so a slider move does not build a
    new figure (plotly validates its template again for each: ~10 ms).  The result equals
    ``whatif_figure(current, baseline, lang=lang)``."""
    kinds, bars = _whatif_bars(current, baseline, lang)
    if len(fig.data) != len(bars):
        raise ValueError("not a what-if figure: it needs one bar trace per run")
    with fig.batch_update():
        for trace, (ys, name) in zip(fig.data, bars, strict=True):
            trace.update(x=kinds, y=ys, name=name)
        fig.layout.title.text = _whatif_title(current, lang)
    return fig


def longest_wait(result: WhatIfResult) -> str:
    """The kind of job with the longest mean wait in ``result``."""
    if not result.waits:
        raise ValueError("no job of the workload started")
    return max(result.waits, key=lambda k: result.waits[k])


#: The kinds of job the generator makes (the what-if's prediction offers them).
WHATIF_KINDS = ("debug", "eval", "sweep", "train")


#: Background processes of `WhatIf.prefetch`: two (the 250- and 500-job reference runs
#: side by side), one on a single core.
PREFETCH_WORKERS = min(2, os.cpu_count() or 1)

#: The niceness `WhatIf.prefetch`'s workers add to their own (nice(1)): on a 2-core
#: machine the learner's slider moves, in the kernel, get the cores first.
PREFETCH_NICE = 10


def _in_background(parent: int) -> None:
    """A prefetch worker's start: lower its own priority (``os.nice``), so a move in the
    kernel meanwhile is not slowed by the runs simulated ahead; and end with the kernel
    that forked it (Linux ``prctl(PR_SET_PDEATHSIG)``): a kernel killed or ended without
    its exit handlers would otherwise leave its workers waiting on the pool's queue for
    ever (the forked workers hold the queue's other end themselves).  The signal comes
    when the *thread* that forked the worker ends, not only the process: the pool is
    made on the kernel's main thread (``WhatIf`` is built by a notebook cell), which
    lives as long as the kernel."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:  # it ended before the line above
        os._exit(0)
    os.nice(PREFETCH_NICE)


#: ``PR_SET_PDEATHSIG`` of <linux/prctl.h>.
_PR_SET_PDEATHSIG = 1


class WhatIf:
    """Workload size, ``bf_window`` and ``bf_resolution`` for a generated workload.

    Before it opens, the learner predicts which kind of job waits longest under
    slurm.conf's settings (`longest_wait` of the run the figure shows first).  While
    the learner answers, the other sizes' runs under slurm.conf's settings (the
    reference bars a size change needs) are simulated in background processes (`prefetch`,
    niced: the moves in the kernel get the cores first): the 500-job one costs about a
    second of CPU, so the size menu answers at once.
    """

    def __init__(self, size: int = WHATIF_SIZES[0], seed: int = 1, *,
                 prefetch: bool = True, lang: str | None = None) -> None:
        self.lang = lang = widget_lang(lang)
        self.seed = seed
        d = load_config(None).scheduler
        self.default = (d.bf_window, d.bf_resolution)
        self.size = widgets.Dropdown(options=list(WHATIF_SIZES), value=size,
                                     description=t(lang, "jobs"))
        self.window, self.resolution = _bf_sliders(d.bf_window, d.bf_resolution, lang)
        for w in (self.size, self.window, self.resolution):
            w.observe(lambda _c: self.refresh(), names="value")
        self.status = widgets.HTML()
        self.figure_view = widgets.Output()
        self.busy = BusyIndicator(lang)
        body = widgets.VBox([widgets.HBox([widgets.VBox([self.size, self.busy.view]),
                                           widgets.VBox([self.window, self.resolution])]),
                             self.status, self.figure_view])
        question = ChoiceQuestion(
            t(lang, "{size} generated jobs (training runs, evaluations, debug jobs, sweep "
              "arrays) under slurm.conf's settings (bf_window {window} min, bf_resolution "
              "{resolution} s): which kind of job waits longest on average?").format(
                size=size, window=d.bf_window, resolution=d.bf_resolution),
            WHATIF_KINDS, lambda: longest_wait(self.run(size, *self.default)))
        self.predict = PredictStep(question, body, busy=self.busy)
        self.box = widgets.VBox([self.predict.view, body])
        self._cache: dict[tuple[int, int, int], WhatIfResult] = {}
        self._ahead: dict[tuple[int, int, int], Future[WhatIfResult]] = {}
        self._pool: ProcessPoolExecutor | None = None
        self.current: WhatIfResult | None = None
        self.figure = go.Figure()
        self.refresh()
        if prefetch:  # every size's reference run, while the learner answers the question
            self.prefetch([(s, *self.default) for s in WHATIF_SIZES if s != size])

    def prefetch(self, keys: Sequence[tuple[int, int, int]]) -> None:
        """Simulate these (size, window, resolution) settings in background processes
        (`PREFETCH_WORKERS`, forked: they need no import and hold no lock of this one;
        niced by `PREFETCH_NICE`, so the slider moves meanwhile do not wait for them);
        `run` takes a finished one from there (or waits for it if it is under way)
        instead of simulating it again.
        The results are those of `whatif_run` (the same function)."""
        if self._pool is None:
            self._pool = ProcessPoolExecutor(max_workers=PREFETCH_WORKERS,
                                             mp_context=multiprocessing.get_context("fork"),
                                             initializer=_in_background,
                                             initargs=(os.getpid(),))
        for key in keys:
            if key not in self._cache and key not in self._ahead:
                self._ahead[key] = self._pool.submit(whatif_run, *key, seed=self.seed)

    def close(self) -> None:
        """Drop the prefetches not started and wait for the one under way."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        self._ahead = {k: f for k, f in self._ahead.items() if f.done() and not f.cancelled()}

    def run(self, size: int, window: int, resolution: int) -> WhatIfResult:
        """One what-if (cached per setting; a prefetched one is taken when it is done)."""
        key = (size, window, resolution)
        if key not in self._cache:
            ahead = self._ahead.pop(key, None)
            if ahead is not None and (ahead.done() or ahead.running()):
                self._cache[key] = ahead.result()
            else:  # not started yet: simulate here rather than wait behind the queue
                if ahead is not None:
                    ahead.cancel()
                self._cache[key] = whatif_run(size, window, resolution, seed=self.seed)
        return self._cache[key]

    def refresh(self) -> None:
        """Simulate (or fetch) the current and the default settings and redraw."""
        size = int(self.size.value)
        with self.busy.working("simulating {size} jobs…", size=size):
            base = self.run(size, *self.default)
            self.current = self.run(size, int(self.window.value), int(self.resolution.value))
            if self.figure.data:  # drawn before: update its data in place
                update_whatif_figure(self.figure, self.current, base, lang=self.lang)
            else:
                self.figure = whatif_figure(self.current, base, lang=self.lang)
            self.figure_view.outputs = (plotly_output(self.figure),)
            self.status.value = t(self.lang, "{size} jobs: simulated in {seconds} s (cached "
                                  "settings are instant)").format(
                size=size, seconds=decimal(self.current.seconds, ".2f", self.lang))

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.box)
