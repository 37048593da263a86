"""plotly figures of a simulated schedule: pure functions of ``JobRecord`` lists.

One helper per chart, reused by the notebooks and the CLI:

- ``gantt(jobs, by='node'|'job', color='user'|'state')``: the schedule; with
  ``by='node'`` each node is a row and a job spanning several nodes shows on each
  (its ``NodeList``, expanded like ``scontrol show hostnames``);
- ``gpu_utilisation(jobs, total_gpus, bin_seconds=...)``: allocated GPUs / total, as the
  time average over each bin (``sacct``'s ``AllocTRES=gres/gpu`` x elapsed);
- ``queue_depth(jobs, bin_seconds=...)``: pending jobs (``squeue -t PD``), time-averaged;
- ``wait_times({label: jobs})``: box plots of ``start - submit``, one per policy.

Every helper takes ``tr``: a function translating an English message (the words of
its title, axes, legend and hover text, each a literal ``_t(tr, "...")`` here, marked for
the course's gettext catalogue in course/lessons/figure_words.py); Slurm's words -- job
ids, names, users, node names, states -- are data and never translated.  Without ``tr``
the figures are in English.

Outputs are deterministic: traces are ordered by sorted group name, colours come from
a fixed palette, no random ids are set, and ``layout.uirevision`` is a fixed string, so
notebooks stored with their outputs stay stable under nbval.  Times on the x axis are
UTC dates (timestamps are epoch seconds everywhere in minislurm).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
import plotly.graph_objects as go

from minislurm.common.hostlist import expand
from minislurm.sim.metrics import job_gpus
from minislurm.states import JobState

#: plotly's qualitative "Plotly" palette, fixed here so colours never depend on a theme.
PALETTE = (
    "#636EFA", "#EF553B", "#00CC96", "#AB63FA", "#FFA15A",
    "#19D3F3", "#FF6692", "#B6E880", "#FF97FF", "#FECB52",
)  # fmt: skip

#: A translation of an English message (e.g. ``functools.partial(course.i18n.t, "pt-BR")``).
Translate = Callable[[str], str]


def _t(tr: Translate | None, message: str) -> str:
    """``message`` through ``tr`` (English without one)."""
    return tr(message) if tr is not None else message


#: The fixed ``layout.uirevision`` of every figure (keeps zoom across updates, no uuid).
UIREVISION = "minislurm"


def _iso(ts: float) -> str:
    """An epoch timestamp as the ISO string plotly's date axes read (UTC)."""
    return datetime.fromtimestamp(ts, tz=UTC).strftime("%Y-%m-%d %H:%M:%S")


def colour_map(groups: Iterable[str]) -> dict[str, str]:
    """Group name -> colour, in sorted order of the names (stable across runs)."""
    return {g: PALETTE[i % len(PALETTE)] for i, g in enumerate(sorted(set(groups)))}


def _layout(fig: go.Figure, title: str, **kw: Any) -> go.Figure:
    fig.update_layout(title=title, uirevision=UIREVISION, template="plotly_white", **kw)
    return fig


def _interval(job: Any, now: int | None) -> tuple[int, int] | None:
    """Where a job ran: (start, end); a running job ends at ``now``; None if it never ran."""
    if job.start_time is None or job.state is JobState.PENDING:
        return None
    end = job.end_time if job.end_time is not None else now
    if end is None:
        return None
    return job.start_time, max(end, job.start_time)


def _hover(job: Any, nodes: str, tr: Translate | None = None) -> str:
    wait = job.start_time - job.submit_time if job.start_time is not None else 0
    return _t(tr, "job {job} {name}<br>user {user}<br>nodes {nodes}<br>GPUs {gpus}"
                  "<br>wait {wait} s<br>{state}").format(
        job=job.job_id_str, name=job.name, user=job.user, nodes=nodes, gpus=job_gpus(job),
        wait=wait, state=job.state.value)  # fmt: skip


