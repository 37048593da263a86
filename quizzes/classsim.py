"""A simulated class: learners with partial knowledge take every quiz for real.

Each learner has an ability θ ~ N(0, 1) and, per lesson objective, a mastery
drawn from it: the learner has mastered objective o when
``u < sigmoid(1.6 θ + ε_o)`` with ε_o ~ N(0, 0.8) (abilities overlap: a strong
learner may have missed one objective, a weak one may know another).  On an
item the learner

* has mastered every objective it tags: answers right, except for a slip
  (probability 0.08), written the way people write it (a text item's accepted
  spelling, a number with its unit or in another unit, ``#SBATCH`` lines or an
  ``sbatch`` command line);
* has not: guesses with what partial knowledge gives, i.e. the key with
  probability rising with θ (eliminating options), else a distractor chosen by
  its plausibility (each distractor of each item gets a fixed attractiveness,
  Dirichlet(0.8), the same for the whole class, so some misconceptions are
  popular), a number off by a common error (a factor 2, 8, 10 or 1024), an
  ``sbatch`` request with one option wrong, another job or pending reason.

Answers go through the real path: the widget's :class:`~quizzes.session.QuizSession`
(the learner's variant, option order and immediate grading), the submission
file, ``quizzes grade``'s :func:`~quizzes.batch.grade_folder` into a real SQLite
gradebook, then :func:`quizzes.analysis.analyse`.  ``quizzes analyse
--simulate-class 200`` runs it for every bank.
"""

from __future__ import annotations

import math
import random
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from quizzes.analysis import QuizStats, analyse
from quizzes.author import load_sources, model_answer
from quizzes.bank import Bank
from quizzes.batch import grade_folder
from quizzes.grade import item_variant
from quizzes.gradebook import Gradebook
from quizzes.items.base import Presented
from quizzes.session import NoAnswer, QuizSession

EPOCH = 1767600000
SLIP = 0.08
ERROR_FACTORS = (2.0, 0.5, 8.0, 0.125, 10.0, 0.1, 1024.0, 1 / 1024)
REASONS = ("Resources", "Priority", "Dependency", "QOSMaxGRESPerUser", "BeginTime")


def _sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x))


@dataclass(frozen=True, slots=True)
class SimLearner:
    """One simulated learner: id, ability and the objectives mastered."""

    id: str
    ability: float
    mastered: frozenset[str]


def make_class(size: int, objectives: list[str], seed: int = 0) -> list[SimLearner]:
    """``size`` learners with abilities and per-objective mastery (deterministic)."""
    rng = random.Random(seed)
    out = []
    for k in range(size):
        theta = rng.gauss(0, 1)
        mastered = frozenset(o for o in objectives
                             if rng.random() < _sigmoid(1.6 * theta + rng.gauss(0, 0.8)))
        out.append(SimLearner(f"sim{k:04d}", theta, mastered))
    return out


class Responder:
    """Draws one learner's answer to one item from the partial-knowledge model."""

    def __init__(self, bank: Bank, source: Mapping[str, Any], seed: int) -> None:
        self.bank = bank
        self.source = {str(i["id"]): i for i in source["items"]}
        self.seed = seed
        self._appeal: dict[str, dict[str, float]] = {}

    def appeal(self, item_id: str, options: list[str]) -> dict[str, float]:
        """Each distractor's attractiveness: fixed per item for the whole class."""
        if item_id not in self._appeal:
            rng = random.Random(f"{self.seed}/{self.bank.quiz_id}/{item_id}")
            weights = [rng.gammavariate(0.8, 1.0) for _ in options]
            total = sum(weights) or 1.0
            self._appeal[item_id] = {o: w / total for o, w in zip(options, weights, strict=True)}
        return self._appeal[item_id]

    def answer(self, who: SimLearner, shown: Presented, rng: random.Random) -> Any:
        item = self.bank.item(shown.item_id)
        src = self.source[shown.item_id]
        params = item_variant(self.bank, who.id, shown.item_id)[0]
        knows = set(item.common.objectives) <= who.mastered and rng.random() > SLIP
        kind = item.common.type
        if kind == "scheduler":
            return self._scheduler(who, shown, knows, rng)
        right = model_answer(src, params)
        if knows:
            return self._spelled(kind, src, right, params, rng)
        guess_key = rng.random() < 0.15 + 0.25 * _sigmoid(who.ability)
        if kind == "single":
            keys = {right}
            if guess_key:
                return right
            wrong = [oid for oid, _ in shown.options if oid not in keys]
            appeal = self.appeal(shown.item_id, wrong)
            return rng.choices(wrong, [appeal[o] for o in wrong])[0]
        if kind == "multiple":
            correct = set(right)
            ids = [oid for oid, _ in shown.options]
            appeal = self.appeal(shown.item_id, ids)
            picked = [o for o in ids
                      if rng.random() < (0.5 + 0.3 * _sigmoid(who.ability) if o in correct
                                         else min(0.9, 2.5 * appeal[o]))]
            return picked or [rng.choice(ids)]
        if kind == "numeric":
            if guess_key:
                return f"{right:g}"
            return f"{right * rng.choice(ERROR_FACTORS):g}"
        if kind == "text":
            return rng.choice(["I don't know", "slurmd", "slurmctld", "Priority",
                               "sched/builtin", "--exclusive"])
        if kind == "sbatch":
            return self._sbatch_wrong(str(right), rng)
        return "?"

    def _spelled(self, kind: str, src: Mapping[str, Any], right: Any,
                 params: Mapping[str, Any], rng: random.Random) -> Any:
        """A right answer written one of the ways a learner writes it."""
        if kind == "numeric":
            unit = str(src.get("unit", ""))
            return f"{right:g} {unit}".strip() if unit and rng.random() < 0.5 else f"{right:g}"
        if kind == "text":
            from quizzes.template import fill
            return fill(str(rng.choice(src["accept"])), params)
        if kind == "sbatch" and rng.random() < 0.5:
            lines = [ln.split(None, 1)[1] for ln in str(right).splitlines()
                     if ln.startswith("#SBATCH ")]
            if lines:
                return "sbatch " + " ".join(lines) + " train.sh"
        return right

    @staticmethod
    def _sbatch_wrong(right: str, rng: random.Random) -> str:
        lines = str(right).splitlines()
        directives = [i for i, ln in enumerate(lines) if ln.startswith("#SBATCH")]
        if len(directives) > 1:
            lines.pop(rng.choice(directives))     # forgot one option
            return "\n".join(lines)
        return "#SBATCH --nodes=3\n#SBATCH --ntasks-per-node=3"

    def _scheduler(self, who: SimLearner, shown: Presented, knows: bool,
                   rng: random.Random) -> Any:
        from quizzes.items.scheduler import SchedulerItem, default_runner

        item = self.bank.item(shown.item_id)
        assert isinstance(item, SchedulerItem)
        params = item_variant(self.bank, who.id, shown.item_id)[0]
        result = default_runner().run(item.scenario(params))
        at = item.at * 60
        names = sorted(n for n, _ in result.start_times)
        if item.ask == "next_start":
            right = (result.next_starts(at) or ("none",))[0]
            return right if knows else rng.choice([n for n in names if n != right] or names)
        if item.ask == "start_time":
            start = result.start_of(item.job)
            value = 0.0 if start is None else start / 60
            return f"{value:g}" if knows else f"{value + rng.choice((-60, -30, 30, 60)):g}"
        reason = result.reason_of(item.job, at) or "None"
        return reason if knows else rng.choice([r for r in REASONS if r != reason])


