"""Exam mode: the quiz service hands out items and grades answers; the learner holds no key.

In a class the learner's server has no bank at all.  The service (under the hub,
:mod:`quizzes.hubservice`) holds the banks and keeps each attempt in the
gradebook's SQLite file:

* :meth:`ExamDesk.start` opens an attempt (or resumes the open one) and returns
  the items as the learner sees them: prompts and options of *this learner's and
  this attempt's* variant, never a hash or an explanation;
* :meth:`ExamDesk.answer` grades one answer at once, locks the item and returns
  the feedback and the explanation;
* :meth:`ExamDesk.submit` closes the attempt and records it in the gradebook in
  the *same* transaction (so a killed service loses no accepted attempt and never
  leaves half of one), issuing the certificate marked ``"assessment": "exam"``.

The attempt policy is enforced here: ``attempts`` (a new attempt past the limit is
refused), ``time_limit_minutes`` (answers after the deadline are refused; an open
attempt past its deadline is closed with the answers it has).  Attempt 1 uses the
The items, their order, variants and option shuffles are the self-study widget's and
the grader's (:func:`quizzes.grade.attempt_items`, :func:`quizzes.grade.item_variant`):
attempt k draws the next variant, so a retry gets fresh numbers, and ``quizzes grade``
regrades an exam attempt exactly as it was shown.

Every refusal is an :class:`ExamError` carrying the HTTP status and the message;
nothing is written when one is raised.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import sqlite3
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from quizzes.bank import Bank
from quizzes.certify import EXAM, issue, make_record
from quizzes.errors import QuizError
from quizzes.grade import (
    AttemptGrade,
    ItemGrade,
    attempt_items,
    explanation,
    grade_response,
    item_variant,
)
from quizzes.gradebook import Gradebook, Recorded
from quizzes.items.base import Presented
from quizzes.present import present
from quizzes.submission import MAX_TEXT, Answer, Submission

SCHEMA = """
CREATE TABLE IF NOT EXISTS exam_attempts (
  attempt_id   TEXT PRIMARY KEY,
  learner_id   TEXT NOT NULL,
  learner_name TEXT NOT NULL,
  quiz_id      TEXT NOT NULL,
  attempt_no   INTEGER NOT NULL,
  bank_version TEXT NOT NULL,
  items        TEXT NOT NULL,
  started_at   INTEGER NOT NULL,
  deadline     INTEGER,
  submitted_at INTEGER,
  UNIQUE (learner_id, quiz_id, attempt_no)
);
CREATE TABLE IF NOT EXISTS exam_answers (
  attempt_id  TEXT NOT NULL REFERENCES exam_attempts(attempt_id),
  item_id     TEXT NOT NULL,
  response    TEXT NOT NULL,
  answered_at INTEGER NOT NULL,
  score       REAL NOT NULL,
  feedback    TEXT NOT NULL,
  PRIMARY KEY (attempt_id, item_id)
);
"""



class ExamError(QuizError):
    """A refused exam request: ``status`` is the HTTP status, the message says why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.reason = message


@dataclass(frozen=True, slots=True)
class Feedback:
    item_id: str
    correct: bool
    score: float
    feedback: str
    explanation: str


def present_items(bank: Bank, learner_id: str, attempt_no: int) -> list[Presented]:
    """The items of one attempt as the learner sees them (no key, no explanation): the
    same draw, order, variants and option shuffles as the self-study widget and the
    grader (`quizzes.grade.attempt_items`, `item_variant`, `quizzes.present.present`)."""
    out = []
    for item in attempt_items(bank, learner_id, attempt_no):
        params, _, seed = item_variant(bank, learner_id, item.common.id, attempt_no)
        out.append(present(item, params, seed))
    return out


def grade_one(bank: Bank, learner_id: str, attempt_no: int, item_id: str,
              response: Any) -> Feedback:
    """Grade one response on the attempt's variant (raises on an answer the item rejects)."""
    outcome = grade_response(bank, learner_id, item_id, response, attempt_no)
    if not outcome.readable:  # e.g. an ambiguous number: a hint, the item stays open
        raise ExamError(400, f"'{item_id}': this answer could not be read: "
                             f"{outcome.feedback} Change it and check again.")
    return Feedback(item_id, outcome.correct, outcome.score, outcome.feedback,
                    explanation(bank, learner_id, item_id, attempt_no))


