"""Lesson 3's GPU experiments: which GPUs of which node a job gets, and why it pends.

Everything here asks minislurm, never a rule of its own:

* `compare_requests` submits each request (``--gres=gpu:8``, ``--gpus-per-node``,
  ``--gpus``, typed ``gpu:a100:2``) to a fresh cluster and reads back what
  select/cons_tres allocated (``scontrol show job -d``'s ``GRES=gpu:a100:2(IDX:0-1)``);
* `task_gpus` builds each task's environment with minislurm's slurmd
  (`minislurm.slurmd.env`: gres/gpu's ``CUDA_VISIBLE_DEVICES``, ``SLURM_STEP_GPUS``,
  ``SLURM_GPUS_ON_NODE``) for an ``srun`` inside the job's allocation;
* `gpu_map` draws a busy partition GPU by GPU, and `why_pending` explains a pending
  job from its squeue reason and the free GPUs of each node (fragmentation);
* `FragmentationLab` is the widget: a slider for the GPUs per node a job wants
  (the map shows which nodes could host it), a slider for the node count, Submit
  and "advance" buttons. Its callbacks are plain methods, tested headless.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import ipywidgets as widgets
import plotly.graph_objects as go

from course.i18n import N_, t, widget_lang
from course.lessons.script_builder import plotly_output
from minislurm.common.hostlist import compress
from minislurm.ctld.step_mgr import plan_step
from minislurm.errors import Errno, SlurmError
from minislurm.job import JobRecord
from minislurm.options.sbatch import parse_sbatch
from minislurm.options.srun import parse_srun
from minislurm.sim.cluster import Cluster
from minislurm.sim.plots import UIREVISION, colour_map
from minislurm.slurmd.context import StepContext, job_context
from minislurm.slurmd.env import batch_environment, step_environments
from minislurm.states import JobState

from .figure_words import localise
from .predict import BusyIndicator, ChoiceQuestion, PredictStep

__all__ = [
    "BUSY_JOBS",
    "LAB_COMMAND",
    "FragmentationLab",
    "NodeGpus",
    "RequestOutcome",
    "TaskGpus",
    "busy_cluster",
    "compare_requests",
    "format_outcomes",
    "format_tasks",
    "gpu_map",
    "landing",
    "node_gpus",
    "task_gpus",
    "why_pending",
]

#: The command of the comparison jobs (a simulated script without ``sleep`` runs 60 s).
TRAIN = "srun python train.py"

#: The command of the lab's jobs: 45 simulated minutes (minislurm.sim.simscript reads sleeps).
LAB_COMMAND = "srun sleep 2700"


@dataclass(frozen=True, slots=True)
class RequestOutcome:
    """What one sbatch request got on an empty cluster."""

    request: str
    message: str  # sbatch's stdout/stderr
    tres_per_node: str  # squeue %b (TRES_PER_NODE), 'N/A' when the request is per job
    gpus: tuple[tuple[str, tuple[int, ...]], ...]  # (node, GPU indices) per node

    @property
    def total(self) -> int:
        """GPUs the job holds (``AllocTRES`` gres/gpu)."""
        return sum(len(idx) for _, idx in self.gpus)


def _submit(cluster: Cluster, args: str, command: str = TRAIN) -> tuple[str, int | None]:
    """``sbatch ARGS --wrap COMMAND``; (what sbatch printed, job id or None)."""
    result = cluster.run(f"sbatch {args} --wrap {shlex.quote(command)}")
    if result.returncode != 0:
        return str(result).strip(), None
    return str(result).strip(), int(result.stdout.split()[-1])


def compare_requests(requests: Sequence[str],
                     cluster: Cluster | None = None) -> list[RequestOutcome]:
    """Submit each request to its own empty copy of ``cluster`` (default: the embedded one)."""
    base = cluster or Cluster()
    outcomes = []
    for request in requests:
        scratch = Cluster(base.config, associations=base.associations)
        try:
            message, job_id = _submit(scratch, f"{request} -t 30")
            gpus: tuple[tuple[str, tuple[int, ...]], ...] = ()
            tpn = ""
            if job_id is not None:
                scratch.advance(1)
                job = scratch.controller.job(job_id)
                tpn = job.tres_per_node or "N/A"
                if job.allocation is not None:
                    gpus = tuple((a.node, a.gpu_indices) for a in job.allocation.nodes)
            outcomes.append(RequestOutcome(request, message, tpn, gpus))
        finally:
            scratch.close()
    return outcomes


def _indices(idx: Sequence[int]) -> str:
    """``0-1`` / ``2,5`` as scontrol's ``IDX:`` prints GPU indices."""
    if not idx:
        return "N/A"
    runs: list[str] = []
    start = prev = idx[0]
    for i in [*idx[1:], None]:
        if i is not None and i == prev + 1:
            prev = i
            continue
        runs.append(str(start) if start == prev else f"{start}-{prev}")
        if i is not None:
            start = prev = i
    return ",".join(runs)


