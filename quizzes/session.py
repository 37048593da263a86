"""A learner's quiz session: the logic behind the notebook widget, free of any UI.

:class:`QuizSession` presents the learner's variant of each item, grades an
answer immediately (correct/incorrect, feedback, explanation), locks the item
once answered (one answer per item per attempt, so feedback cannot be farmed),
keeps the score so far, enforces the quiz's attempts limit and time limit, and
finally produces the submission JSON (:mod:`quizzes.submission`) to save or to
send to ``quizzes serve``.  Certificates are never made here: only the grader
holding the issuer key signs them.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from quizzes.bank import Bank, Item
from quizzes.errors import QuizError
from quizzes.grade import attempt_items, explanation, grade_response, item_variant
from quizzes.items.base import Presented
from quizzes.items.units import DEFAULT_LANG, language
from quizzes.present import present
from quizzes.submission import FORMAT


class NoAnswer(QuizError):
    """Check was pressed with nothing entered, or with an answer that cannot be read (an
    ambiguous number): a hint, not a graded answer; the item stays open."""


def _empty(response: Any) -> bool:
    if response is None:
        return True
    if isinstance(response, str):
        return not response.strip()
    if isinstance(response, list | tuple):
        return not response
    return False


@dataclass(frozen=True, slots=True)
class Feedback:
    item_id: str
    correct: bool
    score: float
    feedback: str
    explanation: str
    details: tuple[str, ...] = ()


class QuizSession:
    """One attempt of one learner at one quiz."""

    def __init__(self, bank: Bank, learner_id: str, learner_name: str = "", *,
                 attempts_used: int = 0, clock: Callable[[], float] = time.time,
                 lang: str = DEFAULT_LANG) -> None:
        if not learner_id.strip():
            raise QuizError("a learner id is needed to take a quiz")
        limit = bank.policy.attempts
        if limit is not None and attempts_used >= limit:
            raise QuizError(f"no attempts left at {bank.quiz_id}: {attempts_used} of {limit} "
                            "used")
        self.bank = bank
        self.learner_id = learner_id.strip()
        self.learner_name = learner_name.strip() or self.learner_id
        self.attempt = attempts_used + 1
        try:
            self.lang = language(lang)
        except ValueError as exc:
            raise QuizError(str(exc)) from None
        self.shown: tuple[Item, ...] = attempt_items(bank, self.learner_id, self.attempt)
        self.clock = clock
        self.started_at = int(clock())
        self.answers: dict[str, tuple[Any, int]] = {}
        self.results: dict[str, Feedback] = {}
        self.finished_at: int | None = None

    # --- what the learner sees --------------------------------------------------------
    def items(self) -> list[Presented]:
        out = []
        for item in self.shown:
            params, _, seed = item_variant(self.bank, self.learner_id, item.common.id,
                                           self.attempt)
            out.append(present(item, params, seed))
        return out

    @property
    def max_points(self) -> float:
        """Points of the items this attempt shows."""
        return sum(it.common.points for it in self.shown)

    @property
    def attempts_left(self) -> int | None:
        limit = self.bank.policy.attempts
        return None if limit is None else limit - self.attempt

    def remaining_seconds(self) -> int | None:
        limit = self.bank.policy.time_limit_minutes
        if limit is None:
            return None
        return max(0, self.started_at + limit * 60 - int(self.clock()))

    # --- answering ----------------------------------------------------------------------
    def answer(self, item_id: str, response: Any) -> Feedback:
        """Grade one answer at once and lock the item.

        An empty response (nothing chosen, blank text) raises :class:`NoAnswer`
        and is not recorded, so pressing Check too early does not lock the item
        at zero.  An answer the grader cannot handle raises QuizError with the
        reason, also without recording it.
        """
        if self.finished_at is not None:
            raise QuizError("this attempt is finished; start a new attempt to answer again")
        if item_id in self.results:
            raise QuizError(f"'{item_id}' is already answered in this attempt")
        if item_id not in {it.common.id for it in self.shown}:
            raise QuizError(f"'{item_id}' is not an item of this attempt")
        if _empty(response):
            raise NoAnswer(f"'{item_id}' has no answer yet: choose an option or type an answer, "
                           "then press Check")
        remaining = self.remaining_seconds()
        now = int(self.clock())
        why = explanation(self.bank, self.learner_id, item_id, self.attempt)
        if remaining is not None and remaining <= 0:
            result = Feedback(item_id, False, 0.0, "The time limit has passed.", why)
        else:
            try:
                outcome = grade_response(self.bank, self.learner_id, item_id, response,
                                         self.attempt, self.lang)
            except Exception as exc:  # a grader bug must not lose the learner's session
                raise QuizError(f"'{item_id}': this answer could not be graded "
                                f"({type(exc).__name__}: {exc}); change it and check again") \
                    from None
            if not outcome.readable:
                raise NoAnswer(outcome.feedback)
            result = Feedback(item_id, outcome.correct, outcome.score, outcome.feedback, why,
                              outcome.details)
        self.answers[item_id] = (response, now)
        self.results[item_id] = result
        return result

    def score(self) -> tuple[float, float]:
        """(points so far, points of the answered items)."""
        got = sum(self.bank.item(i).common.points * r.score for i, r in self.results.items())
        asked = sum(self.bank.item(i).common.points for i in self.results)
        return got, asked

    @property
    def complete(self) -> bool:
        return len(self.results) == len(self.shown)

    # --- handing in -----------------------------------------------------------------------
    def submission(self) -> dict[str, Any]:
        """The submission document (also closes the attempt)."""
        if self.finished_at is None:
            self.finished_at = int(self.clock())
        return {"format": FORMAT, "learner_id": self.learner_id,
                "learner_name": self.learner_name, "quiz_id": self.bank.quiz_id,
                "bank_version": self.bank.version, "attempt": self.attempt, "lang": self.lang,
                "started_at": self.started_at,
                "submitted_at": self.finished_at,
                "answers": {k: {"response": r, "answered_at": at}
                            for k, (r, at) in sorted(self.answers.items())}}

    def save(self, folder: str | Path = "submissions") -> Path:
        """Write the submission as ``<folder>/<learner>-<quiz>-<attempt>.json``."""
        doc = self.submission()
        path = Path(folder) / f"{_safe(self.learner_id)}-{self.bank.quiz_id}-{self.attempt}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
        return path

    def send(self, url: str, timeout: float = 10.0) -> dict[str, Any]:
        """POST the submission to ``quizzes serve`` (``url`` = its base URL)."""
        body = json.dumps(self.submission()).encode("utf-8")
        req = urllib.request.Request(url.rstrip("/") + "/submit", data=body,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                reply: dict[str, Any] = json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            detail = json.loads(exc.read() or b"{}").get("error", exc.reason)
            raise QuizError(f"the grading service refused the submission: {detail}") from None
        except (urllib.error.URLError, OSError) as exc:
            raise QuizError(f"cannot reach the grading service at {url}: {exc}") from None
        return reply


def attempts_used(folder: str | Path, learner_id: str, quiz_id: str) -> int:
    """How many submissions of this learner and quiz are saved in ``folder``."""
    return len(list(Path(folder).glob(f"{_safe(learner_id)}-{quiz_id}-*.json")))


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)
