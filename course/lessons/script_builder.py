"""Lesson 2's script builder: #SBATCH directives from widgets, checked by minislurm's sbatch.

The builder writes a batch script from a `ScriptSpec` (the sbatch(1) options a
training job needs: ``--nodes``, ``--ntasks-per-node``, ``--cpus-per-task``,
``--gres=gpu:N`` or ``--gpus-per-node=N``, ``--time``, ``--partition``,
``--job-name``, ``--output``), then checks it the way Slurm does, with no rule
of its own:

1. sbatch's own parser (`minislurm.options.parse_sbatch`: getopt, the
   ``#SBATCH`` directives, ``_opt_verify``), which fails with sbatch's exact
   ``sbatch: error: ...`` text and exit code 255 (option values) or 1 (script);
2. slurmctld's submit checks (``job_create``: partition, node configuration,
   GRES), run by submitting the script to a scratch copy of the cluster, so
   nothing is queued on the learner's cluster and none of its job ids is used;
3. on that empty copy, whether the job starts or pends forever with a
   partition-limit reason (``EnforcePartLimits=NO`` accepts a job that can
   never run: ``PartitionTimeLimit``, ``PartitionNodeLimit``).

`ScriptBuilder` wires the widgets; its callbacks are plain methods the tests
call headless. Before it opens, the learner predicts what Slurm does with the
script at one more node than the partition has (`STAGE_LABELS`, `nodes_verdict`).
"""

from __future__ import annotations

import posixpath
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import ipywidgets as widgets
import plotly.graph_objects as go
import plotly.io as pio
from plotly.subplots import make_subplots

from course.i18n import N_, t, widget_lang
from minislurm.errors import SlurmError
from minislurm.job import Allocation
from minislurm.node import NodeRecord, PartitionRecord
from minislurm.options.sbatch import parse_sbatch
from minislurm.sim import Cluster
from minislurm.sim.plots import PALETTE, UIREVISION
from minislurm.states import JobState
from quizzes.widget import TYPED_ANSWER

from .figure_words import localise
from .predict import BusyIndicator, ChoiceQuestion, PredictStep

__all__ = [
    "GPU_OPTIONS",
    "REAL_SLURM_CAPTURE",
    "STAGE_LABELS",
    "ScriptBuilder",
    "ScriptSpec",
    "Verdict",
    "check_changes",
    "nodes_verdict",
    "plotly_output",
    "render_script",
    "request_figure",
    "submit",
    "validate",
]

#: How the builder asks for GPUs: sbatch(1) ``--gres=gpu[:type]:N`` (per node) or
#: ``--gpus-per-node=[type:]N``; ``none`` asks for none.
GPU_OPTIONS = ("--gres", "--gpus-per-node", "none")


@dataclass(frozen=True, slots=True)
class ScriptSpec:
    """What the learner picked; an empty text field leaves its directive out."""

    nodes: int = 2
    ntasks_per_node: int = 8
    cpus_per_task: int = 4
    gpus_per_node: int = 8
    gpu_option: str = "--gres"
    gpu_type: str = ""
    time: str = "02:00:00"
    partition: str = "gpu"
    job_name: str = "train"
    output: str = "%x-%j.out"
    command: str = "srun python train.py"


def _gpu_directive(spec: ScriptSpec) -> str | None:
    if spec.gpu_option == "none" or spec.gpus_per_node <= 0:
        return None
    if spec.gpu_option == "--gres":  # --gres=gpu[:type]:count (sbatch(1) --gres)
        kind = f"gpu:{spec.gpu_type}:" if spec.gpu_type else "gpu:"
        return f"--gres={kind}{spec.gpus_per_node}"
    if spec.gpu_option == "--gpus-per-node":  # --gpus-per-node=[type:]count
        kind = f"{spec.gpu_type}:" if spec.gpu_type else ""
        return f"--gpus-per-node={kind}{spec.gpus_per_node}"
    raise ValueError(f"gpu_option must be one of {GPU_OPTIONS}")