def format_outcomes(outcomes: Sequence[RequestOutcome]) -> str:
    """A table: request, sbatch's answer, TRES_PER_NODE, GPUs per node with their indices."""
    rows = [("request", "TRES_PER_NODE", "GPUs", "where (node: GPU indices)")]
    for o in outcomes:
        if not o.gpus:
            rows.append((o.request, "-", "-", o.message))
            continue
        where = "  ".join(f"{n}: IDX {_indices(i)}" for n, i in o.gpus)
        rows.append((o.request, o.tres_per_node, str(o.total), where))
    widths = [max(len(r[c]) for r in rows) for c in range(3)]
    return "\n".join(f"{r[0]:<{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]:>{widths[2]}}  {r[3]}"
                     for r in rows)


@dataclass(frozen=True, slots=True)
class TaskGpus:
    """One task of an srun step and the GPU variables slurmd gives it."""

    task: int
    node: str
    local_id: int
    cuda_visible_devices: str
    step_gpus: str
    gpus_on_node: str


def task_gpus(cluster: Cluster, job_id: int, sbatch_args: str,
              srun_args: str = "") -> tuple[dict[str, str], list[TaskGpus]]:
    """The batch step's GPU variables and each task's, for ``srun SRUN_ARGS`` in job ``job_id``.

    ``sbatch_args`` are the options the job was submitted with (slurmd needs
    them: ``--gpus-per-node`` becomes ``SLURM_GPUS_PER_NODE``...). Raises
    `SlurmError` when the job is not running or srun would refuse the step.
    """
    job = cluster.controller.job(job_id)
    if job.state is not JobState.RUNNING or job.allocation is None:
        raise SlurmError(f"srun: error: Unable to create step for job {job_id}: "
                         f"{Errno.ESLURM_ALREADY_DONE}", 1)
    ctx = cluster.context()
    options = parse_sbatch([*shlex.split(sbatch_args), "--wrap", TRAIN], env=ctx.env,
                           cwd=ctx.cwd, now=cluster.now).options
    job_ctx = job_context(options, job_id=job_id, name=job.name, partition=job.partition,
                          cluster_name=cluster.config.cluster_name,
                          mem_per_cpu=job.mem_per_cpu, user=job.user, uid=job.uid,
                          gid=job.gid, account=job.account, submit_dir=job.work_dir)
    batch = batch_environment(job_ctx, job.allocation, base_env=ctx.env)
    srun = parse_srun([*shlex.split(srun_args), "python", "train.py"], env=batch, cwd=ctx.cwd)
    plan = plan_step(job_id, job.allocation, srun.options, 0)
    step = StepContext(step_id=0, layout=plan.layout, launcher_port=40000,
                       cpus_on_node=plan.cpus_on_node, gpus=plan.gpus,
                       cpus_per_task=srun.options.cpus_per_task,
                       ntasks_per_node=srun.options.ntasks_per_node,
                       distribution=srun.options.distribution,
                       gpus_per_task=srun.options.gpus_per_task,
                       gpu_bind=dict(srun.options.other).get("gpu-bind"))
    tasks = [
        TaskGpus(int(env["SLURM_PROCID"]), env["SLURMD_NODENAME"], int(env["SLURM_LOCALID"]),
                 env.get("CUDA_VISIBLE_DEVICES", "(unset)"), env.get("SLURM_STEP_GPUS", "(unset)"),
                 env.get("SLURM_GPUS_ON_NODE", "(unset)"))
        for env in step_environments(job_ctx, job.allocation, step, base_env=batch)
    ]
    gpu_vars = {k: v for k, v in batch.items() if "GPU" in k or k == "CUDA_VISIBLE_DEVICES"}
    return dict(sorted(gpu_vars.items())), tasks


