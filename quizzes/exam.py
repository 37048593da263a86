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

Languages: ``start`` and ``answer`` take the learner's language (``lang``, what
:func:`quizzes.i18n.resolve` says in the learner's kernel).  Prompts, options, the
title, feedback and explanations are given in it the way the self-study session
gives them (:func:`quizzes.translations.load`, :meth:`quizzes.items.base.Outcome.
in_language`), and numbers are read in it.  What is *stored* stays language-free:
the gradebook's rows and the graders' feedback are the English ones, one item one
row whatever the language it was answered in; the attempt keeps the language it was
last taken in, and its certificate records that language (``lang``, signed).

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

from quizzes import translations
from quizzes.bank import Bank
from quizzes.certify import EXAM, issue, make_record
from quizzes.errors import ExamError
from quizzes.grade import (
    AttemptGrade,
    ItemGrade,
    attempt_items,
    explanation,
    grade_response,
    item_variant,
)
from quizzes.gradebook import Gradebook, Recorded
from quizzes.i18n import DEFAULT_LANG, language, tr
from quizzes.items.base import Presented
from quizzes.present import present
from quizzes.submission import MAX_TEXT, Answer, Submission
from quizzes.template import fill

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
  lang         TEXT NOT NULL DEFAULT 'en',
  UNIQUE (learner_id, quiz_id, attempt_no)
);
CREATE TABLE IF NOT EXISTS exam_answers (
  attempt_id  TEXT NOT NULL REFERENCES exam_attempts(attempt_id),
  item_id     TEXT NOT NULL,
  response    TEXT NOT NULL,
  answered_at INTEGER NOT NULL,
  score       REAL NOT NULL,
  feedback    TEXT NOT NULL,
  shown       TEXT,
  PRIMARY KEY (attempt_id, item_id)
);
"""
#: Columns added since the first exam tables (a class's gradebook made before them is
#: brought up to date when the desk opens it): table -> (column, its SQL definition).
ADDED = (("exam_attempts", "lang", "TEXT NOT NULL DEFAULT 'en'"),
         ("exam_answers", "shown", "TEXT"))



@dataclass(frozen=True, slots=True)
class Feedback:
    item_id: str
    correct: bool
    score: float
    feedback: str
    explanation: str
    details: tuple[str, ...] = ()


def exam_language(lang: Any) -> str:
    """The course language a request names (none: English); 400 for an unknown one."""
    if lang is None or lang == "":
        return DEFAULT_LANG
    if not isinstance(lang, str) or len(lang) > 35:
        raise ExamError(400, "'lang' must be a language tag (en, pt-BR)")
    try:
        return language(lang)
    except ValueError as exc:
        raise ExamError(400, str(exc)) from None


def present_items(bank: Bank, learner_id: str, attempt_no: int,
                  translation: translations.Translation | None = None) -> list[Presented]:
    """The items of one attempt as the learner sees them (no key, no explanation): the
    same draw, order, variants and option shuffles as the self-study widget and the
    grader (`quizzes.grade.attempt_items`, `item_variant`, `quizzes.present.present`),
    in ``translation``'s language where it has the item's words (as
    :meth:`quizzes.session.QuizSession.items`)."""
    out = []
    for item in attempt_items(bank, learner_id, attempt_no):
        params, _, seed = item_variant(bank, learner_id, item.common.id, attempt_no)
        shown = present(item, params, seed)
        if translation is not None:
            shown = translation.prompt(item, shown, params)
        out.append(shown)
    return out


def explain(bank: Bank, learner_id: str, item_id: str, attempt_no: int,
            translation: translations.Translation | None = None) -> str:
    """The item's explanation for this variant, in ``translation``'s language if it has it."""
    if translation is not None:
        params, _, _ = item_variant(bank, learner_id, item_id, attempt_no)
        said = translation.explanation(item_id, params)
        if said:
            return said
    return explanation(bank, learner_id, item_id, attempt_no)


def grade_one(bank: Bank, learner_id: str, attempt_no: int, item_id: str, response: Any,
              lang: str = DEFAULT_LANG, translation: translations.Translation | None = None
              ) -> tuple[Feedback, str]:
    """Grade one response on the attempt's variant, numbers read in ``lang``: (the
    feedback as the learner sees it, in ``lang``; the English feedback the gradebook
    keeps).  Raises on an answer the item cannot read or rejects."""
    outcome = grade_response(bank, learner_id, item_id, response, attempt_no, lang)
    params, _, _ = item_variant(bank, learner_id, item_id, attempt_no)
    said, details = outcome.in_language(lang)
    said, details = fill(said, params), tuple(fill(d, params) for d in details)
    if not outcome.readable:  # e.g. an ambiguous number: a hint, the item stays open
        raise ExamError(400, tr(lang, "'{item}': this answer could not be read: {why} Change "
                                      "it and check again.").format(item=item_id, why=said),
                        unreadable=True)
    shown = Feedback(item_id, outcome.correct, outcome.score, said,
                     explain(bank, learner_id, item_id, attempt_no, translation), details)
    return shown, outcome.feedback


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
            public=self.private.public_key(), lang=sub.lang)
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
        with self.book.transaction() as conn:  # a gradebook from before these columns
            for table, column, definition in ADDED:
                have = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
                if column not in have:
                    conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {definition}")
        self._translations: dict[tuple[str, str], translations.Translation | None] = {}

    def close(self) -> None:
        self.book.close()

    # --- helpers --------------------------------------------------------------------------
    def _translation(self, bank: Bank, lang: str) -> translations.Translation | None:
        """The bank's words in ``lang`` (read once per desk: banks do not change under it)."""
        key = (bank.quiz_id, lang)
        if key not in self._translations:
            self._translations[key] = translations.load(bank, lang)
        return self._translations[key]

    def title(self, bank: Bank, lang: str) -> str:
        """The quiz's title in ``lang`` (the bank's when its translation has none)."""
        words = self._translation(bank, lang)
        return words.title if words is not None and words.title else bank.title

    def _bank(self, quiz_id: Any, lang: str = DEFAULT_LANG) -> Bank:
        if not isinstance(quiz_id, str) or quiz_id not in self.banks:
            raise ExamError(404, tr(lang, "unknown quiz '{quiz}' (known: {known})").format(
                quiz=quiz_id, known=", ".join(sorted(self.banks))))
        return self.banks[quiz_id]

    def _attempt(self, db: sqlite3.Connection, learner_id: str, attempt_id: Any,
                 lang: str = DEFAULT_LANG
                 ) -> tuple[str, str, int, str, list[str], int, int | None, int | None, str]:
        if not isinstance(attempt_id, str) or not attempt_id:
            raise ExamError(400, tr(lang, "attempt id must be a non-empty string"))
        row = db.execute("SELECT attempt_id, quiz_id, attempt_no, learner_id, items, started_at,"
                         " deadline, submitted_at, learner_name FROM exam_attempts"
                         " WHERE attempt_id = ?", (attempt_id,)).fetchone()
        if row is None:
            raise ExamError(404, tr(lang, "no such attempt: {id}").format(id=attempt_id))
        if row[3] != learner_id:
            raise ExamError(403, tr(lang, "attempt {id} belongs to another learner; you are "
                                          "'{learner}'").format(id=attempt_id,
                                                                learner=learner_id))
        return (row[0], row[1], int(row[2]), row[3], json.loads(row[4]), int(row[5]),
                row[6], row[7], row[8])

    def _view(self, bank: Bank, learner_id: str, attempt_id: str, attempt_no: int,
              started: int, deadline: int | None, answered: Mapping[str, Feedback],
              lang: str) -> dict[str, Any]:
        limit = bank.policy.attempts
        words = self._translation(bank, lang)
        return {
            "attempt_id": attempt_id, "quiz_id": bank.quiz_id,
            "title": self.title(bank, lang), "lang": lang,
            "attempt": attempt_no, "attempts_allowed": limit,
            "policy": bank.policy.describe(lang), "pass_mark": bank.pass_mark,
            "started_at": started, "deadline": deadline,
            "remaining_seconds": None if deadline is None
            else max(0, deadline - int(self.clock())),
            "items": [asdict(p) for p in present_items(bank, learner_id, attempt_no, words)],
            "answered": {k: asdict(v) for k, v in answered.items()}}

    def _answered(self, db: sqlite3.Connection, attempt_id: str, bank: Bank, learner_id: str,
                  attempt_no: int, lang: str) -> dict[str, Feedback]:
        """The feedback of the items already answered (a resumed attempt): the words the
        learner was given (the English ones for answers stored before languages), the
        explanations filled for this learner's variant, in ``lang``."""
        words = self._translation(bank, lang)
        rows = db.execute("SELECT item_id, score, feedback, shown FROM exam_answers WHERE"
                          " attempt_id = ? ORDER BY item_id", (attempt_id,)).fetchall()
        out = {}
        for i, s, f, shown in rows:
            said = json.loads(shown) if shown else {"feedback": f, "details": []}
            out[i] = Feedback(i, s >= 1 - 1e-9, float(s), str(said["feedback"]),
                              explain(bank, learner_id, i, attempt_no, words),
                              tuple(str(d) for d in said.get("details", ())))
        return out

    # --- the three calls --------------------------------------------------------------------
    def start(self, learner_id: str, learner_name: str, quiz_id: Any, lang: Any = None
              ) -> dict[str, Any]:
        """Open a new attempt, or resume the open one, shown in ``lang`` (the attempt is
        now taken in it); closes one past its deadline."""
        tongue = exam_language(lang)
        bank = self._bank(quiz_id, tongue)
        now = int(self.clock())
        book = self.book
        with book.transaction() as db:  # an open attempt past its deadline is handed in
            row = self._open(db, learner_id, bank.quiz_id)
            if row is not None and row[3] is not None and now >= row[3]:
                self._close(book, bank, learner_id, row[0])
        with book.transaction() as db:
            return self._start(db, bank, learner_id, learner_name, now, tongue)

    @staticmethod
    def _language(db: sqlite3.Connection, attempt_id: str) -> str:
        """The language the attempt is taken in (English for one stored before languages)."""
        row = db.execute("SELECT lang FROM exam_attempts WHERE attempt_id = ?",
                         (attempt_id,)).fetchone()
        try:
            return language(str(row[0] or DEFAULT_LANG)) if row else DEFAULT_LANG
        except ValueError:
            return DEFAULT_LANG

    @staticmethod
    def _open(db: sqlite3.Connection, learner_id: str, quiz_id: str) -> Any:
        return db.execute("SELECT attempt_id, attempt_no, started_at, deadline FROM"
                          " exam_attempts WHERE learner_id = ? AND quiz_id = ? AND"
                          " submitted_at IS NULL", (learner_id, quiz_id)).fetchone()

    def _start(self, db: sqlite3.Connection, bank: Bank, learner_id: str,
               learner_name: str, now: int, lang: str) -> dict[str, Any]:
        row = self._open(db, learner_id, bank.quiz_id)
        if row is not None:
            db.execute("UPDATE exam_attempts SET lang = ? WHERE attempt_id = ?", (lang, row[0]))
            return self._view(bank, learner_id, row[0], int(row[1]), int(row[2]), row[3],
                              self._answered(db, row[0], bank, learner_id, int(row[1]), lang),
                              lang)
        used = int(db.execute("SELECT COUNT(*) FROM exam_attempts WHERE learner_id = ?"
                              " AND quiz_id = ?", (learner_id, bank.quiz_id)).fetchone()[0])
        limit = bank.policy.attempts
        if limit is not None and used >= limit:
            raise ExamError(409, tr(lang, "no attempts left at {quiz}: {used} of {limit} used")
                            .format(quiz=bank.quiz_id, used=used, limit=limit))
        attempt_id = secrets.token_hex(12)
        minutes = bank.policy.time_limit_minutes
        deadline = None if minutes is None else now + 60 * minutes
        items = [it.common.id for it in attempt_items(bank, learner_id, used + 1)]
        db.execute("INSERT INTO exam_attempts (attempt_id, learner_id, learner_name, quiz_id,"
                   " attempt_no, bank_version, items, started_at, deadline, submitted_at, lang)"
                   " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?)",
                   (attempt_id, learner_id, learner_name or learner_id, bank.quiz_id,
                    used + 1, bank.version, json.dumps(items), now, deadline, lang))
        return self._view(bank, learner_id, attempt_id, used + 1, now, deadline, {}, lang)

    def answer(self, learner_id: str, attempt_id: Any, item_id: Any, response: Any,
               lang: Any = None) -> dict[str, Any]:
        """Grade one answer (numbers read in ``lang``, else the attempt's language) and
        lock the item; returns the feedback in that language."""
        now = int(self.clock())
        asked = None if lang is None else exam_language(lang)
        with self.book.transaction() as db:
            aid, quiz_id, attempt_no, _, items, _, deadline, submitted, _ = \
                self._attempt(db, learner_id, attempt_id, asked or DEFAULT_LANG)
            tongue = asked or self._language(db, aid)
            bank = self._bank(quiz_id, tongue)
            if submitted is not None:
                raise ExamError(409, tr(tongue, "attempt {id} is already submitted; start a "
                                                "new attempt").format(id=aid))
            if deadline is not None and now >= deadline:
                raise ExamError(409, tr(tongue, "the time limit of attempt {id} has passed "
                                                "({n} min); submit it").format(
                    id=aid, n=bank.policy.time_limit_minutes))
            if not isinstance(item_id, str) or item_id not in items:
                raise ExamError(422, tr(tongue, "item '{item}' is not in your variant of "
                                                "{quiz}").format(item=item_id, quiz=bank.quiz_id))
            if not _valid_response(response):
                raise ExamError(400, tr(tongue, "'{item}': the response must be non-empty text "
                                                "(at most {n} characters), a finite number or "
                                                "a list of option ids").format(item=item_id,
                                                                               n=MAX_TEXT))
            if db.execute("SELECT 1 FROM exam_answers WHERE attempt_id = ? AND item_id = ?",
                          (aid, item_id)).fetchone():
                raise ExamError(409, tr(tongue, "'{item}' is already answered in this attempt")
                                .format(item=item_id))
            try:
                fb, english = grade_one(bank, learner_id, attempt_no, item_id, response,
                                        tongue, self._translation(bank, tongue))
            except ExamError:
                raise
            except Exception as exc:  # an answer the grader cannot handle: nothing stored
                raise ExamError(400, tr(tongue, "'{item}': this answer could not be graded "
                                                "({why})").format(
                    item=item_id, why=f"{type(exc).__name__}: {exc}")) from None
            shown = json.dumps({"lang": tongue, "feedback": fb.feedback,
                                "details": list(fb.details)}, ensure_ascii=False)
            db.execute("INSERT INTO exam_answers (attempt_id, item_id, response, answered_at,"
                       " score, feedback, shown) VALUES (?, ?, ?, ?, ?, ?, ?)",
                       (aid, item_id, json.dumps(response), now, fb.score, english, shown))
            if asked is not None:
                db.execute("UPDATE exam_attempts SET lang = ? WHERE attempt_id = ?",
                           (asked, aid))
        return {**asdict(fb), "remaining_seconds": None if deadline is None
                else max(0, int(deadline) - now)}

    def submit(self, learner_id: str, attempt_id: Any, lang: Any = None) -> dict[str, Any]:
        """Close the attempt and record it in the gradebook, in one transaction (a refusal
        in ``lang``, else in the attempt's language)."""
        book = self.book
        asked = None if lang is None else exam_language(lang)
        with book.transaction() as db:
            aid, quiz_id, *_rest = self._attempt(db, learner_id, attempt_id,
                                                 asked or DEFAULT_LANG)
            submitted = _rest[5]
            tongue = asked or self._language(db, aid)
            bank = self._bank(quiz_id, tongue)
            if submitted is not None:
                raise ExamError(409, tr(tongue, "attempt {id} is already submitted").format(
                    id=aid))
            _sub, grade, rec = self._close(book, bank, learner_id, aid)
        reply: dict[str, Any] = {
            "status": rec.status, "quiz_id": bank.quiz_id, "attempt": rec.attempt_no,
            "counted": rec.counted, "points": grade.points, "max_points": grade.max_points,
            "score": grade.fraction, "quiz_score": rec.score, "passed": rec.passed,
            "certificate_id": rec.certificate_id, "lang": _sub.lang,
            "items": [{"item_id": g.item_id, "score": g.score, "feedback": g.feedback}
                      for g in grade.items]}
        return reply

    def _close(self, book: Gradebook, bank: Bank, learner_id: str, attempt_id: str
               ) -> tuple[Submission, AttemptGrade, Recorded]:
        """Grade an attempt from its stored answers and record it (caller's transaction)."""
        db = book.db
        now = int(self.clock())
        name, started, version, number, lang = db.execute(
            "SELECT learner_name, started_at, bank_version, attempt_no, lang FROM"
            " exam_attempts WHERE attempt_id = ?", (attempt_id,)).fetchone()
        tongue = language(str(lang or DEFAULT_LANG))
        if version != bank.version:
            raise ExamError(409, tr(tongue, "the bank of {quiz} changed during attempt {id}; "
                                            "ask the instructor").format(quiz=bank.quiz_id,
                                                                         id=attempt_id))
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
                         max(now, int(started)), tuple(answers), digest, int(number),
                         language(str(lang or DEFAULT_LANG)))
        grade = AttemptGrade(bank.quiz_id, learner_id, tuple(grades))
        cur = db.execute("UPDATE exam_attempts SET submitted_at = ? WHERE attempt_id = ? AND"
                         " submitted_at IS NULL", (sub.submitted_at, attempt_id))
        if cur.rowcount != 1:
            raise ExamError(409, tr(tongue, "attempt {id} is already submitted").format(
                id=attempt_id))
        # the gradebook's own row logic, inside this transaction (no savepoint needed:
        # any error rolls the whole attempt back, the UPDATE above included)
        rec = book.record_in_transaction(sub, bank, grade, "exam", self.issue)
        return sub, grade, rec

    def attempts(self, learner_id: str, quiz_id: Any, lang: Any = None) -> dict[str, Any]:
        """How many attempts this learner has used and has left at a quiz, its time limit,
        and the attempt open now (``open``: None, or its id, number and time left): what
        the quiz cell shows before the learner starts (it opens nothing)."""
        tongue = exam_language(lang)
        bank = self._bank(quiz_id, tongue)
        db = self.book.db
        used = int(db.execute(
            "SELECT COUNT(*) FROM exam_attempts WHERE learner_id = ? AND quiz_id = ?",
            (learner_id, bank.quiz_id)).fetchone()[0])
        row = self._open(db, learner_id, bank.quiz_id)
        now = int(self.clock())
        is_open = None
        if row is not None and (row[3] is None or now < row[3]):
            is_open = {"attempt_id": row[0], "attempt": int(row[1]),
                       "remaining_seconds": None if row[3] is None else row[3] - now}
        limit = bank.policy.attempts
        return {"quiz_id": bank.quiz_id, "title": self.title(bank, tongue), "lang": tongue,
                "used": used, "allowed": limit,
                "left": None if limit is None else max(0, limit - used),
                "time_limit_minutes": bank.policy.time_limit_minutes, "open": is_open,
                "policy": bank.policy.describe(tongue), "items": len(bank.items)}

