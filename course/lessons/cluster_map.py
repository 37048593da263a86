"""Lesson 1's experiment: a node map of the default cluster as a queue of jobs arrives.

`QUEUE` is a fixed mix of jobs from several users (training on whole GPU nodes,
fine-tunes and evaluations on a few GPUs, CPU-only preprocessing). `fill(k)` submits
the first ``k`` of them to a fresh embedded cluster with ``sbatch`` and lets a minute
pass, so that slurmctld has placed what fits; `node_map` draws every node as a row of
cells (the 8 GPUs of a GPU node, the CPUs of a CPU node in blocks) coloured by the job
that holds them, and `NodeMapExplorer` puts a slider for ``k`` in front of it, after
the learner predicts from which ``k`` on a job has to wait (`first_wait`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import plotly.graph_objects as go

from course.i18n import N_, t, widget_lang
from minislurm.job import JobRecord
from minislurm.sim.cluster import Cluster, CommandResult
from minislurm.states import JobState

from .figure_words import localise
from .predict import BusyIndicator, NumberQuestion, PredictStep

#: Cells per node row; a CPU node's CPUs are shown in this many blocks.
CELLS = 8


@dataclass(frozen=True, slots=True)
class QueuedJob:
    """One job of the queue: who submits it and its sbatch options."""

    name: str
    user: str
    options: str
    seconds: int

    def command(self) -> str:
        """The sbatch command line."""
        return f"sbatch -J {self.name} {self.options} --wrap 'srun sleep {self.seconds}'"


QUEUE: tuple[QueuedJob, ...] = (
    QueuedJob("pretrain", "alice", "-N2 --gres=gpu:8 --exclusive -t 8:00:00", 7 * 3600),
    QueuedJob("finetune", "bob", "-N1 --gres=gpu:4 -c 32 -t 2:00:00", 5400),
    QueuedJob("tokenize", "dave", "-p cpu -N1 -c 32 -t 1:00:00", 2400),
    QueuedJob("eval", "erin", "-N1 --gres=gpu:2 -c 8 -t 30:00", 1200),
    QueuedJob("sweep", "carol", "-N1 --gres=gpu:1 -c 4 -t 1:00:00", 3000),
    QueuedJob("dedup", "dave", "-p cpu -N2 -c 16 -t 2:00:00", 3600),
    QueuedJob("vision", "carol", "-N1 --gres=gpu:8 -t 4:00:00", 3 * 3600),
    QueuedJob("first-job", "student", "-N1 --gres=gpu:1 -c 2 -t 10:00", 300),
    QueuedJob("bigrun", "alice", "-N3 --gres=gpu:8 --exclusive -t 12:00:00", 10 * 3600),
    QueuedJob("stats", "student", "-p cpu -N1 -c 8 -t 20:00", 600),
)


def queue_listing(jobs: tuple[QueuedJob, ...] = QUEUE) -> str:
    """The queue as the notebook prints it: each job's user and sbatch command line."""
    return "\n".join(f"{job.user:>8}: {job.command()}" for job in jobs)


def fill(k: int, *, after: int = 60) -> Cluster:
    """A fresh default cluster with the first ``k`` jobs of `QUEUE` submitted."""
    if not 0 <= k <= len(QUEUE):
        raise ValueError(f"k must be between 0 and {len(QUEUE)}, not {k}")
    cluster = Cluster()
    for job in QUEUE[:k]:
        result = cluster.run(job.command(), user=job.user)
        if result.returncode != 0:
            raise RuntimeError(f"sbatch refused {job.name}: {result.stderr.strip()}")
    cluster.advance(after)
    return cluster


@dataclass(frozen=True, slots=True)
class Cell:
    """One cell of the map: which job holds it (0: idle)."""

    node: str
    index: int
    job_id: int
    label: str


