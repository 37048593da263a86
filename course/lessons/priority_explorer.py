"""Lesson 5's experiments: why the queue is in the order it is (priority/multifactor).

Everything is minislurm's own priority plugin, never a rule of this module:

* `queue_cluster` plays two days of the embedded default cluster (history that
  charges fair-share usage, then a queue that forms behind a long training run), so
  ``sprio`` and ``sshare`` show a realistic, mixed queue;
* `snapshot_queue` reads the pending jobs, their normalised factors (the plugin's
  ``factors``, as ``sprio -n`` prints them) and the usage history (what slurmdbd
  would hold: each ended job's billable TRES-seconds and end time);
* `rank_queue` re-ranks that queue for other ``PriorityWeight*`` values, another
  ``PriorityDecayHalfLife`` (the history is replayed into a fresh
  `minislurm.priority.usage.UsageTracker`), scaled usage of one account and Fair Tree
  or classic fair share; `priority_figure` draws the weighted factors per job;
* `PriorityExplorer` is the widget (sliders -> `PriorityExplorer.refresh`);
* `classic_example` is the worked example of Slurm's classic fair-share page
  (https://slurm.schedmd.com/classic_fair_share.html) computed by minislurm's
  ``classic_shares``, with `ClassicExplorer` to change the users' usage.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import ipywidgets as widgets
import plotly.graph_objects as go
import plotly.io as pio

from course import i18n
from course.i18n import N_, widget_lang
from minislurm.common.accounts import QOS, Association, AssociationSet, AssocKey
from minislurm.ctld.accounting import tres_seconds
from minislurm.job import JobRecord
from minislurm.priority.factors import MultifactorParams, PriorityFactors, PriorityWeights
from minislurm.priority.fairshare import ShareRow, classic_shares, compute_shares, job_fairshare
from minislurm.priority.multifactor import MultifactorPriority
from minislurm.priority.usage import UsageTracker, billable_seconds, rollup
from minislurm.sim import Cluster
from minislurm.sim.plots import PALETTE, UIREVISION

from .figure_words import localise
from .predict import BusyIndicator, ChoiceQuestion, PredictStep

__all__ = [
    "CHANGES",
    "CLASSIC_USAGE",
    "FACTORS",
    "HISTORY",
    "PREDICT_USAGE",
    "PREDICT_WATCH",
    "QUEUE",
    "ClassicExplorer",
    "ClassicRow",
    "Knobs",
    "PriorityExplorer",
    "QueueSnapshot",
    "RankedJob",
    "UsageCharge",
    "classic_associations",
    "classic_example",
    "classic_figure",
    "classic_table",
    "factor_change",
    "first_in_line",
    "format_ranking",
    "plotly_output",
    "priority_figure",
    "queue_cluster",
    "rank_queue",
    "snapshot_queue",
]

HOUR = 3600

#: The history: (hours after the start, user, sbatch options, simulated run time in hours).
#: These jobs end before the queue forms, so their usage is in sshare's RawUsage.
HISTORY: tuple[tuple[float, str, str, float], ...] = (
    (0, "alice", "-N4 --gres=gpu:8 --exclusive -t 1-00:00:00 -J pretrain", 12),
    (0, "carol", "-N1 --gres=gpu:8 -t 12:00:00 -J vit-base", 6),
    (0, "dave", "-N1 --gres=gpu:4 -t 4:00:00 -J eval-mmlu", 2),
)

#: The queue: (hours after the start, user, sbatch options). Bob's two-day run
#: (submitted first) holds every GPU node, so the others wait and age.
QUEUE: tuple[tuple[float, str, str], ...] = (
    (20, "bob", "-N4 --gres=gpu:8 --exclusive -t 2-00:00:00 -J llm-70b"),
    (21, "alice", "-N2 --gres=gpu:8 -t 12:00:00 -J sft"),
    (24, "carol", "-N2 --gres=gpu:8 -t 1-00:00:00 -J vit-large"),
    (28, "erin", "-N1 --gres=gpu:2 -t 2:00:00 -J eval-sweep"),
    (30, "student", "-N1 --gres=gpu:1 -t 1:00:00 -J homework"),
    (32, "alice", "-N1 --gres=gpu:8 --qos=high -t 4:00:00 -J hotfix"),
    (34, "dave", "-p debug -N1 --gres=gpu:1 -t 20:00 -J eval-quick"),
    (36, "bob", "-N1 --gres=gpu:4 -t 6:00:00 -J ablation"),
)

#: When the snapshot is taken (hours after the start: Wednesday 00:00).
SNAPSHOT_HOURS = 40

#: The weighted factors drawn, in stacking order: (PriorityFactors attribute, label).
FACTORS = (("age", N_("age")), ("fairshare", N_("fair share")), ("job_size", N_("job size")),
           ("part", N_("partition")), ("qos", N_("QOS")))


def queue_cluster() -> Cluster:
    """The embedded default cluster after `HISTORY` and `QUEUE`, at `SNAPSHOT_HOURS`."""
    c = Cluster()
    start = c.now
    events: list[tuple[float, str, str, float | None]] = [
        *[(t, u, o, r) for t, u, o, r in HISTORY], *[(t, u, o, None) for t, u, o in QUEUE]]
    for t, user, opts, run in sorted(events, key=lambda e: e[0]):
        c.advance(start + int(t * HOUR) - c.now)
        seconds = int((run if run is not None else 48) * HOUR)
        out = c.run(f"sbatch {opts} --wrap 'srun sleep {seconds}'", user=user)
        if out.returncode:
            raise RuntimeError(str(out))
    c.advance(start + SNAPSHOT_HOURS * HOUR - c.now)
    return c


@dataclass(frozen=True, slots=True)
class UsageCharge:
    """Usage an ended job charged: billable TRES-seconds x QOS UsageFactor, at its end."""

    key: AssocKey
    amount: float
    time: int


@dataclass(frozen=True, slots=True)
class QueueSnapshot:
    """What re-ranking needs: the pending jobs, their factors, the usage history."""

    now: int
    params: MultifactorParams
    associations: AssociationSet
    jobs: tuple[JobRecord, ...]
    factors: tuple[PriorityFactors, ...]  # the plugin's, one per job (its first partition)
    history: tuple[UsageCharge, ...]


def snapshot_queue(cluster: Cluster) -> QueueSnapshot:
    """The pending queue of ``cluster`` (priority/multifactor) and its usage history."""
    plugin = cluster.controller.priority_plugin
    if not isinstance(plugin, MultifactorPriority):
        raise TypeError("the cluster does not run priority/multifactor")
    now = cluster.now
    jobs = tuple(sorted(cluster.controller.pending(), key=lambda j: j.job_id))
    # normalised factors do not depend on the weights, except that a factor whose
    # weight is 0 is not computed: compute them once with every weight set
    probe = replace(plugin.params, weights=PriorityWeights(1, 1, 1, 1, 1, 1))
    full = MultifactorPriority(probe, plugin.cluster, plugin.associations)
    full.usage = plugin.usage
    factors = tuple(replace(full.factors(j, now), weights=plugin.params.weights) for j in jobs)
    history = []
    for rec in cluster.controller.accounting():
        if rec.end_time is None or rec.start_time is None or rec.end_time > now:
            continue
        amount = billable_seconds(tres_seconds(rec, rec.end_time))
        q = plugin.associations.qos_named(rec.qos) if rec.qos else None
        if q is not None and q.usage_factor >= 0:
            amount *= q.usage_factor
        if amount and plugin.associations.get((rec.account, rec.user)) is not None:
            history.append(UsageCharge((rec.account, rec.user), amount, rec.end_time))
    history.sort(key=lambda h: h.time)
    return QueueSnapshot(now, plugin.params, plugin.associations, jobs, factors, tuple(history))


@dataclass(frozen=True, slots=True)
class Knobs:
    """The explorer's settings: slurm.conf's ``PriorityWeight*``, the half-life, usage."""

    age: int = 1000
    fairshare: int = 10000
    job_size: int = 1000
    partition: int = 1000
    qos: int = 1000
    half_life_days: float = 7.0  # PriorityDecayHalfLife
    usage_scale: Mapping[str, float] = field(default_factory=dict)  # account -> x usage
    fair_tree: bool = True  # False: PriorityFlags=NO_FAIR_TREE (classic)

    @classmethod
    def from_params(cls, params: MultifactorParams) -> Knobs:
        """The knobs of a cluster's configuration."""
        w = params.weights
        return cls(w.age, w.fairshare, w.job_size, w.partition, w.qos,
                   params.decay_half_life / 86400, {}, params.fair_tree)

    def weights(self, base: PriorityWeights) -> PriorityWeights:
        """``base`` with these five weights."""
        return replace(base, age=self.age, fairshare=self.fairshare, job_size=self.job_size,
                       partition=self.partition, qos=self.qos)


