"""Lesson 3's GPU experiments (course/lessons/gpu_layout.py), headless."""

from __future__ import annotations

import pytest
from busy_probe import assert_busy_while

from course.lessons.gpu_layout import (
    BUSY_JOBS,
    PENDS,
    PREDICT_ARGS,
    FragmentationLab,
    busy_cluster,
    compare_requests,
    format_outcomes,
    format_tasks,
    gpu_map,
    landing,
    node_gpus,
    task_gpus,
    why_pending,
)
from minislurm.errors import SlurmError
from minislurm.sim import Cluster


def test_per_node_and_per_job_requests() -> None:
    outcomes = {o.request: o for o in compare_requests([
        "-N2 --gres=gpu:8", "-N2 --gpus-per-node=8", "--gpus=16", "-N1 --gres=gpu:a100:2",
        "-N1 --gres=gpu:h100:2",
    ])}  # fmt: skip
    eight = (tuple(range(8)),) * 2
    for request in ("-N2 --gres=gpu:8", "-N2 --gpus-per-node=8", "--gpus=16"):
        assert outcomes[request].total == 16
        assert tuple(i for _, i in outcomes[request].gpus) == eight
    assert outcomes["-N2 --gres=gpu:8"].tres_per_node == "gres:gpu:8"
    assert outcomes["--gpus=16"].tres_per_node == "N/A"  # a per-job request (TresPerJob)
    assert outcomes["-N1 --gres=gpu:a100:2"].gpus == (("gpu01", (0, 1)),)
    refused = outcomes["-N1 --gres=gpu:h100:2"]
    assert refused.gpus == () and refused.message == (
        "sbatch: error: Batch job submission failed: Requested node configuration is not available")
    table = format_outcomes(list(outcomes.values()))
    assert "gpu01: IDX 0-7  gpu02: IDX 0-7" in table
    assert table.splitlines()[-1].endswith("Requested node configuration is not available")


def test_every_task_of_a_node_sees_the_nodes_gpus() -> None:
    """Capture a1: srun -N2 --ntasks-per-node=2 --gres=gpu:2 -> every task 0,1."""
    cluster = Cluster()
    cluster.run("sbatch -N2 --ntasks-per-node=2 --gres=gpu:2 -t 30 --wrap 'srun true'")
    cluster.advance(1)
    batch, tasks = task_gpus(cluster, 1, "-N2 --ntasks-per-node=2 --gres=gpu:2 -t 30")
    assert batch["CUDA_VISIBLE_DEVICES"] == batch["SLURM_JOB_GPUS"] == "0,1"
    assert batch["SLURM_GPUS_ON_NODE"] == "2"
    assert [(t.task, t.node, t.local_id) for t in tasks] == [
        (0, "gpu01", 0), (1, "gpu01", 1), (2, "gpu02", 0), (3, "gpu02", 1)]
    assert {(t.cuda_visible_devices, t.step_gpus, t.gpus_on_node) for t in tasks} == {
        ("0,1", "0,1", "2")}
    assert format_tasks(tasks).splitlines()[3].split() == ["2", "gpu02", "0", "0,1", "0,1", "2"]


def test_srun_gpus_per_task_binds_one_gpu_to_each_task() -> None:
    """As measured on 22.05.8: ``srun --gpus-per-task=1`` in a 4-GPU job gives task k
    GPU k (CUDA_VISIBLE_DEVICES and SLURM_STEP_GPUS), SLURM_GPUS_ON_NODE stays 4;
    ``--gpu-bind=none`` unbinds them again."""
    cluster = Cluster()
    args = "-N1 -n4 --gres=gpu:4 -t 30"
    cluster.run(f"sbatch {args} --wrap 'srun true'")
    cluster.advance(1)
    _, tasks = task_gpus(cluster, 1, args, "--gpus-per-task=1")
    assert [(t.cuda_visible_devices, t.step_gpus, t.gpus_on_node) for t in tasks] == [
        (str(k), str(k), "4") for k in range(4)]
    _, unbound = task_gpus(cluster, 1, args, "--gpus-per-task=1 --gpu-bind=none")
    assert {t.cuda_visible_devices for t in unbound} == {"(unset)"}


def test_a_step_asking_fewer_gpus_gets_the_first_of_the_jobs() -> None:
    cluster = Cluster()
    cluster.run("sbatch -N1 --gres=gpu:4 --ntasks-per-node=4 -t 30 --wrap 'srun true'")
    cluster.advance(1)
    batch, tasks = task_gpus(cluster, 1, "-N1 --gres=gpu:4 --ntasks-per-node=4 -t 30",
                             "-n1 --gpus=1")
    assert batch["SLURM_JOB_GPUS"] == "0,1,2,3" and "SLURM_GPUS_PER_NODE" not in batch
    assert [(t.task, t.cuda_visible_devices) for t in tasks] == [(0, "0")]


def test_task_gpus_of_a_pending_job_fails_like_srun() -> None:
    cluster = Cluster()
    cluster.run("sbatch -N5 --gres=gpu:1 --wrap 'srun true'")
    cluster.advance(1)
    with pytest.raises(SlurmError, match="Unable to create step for job 1"):
        task_gpus(cluster, 1, "-N5 --gres=gpu:1")