def cells(cluster: Cluster) -> list[Cell]:
    """Every node's cells with the job holding each (GPUs by index, CPUs in blocks)."""
    jobs = sorted((j for j in cluster.jobs() if j.state is JobState.RUNNING
                   and j.allocation is not None), key=lambda j: j.job_id)
    out: list[Cell] = []
    for node in sorted(cluster.config.nodes, key=lambda n: n.name):
        gpus = sum(g.count for g in node.gres if g.name == "gpu")
        holders = [0] * CELLS
        if gpus:
            for j in jobs:
                for na in j.allocation.nodes if j.allocation else ():
                    if na.node == node.name:
                        for i in na.gpu_indices:
                            holders[i] = j.job_id
            labels = [f"GPU {i}" for i in range(CELLS)]
        else:
            per = node.cpus // CELLS
            used = 0
            for j in jobs:
                for na in j.allocation.nodes if j.allocation else ():
                    if na.node == node.name:
                        for b in range(used // per, min(CELLS, (used + na.cpus) // per)):
                            holders[b] = j.job_id
                        used += na.cpus
            labels = [f"CPUs {i * per}-{(i + 1) * per - 1}" for i in range(CELLS)]
        out += [Cell(node.name, i, holders[i], labels[i]) for i in range(CELLS)]
    return out


def queue_counts(cluster: Cluster) -> Counter[str]:
    """Jobs by state and, for pending ones, by reason: ``{'RUNNING': 5, 'PD (Resources)': 2}``."""
    c: Counter[str] = Counter()
    for j in cluster.jobs():
        if j.state is JobState.PENDING:
            c[f"PD ({j.reason.value})"] += 1
        else:
            c[j.state.value] += 1
    return c


@dataclass(frozen=True, slots=True)
class FirstWait:
    """The smallest ``k`` at which a job of the first ``k`` has to wait for Resources."""

    k: int
    job: str  # the job's name
    reason: str


def first_wait() -> FirstWait | None:
    """Submit the first 1, 2, ... jobs of `QUEUE` to fresh clusters (`fill`) until one
    of them is PENDING for ``Resources``; ``None`` if all of them fit."""
    for k in range(1, len(QUEUE) + 1):
        cluster = fill(k)
        try:
            waiting = sorted((j for j in cluster.jobs() if j.state is JobState.PENDING
                              and j.reason.value == "Resources"), key=lambda j: j.job_id)
        finally:
            cluster.close()
        if waiting:
            return FirstWait(k, waiting[0].name, waiting[0].reason.value)
    return None


_PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
            "#17becf", "#bcbd22", "#7f7f7f")


def _hover(job: JobRecord | None, cell: Cell, lang: str = "en") -> str:
    if job is None:
        return t(lang, "{node} {cell}: idle").format(node=cell.node, cell=cell.label)
    return f"{cell.node} {cell.label}: job {job.job_id} {job.name} ({job.user})"


def node_map(cluster: Cluster, *, lang: str = "en") -> go.Figure:
    """The node map: one row per node, one cell per GPU (or CPU block), coloured by job.

    ``lang``: the language of the title, axis, legend and hover words; node names, job
    ids, names, users, states and reasons stay as Slurm writes them.
    """
    cs = cells(cluster)
    by_id = {j.job_id: j for j in cluster.jobs()}
    nodes = sorted({c.node for c in cs})
    ids = sorted({c.job_id for c in cs if c.job_id})
    colour = {jid: _PALETTE[(jid - 1) % len(_PALETTE)] for jid in ids}
    fig = go.Figure()
    fig.add_trace(go.Scatter(
        x=[c.index for c in cs if not c.job_id], y=[c.node for c in cs if not c.job_id],
        mode="markers", name=t(lang, "idle"),
        hovertext=[_hover(None, c, lang) for c in cs if not c.job_id],
        hoverinfo="text", marker={"symbol": "square", "size": 34, "color": "#eeeeee",
                                  "line": {"width": 1, "color": "#bbbbbb"}}))
    for jid in ids:
        mine = [c for c in cs if c.job_id == jid]
        job = by_id[jid]
        fig.add_trace(go.Scatter(
            x=[c.index for c in mine], y=[c.node for c in mine], mode="markers+text",
            name=f"{jid} {job.name} ({job.user})", text=[str(jid)] * len(mine),
            hovertext=[_hover(job, c) for c in mine], hoverinfo="text",
            textfont={"color": "white"},
            marker={"symbol": "square", "size": 34, "color": colour[jid]}))
    counts = queue_counts(cluster)
    total = sum(counts.values())
    summary = (", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
               or t(lang, "no jobs"))
    fig.update_layout(
        title={"text": t(lang, "{total} job(s) submitted: {summary}").format(
            total=total, summary=summary), "font": {"size": 14}},
        template="plotly_white", height=420, margin={"l": 70, "r": 20, "t": 60, "b": 40},
        legend={"title": {"text": t(lang, "running jobs")}})
    fig.update_xaxes(tickvals=list(range(CELLS)), range=[-0.6, CELLS - 0.4],
                     title_text=t(lang, "GPU index (gpu nodes) / block of 4 CPUs "
                                        "(cpu nodes)"))
    fig.update_yaxes(categoryorder="array", categoryarray=list(reversed(nodes)))
    return localise(fig, lang)