@dataclass(frozen=True, slots=True)
class RankedJob:
    """One job of the re-ranked queue."""

    rank: int  # 1 = considered first
    job: JobRecord
    factors: PriorityFactors

    @property
    def label(self) -> str:
        """``12 alice sft``: job id, user, name."""
        return f"{self.job.job_id} {self.job.user} {self.job.name}"


def share_rows(snap: QueueSnapshot, knobs: Knobs) -> dict[AssocKey, ShareRow]:
    """The fair-share data (sshare) for the knobs' half-life, usage scale and algorithm."""
    tracker = UsageTracker(snap.associations, half_life=knobs.half_life_days * 86400,
                           start=snap.history[0].time if snap.history else snap.now)
    for h in snap.history:
        tracker.record(h.key, h.amount * knobs.usage_scale.get(h.key[0], 1.0), h.time)
    raw = tracker.raw_usage(snap.now)
    return compute_shares(snap.associations, raw, fair_tree=knobs.fair_tree,
                          damp_factor=snap.params.damp_factor)


def rank_queue(snap: QueueSnapshot, knobs: Knobs | None = None) -> list[RankedJob]:
    """The pending jobs in the order the scheduler considers them under ``knobs``.

    Highest priority first; ties by job id (submission order), as slurmctld sorts.
    """
    knobs = knobs or Knobs.from_params(snap.params)
    rows = share_rows(snap, knobs)
    weights = knobs.weights(snap.params.weights)
    out = []
    for job, f in zip(snap.jobs, snap.factors, strict=True):
        fs = job_fairshare(rows, snap.associations, job.user, job.account)
        out.append((job, replace(f, weights=weights, fairshare=fs)))
    out.sort(key=lambda p: (-p[1].priority, p[0].job_id))
    return [RankedJob(i + 1, j, f) for i, (j, f) in enumerate(out)]