def test_busy_cluster_is_fragmented() -> None:
    cluster = busy_cluster()
    nodes = node_gpus(cluster)
    assert [n.free for n in nodes] == [2, 2, 3, 3]
    assert sum(len(n.holders) - n.free for n in nodes) == 22
    assert len({h for n in nodes for h in n.holders if h is not None}) == len(BUSY_JOBS)
    assert nodes[2].holders[5:] == (None, None, None)  # gpu03: GPUs 5-7 free


def test_a_busy_nodes_gpus_are_not_zero_based() -> None:
    cluster = busy_cluster()
    cluster.run("sbatch -N1 --gres=gpu:3 -t 30 --wrap 'srun true'")
    cluster.advance(1)
    _, tasks = task_gpus(cluster, 8, "-N1 --gres=gpu:3 -t 30")
    assert tasks[0].cuda_visible_devices == "5,6,7"


def test_gpu_map_marks_nodes_that_fit() -> None:
    cluster = busy_cluster()
    fig = gpu_map(cluster, want_per_node=3)
    by_name = {t.name: t for t in fig.data}
    fits, full = by_name["free, node fits gpu:3"], by_name["free, node too full"]
    assert sorted(set(fits.x)) == ["gpu03", "gpu04"] and len(fits.x) == 6
    assert sorted(set(full.x)) == ["gpu01", "gpu02"] and len(full.x) == 4
    assert "1 llm-a" in by_name and list(by_name["1 llm-a"].y) == [0, 1, 2, 3, 4, 5]
    assert "10 GPUs free" in fig.layout.title.text and "2 node(s)" in fig.layout.title.text
    assert len(gpu_map(cluster, want_per_node=4).data[-2].x) == 0  # no node fits gpu:4


def test_why_pending_names_fragmentation() -> None:
    cluster = busy_cluster()
    cluster.run("sbatch -N1 --gres=gpu:4 -t 1:00:00 --wrap 'srun sleep 2700'")
    cluster.advance(1)
    text = why_pending(cluster, 8)
    assert text.startswith("job 8 is PENDING (Resources); free GPUs per node: gpu01 2, gpu02 2,"
                           " gpu03 3, gpu04 3 (total 10)")
    assert "no node has 4 free and the job needs 1 such node: the free GPUs are fragmented" in text
    cluster.wait_job(3)  # eval (gpu02 GPUs 3-4) ends after 20 min: gpu02 has 3, 4, 6, 7 free
    cluster.advance(1)
    assert why_pending(cluster, 8) == "job 8 is RUNNING on gpu02: gpu02 GPUs 3-4,6-7"


def test_lab_slider_redraws_the_map() -> None:
    lab = FragmentationLab()
    before = lab.figure_view.outputs
    lab.want.value = 2
    assert lab.figure_view.outputs != before
    fig = lab.figure_view.outputs[0]["data"]["application/vnd.plotly.v1+json"]
    fits = next(t for t in fig["data"] if t["name"] == "free, node fits gpu:2")
    assert len(fits["x"]) == 10
    assert "-N1 --gres=gpu:2" in lab.command.value


def test_lab_submit_and_advance() -> None:
    lab = FragmentationLab()
    lab.want.value, lab.nodes.value = 2, 2
    assert lab.submit_clicked() == "Submitted batch job 8"
    assert "job 8 is RUNNING on gpu[01-02]" in lab.log.value
    lab.want.value, lab.nodes.value = 8, 1
    lab.option.value = "--gpus-per-node="
    assert lab.submit_clicked() == "Submitted batch job 9"
    assert "job 9 is PENDING (Resources)" in lab.log.value
    holders = {h for n in node_gpus(lab.cluster) for h in n.holders}
    assert 8 in holders and 9 not in holders
    lab.advance_clicked()
    assert "job 9 is PENDING" in lab.log.value  # 30 min: vision (45 min) holds gpu02
    lab.advance_clicked()  # gpu02's jobs and job 8 (45 min) have ended: gpu02 is free
    assert "job 9 is RUNNING on gpu02: gpu02 GPUs 0-7" in lab.log.value
    assert lab.log.value.startswith("<pre>(30 minutes later)")


def test_why_pending_counts_the_nodes_a_multi_node_job_needs() -> None:
    cluster = busy_cluster()  # 2, 2, 3 and 3 GPUs free
    cluster.run("sbatch -N3 --gres=gpu:3 -t 1:00:00 --wrap 'srun sleep 600'")
    cluster.advance(1)
    text = why_pending(cluster, 8)
    assert ("10 GPUs are free, but only 2 node(s) have 3 free and the job needs 3 such nodes: "
            "the free GPUs are fragmented") in text


