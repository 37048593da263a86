"""Item analysis on first attempts: facility, discrimination, distractors, Cronbach's alpha.

Classical test theory, computed from each learner's *first* attempt at a quiz
(with ``policy.draw`` an item's statistics use the learners it was shown to, a
learner's total is scaled to the whole bank, and alpha uses the learners who
were shown every item):

* facility index of an item: mean score on it (0 = nobody right, 1 = everybody);
* discrimination index D: facility in the top 27 % of learners by total score
  minus facility in the bottom 27 % (Kelley's groups; at least one learner each);
  ``item_rest_r`` is also given: the Pearson correlation of the item score with
  the total of the *other* items (Moodle's "discrimination index");
* distractor counts: how many learners chose each option of a choice item;
* Cronbach's alpha: ``k/(k-1) * (1 - sum(var(item)) / var(total))`` over the k
  items (population variances), None when undefined (fewer than 2 learners or
  items, or no variance in the totals).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from quizzes.bank import Bank
from quizzes.gradebook import Gradebook


@dataclass(frozen=True, slots=True)
class ItemStats:
    item_id: str
    type: str
    n: int
    facility: float
    discrimination: float | None
    item_rest_r: float | None
    distractors: tuple[tuple[str, int], ...]  # (option id, times chosen) for choice items


@dataclass(frozen=True, slots=True)
class QuizStats:
    quiz_id: str
    learners: int
    alpha: float | None
    items: tuple[ItemStats, ...]

    def table(self) -> str:
        """A plain-text table (what ``quizzes analyse`` prints)."""
        lines = [f"quiz {self.quiz_id}: {self.learners} learner(s) on first attempts, "
                 f"Cronbach's alpha = {_fmt(self.alpha)}",
                 f"{'item':<32} {'type':<9} {'n':>4} {'facility':>8} {'D':>6} {'r_ir':>6}  "
                 "distractors"]
        for it in self.items:
            dis = " ".join(f"{o}:{c}" for o, c in it.distractors)
            lines.append(f"{it.item_id:<32} {it.type:<9} {it.n:>4} {it.facility:>8.2f} "
                         f"{_fmt(it.discrimination):>6} {_fmt(it.item_rest_r):>6}  {dis}")
        return "\n".join(lines)


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def cronbach_alpha(matrix: np.ndarray) -> float | None:
    """Alpha of a learners × items score matrix."""
    learners, k = matrix.shape
    if learners < 2 or k < 2:
        return None
    total_var = float(matrix.sum(axis=1).var())
    if total_var == 0:
        return None
    return k / (k - 1) * (1 - float(matrix.var(axis=0).sum()) / total_var)


def discrimination(scores: np.ndarray, totals: np.ndarray, fraction: float = 0.27) -> float | None:
    """Upper-group minus lower-group facility (groups of ``fraction`` of the learners)."""
    n = len(scores)
    if n < 2:
        return None
    size = max(1, round(n * fraction))
    order = np.argsort(totals, kind="stable")
    return float(scores[order[-size:]].mean() - scores[order[:size]].mean())


def item_rest_correlation(scores: np.ndarray, totals: np.ndarray) -> float | None:
    rest = totals - scores
    if len(scores) < 2 or scores.std() == 0 or rest.std() == 0:
        return None
    return float(np.corrcoef(scores, rest)[0, 1])


def analyse(book: Gradebook, bank: Bank) -> QuizStats:
    """Statistics of one quiz from the gradebook's first attempts."""
    rows = book.first_attempt_responses(bank.quiz_id)
    learners = sorted({r[0] for r in rows})
    item_ids = [it.common.id for it in bank.items]
    index = {lid: i for i, lid in enumerate(learners)}
    col = {iid: j for j, iid in enumerate(item_ids)}
    matrix = np.full((len(learners), len(item_ids)), np.nan)  # NaN: not shown (policy.draw)
    chosen: dict[str, dict[str, int]] = {iid: {} for iid in item_ids}
    for learner_id, item_id, response, score in rows:
        if item_id not in col:
            continue
        matrix[index[learner_id], col[item_id]] = score
        for option in _options_chosen(json.loads(response)):
            chosen[item_id][option] = chosen[item_id].get(option, 0) + 1
    seen = ~np.isnan(matrix)
    scored = np.where(seen, matrix, 0.0)
    # a learner's total scaled to the whole bank (the plain sum when every item was shown)
    totals = scored.sum(axis=1) * len(item_ids) / np.maximum(seen.sum(axis=1), 1)
    stats = []
    for item in bank.items:
        j = col[item.common.id]
        mask = seen[:, j]
        scores = matrix[mask, j]
        opts: tuple[tuple[str, int], ...] = ()
        options = getattr(item, "options", ())
        if options:
            opts = tuple((oid, chosen[item.common.id].get(oid, 0)) for oid, _ in options)
        stats.append(ItemStats(
            item.common.id, item.common.type, int(mask.sum()),
            float(scores.mean()) if mask.any() else 0.0,
            discrimination(scores, totals[mask]), item_rest_correlation(scores, totals[mask]),
            opts))
    complete = scored[seen.all(axis=1)]
    return QuizStats(bank.quiz_id, len(learners), cronbach_alpha(complete), tuple(stats))