def _weighted(f: PriorityFactors, attr: str) -> float:
    return float(getattr(f, f"weighted_{attr}"))


def priority_figure(ranked: Sequence[RankedJob], baseline: Sequence[RankedJob] = (), *,
                    lang: str = "en") -> go.Figure:
    """Stacked bars of the weighted factors per job, in queue order (first on the left).

    ``baseline``: the ranking at the cluster's own settings; a job that moved shows
    its old rank under its label.  ``lang``: the language of the title, axis, legend and
    labels (the course gettext domain); job ids, users, names and ``sprio`` stay.
    """
    before = {r.job.job_id: r.rank for r in baseline}
    labels = []
    for r in ranked:
        old = before.get(r.job.job_id)
        move = "" if old in (None, r.rank) else i18n.t(lang, " (was #{old})").format(old=old)
        labels.append(f"#{r.rank} job {r.job.job_id}<br>{r.job.user} {r.job.name}{move}")
    fig = go.Figure()
    for i, (attr, msgid) in enumerate(FACTORS):
        name = i18n.t(lang, msgid)
        fig.add_trace(go.Bar(
            x=labels, y=[round(_weighted(r.factors, attr), 3) for r in ranked], name=name,
            marker_color=PALETTE[i],
            hovertemplate=f"{name}: %{{y:.0f}}<extra></extra>"))
    fig.add_trace(go.Scatter(
        x=labels, y=[r.factors.priority for r in ranked], mode="text",
        text=[str(r.factors.priority) for r in ranked], textposition="top center",
        showlegend=False, hoverinfo="skip"))
    top = max((r.factors.priority for r in ranked), default=1)
    fig.update_layout(
        barmode="stack", template="plotly_white", uirevision=UIREVISION, height=440,
        title=i18n.t(lang, "Pending jobs in scheduling order: weighted factors (sprio)"),
        yaxis={"title": i18n.t(lang, "priority"), "range": [0, top * 1.15 + 1]},
        legend={"orientation": "h", "y": -0.32}, margin={"b": 130, "t": 60})
    return localise(fig, lang)