def format_tasks(tasks: Sequence[TaskGpus]) -> str:
    """``srun -l``-style table of the tasks' GPU variables."""
    head = "SLURM_PROCID  node   LOCALID  CUDA_VISIBLE_DEVICES  SLURM_STEP_GPUS  SLURM_GPUS_ON_NODE"
    lines = [head] + [
        f"{t.task:>12}  {t.node:<5}  {t.local_id:>7}  {t.cuda_visible_devices:<20}  "
        f"{t.step_gpus:<15}  {t.gpus_on_node}" for t in tasks
    ]  # fmt: skip
    return "\n".join(lines)


# ---- a busy cluster ----------------------------------------------------------------

#: The jobs already running in `busy_cluster`: (sbatch options, run time in minutes).
BUSY_JOBS: tuple[tuple[str, int], ...] = (
    ("-J llm-a -w gpu01 --gres=gpu:6 -t 4:00:00", 200),
    ("-J vision -w gpu02 --gres=gpu:3 -t 2:00:00", 45),
    ("-J eval -w gpu02 --gres=gpu:2 -t 1:00:00", 20),
    ("-J sweep -w gpu02 --gres=gpu:1 -t 1:00:00", 30),
    ("-J llm-b -w gpu03 --gres=gpu:5 -t 4:00:00", 90),
    ("-J tune -w gpu04 --gres=gpu:3 -t 2:00:00", 75),
    ("-J notebook -w gpu04 --gres=gpu:2 -t 1:00:00", 60),
)


def busy_cluster() -> Cluster:
    """The embedded cluster with `BUSY_JOBS` running (``-w`` pins each to its node):
    22 of the 32 GPUs in use, 10 free as 2, 2, 3 and 3 on the four GPU nodes."""
    cluster = Cluster()
    for args, minutes in BUSY_JOBS:
        script = f"#!/bin/bash\n#SBATCH {args}\nsrun python train.py\n"
        cluster.sbatch(script, runtime=minutes * 60)
    cluster.advance(60)
    return cluster


@dataclass(frozen=True, slots=True)
class NodeGpus:
    """One node's GPUs: which job holds each index (None = free)."""

    node: str
    holders: tuple[int | None, ...]

    @property
    def free(self) -> int:
        """Free GPUs on the node."""
        return sum(h is None for h in self.holders)


def node_gpus(cluster: Cluster, partition: str = "gpu") -> list[NodeGpus]:
    """Every GPU of ``partition``'s nodes with the running job that holds it."""
    part = next(p for p in cluster.controller.partitions() if p.name == partition)
    holders: dict[str, list[int | None]] = {
        n.name: [None] * n.gpus_total for n in cluster.controller.nodes()
        if n.name in part.nodes and n.gpus_total
    }  # fmt: skip
    for job in cluster.controller.jobs(include_done=False):
        if job.state is JobState.RUNNING and job.allocation is not None:
            for a in job.allocation.nodes:
                for i in a.gpu_indices:
                    if a.node in holders:
                        holders[a.node][i] = job.job_id
    return [NodeGpus(name, tuple(h)) for name, h in holders.items()]


