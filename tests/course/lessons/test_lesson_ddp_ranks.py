"""Lesson 4's experiments (course/lessons/ddp_ranks.py), headless.

The layout widget must show minislurm's own task layout (``srun -m block|cyclic``),
the env table must be what wiring.py derives from each task's real environment,
and the log readers must turn the ranks' records into the table and the curves.
One test starts the local cluster and runs the real srun steps of the env table. The
lesson's 2-rank gloo training (`run_ddp`) and its concurrent steps (`run_sweep`) run in
lesson 4's notebook: tests/notebooks/test_notebooks.py (nbval) compares their printed
rank table, final loss, digests and ports with the stored outputs, as
tests/course/i18n/test_i18n_notebooks.py does for the pt-BR edition.
"""

from __future__ import annotations

import random
import time

import pytest
from busy_probe import assert_busy_while

from course.ddp.logfmt import format_record
from course.ddp.wiring import master_port
from course.lessons.ddp_ranks import (
    FIRST_JOB_ID,
    PREDICT_RANK,
    PREDICT_STEP,
    FirstJobIdError,
    LayoutExplorer,
    Placement,
    TaskRow,
    _conf_text,
    digests,
    format_rank_rows,
    format_task_rows,
    free_first_job_id,
    layout_figure,
    local_cluster,
    loss_curves,
    loss_figure,
    parse_env_dump,
    placements,
    preferred_first_job_id,
    rank_placement,
    rank_rows,
    srun_env,
    step_layout,
    table_figure,
    task_row,
)

LOG0 = "\n".join([
    format_record("note", procid=0, localid=0, nodeid=0, node="gpu01", ntasks=2, job=7),
    format_record("start", rank=0, world=2, launcher="slurm", master="127.0.0.1:20007",
                  restart_count=0),
    format_record(None, step=1, loss=0.5), format_record(None, step=2, loss=0.25),
    format_record("final", step=2, sha256="ab" * 32), ""])
LOG1 = LOG0.replace("procid=0", "procid=1").replace("nodeid=0 node=gpu01",
                                                    "nodeid=1 node=gpu02").replace(
    "rank=0", "rank=1")


def _env(procid: int, localid: int, nodeid: int, node: str) -> dict[str, str]:
    return {"SLURM_PROCID": str(procid), "SLURM_LOCALID": str(localid),
            "SLURM_NODEID": str(nodeid), "SLURM_NTASKS": "4", "SLURM_JOB_ID": "42",
            "SLURM_JOB_NODELIST": "gpu[01-02]", "SLURMD_NODENAME": node}


# ----- layout (minislurm.common.layout.distribute) ------------------------------------------
@pytest.mark.parametrize(("nodes", "tpn", "dist", "expected"), [
    (2, 2, "block", {"gpu01": [0, 1], "gpu02": [2, 3]}),
    (2, 2, "cyclic", {"gpu01": [0, 2], "gpu02": [1, 3]}),
    (1, 4, "block", {"gpu01": [0, 1, 2, 3]}),
    (4, 1, "cyclic", {"gpu01": [0], "gpu02": [1], "gpu03": [2], "gpu04": [3]}),
    (3, 3, "block", {"gpu01": [0, 1, 2], "gpu02": [3, 4, 5], "gpu03": [6, 7, 8]}),
    (3, 2, "cyclic", {"gpu01": [0, 3], "gpu02": [1, 4], "gpu03": [2, 5]}),
])
def test_step_layout_is_srun_s(nodes: int, tpn: int, dist: str,
                               expected: dict[str, list[int]]) -> None:
    layout = step_layout(nodes, tpn, dist)
    assert dict(zip(layout.nodes, map(list, layout.task_ids), strict=True)) == expected
    got = {(p.node, p.rank, p.local_rank) for p in placements(layout)}
    assert got == {(n, r, i) for n, ranks in expected.items() for i, r in enumerate(ranks)}


def test_step_layout_rejects_more_nodes_than_the_partition() -> None:
    with pytest.raises(ValueError):
        step_layout(5, 1)


def test_placements_are_sorted_by_rank() -> None:
    ps = placements(step_layout(2, 2, "cyclic"))
    assert ps == [Placement("gpu01", 0, 0, 0), Placement("gpu02", 1, 1, 0),
                  Placement("gpu01", 0, 2, 1), Placement("gpu02", 1, 3, 1)]


@pytest.mark.parametrize(("nodes", "tpn", "dist"), [(2, 2, "block"), (2, 2, "cyclic"),
                                                    (4, 3, "cyclic"), (1, 1, "block")])
