"""Lesson 8's figure and widget: goodput and time lost to failures, 8 to 100,000 GPUs.

`scaling_figure` draws the model's curves over a range of job sizes, the points that
minislurm simulated, and the breakdown of the wall time at the selected size.
`ScalingExplorer` puts sliders (GPUs in the job, checkpoint write time, restart time)
and a button that simulates the selected size on minislurm in front of it, after the
learner predicts the goodput at `PREDICT_GPUS` with cheap checkpoints (`goodput_percent`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from course.i18n import N_, t, widget_lang

from .figure_words import decimal, localise
from .predict import BusyIndicator, NumberQuestion, PredictStep
from .scaling import ScaleParams, StudyPoint, expected_run, simulate_run

#: Job sizes on the slider and the curves (GPUs).
GPU_STEPS = (8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536,
             100000)

#: Wall-time categories, in stacking order, with their colours.
PARTS = (("useful", N_("useful work"), "#2ca02c"),
         ("checkpoint", N_("checkpoint writes"), "#1f77b4"),
         ("lost", N_("work lost (since last checkpoint)"), "#d62728"),
         ("restart", N_("restarts (reload checkpoint)"), "#ff7f0e"),
         ("requeue", N_("requeue wait (BeginTime, free nodes)"), "#9467bd"))


def _fmt_hours(h: float, lang: str = "en") -> str:
    if h >= 48:
        return t(lang, "{days} days").format(days=decimal(h / 24, ".0f", lang))
    if h >= 2:
        return f"{decimal(h, '.1f', lang)} h"
    return f"{h * 60:.0f} min"


def summary(p: ScaleParams, work: float, lang: str = "en") -> str:
    """One sentence about the selected size (the figure's title), in ``lang``."""
    e = expected_run(p, work)
    return t(lang, "{gpus} GPUs ({nodes} nodes): a failure every {mtbf}, checkpoint every "
                   "{tau} → goodput {goodput}").format(
        gpus=decimal(p.gpus, ",", lang), nodes=decimal(p.nodes, ",", lang),
        mtbf=_fmt_hours(p.job_mtbf, lang), tau=_fmt_hours(p.tau, lang),
        goodput=decimal(e.goodput, ".0%", lang))


def _scaling_data(base: ScaleParams, work: float, sims: Sequence[StudyPoint],
                  steps: Sequence[int], lang: str) -> tuple[list[dict[str, Any]], str, str]:
    """What changes between two `scaling_figure`s: each trace's data (the three model
    curves, minislurm's points if any apply, the selected point, the five bars), the
    title and the right-hand subplot's title."""
    xs = sorted({*steps, base.gpus})
    model = [expected_run(replace(base, gpus=g), work) for g in xs]
    traces: list[dict[str, Any]] = [
        {"x": xs, "y": [m.goodput for m in model]},
        {"x": xs, "y": [m.lost_to_failures for m in model]},
        {"x": xs, "y": [m.checkpoint / m.wall for m in model]}]
    match = [s for s in sims if _same_costs(s.params, base)]
    if match:
        traces.append({
            "x": [s.params.gpus for s in match], "y": [s.breakdown.goodput for s in match],
            "error_y": {"array": [max(s.goodputs) - s.breakdown.goodput for s in match],
                        "arrayminus": [s.breakdown.goodput - min(s.goodputs) for s in match]},
            "text": [t(lang, "{runs} runs, {failures} interruptions per run").format(
                runs=len(s.runs), failures=decimal(s.breakdown.failures, ".1f", lang))
                for s in match]})
    here = expected_run(base, work)
    traces.append({"x": [base.gpus], "y": [here.goodput]})
    bars: dict[str, Any] = {t(lang, "model"): here}
    sim_here = [s for s in match if s.params.gpus == base.gpus]
    if sim_here:
        bars["minislurm"] = sim_here[-1].breakdown
    traces.extend({"x": list(bars), "y": [getattr(b, key) / b.wall for b in bars.values()]}
                  for key, _label, _colour in PARTS)
    right = t(lang, "where the time goes at {gpus} GPUs").format(
        gpus=decimal(base.gpus, ",", lang))
    return traces, summary(base, work, lang), right


def scaling_figure(
    base: ScaleParams, work: float, sims: Sequence[StudyPoint] = (),
    steps: Sequence[int] = GPU_STEPS, *, lang: str = "en",
) -> go.Figure:
    """Goodput and share lost to failures versus GPUs (model and minislurm), and the
    breakdown at ``base.gpus``. Simulated points count only if they match ``base``'s
    checkpoint and restart costs.  ``lang``: the language of the titles, axis, legend
    and hover words (goodput, minislurm, BeginTime stay)."""
    traces, title, right = _scaling_data(base, work, sims, steps, lang)
    fig = make_subplots(rows=1, cols=2, column_widths=[0.64, 0.36], horizontal_spacing=0.1,
                        subplot_titles=(t(lang, "share of wall time vs job size"), right))
    good, lost, ckpt = traces[:3]
    fig.add_trace(go.Scatter(x=good["x"], y=good["y"], mode="lines",
                             name=t(lang, "goodput"), line={"color": "#2ca02c"}), 1, 1)
    fig.add_trace(go.Scatter(x=lost["x"], y=lost["y"], mode="lines",
                             name=t(lang, "lost to failures"), line={"color": "#d62728"}), 1, 1)
    fig.add_trace(go.Scatter(x=ckpt["x"], y=ckpt["y"], mode="lines",
                             name=t(lang, "checkpoint writes"), line={"color": "#1f77b4"}),
                  1, 1)
    if len(traces) > 3 + 1 + len(PARTS):
        points = traces[3]
        fig.add_trace(go.Scatter(
            x=points["x"], y=points["y"],
            mode="markers", name=t(lang, "goodput on minislurm"),
            marker={"symbol": "diamond", "size": 10, "color": "#2ca02c",
                    "line": {"width": 1, "color": "black"}},
            error_y={"type": "data", "symmetric": False,
                     "array": points["error_y"]["array"],
                     "arrayminus": points["error_y"]["arrayminus"]},
            text=points["text"]), 1, 1)
    selected = traces[-1 - len(PARTS)]
    fig.add_trace(go.Scatter(x=selected["x"], y=selected["y"], mode="markers",
                             name=t(lang, "selected"), marker={"size": 14, "color": "black",
                                                      "symbol": "star"}), 1, 1)
    for (_key, label, colour), bar in zip(PARTS, traces[-len(PARTS):], strict=True):
        fig.add_trace(go.Bar(
            x=bar["x"], y=bar["y"],
            name=t(lang, label),
            marker={"color": colour}, legendgroup="parts"), 1, 2)
    fig.update_layout(barmode="stack", template="plotly_white", height=440,
                      title={"text": title, "font": {"size": 15}},
                      margin={"l": 50, "r": 20, "t": 80, "b": 50},
                      legend={"orientation": "h", "y": -0.18})
    fig.update_xaxes(type="log", title_text=t(lang, "GPUs in the job"), row=1, col=1)
    fig.update_yaxes(range=[0, 1], tickformat=".0%", row=1, col=1)
    fig.update_yaxes(range=[0, 1], tickformat=".0%", row=1, col=2)
    return localise(fig, lang)


def update_scaling_figure(
    fig: go.Figure, base: ScaleParams, work: float, sims: Sequence[StudyPoint] = (),
    steps: Sequence[int] = GPU_STEPS, *, lang: str = "en",
) -> bool:
    """Redraw ``fig`` (a `scaling_figure`) in place for these arguments when it has the
    same traces (whether minislurm's points apply decides): the traces' data, the title
    and the right-hand subplot's title change in one ``batch_update``, so a slider move
    does not build a new figure (subplots and template: ~30 ms).  False (``fig``
    untouched) when the traces differ: then draw a new one.  The result equals
    ``scaling_figure(base, work, sims, steps, lang=lang)``."""
    traces, title, right = _scaling_data(base, work, sims, steps, lang)
    if len(fig.data) != len(traces) or len(fig.layout.annotations) != 2:
        return False
    with fig.batch_update():
        for trace, values in zip(fig.data, traces, strict=True):
            trace.update(values)
        fig.layout.title.text = title
        fig.layout.annotations[1].text = right
    return True


def _same_costs(a: ScaleParams, b: ScaleParams) -> bool:
    return (a.checkpoint, a.restart, a.node_mtbf, a.interval, a.gpus_per_node) == (
        b.checkpoint, b.restart, b.node_mtbf, b.interval, b.gpus_per_node)


#: The explorer's prediction: the goodput of a job this large with checkpoints this
#: cheap (minutes; asynchronous checkpointing), where the lesson's figure shows 5 minutes.
PREDICT_GPUS = 100000
PREDICT_CHECKPOINT_MINUTES = 0.5


def goodput_percent(p: ScaleParams, work: float) -> float:
    """The model's goodput of ``p`` doing ``work`` hours (`expected_run`), in percent:
    the figure's "selected" point."""
    return 100 * expected_run(p, work).goodput


class ScalingExplorer:
    """Sliders for the job size and the checkpoint/restart costs, a figure that follows
    them, and a button that runs the selected size on minislurm.

    Before it opens, the learner predicts the goodput at `PREDICT_GPUS` GPUs with a
    `PREDICT_CHECKPOINT_MINUTES` checkpoint write (`goodput_percent`); the check moves
    the sliders there.
    """

    def __init__(self, work: float = 24.0, sims: Sequence[StudyPoint] = (),
                 base: ScaleParams | None = None, seed: int = 0,
                 lang: str | None = None) -> None:
        import ipywidgets as w

        self.lang = lang = widget_lang(lang)
        self.work, self.seed = work, seed
        self.sims: list[StudyPoint] = list(sims)
        b = base or ScaleParams(GPU_STEPS[0])
        self.gpus = w.SelectionSlider(options=list(GPU_STEPS), value=b.gpus,
                                      description="GPUs", continuous_update=False,
                                      layout=w.Layout(width="520px"))
        wide = {"description_width": "initial"}
        self.checkpoint = w.FloatSlider(value=b.checkpoint * 60, min=0.5, max=30, step=0.5,
                                        description=t(lang, "checkpoint write (min)"),
                                        style=wide,
                                        continuous_update=False)
        self.restart = w.FloatSlider(value=b.restart * 60, min=1, max=60, step=1,
                                     description=t(lang, "restart (min)"), style=wide,
                                     continuous_update=False)
        self.button = w.Button(description=t(lang, "Simulate on minislurm"), icon="play",
                               layout=w.Layout(width="220px"))
        self.status = w.HTML()
        self.out = w.Output()
        self.busy = BusyIndicator(lang)
        for s in (self.gpus, self.checkpoint, self.restart):
            s.observe(lambda _c: self.redraw(), names="value")
        self.button.on_click(lambda _b: self.simulate())
        self.figure = self._figure()
        body = w.VBox([self.gpus, w.HBox([self.checkpoint, self.restart]),
                       w.HBox([self.button, self.status, self.busy.view]), self.out])
        big = replace(self.params, gpus=PREDICT_GPUS,
                      checkpoint=PREDICT_CHECKPOINT_MINUTES / 60)
        question = NumberQuestion(
            t(lang, "Asynchronous checkpointing cuts the checkpoint write from {before} min "
              "to {after} s. A run of {work} hours of work on {gpus} GPUs ({nodes} nodes: a "
              "failure every {mtbf}), checkpoints at Young's interval, restart {restart} "
              "min: what share of the wall time is useful work now (goodput, %)?").format(
                before=f"{b.checkpoint * 60:g}", after=f"{PREDICT_CHECKPOINT_MINUTES * 60:g}",
                work=f"{work:g}", gpus=f"{PREDICT_GPUS:,}", nodes=f"{big.nodes:,}",
                mtbf=_fmt_hours(big.job_mtbf), restart=f"{b.restart * 60:g}"),
            lambda: goodput_percent(big, self.work), unit="%", tolerance=5, digits=0)
        self.predict = PredictStep(question, body, on_checked=self._show_prediction,
                                   busy=self.busy)
        self.box = w.VBox([self.predict.view, body])
        self.redraw()

    def _show_prediction(self) -> None:
        self.gpus.value = PREDICT_GPUS
        self.checkpoint.value = PREDICT_CHECKPOINT_MINUTES

    @property
    def params(self) -> ScaleParams:
        """The job the sliders describe."""
        return ScaleParams(int(self.gpus.value), checkpoint=float(self.checkpoint.value) / 60,
                           restart=float(self.restart.value) / 60)

    def _figure(self) -> go.Figure:
        return scaling_figure(self.params, self.work, self.sims, lang=self.lang)

    def redraw(self) -> None:
        """Redraw the figure for the sliders' values (in place: `update_scaling_figure`;
        anew when minislurm's points start or stop applying) and show it (set from the
        kernel side, as in every lesson's explorer)."""
        from course.lessons.script_builder import plotly_output

        with self.busy.working("redrawing…"):
            if not update_scaling_figure(self.figure, self.params, self.work, self.sims,
                                         lang=self.lang):
                self.figure = self._figure()
            self.out.outputs = (plotly_output(self.figure),)

    def simulate(self) -> StudyPoint:
        """Run the selected size on minislurm (the busy label says so meanwhile)."""
        p = self.params
        gpus = f"{p.gpus:,}"
        with self.busy.working("simulating {gpus} GPUs on minislurm…", gpus=gpus):
            self.status.value = ""
            self.seed += 1
            run = StudyPoint((simulate_run(p, self.work, seed=self.seed),))
            self.sims.append(run)
            b = run.breakdown
            self.status.value = t(self.lang, "minislurm: {failures} interruptions, goodput "
                                  "{goodput} (model {model})").format(
                failures=f"{b.failures:.0f}", goodput=f"{b.goodput:.0%}",
                model=f"{expected_run(p, self.work).goodput:.0%}")
            self.redraw()
        return run

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.box)