def _job_names(cluster: Cluster) -> dict[int, JobRecord]:
    return {j.job_id: j for j in cluster.controller.jobs(include_done=False)}


def gpu_map(cluster: Cluster, want_per_node: int = 0, partition: str = "gpu", *,
            lang: str = "en") -> go.Figure:
    """Each GPU of the partition as a square: coloured by its job, free ones green when the
    node has at least ``want_per_node`` free GPUs (a ``--gres=gpu:N`` job fits), grey if not.

    ``lang``: the language of the title, axes, legend and hover words; node names, job
    ids and names, ``gpu:N`` and CUDA_VISIBLE_DEVICES stay.
    """
    nodes = node_gpus(cluster, partition)
    jobs = _job_names(cluster)
    held = sorted({h for n in nodes for h in n.holders if h is not None})
    colours = colour_map(f"{i:04d}" for i in held)
    fig = go.Figure()
    for jid in held:
        xs = [n.node for n in nodes for i, h in enumerate(n.holders) if h == jid]
        ys = [i for n in nodes for i, h in enumerate(n.holders) if h == jid]
        name = f"{jid} {jobs[jid].name}" if jid in jobs else str(jid)
        fig.add_trace(go.Scatter(
            x=xs, y=ys, mode="markers+text", name=name, text=[str(jid)] * len(xs),
            marker={"symbol": "square", "size": 34, "color": colours[f"{jid:04d}"]},
            textfont={"color": "white"},
            hovertemplate=f"job {name}<br>%{{x}} GPU %{{y}}<extra></extra>"))  # fmt: skip
    for fits in (True, False):
        pick = [(n.node, i) for n in nodes if (n.free >= want_per_node) == fits
                for i, h in enumerate(n.holders) if h is None]  # fmt: skip
        label = (t(lang, "free, node fits gpu:{want}").format(want=want_per_node) if fits
                 else t(lang, "free, node too full"))
        fig.add_trace(go.Scatter(
            x=[p[0] for p in pick], y=[p[1] for p in pick], mode="markers", name=label,
            marker={"symbol": "square-open" if not fits else "square", "size": 34,
                    "color": "#2DA44E" if fits else "#8C959F", "line": {"width": 2}},
            hovertemplate=t(lang, "%{x} GPU %{y} free<extra></extra>")))  # fmt: skip
    total_free = sum(n.free for n in nodes)
    hosts = sum(n.free >= want_per_node for n in nodes)
    fig.update_layout(
        title={"text": t(lang, "{free} GPUs free in partition {partition}; {hosts} node(s) "
                               "have {want} or more free").format(
                   free=total_free, partition=partition, hosts=hosts, want=want_per_node),
               "font": {"size": 13}},
        xaxis={"title": t(lang, "node"), "categoryorder": "array",
               "categoryarray": [n.node for n in nodes]},
        yaxis={"title": t(lang, "GPU index (CUDA_VISIBLE_DEVICES)"), "dtick": 1,
               "range": [-0.7, 7.7]},
        uirevision=UIREVISION, template="plotly_white", height=420,
        legend={"orientation": "v", "x": 1.02},
    )  # fmt: skip
    return localise(fig, lang)


