"""``minislurm.sim.plots``: plotly figures over ``JobRecord`` lists.

The records are made by hand (no controller), so each expected bar, level and count
can be read off the table below.  Times are seconds after T0.

    job  user   nodes        GPUs  submit  start  end    state
    1    alice  g[01-02]     16    0       0      3600   COMPLETED
    2    bob    g03          4     0       1800   5400   FAILED
    3    alice  -            0     600     -      -      PENDING   (still waiting)
    4    carol  g01          8     3600    3600   -      RUNNING   (now = T0 + 7200)
"""

from __future__ import annotations

import json

import plotly.graph_objects as go
import pytest

from minislurm.job import JobRecord
from minislurm.sim.plots import (
    PALETTE,
    UIREVISION,
    binned_level,
    colour_map,
    gantt,
    gpu_utilisation,
    queue_depth,
    wait_times,
)
from minislurm.states import JobState, Reason

T0 = 1767600000
NOW = T0 + 7200


def rec(job_id: int, user: str, nodelist: str, gpus: int, submit: int, start: int | None,
        end: int | None, state: JobState) -> JobRecord:  # fmt: skip
    nodes = 0 if not nodelist else (2 if "-" in nodelist else 1)
    return JobRecord(
        job_id=job_id, name=f"j{job_id}", user=user, uid=1000, group=user, gid=1000,
        account="acct", partition="gpu", qos="normal", state=state, reason=Reason.NONE,
        submit_time=T0 + submit, start_time=None if start is None else T0 + start,
        end_time=None if end is None else T0 + end, nodelist=nodelist, num_nodes=max(1, nodes),
        tres_alloc={"node": nodes, "gres/gpu": gpus} if nodelist else {},
    )  # fmt: skip


JOBS = [
    rec(1, "alice", "g[01-02]", 16, 0, 0, 3600, JobState.COMPLETED),
    rec(2, "bob", "g03", 4, 0, 1800, 5400, JobState.FAILED),
    rec(3, "alice", "", 0, 600, 9999, None, JobState.PENDING),  # start: an estimate
    rec(4, "carol", "g01", 8, 3600, 3600, None, JobState.RUNNING),
]


def test_gantt_by_node_shows_a_multi_node_job_on_each_node() -> None:
    fig = gantt(JOBS, now=NOW)
    by_user = {t.name: t for t in fig.data}
    assert list(by_user) == ["alice", "bob", "carol"]  # sorted, one trace per user
    assert list(by_user["alice"].y) == ["g01", "g02"]  # job 1 on both of its nodes
    assert list(by_user["alice"].x) == [3600_000, 3600_000]  # ms on a date axis
    assert list(by_user["carol"].x) == [3600_000]  # running: until now
    assert by_user["bob"].base[0] == "2026-01-05 08:30:00"
    hover = by_user["bob"].hovertext[0]
    assert "job 2 j2<br>user bob<br>nodes g03<br>GPUs 4<br>wait 1800 s" in hover
    assert list(fig.layout.yaxis.categoryarray) == ["g01", "g02", "g03"]
    assert fig.layout.xaxis.type == "date"


def test_gantt_by_job_and_state_colours() -> None:
    fig = gantt(JOBS, by="job", color="state", now=NOW)
    assert [t.name for t in fig.data] == ["COMPLETED", "FAILED", "RUNNING"]
    assert [list(t.y) for t in fig.data] == [["1"], ["2"], ["4"]]
    assert fig.data[0].marker.color == PALETTE[0]


def test_gantt_without_now_leaves_running_jobs_out_and_rejects_bad_args() -> None:
    assert sum(len(t.y) for t in gantt(JOBS).data) == 3  # g01, g02 (job 1), g03 (job 2)
    with pytest.raises(ValueError):
        gantt(JOBS, by="partition")
    with pytest.raises(ValueError):
        gantt(JOBS, color="account")


def test_binned_level_is_the_exact_time_average() -> None:
    edges = [0.0, 100.0, 200.0, 300.0]
    import numpy as np

    level = binned_level([(0, 150, 2.0), (50, 300, 1.0)], np.array(edges))
    # bin 0: 2 all along + 1 for 50 of 100 s = 2.5; bin 1: 2 for 50 s + 1 = 2.0; bin 2: 1
    assert level.tolist() == [2.5, 2.0, 1.0]
    assert binned_level([], np.array(edges)).tolist() == [0.0, 0.0, 0.0]


def test_gpu_utilisation_per_hour() -> None:
    fig = gpu_utilisation(JOBS, total_gpus=32, bin_seconds=1800, now=NOW)
    (trace,) = fig.data
    # 0-1800: job 1 (16); 1800-3600: 16 + 4; 3600-5400: 4 + 8; 5400-7200: 8
    assert list(trace.y) == [0.5, 0.625, 0.375, 0.25]
    assert trace.x[0] == "2026-01-05 08:00:00"
    assert fig.layout.yaxis.tickformat == ".0%"


def test_queue_depth_counts_waiting_jobs() -> None:
    fig = queue_depth(JOBS, bin_seconds=1800, now=NOW)
    (trace,) = fig.data
    # job 2 waits 0-1800; job 3 waits from 600 to now (its start_time is an estimate)
    assert list(trace.y) == [round(1 + 1200 / 1800, 6), 1.0, 1.0, 1.0]  # 6 decimals


def test_wait_times_box_per_policy() -> None:
    fig = wait_times({"fifo": JOBS, "easy": JOBS[:1]}, unit="s")
    assert [t.name for t in fig.data] == ["fifo", "easy"]
    assert list(fig.data[0].y) == [0, 1800, 0]  # the pending job has no wait yet
    assert list(fig.data[1].y) == [0]
    assert isinstance(wait_times(JOBS), go.Figure)
    with pytest.raises(ValueError):
        wait_times(JOBS, unit="days")


def test_figures_are_deterministic_json() -> None:
    for make in (lambda: gantt(JOBS, now=NOW), lambda: gpu_utilisation(JOBS, 32, now=NOW),
                 lambda: queue_depth(JOBS, now=NOW), lambda: wait_times({"a": JOBS})):  # fmt: skip
        a, b = make().to_json(), make().to_json()
        assert a == b
        layout = json.loads(a)["layout"]
        assert layout["uirevision"] == UIREVISION
        assert "uid" not in json.dumps(json.loads(a)["data"])


def test_colour_map_is_sorted_and_cycles() -> None:
    names = [f"u{i:02d}" for i in range(12)]
    cmap = colour_map(reversed(names))
    assert cmap["u00"] == PALETTE[0] and cmap["u10"] == PALETTE[0]