def _quoted(value: str) -> str:
    """A directive value as #SBATCH reads it (quotes for spaces, capture f1)."""
    return shlex.quote(value) if value != shlex.quote(value) else value


def render_script(spec: ScriptSpec) -> str:
    """The batch script for ``spec``: ``#!`` line, one ``#SBATCH`` per option, the command."""
    options: list[str | None] = [
        f"--job-name={_quoted(spec.job_name)}" if spec.job_name else None,
        f"--partition={spec.partition}" if spec.partition else None,
        f"--nodes={spec.nodes}",
        f"--ntasks-per-node={spec.ntasks_per_node}",
        f"--cpus-per-task={spec.cpus_per_task}",
        _gpu_directive(spec),
        f"--time={spec.time}" if spec.time else None,
        f"--output={_quoted(spec.output)}" if spec.output else None,
    ]
    lines = ["#!/bin/bash"] + [f"#SBATCH {o}" for o in options if o is not None]
    return "\n".join(lines) + "\n\n" + spec.command + "\n"


@dataclass(frozen=True, slots=True)
class Verdict:
    """What Slurm says about a script.

    ``stage``: ``sbatch`` (the client refused it), ``slurmctld`` (the controller
    refused the submission), ``pends`` (accepted, but on an empty cluster it never
    starts: ``reason``) or ``runs`` (it would start on the empty cluster, on
    ``allocation``). ``message`` is what sbatch printed.
    """

    stage: str
    message: str
    exit_code: int
    reason: str = ""
    allocation: Allocation | None = None
    output_file: str = ""

    @property
    def accepted(self) -> bool:
        """sbatch prints ``Submitted batch job N`` (exit 0)."""
        return self.exit_code == 0

    def summary(self, lang: str = "en") -> str:
        """One or two lines for the learner (in ``lang``; Slurm's own message as it is)."""
        if self.stage == "runs":
            assert self.allocation is not None
            return t(lang, "OK: sbatch accepts it; on an empty cluster it starts at once on "
                           "{nodes} node(s), {cpus} CPUs, {gpus} GPUs; job 1 would write "
                           "{output}").format(nodes=len(self.allocation.nodes),
                                              cpus=self.allocation.num_cpus,
                                              gpus=self.allocation.num_gpus,
                                              output=self.output_file)
        if self.stage == "pends":
            return t(lang, "Accepted ({message}) but it never starts, even on an empty "
                           "cluster: squeue shows ({reason})").format(
                message=self.message.strip(), reason=self.reason)
        return self.message.rstrip("\n")


def validate(script: str, cluster: Cluster) -> Verdict:
    """Check ``script`` with sbatch's parser, then slurmctld's submit checks.

    The submission goes to a fresh copy of ``cluster`` (same slurm.conf and
    associations, no jobs), so the learner's cluster is left untouched.
    """
    scratch = Cluster(cluster.config, associations=cluster.associations, user=cluster.user,
                      uid=cluster.uid)
    try:
        ctx = scratch.context()
        try:
            parse_sbatch([], env=ctx.env, stdin=script, cwd=ctx.cwd, now=scratch.now)
        except SlurmError as exc:  # the client's own checks
            return Verdict("sbatch", exc.message + "\n", exc.exit_code)
        result = scratch.run("sbatch", stdin=script)
        if result.returncode != 0:
            return Verdict("slurmctld", result.stderr, result.returncode)
        job_id = int(result.stdout.split()[-1])
        scratch.advance(1)
        job = scratch.controller.job(job_id)
        out = posixpath.relpath(job.std_out, str(scratch.workdir)) if job.std_out else ""
        if job.state is JobState.PENDING:
            return Verdict("pends", result.stdout, 0, reason=job.reason.value, output_file=out)
        return Verdict("runs", result.stdout, 0, allocation=job.allocation, output_file=out)
    finally:
        scratch.close()