def why_pending(cluster: Cluster, job_id: int, *, lang: str = "en") -> str:
    """squeue's reason for job ``job_id`` and what the nodes have free (or where it runs).

    ``lang``: the language of the sentences; job ids, states, reasons, node names and
    GPU indices stay as Slurm writes them.
    """
    job = cluster.controller.job(job_id)
    if job.state is JobState.RUNNING and job.allocation is not None:
        where = ", ".join(f"{a.node} GPUs {_indices(a.gpu_indices)}" for a in job.allocation.nodes)
        return t(lang, "job {job} is RUNNING on {nodes}: {where}").format(
            job=job_id, nodes=compress(job.allocation.node_names), where=where)
    if job.state is not JobState.PENDING:
        return t(lang, "job {job} is {state}").format(job=job_id, state=job.state.value)
    free = node_gpus(cluster, job.partition)
    listing = ", ".join(f"{n.node} {n.free}" for n in free)
    total = sum(n.free for n in free)
    lines = [t(lang, "job {job} is PENDING ({reason}); free GPUs per node: {listing} "
                     "(total {total})").format(job=job_id, reason=job.reason.value,
                                               listing=listing, total=total)]
    want = _gpus_per_node_wanted(job)
    if want:
        hosts = sum(n.free >= want for n in free)
        if job.num_nodes > hosts and total >= want * job.num_nodes:
            nodes = (t(lang, "{n} such node") if job.num_nodes == 1
                     else t(lang, "{n} such nodes")).format(n=job.num_nodes)
            sentence = (t(lang, "{total} GPUs are free, but no node has {want} free and the "
                                "job needs {nodes}: the free GPUs are fragmented")
                        if hosts == 0 else
                        t(lang, "{total} GPUs are free, but only {hosts} node(s) have {want} "
                                "free and the job needs {nodes}: the free GPUs are fragmented"))
            lines.append(sentence.format(total=total, hosts=hosts, want=want, nodes=nodes))
    return "\n".join(lines)