def gantt(
    jobs: Iterable[Any], *, by: str = "node", color: str = "user", now: int | None = None,
    tr: Translate | None = None,
) -> go.Figure:
    """The schedule: one horizontal bar per job (per node of the job with ``by='node'``).

    ``color``: ``'user'`` or ``'state'``; ``now``: the end of bars of running jobs
    (jobs without an end and no ``now`` are left out, as are jobs that never started).
    Rows: nodes in first-use order of the schedule (``by='node'``) or job ids.
    ``tr``: translates the title, axes, legend title and hover words (module docstring).
    """
    if by not in ("node", "job"):
        raise ValueError("by must be 'node' or 'job'")
    if color not in ("user", "state"):
        raise ValueError("color must be 'user' or 'state'")
    bars: dict[str, dict[str, list[Any]]] = {}
    rows: list[str] = []
    seen: set[str] = set()
    ran = [(j, iv) for j in jobs if (iv := _interval(j, now)) is not None]
    ran.sort(key=lambda p: (p[1][0], p[0].job_id))
    for job, (start, end) in ran:
        group = job.user if color == "user" else job.state.value
        names = expand(job.nodelist) if by == "node" and job.nodelist else [job.job_id_str]
        hover = _hover(job, job.nodelist or "-", tr)
        b = bars.setdefault(group, {"y": [], "base": [], "x": [], "text": []})
        for name in names:
            if name not in seen:
                seen.add(name)
                rows.append(name)
            b["y"].append(name)
            b["base"].append(_iso(start))
            b["x"].append((end - start) * 1000)  # ms: the unit of a date axis
            b["text"].append(hover)
    colours = colour_map(bars)
    fig = go.Figure()
    for group in sorted(bars):
        b = bars[group]
        fig.add_trace(go.Bar(
            name=group, y=b["y"], base=b["base"], x=b["x"], orientation="h",
            marker_color=colours[group], hovertext=b["text"], hoverinfo="text",
            legendgroup=group,
        ))  # fmt: skip
    row_title = _t(tr, "node") if by == "node" else _t(tr, "job")
    return _layout(
        fig, _t(tr, "Schedule by {by}").format(by=row_title), barmode="overlay", bargap=0.1,
        xaxis={"type": "date", "title": _t(tr, "time (UTC)")},
        yaxis={"title": row_title, "categoryorder": "array", "categoryarray": rows,
               "autorange": "reversed"},
        legend_title_text=_t(tr, "user") if color == "user" else _t(tr, "state"),
    )  # fmt: skip


def _span(jobs: Sequence[Any], now: int | None) -> tuple[int, int]:
    lo = min((j.submit_time for j in jobs), default=0)
    ends = [iv[1] for j in jobs if (iv := _interval(j, now)) is not None]
    hi = max([*ends, now or lo, lo])
    return lo, hi


def binned_level(
    intervals: Sequence[tuple[int, int, float]], edges: np.ndarray
) -> np.ndarray:
    """Time average of a sum of boxes ``(start, end, height)`` over each bin of ``edges``.

    Exact: the integral of the step function is piecewise linear between event times,
    so it is interpolated at the bin edges.
    """
    if len(edges) < 2:
        return np.zeros(0)
    if not intervals:
        return np.zeros(len(edges) - 1)
    arr = np.asarray(intervals, dtype=np.float64)
    t = np.concatenate([arr[:, 0], arr[:, 1]])
    d = np.concatenate([arr[:, 2], -arr[:, 2]])
    order = np.argsort(t, kind="stable")
    t, d = t[order], d[order]
    level = np.cumsum(d)  # level just after each event time
    area = np.concatenate([[0.0], np.cumsum(level[:-1] * np.diff(t))])
    integral = np.interp(edges, t, area, left=0.0, right=area[-1])
    return np.diff(integral) / np.diff(edges)