def _options_chosen(response: Any) -> list[str]:
    if isinstance(response, str):
        return [response]
    if isinstance(response, list):
        return [r for r in response if isinstance(r, str)]
    return []


def chart(stats: QuizStats) -> Any:
    """A plotly figure: facility and discrimination per item."""
    import plotly.graph_objects as go

    ids = [it.item_id for it in stats.items]
    fig = go.Figure()
    fig.add_bar(name="facility", x=ids, y=[it.facility for it in stats.items])
    fig.add_bar(name="discrimination D", x=ids,
                y=[it.discrimination if it.discrimination is not None else 0
                   for it in stats.items])
    fig.update_layout(barmode="group", yaxis_range=[-1, 1],
                      title=f"Item analysis of {stats.quiz_id} (first attempts, "
                            f"alpha = {_fmt(stats.alpha)})")
    return fig


# --- answer-length bias ------------------------------------------------------------------

#: A bank's share of single-choice keys that are strictly the longest option may exceed
#: what chance gives (1/k for k options) by at most this much.
LENGTH_MARGIN = 0.25
#: Over all banks, a count of longest keys this unlikely under chance fails the check.
LENGTH_ALPHA = 0.01


@dataclass(frozen=True, slots=True)
class LengthBias:
    """How often the key of a single-choice item is strictly its longest option.

    ``chance`` is the expected share if the key's length were unrelated to its being
    the key (the mean of 1/k over items with k options); ``p_value`` is the exact
    probability (Poisson-binomial) of at least ``longest`` such items by chance.
    """

    scope: str
    items: int
    longest: int
    chance: float
    p_value: float
    offenders: tuple[str, ...]

    @property
    def share(self) -> float:
        return self.longest / self.items if self.items else 0.0

    @property
    def excess(self) -> float:
        return self.share - self.chance


def at_least(probabilities: list[float], observed: int) -> float:
    """P(X >= observed) for X a sum of independent Bernoulli(p_i) (Poisson-binomial)."""
    dist = [1.0]
    for p in probabilities:
        nxt = [0.0] * (len(dist) + 1)
        for k, mass in enumerate(dist):
            nxt[k] += mass * (1 - p)
            nxt[k + 1] += mass * p
        dist = nxt
    return float(sum(dist[observed:]))


def length_bias(scope: str, items: list[dict[str, Any]]) -> LengthBias:
    """The length-bias statistic of source items (``options`` with ``correct: true``)."""
    chances: list[float] = []
    offenders: list[str] = []
    for item in items:
        if item.get("type") != "single":
            continue
        options = [o for o in item.get("options") or [] if isinstance(o, dict)]
        keys = [o for o in options if o.get("correct")]
        if len(keys) != 1 or len(options) < 2:
            continue
        chances.append(1 / len(options))
        key_len = len(str(keys[0].get("text", "")))
        if all(key_len > len(str(o.get("text", ""))) for o in options if o is not keys[0]):
            offenders.append(str(item.get("id")))
    n = len(chances)
    return LengthBias(scope, n, len(offenders), sum(chances) / n if n else 0.0,
                      at_least(chances, len(offenders)), tuple(offenders))
