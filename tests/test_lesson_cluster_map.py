"""Lesson 1's node map: a fixed queue of jobs filling the embedded default cluster."""

from __future__ import annotations

import pytest

from course.lessons.cluster_map import (
    CELLS,
    QUEUE,
    NodeMapExplorer,
    cells,
    fill,
    node_map,
    queue_counts,
    queue_listing,
)


def test_empty_cluster_is_all_idle() -> None:
    c = fill(0)
    cs = cells(c)
    assert len(cs) == 8 * CELLS and all(cell.job_id == 0 for cell in cs)
    assert queue_counts(c) == {}
    assert "0 job(s) submitted: no jobs" in node_map(c).layout.title.text


def test_gpu_cells_follow_the_allocated_gpu_indices() -> None:
    c = fill(4)
    by_node: dict[str, list[int]] = {}
    for cell in cells(c):
        by_node.setdefault(cell.node, []).append(cell.job_id)
    for job in c.jobs():
        assert job.allocation is not None, job.name  # all four fit
        for na in job.allocation.nodes:
            for i in na.gpu_indices:
                assert by_node[na.node][i] == job.job_id
    # the 2-node whole-GPU job holds all 8 GPUs of its two nodes
    pretrain = next(j for j in c.jobs() if j.name == "pretrain")
    for na in pretrain.allocation.nodes:  # type: ignore[union-attr]
        assert by_node[na.node] == [pretrain.job_id] * CELLS
    # the tokenize job (-c 32) fills a whole CPU node
    tokenize = next(j for j in c.jobs() if j.name == "tokenize")
    node = tokenize.allocation.nodes[0].node  # type: ignore[union-attr]
    assert by_node[node] == [tokenize.job_id] * CELLS


def test_a_full_queue_leaves_jobs_pending_with_reasons() -> None:
    c = fill(len(QUEUE))
    counts = queue_counts(c)
    assert counts["RUNNING"] == 8
    assert counts["PD (Resources)"] + counts["PD (Priority)"] == 2
    squeue = c.run("squeue").stdout
    assert "(Resources)" in squeue and "(Priority)" in squeue
    fig = node_map(c)
    running = {t.name for t in fig.data} - {"idle"}
    assert len(running) == 8 and "10 job(s) submitted" in fig.layout.title.text


def test_fill_checks_its_argument() -> None:
    with pytest.raises(ValueError, match="between 0 and 10"):
        fill(11)


def test_explorer_slider_rebuilds_cluster_and_figure() -> None:
    ex = NodeMapExplorer(k=2)
    before = ex.figure.to_dict()
    assert "2 job(s) submitted" in before["layout"]["title"]["text"]
    ex.slider.value = 9
    after = ex.figure.to_dict()
    assert after != before and "9 job(s) submitted" in after["layout"]["title"]["text"]
    assert "PD" in ex.squeue().stdout


def test_explorer_shows_the_current_map_and_squeue_in_its_output_widget() -> None:
    """Set from the kernel side: the widget holds them (nbval sees no stray outputs)."""
    ex = NodeMapExplorer(k=3)
    ex.slider.value = 8
    fig_out, text_out = ex.out.outputs
    plotly = fig_out["data"]["application/vnd.plotly.v1+json"]
    assert "8 job(s) submitted" in plotly["layout"]["title"]["text"]
    assert text_out["name"] == "stdout" and text_out["text"] == ex.squeue().stdout + "\n"
    assert "first-jo  student" in text_out["text"]


def test_queue_listing_is_one_line_per_job_with_its_user() -> None:
    lines = queue_listing().splitlines()
    assert len(lines) == len(QUEUE) == 10
    assert lines[0] == ("   alice: sbatch -J pretrain -N2 --gres=gpu:8 --exclusive -t 8:00:00 "
                        "--wrap 'srun sleep 25200'")
    assert lines[-1].startswith(" student: sbatch -J stats -p cpu")
    assert queue_listing(QUEUE[:1]) == lines[0]