def check_changes(cluster: Cluster, spec: ScriptSpec, changes: Sequence[Mapping[str, Any]]) -> str:
    """`validate` ``spec`` with each set of field ``changes``; one block per change."""
    blocks = []
    for change in changes:
        shown = " ".join(f"{k}={v!r}" for k, v in change.items())
        verdict = validate(render_script(replace(spec, **change)), cluster)
        blocks.append(f"[{shown}] -> {verdict.stage}\n{verdict.summary()}")
    return "\n\n".join(blocks)


#: A `Verdict`'s stage as the builder's prediction offers it.
STAGE_LABELS: dict[str, str] = {
    "sbatch": N_("sbatch refuses it (sbatch: error: ...)"),
    "slurmctld": N_("slurmctld refuses the submission"),
    "pends": N_("accepted, but it never starts"),
    "runs": N_("accepted, and it starts at once on an empty cluster"),
}


def _partition(cluster: Cluster, name: str) -> PartitionRecord:
    """The partition ``name``, or the default partition when ``name`` is empty or unknown."""
    parts = cluster.controller.partitions()
    return next((p for p in parts if p.name == name), None) or next(
        (p for p in parts if p.default), parts[0])


def nodes_verdict(cluster: Cluster, spec: ScriptSpec, partition: str = "") -> tuple[int, Verdict]:
    """`validate` ``spec`` with one node more than ``partition`` (default: the spec's, else
    the default partition) has: the builder's prediction."""
    part = _partition(cluster, partition or spec.partition)
    nodes = len(part.nodes) + 1
    return nodes, validate(render_script(replace(spec, nodes=nodes, partition=part.name)),
                           cluster)


def submit(script: str, cluster: Cluster) -> str:
    """Submit ``script`` to ``cluster`` (sbatch reading it from stdin); what sbatch printed."""
    return str(cluster.run("sbatch", stdin=script))


def _partition_nodes(cluster: Cluster, partition: str) -> list[NodeRecord]:
    """The nodes of ``partition`` (default partition if empty; all nodes if unknown)."""
    parts = cluster.controller.partitions()
    name = partition or next((p.name for p in parts if p.default), "")
    members = next((set(p.nodes) for p in parts if p.name == name), None)
    nodes = cluster.controller.nodes()
    return nodes if members is None else [n for n in nodes if n.name in members]


def request_figure(verdict: Verdict, cluster: Cluster, partition: str = "", *,
                   lang: str = "en") -> go.Figure:
    """What the job would hold on each node of its partition (an empty cluster): CPUs, GPUs.

    Bars are what select/cons_tres allocated in `validate`; the grey outline is each
    node's size (``CPUs=``, ``Gres=gpu:N`` in slurm.conf).  ``lang``: the language of
    the titles and trace names (`Verdict.summary`; sbatch's own messages and node names
    stay).
    """
    nodes = _partition_nodes(cluster, partition)
    names = [n.name for n in nodes]
    held = {a.node: a for a in verdict.allocation.nodes} if verdict.allocation else {}
    fig = make_subplots(rows=1, cols=2, subplot_titles=(t(lang, "CPUs per node"),
                                                        t(lang, "GPUs per node")))
    for col, (label, total, used) in enumerate((
        ("CPUs", [n.cpus for n in nodes], [held[m].cpus if m in held else 0 for m in names]),
        ("GPUs", [n.gpus_total for n in nodes],
         [len(held[m].gpus) if m in held else 0 for m in names]),
    ), start=1):  # fmt: skip
        fig.add_trace(go.Bar(x=names, y=total,
                             name=t(lang, "node {resource}").format(resource=label),
                             marker_color="#E5ECF6",
                             marker_line_color="#8C8C8C", marker_line_width=1,
                             showlegend=False), row=1, col=col)  # fmt: skip
        fig.add_trace(go.Bar(x=names, y=used, name=f"job {label}", showlegend=False,
                             marker_color=PALETTE[col - 1]), row=1, col=col)  # fmt: skip
    title = verdict.summary(lang).splitlines()[-1]
    if len(title) > 110:
        title = title[:107] + "..."
    fig.update_layout(title={"text": title, "font": {"size": 12}}, barmode="overlay",
                      uirevision=UIREVISION, template="plotly_white", height=330,
                      margin={"t": 70, "b": 40, "l": 40, "r": 20})  # fmt: skip
    return localise(fig, lang)


