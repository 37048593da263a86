"""Grading one submission: per-item outcomes and the attempt's raw score.

Pure functions of (bank, submission): no database, no clock.  Each item is
graded on the variant the learner saw in that attempt (:mod:`quizzes.variants`:
learner, quiz and attempt number fix the parameters, the option order and, with
``policy.draw``, which items the attempt showed); answers given after the quiz's
time limit score zero; missing answers score zero; answers to items the attempt
did not show are not graded.  Numbers are read in the learner's language
(``lang``, :func:`quizzes.items.units.delocalise`) before the item grades them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from quizzes.bank import Bank, Item
from quizzes.hashing import variant_key
from quizzes.items.base import Outcome
from quizzes.items.units import DEFAULT_LANG, Unreadable, delocalise
from quizzes.submission import Submission
from quizzes.template import fill
from quizzes.variants import attempt_seed, choose, combinations, draw, item_seed, variant_index

#: Item types whose free-text answer may be a number read in the learner's language
#: (a scheduler item's start time; its job names and reasons do not start with a digit).
NUMERIC_TYPES = ("numeric", "scheduler")


@dataclass(frozen=True, slots=True)
class ItemGrade:
    item_id: str
    response: Any
    score: float  # fraction of the item's points
    points: float
    max_points: float
    feedback: str
    explanation: str

    @property
    def correct(self) -> bool:
        return self.score >= 1.0 - 1e-9


@dataclass(frozen=True, slots=True)
class AttemptGrade:
    quiz_id: str
    learner_id: str
    items: tuple[ItemGrade, ...]

    @property
    def points(self) -> float:
        return sum(i.points for i in self.items)

    @property
    def max_points(self) -> float:
        return sum(i.max_points for i in self.items)

    @property
    def fraction(self) -> float:
        return self.points / self.max_points if self.max_points else 0.0


def item_variant(bank: Bank, learner_id: str, item_id: str, attempt: int = 1
                 ) -> tuple[dict[str, Any], str, int]:
    """(parameters, variant key, item seed) of one item for one learner and attempt."""
    item = bank.item(item_id)
    seed = item_seed(learner_id, bank.quiz_id, item_id, attempt)
    size = len(combinations(item.common.params))
    params = choose(item.common.params,
                    variant_index(learner_id, bank.quiz_id, item_id, attempt, size))
    return params, variant_key(params), seed


def attempt_items(bank: Bank, learner_id: str, attempt: int = 1) -> tuple[Item, ...]:
    """The items one attempt shows, in its order: shuffled per learner and attempt, and
    ``policy.draw`` of them when the bank holds more (every objective kept when it can)."""
    ids = draw([(it.common.id, it.common.objectives) for it in bank.items],
               bank.policy.draw, attempt_seed(learner_id, bank.quiz_id, attempt))
    return tuple(bank.item(i) for i in ids)


def grade_response(bank: Bank, learner_id: str, item_id: str, response: Any,
                   attempt: int = 1, lang: str = DEFAULT_LANG) -> Outcome:
    """Grade one response (the widget's immediate feedback uses this too).

    The feedback is filled from the variant's parameters.  A number that cannot be
    read in ``lang`` (``0,125`` in English) scores zero with the reason and
    ``readable=False``, so the widget can leave the item open.
    """
    params, variant, _ = item_variant(bank, learner_id, item_id, attempt)
    item = bank.item(item_id)
    if item.common.type in NUMERIC_TYPES and isinstance(response, str):
        try:
            response = delocalise(response, lang)
        except Unreadable as exc:
            return Outcome(0.0, f"Cannot read this number: {exc.reason}.", readable=False)
    outcome = item.grade(response, params, bank.salt, variant)
    return replace(outcome, feedback=fill(outcome.feedback, params),
                   details=tuple(fill(d, params) for d in outcome.details))


def explanation(bank: Bank, learner_id: str, item_id: str, attempt: int = 1) -> str:
    """The item's explanation for this learner's variant (parameters filled)."""
    params, _, _ = item_variant(bank, learner_id, item_id, attempt)
    return fill(bank.item(item_id).common.explanation, params)


def grade_submission(bank: Bank, sub: Submission, attempt: int | None = None) -> AttemptGrade:
    """Grade the items the submission's attempt showed against its answers.

    ``attempt`` defaults to the submission's own attempt number (1 for submissions
    written before attempts were recorded), so regrading reproduces the variants,
    the draw and the option order the learner saw.
    """
    number = attempt if attempt is not None else sub.attempt
    lang = str(getattr(sub, "lang", DEFAULT_LANG) or DEFAULT_LANG)
    limit = bank.policy.time_limit_minutes
    grades = []
    shown = {it.common.id for it in attempt_items(bank, sub.learner_id, number)}
    for item in (it for it in bank.items if it.common.id in shown):  # in bank order
        cid = item.common.id
        answer = sub.answer(cid)
        if answer is None:
            outcome = Outcome(0.0, "Not answered.")
            response: Any = None
        else:
            response = answer.response
            at = answer.answered_at if answer.answered_at is not None else sub.submitted_at
            if limit is not None and at - sub.started_at > limit * 60:
                outcome = Outcome(0.0, f"Answered after the {limit}-minute time limit.")
            else:
                outcome = grade_response(bank, sub.learner_id, cid, response, number, lang)
        pts = item.common.points
        grades.append(ItemGrade(cid, response, outcome.score, outcome.score * pts, pts,
                                outcome.feedback, explanation(bank, sub.learner_id, cid, number)))
    return AttemptGrade(bank.quiz_id, sub.learner_id, tuple(grades))