@dataclass(frozen=True, slots=True)
class ClassRun:
    """What a simulated class produced: the gradebook and each quiz's statistics."""

    db: str
    learners: int
    stats: tuple[QuizStats, ...]

    def negative(self) -> list[tuple[str, str, float]]:
        """(quiz, item, D) of every item whose discrimination is negative."""
        return [(s.quiz_id, it.item_id, it.discrimination) for s in self.stats for it in s.items
                if it.discrimination is not None and it.discrimination < 0]


def simulate_class(banks: Mapping[str, Bank], size: int = 200, *, seed: int = 0,
                   db: str | Path | None = None, sources: str | Path | None = None,
                   progress: bool = False) -> ClassRun:
    """Run ``size`` simulated learners through every bank's first attempt, grade them
    into the gradebook ``db`` (a temporary file when None) and analyse every quiz."""
    src_all = load_sources(sources)
    objectives = sorted({o for b in banks.values() for o, _ in b.objectives})
    learners = make_class(size, objectives, seed)
    bar: Any = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=size * len(banks), unit="attempt", desc="simulated class")
    with tempfile.TemporaryDirectory(prefix="quiz-class-") as tmp:
        folder = Path(tmp) / "submissions"
        path = str(db) if db is not None else str(Path(tmp) / "gradebook.sqlite")
        for quiz_id, bank in sorted(banks.items()):
            responder = Responder(bank, src_all[quiz_id], seed)
            for k, who in enumerate(learners):
                rng = random.Random(f"{seed}/{quiz_id}/{who.id}")
                clock = _Clock(EPOCH + k * 3600)
                session = QuizSession(bank, who.id, f"Simulated {who.id}", clock=clock)
                for shown in session.items():
                    clock.t += 40
                    try:
                        session.answer(shown.item_id, responder.answer(who, shown, rng))
                    except NoAnswer:
                        continue  # an unreadable answer: the learner moves on
                session.save(folder)
                if bar is not None:
                    bar.update(1)
        if bar is not None:
            bar.close()
        with Gradebook(path) as book:
            report = grade_folder(folder, banks, book, None, per_file_seconds=None)
            if report.rejected:
                name, why = report.rejected[0]
                raise RuntimeError(f"the grader refused a simulated submission {name}: {why}")
            stats = tuple(analyse(book, banks[q]) for q in sorted(banks))
        if db is None:
            path = "(temporary)"
    return ClassRun(path, size, stats)


class _Clock:
    def __init__(self, t: float) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def negative_report(run: ClassRun) -> str:
    """Markdown listing the items with negative discrimination, for the authors."""
    lines = [f"# Items with negative discrimination ({run.learners} simulated learners)", ""]
    bad = run.negative()
    if not bad:
        lines.append("None: every item's D is zero or positive.")
    for quiz, item, d in bad:
        lines.append(f"- {quiz} / {item}: D = {d:.2f}")
    return "\n".join(lines) + "\n"