def plotly_output(fig: go.Figure) -> dict[str, Any]:
    """``fig`` as a ``display_data`` output with plotly's notebook mimetype only."""
    bundle = pio.renderers["plotly_mimetype"].to_mimebundle(fig.to_dict())
    return {"output_type": "display_data", "data": bundle, "metadata": {}}


class ScriptBuilder:
    """The widgets of lesson 2: pick options, read the script and Slurm's verdict, submit.

    ``controls`` maps each `ScriptSpec` field to its widget; changing one calls
    `refresh` (script, verdict, figure); the Submit button calls `submit_clicked`.
    """

    def __init__(self, cluster: Cluster, spec: ScriptSpec | None = None,
                 lang: str | None = None) -> None:
        self.lang = lang = widget_lang(lang)
        self.cluster = cluster
        spec = spec or ScriptSpec()
        parts = [p.name for p in cluster.controller.partitions()]
        self.controls: dict[str, widgets.ValueWidget] = {
            "nodes": widgets.IntSlider(spec.nodes, min=1, max=6, description="--nodes"),
            "ntasks_per_node": widgets.IntSlider(spec.ntasks_per_node, min=1, max=70,
                                                 description="--ntasks-per-node"),
            "cpus_per_task": widgets.IntSlider(spec.cpus_per_task, min=1, max=70,
                                               description="--cpus-per-task"),
            "gpus_per_node": widgets.IntSlider(spec.gpus_per_node, min=0, max=10,
                                               description=t(lang, "GPUs per node")),
            "gpu_option": widgets.Dropdown(options=list(GPU_OPTIONS), value=spec.gpu_option,
                                           description=t(lang, "GPU option")),
            "gpu_type": widgets.Combobox(value=spec.gpu_type, options=["a100", "h100"],
                                         description=t(lang, "GPU type"),
                                         placeholder=t(lang, "(any)"), **TYPED_ANSWER),
            "time": widgets.Text(spec.time, description="--time", **TYPED_ANSWER),
            "partition": widgets.Combobox(value=spec.partition, options=parts,
                                          description="--partition",
                                          placeholder=t(lang, "(default)"), **TYPED_ANSWER),
            "job_name": widgets.Text(spec.job_name, description="--job-name", **TYPED_ANSWER),
            "output": widgets.Text(spec.output, description="--output", **TYPED_ANSWER),
            "command": widgets.Text(spec.command, description=t(lang, "command"),
                                    **TYPED_ANSWER),
        }  # fmt: skip
        style = {"description_width": "120px"}
        for w in self.controls.values():
            w.style = style
            w.layout = widgets.Layout(width="430px")
            w.observe(self.refresh, names="value")
        self.script_view = widgets.HTML()
        self.verdict_view = widgets.HTML()
        self.figure_view = widgets.Output()
        self.submit_button = widgets.Button(description=t(lang, "Submit (sbatch)"),
                                            button_style="primary")
        self.submit_button.on_click(self.submit_clicked)
        self.queue_view = widgets.HTML()
        self.busy = BusyIndicator(lang)
        self.spec = spec
        self.script = ""
        self.verdict: Verdict | None = None
        self.figure: go.Figure | None = None
        self.refresh()
        left = widgets.VBox(list(self.controls.values()),
                            layout=widgets.Layout(min_width="440px"))
        right = widgets.VBox([self.busy.view, self.script_view, self.verdict_view],
                             layout=widgets.Layout(flex="1 1 auto"))
        body = widgets.VBox([widgets.HBox([left, right]), self.figure_view,
                             self.submit_button, self.queue_view])  # fmt: skip
        part = _partition(cluster, spec.partition)
        question = ChoiceQuestion(
            t(lang, "Set --nodes to {nodes}, one more than partition {partition} has, the rest "
              "as above. What does Slurm do with the script?").format(
                nodes=len(part.nodes) + 1, partition=part.name),
            tuple(STAGE_LABELS.values()),
            lambda: STAGE_LABELS[nodes_verdict(self.cluster, self.spec)[1].stage])
        self.predict = PredictStep(question, body, on_checked=self._show_nodes,
                                   busy=self.busy)
        self.view = widgets.VBox([self.predict.view, body])

    def _show_nodes(self) -> None:
        self.controls["nodes"].value = nodes_verdict(self.cluster, self.spec)[0]

    def current_spec(self) -> ScriptSpec:
        """The `ScriptSpec` the widgets show."""
        values = {name: w.value for name, w in self.controls.items()}
        return replace(self.spec, **values)

    def refresh(self, _change: object = None) -> None:
        """Rebuild the script, check it, redraw the figure (any widget changed)."""
        with self.busy.working("checking the script with sbatch and slurmctld…"):
            self.spec = self.current_spec()
            self.script = render_script(self.spec)
            self.verdict = validate(self.script, self.cluster)
            colour = {"runs": "#1a7f37", "pends": "#9a6700"}.get(self.verdict.stage, "#cf222e")
            self.script_view.value = f"<b>job.sh</b><pre>{_html(self.script)}</pre>"
            summary = _html(self.verdict.summary(self.lang))
            says = t(self.lang, "what Slurm says")
            self.verdict_view.value = (f"<b>{says}</b><pre style='color:{colour};"
                                       f"white-space:pre-wrap'>{summary}</pre>")
            self.figure = request_figure(self.verdict, self.cluster, self.spec.partition,
                                         lang=self.lang)
            self.figure_view.outputs = (plotly_output(self.figure),)

    def submit_clicked(self, _button: object = None) -> str:
        """Submit the current script to the learner's cluster; show sbatch's answer and squeue."""
        with self.busy.working("submitting…"):
            answer = submit(self.script, self.cluster)
            self.cluster.advance(1)
            queue = str(self.cluster.run("squeue"))
            self.queue_view.value = (f"<pre>$ sbatch job.sh\n{_html(answer)}\n$ squeue\n"
                                     f"{_html(queue)}</pre>")
        return answer


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


