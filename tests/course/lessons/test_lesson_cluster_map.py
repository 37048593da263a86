"""Lesson 1's node map: a fixed queue of jobs filling the embedded default cluster."""

from __future__ import annotations

import pytest
from busy_probe import assert_busy_while

from course.lessons.cluster_map import (
    CELLS,
    QUEUE,
    NodeMapExplorer,
    cells,
    fill,
    first_wait,
    node_map,
    queue_counts,
    queue_listing,
)
from minislurm.states import JobState


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
    assert pretrain.allocation is not None
    for na in pretrain.allocation.nodes:
        assert by_node[na.node] == [pretrain.job_id] * CELLS
    # the tokenize job (-c 32) fills a whole CPU node
    tokenize = next(j for j in c.jobs() if j.name == "tokenize")
    assert tokenize.allocation is not None
    node = tokenize.allocation.nodes[0].node
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


def test_first_wait_is_the_first_prefix_with_a_job_pending_for_resources() -> None:
    found = first_wait()
    assert found is not None
    before, at = fill(found.k - 1), fill(found.k)
    assert not [j for j in before.jobs() if j.state is JobState.PENDING]
    waiting = [j.name for j in at.jobs() if j.state is JobState.PENDING
               and j.reason.value == "Resources"]
    assert found.job == waiting[0] and found.reason == "Resources"
    # with nine jobs the 3-node bigrun starts before the earlier pretrain (it fits now)
    assert (found.k, found.job) == (9, "pretrain")


def test_the_explorer_asks_first_then_shows_the_map_at_the_first_wait() -> None:
    ex = NodeMapExplorer(k=4)
    body = ex.box.children[1]
    assert body.layout.display == "none"
    assert "From which k on" in ex.predict.view.children[0].value
    score = ex.predict.check(10)
    assert score is not None and not score.correct
    assert score.message == ("You predicted 10; the simulation says 9: "
                             "1 too many (11% of the true value).")
    assert body.layout.display is None and ex.slider.value == 9
    assert "9 job(s) submitted" in ex.figure.layout.title.text


def test_the_explorer_is_busy_while_it_refills(monkeypatch: pytest.MonkeyPatch) -> None:
    from course.lessons import cluster_map

    ex = NodeMapExplorer(k=2)

    def move() -> None:
        ex.slider.value = 7 if ex.slider.value != 7 else 6

    assert_busy_while(monkeypatch, cluster_map, "fill", ex.busy, move)


def test_the_pt_br_explorers_map_is_portuguese_with_slurms_words() -> None:
    """pt-BR: title, axis, legend title and hover words through the course catalogue; the
    states, reasons, job ids, node names and squeue's text stay; English unchanged."""
    ex = NodeMapExplorer(k=10, lang="pt-BR")
    fig_out, text_out = ex.out.outputs
    fig = fig_out["data"]["application/vnd.plotly.v1+json"]
    title = fig["layout"]["title"]["text"]
    assert title.startswith("10 job(s) submetido(s): ")
    assert "RUNNING" in title and "PD (Resources)" in title
    assert fig["layout"]["legend"]["title"]["text"] == "jobs em execução"
    assert fig["layout"]["separators"] == ",."
    assert fig["layout"]["xaxis"]["title"]["text"] == ("índice da GPU (nós gpu) / bloco de 4 "
                                                       "CPUs (nós cpu)")
    idle, first = fig["data"][0], fig["data"][1]
    assert idle["name"] == "livre" and idle["hovertext"][0].endswith(": livre")
    assert first["hovertext"][0].endswith(f": job {first['name']}")   # id, name, user
    assert text_out["text"] == ex.squeue().stdout + "\n"            # squeue: Slurm's words
    ex.slider.value = 0
    assert ex.figure.layout.title.text == "0 job(s) submetido(s): nenhum job"
    ex.cluster.close()
    en = NodeMapExplorer(k=0, lang="en")
    assert en.figure.layout.title.text == "0 job(s) submitted: no jobs"
    assert en.figure.data[0].name == "idle" and en.figure.layout.separators is None
    en.cluster.close()