#: Lesson 1's prediction: asked before the node map is shown.
FIRST_WAIT_PROMPT = N_("The slider submits the first k jobs of the queue to a fresh cluster. "
                       "From which k on does a job have to wait (PENDING, reason Resources)?")


def _first_wait_k() -> float:
    found = first_wait()
    return float(found.k if found is not None else len(QUEUE) + 1)


class NodeMapExplorer:
    """A slider for how many jobs of `QUEUE` are submitted, the node map and squeue.

    In front of it, `predict` asks from which ``k`` on a job waits (`first_wait`); the
    check moves the slider to that ``k``.
    """

    def __init__(self, k: int = 4, lang: str | None = None) -> None:
        import ipywidgets as w

        self.lang = widget_lang(lang)
        self.slider = w.IntSlider(value=k, min=0, max=len(QUEUE),
                                  description=t(self.lang, "jobs"), continuous_update=False)
        self.out = w.Output()
        self.busy = BusyIndicator(self.lang)
        self.slider.observe(lambda _c: self.redraw(), names="value")
        body = w.VBox([w.HBox([self.slider, self.busy.view]), self.out])
        question = NumberQuestion(FIRST_WAIT_PROMPT, _first_wait_k, digits=0,
                                  low=N_("few"), high=N_("many"))
        self.predict = PredictStep(question, body, on_checked=self._show_first_wait,
                                   busy=self.busy)
        self.box = w.VBox([self.predict.view, body])
        self.cluster = fill(k)
        self.figure = node_map(self.cluster, lang=self.lang)
        self.redraw()

    def squeue(self) -> CommandResult:
        """What squeue prints for the current state."""
        return self.cluster.run("squeue")

    def redraw(self) -> None:
        """Submit the first ``slider.value`` jobs to a fresh cluster and redraw.

        The figure and squeue's text are set as the Output widget's outputs from the
        kernel side, so they show in the widget (not as stray cell outputs) under any
        client, including nbval's.
        """
        from course.lessons.script_builder import plotly_output

        k = int(self.slider.value)
        with self.busy.working("submitting {k} job(s) to a fresh cluster…", k=k):
            self.cluster.close()
            self.cluster = fill(k)
            self.figure = node_map(self.cluster, lang=self.lang)
            self.out.outputs = (plotly_output(self.figure),
                                {"output_type": "stream", "name": "stdout",
                                 "text": f"{self.squeue()}\n"})

    def _show_first_wait(self) -> None:
        found = first_wait()
        if found is not None:
            self.slider.value = found.k

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.box)


__all__ = ["CELLS", "FIRST_WAIT_PROMPT", "QUEUE", "Cell", "FirstWait", "NodeMapExplorer",
           "QueuedJob", "cells", "fill", "first_wait", "node_map", "queue_counts",
           "queue_listing"]