def format_ranking(ranked: Sequence[RankedJob], *, lang: str = "en") -> str:
    """The ranking as a fixed-width table (rank, job, user, account, priority, factors).

    ``lang``: the language of the headers (a column widens to its header); ``PRIORITY``
    (sprio's column) and the factors' names in capitals as sprio prints them in English.
    """
    heads = [i18n.t(lang, "rank"), "job", i18n.t(lang, "user"), i18n.t(lang, "account"),
             i18n.t(lang, "name")]
    w = [max(len(h), n) for h, n in zip(heads, (4, 4, 8, 9, 11), strict=True)]
    factor_heads = [i18n.t(lang, n).upper() for _, n in FACTORS]
    fw = [max(len(h), 10) for h in factor_heads]
    head = (f"{heads[0]:>{w[0]}} {heads[1]:>{w[1]}} {heads[2]:<{w[2]}} {heads[3]:<{w[3]}} "
            f"{heads[4]:<{w[4]}} {'PRIORITY':>8} "
            + " ".join(f"{h:>{n}}" for h, n in zip(factor_heads, fw, strict=True)))
    lines = [head]
    for r in ranked:
        f = r.factors
        cells = " ".join(f"{_weighted(f, a):>{n}.0f}" for (a, _), n in zip(FACTORS, fw,
                                                                           strict=True))
        lines.append(f"{r.rank:>{w[0]}} {r.job.job_id:>{w[1]}} {r.job.user:<{w[2]}} "
                     f"{r.job.account:<{w[3]}} {r.job.name:<{w[4]}} {f.priority:>8} {cells}")
    return "\n".join(lines) + "\n"


def plotly_output(fig: go.Figure) -> dict[str, Any]:
    """``fig`` as a ``display_data`` output (plotly's notebook mimetype only)."""
    bundle = pio.renderers["plotly_mimetype"].to_mimebundle(fig.to_dict())
    return {"output_type": "display_data", "data": bundle, "metadata": {}}


def first_in_line(snap: QueueSnapshot, knobs: Knobs) -> str:
    """The label of the job the scheduler considers first under ``knobs`` (`rank_queue`)."""
    ranked = rank_queue(snap, knobs)
    if not ranked:
        raise ValueError("the queue is empty")
    return ranked[0].label