def test_layout_figure_shows_every_rank_where_layout_puts_it(nodes: int, tpn: int,
                                                             dist: str) -> None:
    layout = step_layout(nodes, tpn, dist)
    fig = layout_figure(layout).to_dict()
    trace = fig["data"][0]
    cells = {(x, y, t) for x, y, t in zip(trace["x"], trace["y"], trace["text"], strict=True)}
    expected = {(n, local, f"rank {r}<br>local {local}")
                for n, tids in zip(layout.nodes, layout.task_ids, strict=True)
                for local, r in enumerate(tids)}
    assert cells == expected
    assert fig["layout"]["xaxis"]["categoryarray"] == ["gpu01", "gpu02", "gpu03", "gpu04"][:nodes]
    notes = [a["text"] for a in fig["layout"]["annotations"]]
    assert notes == ["MASTER_ADDR = gpu01 (rank 0)"]
    assert f"WORLD_SIZE={nodes * tpn}" in fig["layout"]["title"]["text"]
    assert f"-m {dist}" in fig["layout"]["title"]["text"]


def test_layout_explorer_sliders_redraw() -> None:
    e = LayoutExplorer()
    assert e.layout.task_ids == ((0, 1), (2, 3))
    first = e.figure.to_dict()["data"][0]["text"]
    e.distribution.value = "cyclic"  # what a click does: observe -> refresh
    assert e.layout.task_ids == ((0, 2), (1, 3))
    assert e.figure.to_dict()["data"][0]["text"] != first
    e.nodes.value = 4
    e.tasks.value = 3
    assert e.layout.tasks_per_node == (3, 3, 3, 3)
    assert e.layout.task_ids[1] == (1, 5, 9)
    shown = e.figure_view.outputs[0]["data"]["application/vnd.plotly.v1+json"]["data"]
    assert shown == e.figure.to_dict()["data"]
    assert "SLURM_TASKS_PER_NODE=3(x4)" in e.table.value
    assert "gpu02: SLURM_GTIDS=1,5,9" in e.table.value


def test_rank_placement_names_the_node_and_local_rank() -> None:
    cyclic = step_layout(3, 2, "cyclic")  # 0 1 2 on gpu01-03, then 3 4 5
    assert [rank_placement(cyclic, r) for r in (0, 4, 5)] == [
        "gpu01, LOCAL_RANK 0", "gpu02, LOCAL_RANK 1", "gpu03, LOCAL_RANK 1"]
    assert rank_placement(step_layout(3, 2, "block"), 4) == "gpu03, LOCAL_RANK 0"
    with pytest.raises(ValueError, match="no rank 6"):
        rank_placement(cyclic, 6)


def test_layout_explorer_asks_where_a_rank_runs_before_it_opens() -> None:
    e = LayoutExplorer()
    body = e.box.children[1]
    assert body.layout.display == "none"
    assert len(e.predict.question.options) == PREDICT_STEP[0] * PREDICT_STEP[1]
    score = e.predict.check("gpu03, LOCAL_RANK 0")  # block's answer
    assert score is not None and not score.correct
    assert score.message.endswith("the simulation says gpu02, LOCAL_RANK 1.")
    assert body.layout.display is None
    assert e.layout.task_ids == ((0, 3), (1, 4), (2, 5))  # the controls moved there
    assert PREDICT_RANK in e.layout.task_ids[1]


def test_layout_explorer_is_busy_while_it_lays_out(monkeypatch: pytest.MonkeyPatch) -> None:
    from course.lessons import ddp_ranks

    e = LayoutExplorer()
    assert_busy_while(monkeypatch, ddp_ranks, "step_layout", e.busy,
                      lambda: setattr(e.tasks, "value", e.tasks.value % 4 + 1))


# ----- env table -------------------------------------------------------------------
def test_task_row_uses_wiring() -> None:
    row = task_row(_env(3, 1, 1, "gpu02"))
    assert row == TaskRow(3, 1, 1, "gpu02", 3, 1, 4, "127.0.0.1", 20042)


def test_parse_env_dump_groups_by_label() -> None:
    text = "1: SLURM_PROCID=1\n0: SLURM_PROCID=0\n0: PATH=/a:/b\nnoise\n1: X=a=b\n"
    assert parse_env_dump(text) == {0: {"SLURM_PROCID": "0", "PATH": "/a:/b"},
                                    1: {"SLURM_PROCID": "1", "X": "a=b"}}


def test_format_and_table_figure() -> None:
    rows = [task_row(_env(0, 0, 0, "gpu01")), task_row(_env(1, 1, 0, "gpu01"))]
    text = format_task_rows(rows)
    assert text.splitlines()[0].split() == ["SLURM_PROCID", "SLURM_LOCALID", "SLURM_NODEID",
                                            "node", "RANK", "LOCAL_RANK", "WORLD_SIZE",
                                            "MASTER_ADDR", "MASTER_PORT"]
    assert text.splitlines()[2].split() == ["1", "1", "0", "gpu01", "1", "1", "4",
                                            "127.0.0.1", "20042"]
    cells = table_figure(rows).to_dict()["data"][0]["cells"]["values"]
    assert cells[0] == ["0", "1"] and cells[5] == ["0", "1"] and cells[8] == ["20042"] * 2