def _edges(lo: int, hi: int, bin_seconds: int) -> np.ndarray:
    if bin_seconds <= 0:
        raise ValueError("bin_seconds must be positive")
    n = max(1, -(-(hi - lo) // bin_seconds))
    return lo + bin_seconds * np.arange(n + 1, dtype=np.float64)


def gpu_utilisation(
    jobs: Iterable[Any], total_gpus: int, *, bin_seconds: int = 3600, now: int | None = None,
    tr: Translate | None = None,
) -> go.Figure:
    """Allocated GPUs / ``total_gpus`` over time, averaged over bins of ``bin_seconds``
    (``tr``: the module docstring)."""
    js = list(jobs)
    lo, hi = _span(js, now)
    edges = _edges(lo, hi, bin_seconds)
    boxes = [(iv[0], iv[1], float(job_gpus(j))) for j in js
             if (iv := _interval(j, now)) is not None and job_gpus(j) > 0]  # fmt: skip
    level = binned_level(boxes, edges)
    util = level / total_gpus if total_gpus > 0 else np.zeros_like(level)
    fig = go.Figure(go.Scatter(
        x=[_iso(t) for t in edges[:-1]], y=[round(float(u), 6) for u in util],
        mode="lines", line_shape="hv", name=_t(tr, "GPU utilisation"), line_color=PALETTE[0],
    ))  # fmt: skip
    return _layout(fig, _t(tr, "GPU utilisation ({gpus} GPUs, {bin} s bins)").format(
                       gpus=total_gpus, bin=bin_seconds),
                   xaxis={"type": "date", "title": _t(tr, "time (UTC)")},
                   yaxis={"title": _t(tr, "allocated / total"), "range": [0, 1.05],
                          "tickformat": ".0%"})  # fmt: skip


def queue_depth(
    jobs: Iterable[Any], *, bin_seconds: int = 3600, now: int | None = None,
    tr: Translate | None = None,
) -> go.Figure:
    """Pending jobs over time (mean over each bin): from submit to start (or end)
    (``tr``: the module docstring)."""
    js = list(jobs)
    lo, hi = _span(js, now)
    edges = _edges(lo, hi, bin_seconds)
    boxes = []
    for j in js:
        if j.restart_count:  # a requeued attempt's wait counts once, on the first
            continue
        if j.state is JobState.PENDING:  # start_time of a pending job is an estimate
            left = now if now is not None else hi
        else:
            left = j.start_time if j.start_time is not None else (j.end_time or now or hi)
        if left > j.submit_time:
            boxes.append((j.submit_time, left, 1.0))
    level = binned_level(boxes, edges)
    fig = go.Figure(go.Scatter(
        x=[_iso(t) for t in edges[:-1]], y=[round(float(v), 6) for v in level],
        mode="lines", line_shape="hv", name=_t(tr, "pending jobs"), line_color=PALETTE[1],
    ))  # fmt: skip
    return _layout(fig, _t(tr, "Queue depth ({bin} s bins)").format(bin=bin_seconds),
                   xaxis={"type": "date", "title": _t(tr, "time (UTC)")},
                   yaxis={"title": _t(tr, "pending jobs"), "rangemode": "tozero"})  # fmt: skip


def wait_times(
    runs: Mapping[str, Iterable[Any]] | Iterable[Any], *, unit: str = "min",
    tr: Translate | None = None,
) -> go.Figure:
    """Box plots of wait times (``start - submit``), one per label (e.g. per policy).

    ``runs``: ``{'fifo': jobs, 'easy': jobs}`` or one list of jobs; ``unit``: s|min|h;
    ``tr``: the module docstring.
    """
    scale = {"s": 1, "min": 60, "h": 3600}.get(unit)
    if scale is None:
        raise ValueError("unit must be 's', 'min' or 'h'")
    groups: dict[str, Iterable[Any]] = (
        dict(runs) if isinstance(runs, Mapping) else {_t(tr, "jobs"): runs}
    )
    fig = go.Figure()
    for i, (label, js) in enumerate(groups.items()):
        waits = [(j.start_time - j.submit_time) / scale for j in js
                 if j.start_time is not None and j.state is not JobState.PENDING]  # fmt: skip
        fig.add_trace(go.Box(y=waits, name=label, boxmean=True,
                             marker_color=PALETTE[i % len(PALETTE)]))  # fmt: skip
    return _layout(fig, _t(tr, "Wait times"),
                   yaxis={"title": _t(tr, "wait ({unit})").format(unit=unit),
                          "rangemode": "tozero"},
                   showlegend=False)  # fmt: skip


__all__ = [
    "PALETTE",
    "UIREVISION",
    "Translate",
    "binned_level",
    "colour_map",
    "gantt",
    "gpu_utilisation",
    "queue_depth",
    "wait_times",
]
