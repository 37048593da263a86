"""plotly figures of a simulated schedule: pure functions of ``JobRecord`` lists.

One helper per chart, reused by the notebooks and the CLI:

- ``gantt(jobs, by='node'|'job', color='user'|'state')``: the schedule; with
  ``by='node'`` each node is a row and a job spanning several nodes shows on each
  (its ``NodeList``, expanded like ``scontrol show hostnames``);
- ``gpu_utilisation(jobs, total_gpus, bin_seconds=...)``: allocated GPUs / total, as the
  time average over each bin (``sacct``'s ``AllocTRES=gres/gpu`` x elapsed);
- ``queue_depth(jobs, bin_seconds=...)``: pending jobs (``squeue -t PD``), time-averaged;
- ``wait_times({label: jobs})``: box plots of ``start - submit``, one per policy.

Outputs are deterministic: traces are ordered by sorted group name, colours come from
a fixed palette, no random ids are set, and ``layout.uirevision`` is a fixed string, so
notebooks stored with their outputs stay stable under nbval.  Times on the x axis are
UTC dates (timestamps are epoch seconds everywhere in minislurm).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
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


def _hover(job: Any, nodes: str) -> str:
    wait = job.start_time - job.submit_time if job.start_time is not None else 0
    return (f"job {job.job_id_str} {job.name}<br>user {job.user}<br>nodes {nodes}"
            f"<br>GPUs {job_gpus(job)}<br>wait {wait} s<br>{job.state.value}")  # fmt: skip


def gantt(
    jobs: Iterable[Any], *, by: str = "node", color: str = "user", now: int | None = None
) -> go.Figure:
    """The schedule: one horizontal bar per job (per node of the job with ``by='node'``).

    ``color``: ``'user'`` or ``'state'``; ``now``: the end of bars of running jobs
    (jobs without an end and no ``now`` are left out, as are jobs that never started).
    Rows: nodes in first-use order of the schedule (``by='node'``) or job ids.
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
        hover = _hover(job, job.nodelist or "-")
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
    return _layout(
        fig, f"Schedule by {by}", barmode="overlay", bargap=0.1,
        xaxis={"type": "date", "title": "time (UTC)"},
        yaxis={"title": by, "categoryorder": "array", "categoryarray": rows,
               "autorange": "reversed"},
        legend_title_text=color,
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
    jobs: Iterable[Any], total_gpus: int, *, bin_seconds: int = 3600, now: int | None = None
) -> go.Figure:
    """Allocated GPUs / ``total_gpus`` over time, averaged over bins of ``bin_seconds``."""
    js = list(jobs)
    lo, hi = _span(js, now)
    edges = _edges(lo, hi, bin_seconds)
    boxes = [(iv[0], iv[1], float(job_gpus(j))) for j in js
             if (iv := _interval(j, now)) is not None and job_gpus(j) > 0]  # fmt: skip
    level = binned_level(boxes, edges)
    util = level / total_gpus if total_gpus > 0 else np.zeros_like(level)
    fig = go.Figure(go.Scatter(
        x=[_iso(t) for t in edges[:-1]], y=[round(float(u), 6) for u in util],
        mode="lines", line_shape="hv", name="GPU utilisation", line_color=PALETTE[0],
    ))  # fmt: skip
    return _layout(fig, f"GPU utilisation ({total_gpus} GPUs, {bin_seconds} s bins)",
                   xaxis={"type": "date", "title": "time (UTC)"},
                   yaxis={"title": "allocated / total", "range": [0, 1.05],
                          "tickformat": ".0%"})  # fmt: skip


def queue_depth(
    jobs: Iterable[Any], *, bin_seconds: int = 3600, now: int | None = None
) -> go.Figure:
    """Pending jobs over time (mean over each bin): from submit to start (or end)."""
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
        mode="lines", line_shape="hv", name="pending jobs", line_color=PALETTE[1],
    ))  # fmt: skip
    return _layout(fig, f"Queue depth ({bin_seconds} s bins)",
                   xaxis={"type": "date", "title": "time (UTC)"},
                   yaxis={"title": "pending jobs", "rangemode": "tozero"})  # fmt: skip


def wait_times(
    runs: Mapping[str, Iterable[Any]] | Iterable[Any], *, unit: str = "min"
) -> go.Figure:
    """Box plots of wait times (``start - submit``), one per label (e.g. per policy).

    ``runs``: ``{'fifo': jobs, 'easy': jobs}`` or one list of jobs; ``unit``: s|min|h.
    """
    scale = {"s": 1, "min": 60, "h": 3600}.get(unit)
    if scale is None:
        raise ValueError("unit must be 's', 'min' or 'h'")
    groups: dict[str, Iterable[Any]] = (
        dict(runs) if isinstance(runs, Mapping) else {"jobs": runs}
    )
    fig = go.Figure()
    for i, (label, js) in enumerate(groups.items()):
        waits = [(j.start_time - j.submit_time) / scale for j in js
                 if j.start_time is not None and j.state is not JobState.PENDING]  # fmt: skip
        fig.add_trace(go.Box(y=waits, name=label, boxmean=True,
                             marker_color=PALETTE[i % len(PALETTE)]))  # fmt: skip
    return _layout(fig, "Wait times", yaxis={"title": f"wait ({unit})", "rangemode": "tozero"},
                   showlegend=False)  # fmt: skip


__all__ = [
    "PALETTE",
    "UIREVISION",
    "binned_level",
    "colour_map",
    "gantt",
    "gpu_utilisation",
    "queue_depth",
    "wait_times",
]