@dataclass(frozen=True, slots=True)
class ExamIssuer:
    """Signs certificates whose record says they come from exam mode."""

    private: Ed25519PrivateKey
    issuer: str = "minislurm course"

    def __call__(self, sub: Submission, bank: Bank, score: float) -> dict[str, Any]:
        record = make_record(
            course=bank.course, quiz_id=bank.quiz_id, quiz_title=bank.title,
            learner_id=sub.learner_id, learner_name=sub.learner_name, score=score,
            pass_mark=bank.pass_mark, bank_version=bank.version, issuer=self.issuer,
            public=self.private.public_key())
        record["assessment"] = EXAM
        return issue(record, self.private).to_json()


def _valid_response(response: Any) -> bool:
    if isinstance(response, str):
        return len(response.strip()) > 0 and len(response) <= MAX_TEXT
    if isinstance(response, bool):
        return False
    if isinstance(response, int | float):
        return response == response and abs(response) < 1e300  # no NaN or infinity
    if isinstance(response, list):
        return 0 < len(response) <= 64 and all(isinstance(v, str) and len(v) <= 200
                                                for v in response)
    return False


class ExamDesk:
    """The service side of exam mode over one gradebook file."""

    def __init__(self, banks: Mapping[str, Bank], db: str, private: Ed25519PrivateKey, *,
                 issuer: str = "minislurm course",
                 clock: Callable[[], float] = time.time) -> None:
        self.banks = banks
        self.db = db
        self.issue = ExamIssuer(private, issuer)
        self.clock = clock
        # one connection for the desk's life: opening and closing one per request costs a
        # WAL checkpoint each (~15 ms here); the service calls the desk from one thread
        self.book = Gradebook(db)
        self.book.db.executescript("BEGIN IMMEDIATE;" + SCHEMA + "COMMIT;")

    def close(self) -> None:
        self.book.close()

    # --- helpers --------------------------------------------------------------------------
    def _bank(self, quiz_id: Any) -> Bank:
        if not isinstance(quiz_id, str) or quiz_id not in self.banks:
            raise ExamError(404, f"unknown quiz '{quiz_id}' (known: "
                                 f"{', '.join(sorted(self.banks))})")
        return self.banks[quiz_id]

    def _attempt(self, db: sqlite3.Connection, learner_id: str, attempt_id: Any
                 ) -> tuple[str, str, int, str, list[str], int, int | None, int | None, str]:
        if not isinstance(attempt_id, str) or not attempt_id:
            raise ExamError(400, "attempt id must be a non-empty string")
        row = db.execute("SELECT attempt_id, quiz_id, attempt_no, learner_id, items, started_at,"
                         " deadline, submitted_at, learner_name FROM exam_attempts"
                         " WHERE attempt_id = ?", (attempt_id,)).fetchone()
        if row is None:
            raise ExamError(404, f"no such attempt: {attempt_id}")
        if row[3] != learner_id:
            raise ExamError(403, f"attempt {attempt_id} belongs to another learner; you are "
                                 f"'{learner_id}'")
        return (row[0], row[1], int(row[2]), row[3], json.loads(row[4]), int(row[5]),
                row[6], row[7], row[8])

    def _view(self, bank: Bank, learner_id: str, attempt_id: str, attempt_no: int,
              started: int, deadline: int | None, answered: Mapping[str, Feedback]
              ) -> dict[str, Any]:
        limit = bank.policy.attempts
        return {
            "attempt_id": attempt_id, "quiz_id": bank.quiz_id, "title": bank.title,
            "attempt": attempt_no, "attempts_allowed": limit,
            "policy": bank.policy.describe(), "pass_mark": bank.pass_mark,
            "started_at": started, "deadline": deadline,
            "remaining_seconds": None if deadline is None
            else max(0, deadline - int(self.clock())),
            "items": [asdict(p) for p in present_items(bank, learner_id, attempt_no)],
            "answered": {k: asdict(v) for k, v in answered.items()}}

    def _answered(self, db: sqlite3.Connection, attempt_id: str, bank: Bank, learner_id: str,
                  attempt_no: int) -> dict[str, Feedback]:
        """The feedback of the items already answered (a resumed attempt), explanations
        filled for this learner's variant as when they were first given."""
        rows = db.execute("SELECT item_id, score, feedback FROM exam_answers WHERE"
                          " attempt_id = ? ORDER BY item_id", (attempt_id,)).fetchall()
        return {i: Feedback(i, s >= 1 - 1e-9, float(s), f,
                            explanation(bank, learner_id, i, attempt_no))
                for i, s, f in rows}

    # --- the three calls --------------------------------------------------------------------
    def start(self, learner_id: str, learner_name: str, quiz_id: Any) -> dict[str, Any]:
        """Open a new attempt, or resume the open one; closes one past its deadline."""
        bank = self._bank(quiz_id)
        now = int(self.clock())
        book = self.book
        with book.transaction() as db:  # an open attempt past its deadline is handed in
            row = self._open(db, learner_id, bank.quiz_id)
            if row is not None and row[3] is not None and now >= row[3]:
                self._close(book, bank, learner_id, row[0])
        with book.transaction() as db:
            return self._start(db, bank, learner_id, learner_name, now)

    @staticmethod
    def _open(db: sqlite3.Connection, learner_id: str, quiz_id: str) -> Any:
        return db.execute("SELECT attempt_id, attempt_no, started_at, deadline FROM"
                          " exam_attempts WHERE learner_id = ? AND quiz_id = ? AND"
                          " submitted_at IS NULL", (learner_id, quiz_id)).fetchone()

    def _start(self, db: sqlite3.Connection, bank: Bank, learner_id: str,
               learner_name: str, now: int) -> dict[str, Any]:
        row = self._open(db, learner_id, bank.quiz_id)
        if row is not None:
            return self._view(bank, learner_id, row[0], int(row[1]), int(row[2]), row[3],
                              self._answered(db, row[0], bank, learner_id, int(row[1])))
        used = int(db.execute("SELECT COUNT(*) FROM exam_attempts WHERE learner_id = ?"
                              " AND quiz_id = ?", (learner_id, bank.quiz_id)).fetchone()[0])
        limit = bank.policy.attempts
        if limit is not None and used >= limit:
            raise ExamError(409, f"no attempts left at {bank.quiz_id}: {used} of {limit} "
                                 "used")
        attempt_id = secrets.token_hex(12)
        minutes = bank.policy.time_limit_minutes
        deadline = None if minutes is None else now + 60 * minutes
        items = [it.common.id for it in attempt_items(bank, learner_id, used + 1)]
        db.execute("INSERT INTO exam_attempts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)",
                   (attempt_id, learner_id, learner_name or learner_id, bank.quiz_id,
                    used + 1, bank.version, json.dumps(items), now, deadline))
        return self._view(bank, learner_id, attempt_id, used + 1, now, deadline, {})

    def answer(self, learner_id: str, attempt_id: Any, item_id: Any, response: Any
               ) -> dict[str, Any]:
        """Grade one answer and lock the item; returns the feedback."""
        now = int(self.clock())
        with self.book.transaction() as db:
            aid, quiz_id, attempt_no, _, items, _, deadline, submitted, _ = \
                self._attempt(db, learner_id, attempt_id)
            bank = self._bank(quiz_id)
            if submitted is not None:
                raise ExamError(409, f"attempt {aid} is already submitted; start a new attempt")
            if deadline is not None and now >= deadline:
                raise ExamError(409, f"the time limit of attempt {aid} has passed "
                                     f"({bank.policy.time_limit_minutes} min); submit it")
            if not isinstance(item_id, str) or item_id not in items:
                raise ExamError(422, f"item '{item_id}' is not in your variant of "
                                     f"{bank.quiz_id}")
            if not _valid_response(response):
                raise ExamError(400, f"'{item_id}': the response must be non-empty text (at "
                                     f"most {MAX_TEXT} characters), a finite number or a list "
                                     "of option ids")
            if db.execute("SELECT 1 FROM exam_answers WHERE attempt_id = ? AND item_id = ?",
                          (aid, item_id)).fetchone():
                raise ExamError(409, f"'{item_id}' is already answered in this attempt")
            try:
                fb = grade_one(bank, learner_id, attempt_no, item_id, response)
            except ExamError:
                raise
            except Exception as exc:  # an answer the grader cannot handle: nothing stored
                raise ExamError(400, f"'{item_id}': this answer could not be graded "
                                     f"({type(exc).__name__}: {exc})") from None
            db.execute("INSERT INTO exam_answers VALUES (?, ?, ?, ?, ?, ?)",
                       (aid, item_id, json.dumps(response), now, fb.score, fb.feedback))
        return {**asdict(fb), "remaining_seconds": None if deadline is None
                else max(0, int(deadline) - now)}

    def submit(self, learner_id: str, attempt_id: Any) -> dict[str, Any]:
        """Close the attempt and record it in the gradebook, in one transaction."""
        book = self.book
        with book.transaction() as db:
            aid, quiz_id, *_rest = self._attempt(db, learner_id, attempt_id)
            submitted = _rest[5]
            bank = self._bank(quiz_id)
            if submitted is not None:
                raise ExamError(409, f"attempt {aid} is already submitted")
            _, grade, rec = self._close(book, bank, learner_id, aid)
        reply: dict[str, Any] = {
            "status": rec.status, "quiz_id": bank.quiz_id, "attempt": rec.attempt_no,
            "counted": rec.counted, "points": grade.points, "max_points": grade.max_points,
            "score": grade.fraction, "quiz_score": rec.score, "passed": rec.passed,
            "certificate_id": rec.certificate_id,
            "items": [{"item_id": g.item_id, "score": g.score, "feedback": g.feedback}
                      for g in grade.items]}
        return reply

    def _close(self, book: Gradebook, bank: Bank, learner_id: str, attempt_id: str
               ) -> tuple[Submission, AttemptGrade, Recorded]:
        """Grade an attempt from its stored answers and record it (caller's transaction)."""
        db = book.db
        now = int(self.clock())
        name, started, version, number = db.execute(
            "SELECT learner_name, started_at, bank_version, attempt_no FROM exam_attempts"
            " WHERE attempt_id = ?", (attempt_id,)).fetchone()
        if version != bank.version:
            raise ExamError(409, f"the bank of {bank.quiz_id} changed during attempt "
                                 f"{attempt_id}; ask the instructor")
        rows = {i: (json.loads(r), int(at), float(s), f) for i, r, at, s, f in db.execute(
            "SELECT item_id, response, answered_at, score, feedback FROM exam_answers"
            " WHERE attempt_id = ?", (attempt_id,))}
        grades, answers = [], []
        shown = {it.common.id for it in attempt_items(bank, learner_id, int(number))}
        for item in (it for it in bank.items if it.common.id in shown):  # as grade_submission
            cid, pts = item.common.id, item.common.points
            if cid in rows:
                response, at, score, feedback = rows[cid]
                answers.append((cid, Answer(response, at)))
            else:
                response, score, feedback = None, 0.0, "Not answered."
            grades.append(ItemGrade(cid, response, score, score * pts, pts, feedback,
                                    explanation(bank, learner_id, cid, int(number))))
        digest = hashlib.sha256(f"exam|{attempt_id}".encode()).hexdigest()
        sub = Submission(learner_id, name, bank.quiz_id, bank.version, int(started),
                         max(now, int(started)), tuple(answers), digest, int(number))
        grade = AttemptGrade(bank.quiz_id, learner_id, tuple(grades))
        cur = db.execute("UPDATE exam_attempts SET submitted_at = ? WHERE attempt_id = ? AND"
                         " submitted_at IS NULL", (sub.submitted_at, attempt_id))
        if cur.rowcount != 1:
            raise ExamError(409, f"attempt {attempt_id} is already submitted")
        # the gradebook's own row logic, inside this transaction (no savepoint needed:
        # any error rolls the whole attempt back, the UPDATE above included)
        rec = book.record_in_transaction(sub, bank, grade, "exam", self.issue)
        return sub, grade, rec

    def attempts(self, learner_id: str, quiz_id: Any) -> dict[str, Any]:
        """How many attempts this learner has used and has left at a quiz."""
        bank = self._bank(quiz_id)
        used = int(self.book.db.execute(
            "SELECT COUNT(*) FROM exam_attempts WHERE learner_id = ? AND quiz_id = ?",
            (learner_id, bank.quiz_id)).fetchone()[0])
        limit = bank.policy.attempts
        return {"quiz_id": bank.quiz_id, "title": bank.title, "used": used,
                "allowed": limit, "left": None if limit is None else max(0, limit - used),
                "policy": bank.policy.describe(), "items": len(bank.items)}

