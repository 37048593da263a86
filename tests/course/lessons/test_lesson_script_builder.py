"""Lesson 2's script builder (course/lessons/script_builder.py), headless."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import ipywidgets as widgets
import pytest
from busy_probe import assert_busy_while
from captures import capture_root

from course.lessons.script_builder import (
    REAL_SLURM_CAPTURE,
    STAGE_LABELS,
    ScriptBuilder,
    ScriptSpec,
    check_changes,
    nodes_verdict,
    plotly_output,
    render_script,
    request_figure,
    submit,
    validate,
)
from minislurm.options.sbatch import parse_sbatch
from minislurm.sim import Cluster

_ROOT = capture_root()
REFERENCE = (_ROOT / "a3_sbatch_env_cpus_per_task") if _ROOT else Path("/nonexistent")


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    c = Cluster()
    yield c
    c.close()


def test_rendered_directives_parse_back_to_the_spec() -> None:
    spec = ScriptSpec(nodes=3, ntasks_per_node=4, cpus_per_task=2, gpus_per_node=4,
                      gpu_option="--gpus-per-node", gpu_type="a100", time="1-00:00:00",
                      partition="gpu", job_name="my run", output="logs/%x-%j.out")
    script = render_script(spec)
    assert script.startswith("#!/bin/bash\n#SBATCH --job-name='my run'\n")
    opts = parse_sbatch([], env={}, stdin=script, cwd="/home/u", now=0).options
    assert (opts.nodes_min, opts.nodes_max) == (3, 3)
    assert (opts.ntasks_per_node, opts.cpus_per_task) == (4, 2)
    assert opts.gpus_per_node == "a100:4" and opts.gres is None
    assert opts.time_limit == 24 * 60 and opts.partition == "gpu"
    assert opts.job_name == "my run" and opts.output == "/home/u/logs/%x-%j.out"


def test_empty_fields_leave_their_directive_out() -> None:
    script = render_script(ScriptSpec(partition="", time="", output="", job_name="",
                                      gpu_option="none"))
    assert "--partition" not in script and "--time" not in script and "gpu" not in script
    assert "--output" not in script and "--job-name" not in script


def test_a_good_script_runs_and_its_allocation_is_cons_tres(cluster: Cluster) -> None:
    verdict = validate(render_script(ScriptSpec()), cluster)
    assert verdict.stage == "runs" and verdict.accepted
    assert verdict.allocation is not None
    assert [(a.node, a.cpus, a.gpu_indices) for a in verdict.allocation.nodes] == [
        ("gpu01", 32, tuple(range(8))), ("gpu02", 32, tuple(range(8)))]
    assert verdict.output_file == "train-1.out"
    assert cluster.jobs() == []  # the learner's cluster is untouched


@pytest.mark.parametrize("change, stage, text, code", [
    ({"time": "2h"}, "sbatch", "sbatch: error: Invalid --time specification\n", 255),
    ({"gpus_per_node": 9}, "slurmctld",
     "sbatch: error: Batch job submission failed: Requested node configuration is not "
     "available\n", 1),
    ({"gpu_type": "h100"}, "slurmctld",
     "sbatch: error: Batch job submission failed: Requested node configuration is not "
     "available\n", 1),
    ({"partition": "nosuch"}, "slurmctld",
     "sbatch: error: invalid partition specified: nosuch\n"
     "sbatch: error: Batch job submission failed: Invalid partition name specified\n", 1),
    ({"ntasks_per_node": 16, "cpus_per_task": 5}, "slurmctld",
     "sbatch: error: CPU count per node can not be satisfied\n"
     "sbatch: error: Batch job submission failed: Requested node configuration is not "
     "available\n", 1),
])  # fmt: skip
def test_refusals_carry_slurms_words(cluster: Cluster, change: dict[str, Any], stage: str,
                                     text: str, code: int) -> None:
    verdict = validate(render_script(replace(ScriptSpec(), **change)), cluster)
    assert (verdict.stage, verdict.message, verdict.exit_code) == (stage, text, code)
    assert not verdict.accepted


@pytest.mark.parametrize("change, reason", [
    ({"nodes": 5}, "PartitionNodeLimit"),
    ({"time": "3-00:00:00"}, "PartitionTimeLimit"),
    ({"partition": "debug", "time": "1:00:00"}, "PartitionTimeLimit"),
])  # fmt: skip
def test_limits_are_accepted_but_never_start(cluster: Cluster, change: dict[str, Any],
                                             reason: str) -> None:
    """EnforcePartLimits=NO (capture b_sbatch_errors): rc 0, then pending with the reason."""
    verdict = validate(render_script(replace(ScriptSpec(), **change)), cluster)
    assert verdict.stage == "pends" and verdict.accepted and verdict.reason == reason
    assert f"({reason})" in verdict.summary()


def test_check_changes_reports_each_change(cluster: Cluster) -> None:
    text = check_changes(cluster, ScriptSpec(), [{"nodes": 5}, {"time": "2h"}])
    blocks = text.split("\n\n")
    assert blocks[0].startswith("[nodes=5] -> pends\n")
    assert blocks[1] == "[time='2h'] -> sbatch\nsbatch: error: Invalid --time specification"


def test_figure_shows_the_allocation_per_node(cluster: Cluster) -> None:
    fig = request_figure(validate(render_script(ScriptSpec(nodes=3)), cluster), cluster, "gpu")
    cpus_total, cpus_job, gpus_total, gpus_job = (list(t.y) for t in fig.data)
    assert list(fig.data[0].x) == ["gpu01", "gpu02", "gpu03", "gpu04"]
    assert cpus_total == [64] * 4 and gpus_total == [8] * 4
    assert cpus_job == [32, 32, 32, 0] and gpus_job == [8, 8, 8, 0]
    refused = request_figure(validate(render_script(ScriptSpec(gpus_per_node=9)), cluster),
                             cluster, "gpu")
    assert list(refused.data[3].y) == [0, 0, 0, 0]
    assert "Requested node configuration" in refused.layout.title.text


def test_plotly_output_is_the_plotly_mimetype_only(cluster: Cluster) -> None:
    fig = request_figure(validate(render_script(ScriptSpec()), cluster), cluster, "gpu")
    out = plotly_output(fig)
    assert out["output_type"] == "display_data"
    assert list(out["data"]) == ["application/vnd.plotly.v1+json"]
    assert out["data"]["application/vnd.plotly.v1+json"]["data"][0]["type"] == "bar"


def test_moving_a_slider_changes_script_verdict_and_figure(cluster: Cluster) -> None:
    builder = ScriptBuilder(cluster)
    before_script, before_fig = builder.script, builder.figure_view.outputs
    assert builder.verdict is not None and builder.verdict.stage == "runs"
    builder.controls["nodes"].value = 5
    assert "#SBATCH --nodes=5\n" in builder.script and builder.script != before_script
    assert builder.verdict.stage == "pends" and builder.verdict.reason == "PartitionNodeLimit"
    assert "PartitionNodeLimit" in builder.verdict_view.value
    assert builder.figure_view.outputs != before_fig
    builder.controls["nodes"].value = 3
    fig = builder.figure_view.outputs[0]["data"]["application/vnd.plotly.v1+json"]
    assert fig["data"][3]["y"] == [8, 8, 8, 0]


def test_text_fields_validate_live(cluster: Cluster) -> None:
    builder = ScriptBuilder(cluster)
    builder.controls["time"].value = "abc"
    assert builder.verdict is not None and builder.verdict.stage == "sbatch"
    assert "Invalid --time specification" in builder.verdict_view.value
    builder.controls["time"].value = "30"
    builder.controls["partition"].value = "debug"
    assert builder.verdict.stage == "runs"
    builder.controls["gpu_option"].value = "none"
    assert "gpu" not in builder.script.split("--partition=debug")[1]


def test_typed_options_reach_the_kernel_before_submit(cluster: Cluster) -> None:
    """The boxes typed into (--time, --partition, --job-name...) send their value when
    they lose focus (or on Enter), not at every key: ipywidgets' front end holds a
    widget's next update until the kernel has handled the last one (each one re-checks
    the script here) but sends a click at once, so Submit pressed right after typing
    would submit an older script than the one shown. Fewer updates also leave less for
    ipykernel 7 to reorder (it handles a comm message at once while a cell awaits; the
    course pins ipykernel<7: tests/course/test_kernel_message_order.py)."""
    builder = ScriptBuilder(cluster)
    typed = {name: w for name, w in builder.controls.items()
             if isinstance(w, widgets.Text)}  # Combobox is a Text
    assert set(typed) == {"gpu_type", "time", "partition", "job_name", "output", "command"}
    assert [name for name, w in typed.items() if w.continuous_update] == []


def test_submit_button_queues_the_job_on_the_learners_cluster(cluster: Cluster) -> None:
    builder = ScriptBuilder(cluster)
    builder.controls["job_name"].value = "bert"
    assert builder.submit_clicked() == "Submitted batch job 1\n"
    assert [(j.name, j.num_nodes) for j in cluster.jobs()] == [("bert", 2)]
    assert "bert" in builder.queue_view.value and " R " in builder.queue_view.value
    assert submit(render_script(ScriptSpec()), cluster) == "Submitted batch job 2\n"


def test_submitted_job_writes_the_output_pattern(cluster: Cluster) -> None:
    submit(render_script(ScriptSpec(output="%x-%j.out", job_name="train")), cluster)
    job = cluster.jobs()[0]
    assert job.std_out.endswith("/train-1.out")


@pytest.mark.skipif(not REFERENCE.is_dir(), reason="real Slurm captures not on this machine")
def test_real_slurm_capture_is_the_stored_one() -> None:
    text = REAL_SLURM_CAPTURE
    assert (REFERENCE / "job.sh").read_text() in text
    assert (REFERENCE / "01_sbatch_wait.out").read_text() in text
    grep = re.search(r"grep -E '(.+)' batch\.env\n", text)
    assert grep is not None
    wanted = [line for line in (REFERENCE / "batch.env").read_text().splitlines()
              if re.match(grep.group(1), line)]
    assert text.endswith("\n".join(wanted) + "\n")


def test_nodes_verdict_asks_for_one_node_more_than_the_partition_has(cluster: Cluster) -> None:
    spec = ScriptSpec(partition="gpu")
    gpu = next(p for p in cluster.controller.partitions() if p.name == "gpu")
    nodes, verdict = nodes_verdict(cluster, spec)
    assert nodes == len(gpu.nodes) + 1
    assert verdict == validate(render_script(replace(spec, nodes=nodes)), cluster)
    assert verdict.stage == "pends" and verdict.reason == "PartitionNodeLimit"
    debug = next(p for p in cluster.controller.partitions() if p.name == "debug")
    assert nodes_verdict(cluster, spec, "debug")[0] == len(debug.nodes) + 1
    assert not cluster.jobs()  # checked on a scratch copy
    default = next(p for p in cluster.controller.partitions() if p.default)
    assert nodes_verdict(cluster, ScriptSpec(partition=""))[0] == len(default.nodes) + 1


def test_the_builder_names_the_default_partition_when_the_spec_has_none(
        cluster: Cluster) -> None:
    default = next(p for p in cluster.controller.partitions() if p.default)
    builder = ScriptBuilder(cluster, ScriptSpec(partition=""))
    assert f"one more than partition {default.name} has" in builder.predict.view.children[0].value


def test_the_builder_asks_what_slurm_does_before_it_opens(cluster: Cluster) -> None:
    builder = ScriptBuilder(cluster, ScriptSpec(partition="gpu"))
    body = builder.view.children[1]
    assert body.layout.display == "none"
    prompt = builder.predict.view.children[0].value
    assert "Set --nodes to 5, one more than partition gpu has" in prompt
    score = builder.predict.check(STAGE_LABELS["slurmctld"])
    assert score is not None and not score.correct
    assert score.message.endswith(f"the simulation says {STAGE_LABELS['pends']}.")
    assert body.layout.display is None and builder.controls["nodes"].value == 5
    assert builder.verdict is not None and builder.verdict.reason == "PartitionNodeLimit"


def test_the_builder_is_busy_while_it_checks_and_submits(cluster: Cluster,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from course.lessons import script_builder

    builder = ScriptBuilder(cluster)
    assert_busy_while(monkeypatch, script_builder, "validate", builder.busy,
                      lambda: setattr(builder.controls["nodes"], "value",
                                      builder.controls["nodes"].value % 4 + 1))
    assert_busy_while(monkeypatch, script_builder, "submit", builder.busy,
                      builder.submit_clicked)


def test_the_pt_br_builders_figure_is_portuguese_with_slurms_words(cluster: Cluster) -> None:
    """pt-BR: subplot titles, trace names and the verdict title through the course
    catalogue; sbatch's and slurmctld's own messages, reasons and node names stay."""
    builder = ScriptBuilder(cluster, lang="pt-BR")
    builder.controls["nodes"].value = 3
    fig = builder.figure_view.outputs[0]["data"]["application/vnd.plotly.v1+json"]
    assert [a["text"] for a in fig["layout"]["annotations"]] == ["CPUs por nó", "GPUs por nó"]
    assert [t["name"] for t in fig["data"]] == ["nó CPUs", "job CPUs", "nó GPUs", "job GPUs"]
    assert fig["layout"]["title"]["text"].startswith("OK: o sbatch o aceita; num cluster vazio")
    assert fig["data"][0]["x"] == ["gpu01", "gpu02", "gpu03", "gpu04"]
    assert fig["data"][3]["y"] == [8, 8, 8, 0]
    assert fig["layout"]["separators"] == ",."
    builder.controls["nodes"].value = 5
    title = builder.figure.layout.title.text if builder.figure is not None else ""
    assert "(PartitionNodeLimit)" in title and "squeue" in title
    builder.controls["gpus_per_node"].value = 9
    assert builder.figure is not None and "Requested node configuration" in \
        builder.figure.layout.title.text                        # slurmctld's own words
    en = ScriptBuilder(cluster, lang="en")
    assert en.figure is not None
    assert [a.text for a in en.figure.layout.annotations] == ["CPUs per node", "GPUs per node"]
    assert en.figure.data[0].name == "node CPUs" and en.figure.layout.separators is None