#: A real Slurm 22.05.8 run of a script like the builder's: the reference cluster
#: (4 nodes, 4 CPUs and gres gpu:a100:4 each), capture a3_sbatch_env_cpus_per_task
#: (``sbatch --wait job.sh``; batch.env filtered to the variables the lesson reads).
REAL_SLURM_CAPTURE = """\
$ cat job.sh
#!/bin/bash
#SBATCH --job-name=myjob -p gpu -N 2 --ntasks-per-node=1 --cpus-per-task=2 --gpus-per-node=1 --time=00:05:00 --mem-per-cpu=500
env | grep -E '^(SLURM_|CUDA_VISIBLE|GPU)' | sort > batch.env
srun bash -c "env | grep -E '^(SLURM_|CUDA_VISIBLE|GPU)' | sort > step.\\$SLURM_PROCID.env"
srun -n1 -N1 --gpus=1 bash -c "env | grep -E '^(SLURM_STEP|SLURM_GPUS|CUDA_VISIBLE|SLURM_NTASKS|SLURM_NNODES)' | sort > step1.env"
$ sbatch --wait job.sh
Submitted batch job 6
$ grep -E '^(CUDA_VISIBLE_DEVICES|SLURM_(CPUS|GPUS|JOB_NAME|JOB_NODELIST|JOB_PARTITION|JOB_CPUS|JOB_GPUS|MEM_PER))' batch.env
CUDA_VISIBLE_DEVICES=0
SLURM_CPUS_ON_NODE=2
SLURM_CPUS_PER_TASK=2
SLURM_GPUS_ON_NODE=1
SLURM_GPUS_PER_NODE=1
SLURM_JOB_CPUS_PER_NODE=2(x2)
SLURM_JOB_GPUS=0
SLURM_JOB_NAME=myjob
SLURM_JOB_NODELIST=n[1-2]
SLURM_JOB_PARTITION=gpu
SLURM_MEM_PER_CPU=500
"""  # noqa: E501