class PriorityExplorer:
    """Sliders for the weights, the half-life and one account's usage; the queue follows.

    Every control calls `refresh` (plain method: tests call it without a browser),
    which re-ranks the queue (`rank_queue`, a few milliseconds) and redraws. Before it
    opens, the learner predicts which job goes first with ``PriorityWeightFairshare=0``
    (`first_in_line`); the check sets that weight.
    """

    def __init__(self, snap: QueueSnapshot, account: str = "llm",
                 lang: str | None = None) -> None:
        self.lang = lang = widget_lang(lang)
        self.snap, self.account = snap, account
        k = Knobs.from_params(snap.params)
        self.baseline = rank_queue(snap, k)

        def weight(value: int, name: str) -> widgets.IntSlider:
            return widgets.IntSlider(value, min=0, max=20000, step=500, description=name,
                                     continuous_update=False,
                                     style={"description_width": "160px"},
                                     layout=widgets.Layout(width="460px"))

        self.controls: dict[str, widgets.ValueWidget] = {
            "age": weight(k.age, "PriorityWeightAge"),
            "fairshare": weight(k.fairshare, "PriorityWeightFairshare"),
            "job_size": weight(k.job_size, "PriorityWeightJobSize"),
            "partition": weight(k.partition, "PriorityWeightPartition"),
            "qos": weight(k.qos, "PriorityWeightQOS"),
            "half_life_days": widgets.FloatSlider(
                k.half_life_days, min=0.25, max=28, step=0.25, continuous_update=False,
                description=i18n.t(lang, "PriorityDecayHalfLife (days)"),
                style={"description_width": "160px"}, layout=widgets.Layout(width="460px")),
            "usage": widgets.FloatSlider(
                1.0, min=0.0, max=4.0, step=0.25, continuous_update=False,
                description=i18n.t(lang, "usage of {account} (x)").format(account=account),
                style={"description_width": "160px"},
                layout=widgets.Layout(width="460px")),
            "fair_tree": widgets.Checkbox(k.fair_tree,
                                          description=i18n.t(lang, "Fair Tree (off: classic)")),
        }
        for w in self.controls.values():
            w.observe(lambda _change: self.refresh(), names="value")
        self.reset_button = widgets.Button(description=i18n.t(lang, "Reset to slurm.conf"))
        self.reset_button.on_click(lambda _b: self.reset())
        self.figure_view = widgets.Output()
        self.table = widgets.HTML()
        self.busy = BusyIndicator(lang)
        body = widgets.VBox([
            widgets.HBox([widgets.VBox(list(self.controls.values())[:4]),
                          widgets.VBox([*list(self.controls.values())[4:], self.reset_button,
                                        self.busy.view])]),
            self.figure_view, self.table])
        labels = tuple(r.label for r in sorted(self.baseline, key=lambda r: r.job.job_id))
        question = ChoiceQuestion(
            N_("Set PriorityWeightFairshare to 0 and keep every other setting of slurm.conf. "
               "Which job does the scheduler consider first?"), labels,
            lambda: first_in_line(self.snap, replace(Knobs.from_params(self.snap.params),
                                                     fairshare=0)))
        self.predict = PredictStep(question, body, on_checked=self._show_prediction,
                                   busy=self.busy)
        self.box = widgets.VBox([self.predict.view, body])
        self.ranked: list[RankedJob] = []
        self.figure = go.Figure()
        self.refresh()

    @property
    def knobs(self) -> Knobs:
        """The settings the controls show."""
        c = self.controls
        return Knobs(int(c["age"].value), int(c["fairshare"].value), int(c["job_size"].value),
                     int(c["partition"].value), int(c["qos"].value),
                     float(c["half_life_days"].value), {self.account: float(c["usage"].value)},
                     bool(c["fair_tree"].value))

    @property
    def order(self) -> list[int]:
        """Job ids in the current scheduling order."""
        return [r.job.job_id for r in self.ranked]

    def refresh(self) -> None:
        """Re-rank for the controls' values and redraw the figure and the table."""
        with self.busy.working("re-ranking the queue…"):
            self.ranked = rank_queue(self.snap, self.knobs)
            self.figure = priority_figure(self.ranked, self.baseline, lang=self.lang)
            self.figure_view.outputs = (plotly_output(self.figure),)
            self.table.value = f"<pre>{format_ranking(self.ranked, lang=self.lang)}</pre>"

    def _show_prediction(self) -> None:
        self.reset()
        self.controls["fairshare"].value = 0

    def reset(self) -> None:
        """Put every control back to the cluster's slurm.conf values."""
        k = Knobs.from_params(self.snap.params)
        for name in ("age", "fairshare", "job_size", "partition", "qos", "half_life_days",
                     "fair_tree"):
            self.controls[name].value = getattr(k, name)
        self.controls["usage"].value = 1.0

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.box)