def _gpus_per_node_wanted(job: JobRecord) -> int:
    """GPUs per node from ``TresPerNode`` (``gres:gpu:a100:2`` -> 2) or ``--gpus`` per node."""
    if job.tres_per_node:
        tail = job.tres_per_node.rsplit(":", 1)[-1]
        return int(tail) if tail.isdigit() else 0
    if job.tres_per_job:
        tail = job.tres_per_job.rsplit(":", 1)[-1]
        return -(-int(tail) // max(job.num_nodes, 1)) if tail.isdigit() else 0
    return 0


#: What pends instead of landing, as `landing` and the lab's prediction say it.
PENDS = N_("none: it pends")


def landing(cluster: Cluster, args: str) -> str:
    """Submit ``sbatch ARGS --wrap LAB_COMMAND`` to ``cluster``, let the scheduler run for
    a second, and say where the job landed: its nodes (``gpu03`` or ``gpu[01-02]``),
    `PENDS` or sbatch's error. ``cluster`` keeps the job (pass a scratch one)."""
    message, job_id = _submit(cluster, args, LAB_COMMAND)
    if job_id is None:
        return message
    cluster.advance(1)
    job = cluster.controller.job(job_id)
    if job.state is JobState.RUNNING and job.allocation is not None:
        return compress(job.allocation.node_names)
    return PENDS


#: The lab's prediction: the job whose landing the learner predicts.
PREDICT_ARGS = "-N1 --gres=gpu:3 -t 1:00:00"


class FragmentationLab:
    """Lesson 3's widget: the GPU map of a busy cluster, a job to submit, the clock.

    Before it opens, the learner predicts which node `PREDICT_ARGS` gets (`landing`).
    ``want`` (IntSlider): GPUs per node of the next job -- the map marks the nodes that
    could host it; ``nodes`` (IntSlider): its node count; ``option``: ``--gres=gpu:N``
    or ``--gpus-per-node=N``. Submit runs sbatch on the cluster; "advance 30 min" lets
    jobs end.
    """

    def __init__(self, cluster: Cluster | None = None,
                 factory: Callable[[], Cluster] = busy_cluster,
                 lang: str | None = None) -> None:
        self.lang = lang = widget_lang(lang)
        self.factory = factory
        self.cluster = cluster or factory()
        self.busy = BusyIndicator(lang)
        self.want = widgets.IntSlider(4, min=1, max=8, description=t(lang, "GPUs per node"))
        self.nodes = widgets.IntSlider(1, min=1, max=4, description=t(lang, "nodes"))
        self.option = widgets.Dropdown(options=["--gres=gpu:", "--gpus-per-node="],
                                       value="--gres=gpu:", description=t(lang, "option"))
        for w in (self.want, self.nodes, self.option):
            w.style = {"description_width": "110px"}
            w.observe(self.redraw, names="value")
        self.command = widgets.HTML()
        self.submit_button = widgets.Button(description=t(lang, "Submit"),
                                            button_style="primary")
        self.advance_button = widgets.Button(description=t(lang, "advance 30 min"))
        self.submit_button.on_click(self.submit_clicked)
        self.advance_button.on_click(self.advance_clicked)
        self.figure_view = widgets.Output()
        self.log = widgets.HTML()
        self.submitted: list[int] = []
        self.figure: go.Figure | None = None
        self.redraw()
        body = widgets.VBox([
            widgets.HBox([widgets.VBox([self.want, self.nodes, self.option]),
                          widgets.VBox([self.command, widgets.HBox(
                              [self.submit_button, self.advance_button, self.busy.view])])]),
            self.figure_view, self.log,
        ])  # fmt: skip
        nodes = [n.node for n in node_gpus(self.cluster)]
        free = ", ".join(f"{n.node} {n.free}" for n in node_gpus(self.cluster))
        question = ChoiceQuestion(
            t(lang, "Free GPUs per node now: {free}. You submit `sbatch {args}`. Which node "
              "does the job get?").format(free=free, args=PREDICT_ARGS),
            (*nodes, PENDS), self.predicted_landing)
        self.predict = PredictStep(question, body, on_checked=self._show_prediction,
                                   busy=self.busy)
        self.view = widgets.VBox([self.predict.view, body])

    def predicted_landing(self) -> str:
        """Where `PREDICT_ARGS` lands (`landing`) on a fresh cluster from ``factory``:
        the lab's cluster as it is before the learner's first move (a given ``cluster``
        must be in the state ``factory`` builds)."""
        scratch = self.factory()
        try:
            return landing(scratch, PREDICT_ARGS)
        finally:
            scratch.close()

    def _show_prediction(self) -> None:
        self.nodes.value, self.want.value, self.option.value = 1, 3, "--gres=gpu:"

    def sbatch_args(self) -> str:
        """The options of the job the widgets describe."""
        return f"-N{self.nodes.value} {self.option.value}{self.want.value} -t 1:00:00"

    def redraw(self, _change: object = None) -> None:
        """Redraw the GPU map for the current slider values."""
        with self.busy.working("drawing the map…"):
            self.command.value = (f"<pre>sbatch {self.sbatch_args()} --wrap "
                                  f"'{LAB_COMMAND}'</pre>")
            self.figure = gpu_map(self.cluster, self.want.value, lang=self.lang)
            self.figure_view.outputs = (plotly_output(self.figure),)

    def _report(self, header: str) -> None:
        lines = [header, str(self.cluster.run("squeue")).rstrip()]
        lines += [why_pending(self.cluster, j, lang=self.lang) for j in self.submitted[-3:]]
        text = "\n".join(lines).replace("&", "&amp;").replace("<", "&lt;")
        self.log.value = f"<pre>{text}</pre>"

    def submit_clicked(self, _button: object = None) -> str:
        """Submit the job the widgets describe; let the scheduler run; report."""
        with self.busy.working("submitting…"):
            message, job_id = _submit(self.cluster, self.sbatch_args(), LAB_COMMAND)
            if job_id is not None:
                self.submitted.append(job_id)
            self.cluster.advance(1)
            self.redraw()
            self._report(f"$ sbatch {self.sbatch_args()} --wrap '{LAB_COMMAND}'\n{message}")
        return message

    def advance_clicked(self, _button: object = None) -> None:
        """Let 30 simulated minutes pass (jobs end, pending ones may start)."""
        with self.busy.working("30 simulated minutes pass…"):
            self.cluster.advance(1800)
            self.redraw()
            self._report(t(self.lang, "(30 minutes later)"))
