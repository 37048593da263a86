"""Grading one submission: per-item outcomes and the attempt's raw score.

Pure functions of (bank, submission): no database, no clock.  Each item is
graded on the variant the learner saw (:mod:`quizzes.variants`); answers given
after the quiz's time limit score zero; missing answers score zero.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from quizzes.bank import Bank
from quizzes.hashing import variant_key
from quizzes.items.base import Outcome
from quizzes.submission import Submission
from quizzes.variants import choose, item_seed


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


def item_variant(bank: Bank, learner_id: str, item_id: str) -> tuple[dict[str, Any], str, int]:
    """(parameters, variant key, item seed) of one item for one learner."""
    item = bank.item(item_id)
    seed = item_seed(learner_id, bank.quiz_id, item_id)
    params = choose(item.common.params, seed)
    return params, variant_key(params), seed


def grade_response(bank: Bank, learner_id: str, item_id: str, response: Any) -> Outcome:
    """Grade one response (the widget's immediate feedback uses this too)."""
    params, variant, _ = item_variant(bank, learner_id, item_id)
    return bank.item(item_id).grade(response, params, bank.salt, variant)


def grade_submission(bank: Bank, sub: Submission) -> AttemptGrade:
    """Grade every item of the bank against the submission's answers."""
    limit = bank.policy.time_limit_minutes
    grades = []
    for item in bank.items:
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
                outcome = grade_response(bank, sub.learner_id, cid, response)
        pts = item.common.points
        grades.append(ItemGrade(cid, response, outcome.score, outcome.score * pts, pts,
                                outcome.feedback, item.common.explanation))
    return AttemptGrade(bank.quiz_id, sub.learner_id, tuple(grades))