# ------------------------------------------------------------ classic fair share

#: Usage in the documented example, as a fraction of the machine.
CLASSIC_USAGE: dict[str, float] = {"user1": 0.2, "user2": 0.25, "user3": 0.0, "user4": 0.25,
                                   "user5": 0.0}
_CLASSIC_ACCOUNT = {"user1": "B", "user2": "C", "user3": "C", "user4": "E", "user5": "F"}


def classic_associations() -> AssociationSet:
    """The example's tree: A (40) and D (60) under root; B 30, C 10 under A; E 25, F 35 under D."""
    accounts = [("A", "root", 40), ("D", "root", 60), ("B", "A", 30), ("C", "A", 10),
                ("E", "D", 25), ("F", "D", 35)]
    return AssociationSet(
        cluster="example",
        associations=(Association("root", parent=None),
                      *[Association(a, parent=p, shares=s) for a, p, s in accounts],
                      *[Association(a, user=u, parent=a) for u, a in _CLASSIC_ACCOUNT.items()]),
        qos=(QOS("normal"),))


@dataclass(frozen=True, slots=True)
class ClassicRow:
    """One association of the example: S (NormShares), U, U_E and F."""

    name: str
    depth: int
    is_user: bool
    norm_shares: float
    usage: float
    effective_usage: float
    fairshare: float | None


def classic_example(usage: Mapping[str, float] | None = None) -> list[ClassicRow]:
    """The classic fair-share worked example, computed by ``classic_shares``.

    ``usage``: user -> usage as a fraction of the machine (default: the documented one).
    As in the documentation, usage is normalised by the whole machine (R_H = 1).
    """
    aset = classic_associations()
    merged = {**CLASSIC_USAGE, **(usage or {})}
    own: dict[AssocKey, float] = {(_CLASSIC_ACCOUNT[u], u): v for u, v in merged.items()}
    rows = classic_shares(aset, rollup(aset, own), total_usage=1.0)
    out = []
    for key, r in rows.items():
        if key == ("root", None):
            continue
        out.append(ClassicRow(key[1] or key[0], r.depth, key[1] is not None, r.norm_shares,
                              r.raw_usage, r.effective_usage,
                              r.fairshare if key[1] is not None else None))
    return out


def classic_table(rows: Sequence[ClassicRow], *, lang: str = "en") -> str:
    """The example as the documentation tabulates it (indented tree); ``lang``: the
    language of the first column's header (S, U, U_E and F are the documentation's)."""
    head = i18n.t(lang, "association")
    width = max(14, len(head) + 1)
    lines = [f"{head:<{width}}{'S':>9}{'U':>9}{'U_E':>9}{'F = 2^(-U_E/S)':>17}"]
    for r in rows:
        name = "  " * (r.depth - 1) + r.name
        f = "" if r.fairshare is None else f"{r.fairshare:.6f}"
        lines.append(f"{name:<{width}}{r.norm_shares:>9.4f}{r.usage:>9.4f}"
                     f"{r.effective_usage:>9.4f}{f:>17}")
    return "\n".join(lines) + "\n"


def classic_figure(rows: Sequence[ClassicRow], *, lang: str = "en") -> go.Figure:
    """Each user's fair-share factor next to its shares and effective usage (``lang``:
    the language of the title and the legend; the formula's symbols stay)."""
    users = [r for r in rows if r.is_user]
    names = [f"{r.name} ({_CLASSIC_ACCOUNT[r.name]})" for r in users]
    fig = go.Figure()
    fig.add_trace(go.Bar(x=names, y=[round(r.norm_shares, 6) for r in users],
                         name=i18n.t(lang, "S: normalised shares"), marker_color=PALETTE[2]))
    fig.add_trace(go.Bar(x=names, y=[round(r.effective_usage, 6) for r in users],
                         name=i18n.t(lang, "U_E: effective usage"), marker_color=PALETTE[1]))
    fig.add_trace(go.Scatter(x=names, y=[round(r.fairshare or 0.0, 6) for r in users],
                             name=i18n.t(lang, "F: fair-share factor"), mode="markers+lines",
                             marker={"size": 12, "color": PALETTE[0]}))
    fig.update_layout(barmode="group", template="plotly_white", uirevision=UIREVISION,
                      height=380, title=i18n.t(lang, "Classic fair share: F = 2^(-U_E / S)"),
                      yaxis={"range": [0, 1.05]}, legend={"orientation": "h", "y": -0.2})
    return localise(fig, lang)