def test_landing_says_where_a_job_runs_or_that_it_pends() -> None:
    c = busy_cluster()
    # 2, 2, 3, 3 GPUs free on gpu01-gpu04: a 3-GPU job fits only gpu03 or gpu04
    assert landing(c, "-N1 --gres=gpu:3 -t 1:00:00") == "gpu04"
    assert [n.free for n in node_gpus(c)] == [2, 2, 3, 0]
    assert landing(c, "-N2 --gres=gpu:2 -t 1:00:00") == "gpu[01-02]"
    assert landing(c, "-N1 --gres=gpu:8 -t 1:00:00") == PENDS
    assert landing(c, "-N1 --gres=gpu:9 -t 1:00:00").startswith("sbatch: error:")


def test_the_lab_asks_which_node_gets_the_job_before_it_opens() -> None:
    lab = FragmentationLab()
    body = lab.view.children[1]
    assert body.layout.display == "none"
    prompt = lab.predict.view.children[0].value
    assert "gpu01 2, gpu02 2, gpu03 3, gpu04 3" in prompt and PREDICT_ARGS in prompt
    assert lab.predict.question.options == ("gpu01", "gpu02", "gpu03", "gpu04", PENDS)
    score = lab.predict.check("gpu03")
    assert score is not None and not score.correct and "says gpu04" in score.message
    assert body.layout.display is None and (lab.want.value, lab.nodes.value) == (3, 1)
    assert not lab.submitted and len(lab.cluster.jobs()) == len(BUSY_JOBS)  # untouched
    lab.submit_clicked()
    assert "job 8 is RUNNING on gpu04" in lab.log.value  # as predicted on the copy


def test_the_lab_is_busy_while_it_redraws_submits_and_advances(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from course.lessons import gpu_layout

    lab = FragmentationLab()
    assert_busy_while(monkeypatch, gpu_layout, "gpu_map", lab.busy,
                      lambda: setattr(lab.want, "value", lab.want.value % 8 + 1))
    assert_busy_while(monkeypatch, gpu_layout, "_submit", lab.busy, lab.submit_clicked)
    assert_busy_while(monkeypatch, lab.cluster, "advance", lab.busy, lab.advance_clicked)


def test_the_pt_br_labs_map_and_log_are_portuguese_with_slurms_words() -> None:
    """pt-BR: the map's title, axes, legend and hover words and the why-pending sentences
    through the course catalogue; job ids, states, reasons, node names, gpu:N, squeue's and
    sbatch's output stay as Slurm writes them; English unchanged."""
    lab = FragmentationLab(lang="pt-BR")
    lab.want.value = 4
    fig = lab.figure_view.outputs[0]["data"]["application/vnd.plotly.v1+json"]
    layout = fig["layout"]
    assert layout["title"]["text"] == ("10 GPUs livres na partition gpu; 0 nó(s) têm 4 ou mais "
                                       "livres")
    assert layout["xaxis"]["title"]["text"] == "nó"
    assert layout["separators"] == ",."
    assert layout["yaxis"]["title"]["text"] == "índice da GPU (CUDA_VISIBLE_DEVICES)"
    names = [t["name"] for t in fig["data"]]
    assert names[-2:] == ["livre, o nó comporta gpu:4", "livre, nó cheio demais"]
    assert "1 llm-a" in names                                       # job id and name
    assert fig["data"][-1]["hovertemplate"] == "%{x} GPU %{y} livre<extra></extra>"
    assert lab.submit_clicked() == "Submitted batch job 8"          # sbatch's own words
    log = lab.log.value
    assert "JOBID PARTITION" in log                                  # squeue unchanged
    assert ("job 8 está PENDING (Resources); GPUs livres por nó: gpu01 2, gpu02 2, gpu03 3, "
            "gpu04 3 (total 10)") in log
    assert ("10 GPUs estão livres, mas nenhum nó tem 4 livres e o job precisa de 1 nó assim: "
            "as GPUs livres estão fragmentadas") in log
    lab.advance_clicked()
    assert lab.log.value.startswith("<pre>(30 minutos depois)")
    assert "job 8 está " in lab.log.value
    lab.cluster.close()
    en = FragmentationLab(lang="en")
    en.want.value = 4
    assert en.figure is not None and en.figure.layout.title.text == (
        "10 GPUs free in partition gpu; 0 node(s) have 4 or more free")
    en.submit_clicked()
    assert "job 8 is PENDING (Resources); free GPUs per node:" in en.log.value
    en.cluster.close()


def test_why_pending_in_pt_br_running_and_multi_node() -> None:
    cluster = busy_cluster()
    cluster.run("sbatch -N3 --gres=gpu:3 -t 1:00:00 --wrap 'srun sleep 600'")
    cluster.advance(1)
    assert ("10 GPUs estão livres, mas só 2 nó(s) têm 3 livres e o job precisa de 3 nós assim: "
            "as GPUs livres estão fragmentadas") in why_pending(cluster, 8, lang="pt-BR")
    cluster.close()
    cluster = busy_cluster()
    cluster.run("sbatch -N1 --gres=gpu:2 -t 1:00:00 --wrap 'srun sleep 600'")
    cluster.advance(1)
    running = why_pending(cluster, 8, lang="pt-BR")
    assert running.startswith("job 8 está RUNNING em gpu0")
    assert running.split(": ", 1)[1] == why_pending(cluster, 8).split(": ", 1)[1]
    cluster.close()