def study(gpus: Sequence[int], work: float, *, repeats: int = 3, seed: int = 0,
          base: ScaleParams | None = None) -> list[StudyPoint]:
    """Simulate the same job at several sizes on minislurm, ``repeats`` failure draws each."""
    if repeats < 1:
        raise ValueError("repeats must be at least 1")
    b = base or ScaleParams(8)
    return [StudyPoint(tuple(simulate_run(replace(b, gpus=g), work, seed=seed + 1000 * i + k)
                             for k in range(repeats))) for i, g in enumerate(gpus)]


def study_table(points: Sequence[StudyPoint]) -> str:
    """A plain-text table: the model against minislurm (mean of the runs) at each size."""
    rows = [f"{'GPUs':>7} {'nodes':>6} {'job MTBF':>9} {'interval':>9} "
            f"{'interruptions':>13} {'goodput':>8} {'model':>6}",
            f"{'':>7} {'':>6} {'':>9} {'':>9} {'(per run)':>13} {'(mean)':>8}"]
    for r in points:
        e: Any = expected_run(r.params, r.work)
        b = r.breakdown
        rows.append(f"{r.params.gpus:>7,} {r.params.nodes:>6,} {_fmt_hours(r.params.job_mtbf):>9} "
                    f"{_fmt_hours(r.params.tau):>9} {b.failures:>13.1f} {b.goodput:>8.1%} "
                    f"{e.goodput:>6.1%}")
    return "\n".join(rows)


__all__ = ["GPU_STEPS", "PARTS", "PREDICT_CHECKPOINT_MINUTES", "PREDICT_GPUS",
           "ScalingExplorer", "goodput_percent",
           "scaling_figure", "study", "study_table", "summary", "update_scaling_figure"]