#: The classic explorer's prediction: this user's usage changes, that user's factor moves.
PREDICT_USAGE = ("user3", 0.2)
PREDICT_WATCH = "user1"
CHANGES = (N_("falls"), N_("stays the same"), N_("rises"))


def factor_change(user: str, usage: Mapping[str, float]) -> str:
    """How ``user``'s fair-share factor in the classic example moves when the users'
    usage becomes ``usage`` (`classic_example`): one of `CHANGES`."""
    def factor(rows: list[ClassicRow]) -> float:
        row = next((r for r in rows if r.name == user and r.is_user), None)
        if row is None or row.fairshare is None:
            raise ValueError(f"no user {user!r} in the example")
        return row.fairshare

    before, after = factor(classic_example()), factor(classic_example(usage))
    if abs(after - before) <= 1e-9:
        return CHANGES[1]
    return CHANGES[0] if after < before else CHANGES[2]


class ClassicExplorer:
    """One usage slider per user of the example; the table and the figure follow.

    Before it opens, the learner predicts how `PREDICT_WATCH`'s factor moves when
    `PREDICT_USAGE` changes (`factor_change`); the check moves that slider.
    """

    def __init__(self, lang: str | None = None) -> None:
        self.lang = lang = widget_lang(lang)
        self.sliders = {
            u: widgets.FloatSlider(v, min=0.0, max=0.6, step=0.05, continuous_update=False,
                                   description=i18n.t(lang, "{user} usage").format(user=u))
            for u, v in CLASSIC_USAGE.items()}
        for s in self.sliders.values():
            s.observe(lambda _c: self.refresh(), names="value")
        self.figure_view = widgets.Output()
        self.table = widgets.HTML()
        self.busy = BusyIndicator(lang)
        body = widgets.VBox([widgets.HBox([widgets.VBox([*self.sliders.values(),
                                                         self.busy.view]),
                                           self.table]), self.figure_view])
        user, usage = PREDICT_USAGE
        question = ChoiceQuestion(
            i18n.t(lang, "Give {user} (account {account}) a usage of {usage}. {watch} is in "
              "account {watch_account} and its usage does not change. What happens to "
              "{watch}'s fair-share factor?").format(
                user=user, account=_CLASSIC_ACCOUNT[user], usage=usage, watch=PREDICT_WATCH,
                watch_account=_CLASSIC_ACCOUNT[PREDICT_WATCH]),
            CHANGES, lambda: factor_change(PREDICT_WATCH, {user: usage}))
        self.predict = PredictStep(question, body, on_checked=self._show_prediction,
                                   busy=self.busy)
        self.box = widgets.VBox([self.predict.view, body])
        self.rows: list[ClassicRow] = []
        self.figure = go.Figure()
        self.refresh()

    def refresh(self) -> None:
        """Recompute the example for the sliders' usage and redraw."""
        with self.busy.working("recomputing the shares…"):
            self.rows = classic_example({u: float(s.value) for u, s in self.sliders.items()})
            self.figure = classic_figure(self.rows, lang=self.lang)
            self.figure_view.outputs = (plotly_output(self.figure),)
            self.table.value = f"<pre>{classic_table(self.rows, lang=self.lang)}</pre>"

    def _show_prediction(self) -> None:
        user, usage = PREDICT_USAGE
        self.sliders[user].value = usage

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.box)