# ----- log readers -----------------------------------------------------------------
def test_rank_rows_from_logs() -> None:
    rows = rank_rows({0: LOG0, 1: LOG1})
    assert [(r.procid, r.nodeid, r.node, r.rank, r.world_size, r.steps) for r in rows] == [
        (0, 0, "gpu01", 0, 2, 2), (1, 1, "gpu02", 1, 2, 2)]
    assert rows[0].master == "127.0.0.1:20007" and rows[0].final_loss == 0.25
    assert digests({0: LOG0, 1: LOG1}) == {0: "ab" * 32, 1: "ab" * 32}
    table = format_rank_rows(rows)
    assert len(table.splitlines()) == 3 and "0.250000" in table and "ab" * 8 in table


def test_rank_rows_of_an_empty_log() -> None:
    (row,) = rank_rows({0: ""})
    assert (row.rank, row.steps, row.final_loss, row.digest) == (-1, 0, None, "")


def test_loss_curves_and_figure() -> None:
    curves = loss_curves({0: LOG0, 1: LOG1.replace("loss=0.25", "loss=0.3")})
    assert curves == {0: [(1, 0.5), (2, 0.25)], 1: [(1, 0.5), (2, 0.3)]}
    data = loss_figure(curves).to_dict()["data"]
    assert [t["name"] for t in data] == ["rank 0", "rank 1"]
    assert list(data[0]["x"]) == [1, 2] and list(data[1]["y"]) == [0.5, 0.3]
    assert data[1]["line"]["dash"] == "dash"


@pytest.mark.ddp_ports
def test_free_first_job_id_skips_a_busy_port() -> None:
    import socket

    first = random.randrange(100_000, 900_000)
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", 20000 + first % 10000))
            sock.listen()  # a running job's TCP store
        except OSError:
            pytest.skip("port taken by someone else")
        got = free_first_job_id(first, jobs=2)
    assert got != first and got > first


# ----- the real thing ---------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.ddp_ports
def test_real_srun_env_lays_tasks_out_block_and_cyclic() -> None:
    t0 = time.monotonic()
    with local_cluster(free_first_job_id(random.randrange(100_000, 900_000))) as c:
        state = c.root
        rows = srun_env(c, 2, 2)
        assert [(r.procid, r.localid, r.nodeid, r.node) for r in rows] == [
            (0, 0, 0, "gpu01"), (1, 1, 0, "gpu01"), (2, 0, 1, "gpu02"), (3, 1, 1, "gpu02")]
        assert all(r.rank == r.procid and r.local_rank == r.localid and r.world_size == 4
                   for r in rows)
        assert {r.master_port for r in rows} == {20000 + c.first_job_id % 10000}
        cyc = srun_env(c, 2, 2, "cyclic")
        assert [(r.procid, r.node) for r in cyc] == [(0, "gpu01"), (1, "gpu02"),
                                                     (2, "gpu01"), (3, "gpu02")]
    assert not state.exists()  # torn down and removed
    assert time.monotonic() - t0 < 120


# ----- COURSE_FIRST_JOB_ID: the lessons' clusters moved to another job-id (port) range -----
def test_the_first_job_id_is_4001_unless_the_environment_moves_it() -> None:
    assert preferred_first_job_id({}) == FIRST_JOB_ID == 4001
    assert preferred_first_job_id({"COURSE_FIRST_JOB_ID": " 5001 "}) == 5001
    assert preferred_first_job_id({"COURSE_FIRST_JOB_ID": ""}) == 4001


@pytest.mark.parametrize("raw", ["abc", "0", "-5", "4001.5", "67043328", "1e4"])
def test_a_first_job_id_that_is_not_a_job_id_is_refused_saying_so(raw: str) -> None:
    with pytest.raises(FirstJobIdError) as err:
        preferred_first_job_id({"COURSE_FIRST_JOB_ID": raw})
    assert str(err.value) == (
        f"COURSE_FIRST_JOB_ID={raw!r} is not a job id: give a whole number from 1 to "
        "67043327 (the lessons' clusters start their job ids there)")


def test_free_first_job_id_starts_from_the_environment(
        monkeypatch: pytest.MonkeyPatch) -> None:
    first = random.randrange(100_000, 900_000)
    monkeypatch.setenv("COURSE_FIRST_JOB_ID", str(first))
    assert free_first_job_id(jobs=1) >= first
    assert _conf_text(first).count(f"FirstJobId={first}\n") == 1


def test_each_xdist_worker_has_a_lesson_range_of_its_own(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from ddp_notebooks import own_first_job_id

    firsts = []
    for n in range(8):
        monkeypatch.setenv("PYTEST_XDIST_WORKER", f"gw{n}")
        firsts.append(int(own_first_job_id()))
    ports = [set(range(master_port(f), master_port(f) + 500)) for f in firsts]
    stored = set(range(master_port(FIRST_JOB_ID), master_port(FIRST_JOB_ID) + 100))
    assert all(not p & stored for p in ports)
    assert all(not a & b for i, a in enumerate(ports) for b in ports[i + 1:])
