"""The instructor's gradebook: a real SQLite database.

Tables: ``learners``, ``quizzes``, ``attempts`` (one row per distinct
submission, unique on the submission's sha256), ``item_responses`` (one row per
attempt and item), ``scores`` (the counted score per learner and quiz, derived
from the attempts by the quiz's policy) and ``certificates`` (at most one per
learner and quiz).

Safety: every submission is recorded in one ``BEGIN IMMEDIATE`` transaction
(a savepoint inside a batch), duplicates are stopped by the UNIQUE constraint
rather than by a prior read, and the derived ``scores`` row is recomputed from
all attempts inside the same transaction.  Two graders on one database therefore
never lose or double a row, and re-running a grade is a no-op.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from quizzes.bank import Bank
from quizzes.errors import QuizError
from quizzes.grade import AttemptGrade
from quizzes.submission import Submission

SCHEMA = """
CREATE TABLE IF NOT EXISTS learners (
  learner_id TEXT PRIMARY KEY,
  name       TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS quizzes (
  quiz_id      TEXT PRIMARY KEY,
  title        TEXT NOT NULL,
  course       TEXT NOT NULL,
  bank_version TEXT NOT NULL,
  max_points   REAL NOT NULL,
  pass_mark    REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS attempts (
  attempt_id        INTEGER PRIMARY KEY,
  submission_digest TEXT NOT NULL UNIQUE,
  learner_id        TEXT NOT NULL REFERENCES learners(learner_id),
  quiz_id           TEXT NOT NULL REFERENCES quizzes(quiz_id),
  bank_version      TEXT NOT NULL,
  started_at        INTEGER NOT NULL,
  submitted_at      INTEGER NOT NULL,
  graded_at         INTEGER NOT NULL,
  source            TEXT NOT NULL,
  raw_points        REAL NOT NULL,
  max_points        REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS attempts_by_learner ON attempts(learner_id, quiz_id);
CREATE TABLE IF NOT EXISTS item_responses (
  attempt_id INTEGER NOT NULL REFERENCES attempts(attempt_id) ON DELETE CASCADE,
  item_id    TEXT NOT NULL,
  response   TEXT NOT NULL,
  score      REAL NOT NULL,
  points     REAL NOT NULL,
  max_points REAL NOT NULL,
  feedback   TEXT NOT NULL,
  PRIMARY KEY (attempt_id, item_id)
);
CREATE TABLE IF NOT EXISTS scores (
  learner_id         TEXT NOT NULL REFERENCES learners(learner_id),
  quiz_id            TEXT NOT NULL REFERENCES quizzes(quiz_id),
  attempts           INTEGER NOT NULL,
  counted_attempt_id INTEGER REFERENCES attempts(attempt_id),
  score              REAL NOT NULL,
  passed             INTEGER NOT NULL,
  PRIMARY KEY (learner_id, quiz_id)
);
CREATE TABLE IF NOT EXISTS certificates (
  cert_id    TEXT PRIMARY KEY,
  learner_id TEXT NOT NULL REFERENCES learners(learner_id),
  quiz_id    TEXT NOT NULL REFERENCES quizzes(quiz_id),
  issued_at  INTEGER NOT NULL,
  document   TEXT NOT NULL,
  UNIQUE (learner_id, quiz_id)
);
"""

Issuer = Callable[[Submission, Bank, float], dict[str, Any]]
"""Signs a certificate for (submission, bank, score) and returns its JSON document."""


@dataclass(frozen=True, slots=True)
class Recorded:
    """What recording one submission did."""

    status: str  # "graded" | "duplicate" | "rejected" (see ``problem``)
    attempt_no: int
    counted: bool
    score: float  # the learner's counted quiz score after this attempt
    passed: bool
    certificate_id: str | None
    new_certificate: bool = False  # the certificate was issued by this very call
    problem: str = ""  # why a "rejected" submission could not be recorded


def _problem(exc: Exception) -> str:
    """A one-line reason for a submission the gradebook could not store."""
    message = getattr(exc, "message", None)
    if isinstance(message, str):
        return message.removeprefix("quizzes: error: ")
    return f"could not be recorded ({type(exc).__name__}: {exc})"


class Gradebook:
    """A connection to one gradebook file (``:memory:`` works for tests)."""

    def __init__(self, path: str | Path, *, timeout: float = 60.0) -> None:
        self.path = str(path)
        try:
            self.db = sqlite3.connect(self.path, timeout=timeout, isolation_level=None)
            self.db.execute("PRAGMA foreign_keys = ON")
            if self.path != ":memory:":
                self.db.execute("PRAGMA journal_mode = WAL")
                self.db.execute("PRAGMA synchronous = NORMAL")
            self.db.executescript("BEGIN IMMEDIATE;" + SCHEMA + "COMMIT;")
        except sqlite3.DatabaseError as exc:
            raise QuizError(f"{self.path}: not a usable gradebook database ({exc})") from None

    @classmethod
    def read_only(cls, path: str | Path, *, timeout: float = 5.0) -> Gradebook:
        """Open an existing gradebook for reading only (``mode=ro``).

        No schema is written and no ``BEGIN IMMEDIATE`` is taken, so this works on a
        read-only file and, in WAL mode, never waits behind a grader's transaction.
        """
        book = cls.__new__(cls)
        book.path = str(path)
        uri = Path(path).resolve().as_uri() + "?mode=ro"
        try:
            book.db = sqlite3.connect(uri, uri=True, timeout=timeout, isolation_level=None)
        except sqlite3.Error as exc:
            raise QuizError(f"{book.path}: cannot open the gradebook read-only ({exc})") \
                from None
        return book

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Gradebook:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT`` (rolled back on any error)."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            if self.db.in_transaction:  # SQLite may already have rolled back (disk full)
                self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def record_many(
        self, rows: Iterable[tuple[Submission, Bank, AttemptGrade, str]],
        issuer: Issuer | None = None, *, batch: int = 200,
    ) -> Iterator[Recorded]:
        """Record graded submissions, ``batch`` per transaction, one savepoint each.

        A submission whose recording fails (a value SQLite cannot store, an issuer
        error) is rolled back to its savepoint and yielded as ``status="rejected"``
        with the reason; the others of the batch are still recorded.
        """
        pending = list(rows)
        for start in range(0, len(pending), batch):
            out = []
            with self.transaction():
                for sub, bank, grade, source in pending[start:start + batch]:
                    self.db.execute("SAVEPOINT one")
                    try:
                        out.append(self.record_in_transaction(sub, bank, grade, source, issuer))
                    except Exception as exc:
                        self.db.execute("ROLLBACK TO one")
                        self.db.execute("RELEASE one")
                        out.append(Recorded("rejected", 0, False, 0.0, False, None,
                                            problem=_problem(exc)))
                        continue
                    except BaseException:
                        self.db.execute("ROLLBACK TO one")
                        self.db.execute("RELEASE one")
                        raise
                    self.db.execute("RELEASE one")
            yield from out

    def record(self, sub: Submission, bank: Bank, grade: AttemptGrade, source: str,
               issuer: Issuer | None = None) -> Recorded:
        """Record one graded submission in its own transaction."""
        with self.transaction():
            return self.record_in_transaction(sub, bank, grade, source, issuer)

    def record_in_transaction(self, sub: Submission, bank: Bank, grade: AttemptGrade,
                              source: str, issuer: Issuer | None) -> Recorded:
        """Record one graded submission inside the caller's open transaction (the exam
        service closes an attempt and records it in one transaction)."""
        db = self.db
        db.execute("INSERT INTO learners(learner_id, name) VALUES (?, ?) ON CONFLICT(learner_id)"
                   " DO UPDATE SET name = excluded.name", (sub.learner_id, sub.learner_name))
        db.execute("INSERT INTO quizzes VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(quiz_id) DO UPDATE"
                   " SET title = excluded.title, bank_version = excluded.bank_version,"
                   " max_points = excluded.max_points, pass_mark = excluded.pass_mark",
                   (bank.quiz_id, bank.title, bank.course, bank.version, bank.max_points,
                    bank.pass_mark))
        cur = db.execute(
            "INSERT INTO attempts(submission_digest, learner_id, quiz_id, bank_version,"
            " started_at, submitted_at, graded_at, source, raw_points, max_points)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(submission_digest) DO NOTHING",
            (sub.digest, sub.learner_id, bank.quiz_id, bank.version, sub.started_at,
             sub.submitted_at, int(time.time()), source, grade.points, grade.max_points))
        status = "graded" if cur.rowcount == 1 else "duplicate"
        if status == "graded":
            attempt_id = cur.lastrowid
            db.executemany("INSERT INTO item_responses VALUES (?, ?, ?, ?, ?, ?, ?)", [
                (attempt_id, g.item_id, json.dumps(g.response), g.score, g.points,
                 g.max_points, g.feedback) for g in grade.items])
        return self._rescore(sub, bank, status, issuer)

    def _rescore(self, sub: Submission, bank: Bank, status: str,
                 issuer: Issuer | None) -> Recorded:
        rows = self.db.execute(
            "SELECT attempt_id, submission_digest, raw_points, max_points FROM attempts"
            " WHERE learner_id = ? AND quiz_id = ? ORDER BY started_at, submitted_at,"
            " submission_digest", (sub.learner_id, bank.quiz_id)).fetchall()
        policy = bank.policy
        counted = [(n, aid, (pts / mx if mx else 0.0) * policy.factor(n))
                   for n, (aid, _, pts, mx) in enumerate(rows, start=1) if policy.counted(n)]
        attempt_no = next(n for n, row in enumerate(rows, start=1) if row[1] == sub.digest)
        final = policy.final([s for _, _, s in counted]) or 0.0
        counted_id = next((aid for _, aid, s in counted if s == final), None)
        passed = final >= bank.pass_mark - 1e-9
        self.db.execute(
            "INSERT INTO scores VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(learner_id, quiz_id) DO"
            " UPDATE SET attempts = excluded.attempts, counted_attempt_id ="
            " excluded.counted_attempt_id, score = excluded.score, passed = excluded.passed",
            (sub.learner_id, bank.quiz_id, len(rows), counted_id, final, int(passed)))
        cert_id = self.certificate_of(sub.learner_id, bank.quiz_id)
        new = False
        if passed and cert_id is None and issuer is not None:
            doc = issuer(sub, bank, final)
            self.db.execute(
                "INSERT INTO certificates VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (doc["id"], sub.learner_id, bank.quiz_id, doc["record"]["issued_at"],
                 json.dumps(doc, sort_keys=True)))
            cert_id = self.certificate_of(sub.learner_id, bank.quiz_id)
            new = cert_id == doc["id"]
        return Recorded(status, attempt_no, policy.counted(attempt_no), final, passed, cert_id,
                        new)

    # --- reading ----------------------------------------------------------------------

    def certificate_of(self, learner_id: str, quiz_id: str) -> str | None:
        row = self.db.execute("SELECT cert_id FROM certificates WHERE learner_id = ? AND"
                              " quiz_id = ?", (learner_id, quiz_id)).fetchone()
        return None if row is None else str(row[0])

    def certificate(self, cert_id: str) -> str | None:
        """The JSON document of a certificate by its printed ID."""
        row = self.db.execute("SELECT document FROM certificates WHERE cert_id = ?",
                              (cert_id,)).fetchone()
        return None if row is None else str(row[0])

    def certificates(self) -> list[tuple[str, str]]:
        """(printed ID, JSON document) of every certificate, by ID."""
        rows = self.db.execute("SELECT cert_id, document FROM certificates ORDER BY cert_id")
        return [(str(a), str(b)) for a, b in rows]

    def counts(self) -> dict[str, int]:
        """Row count of every table (tests use it to prove nothing changed)."""
        tables = ("learners", "quizzes", "attempts", "item_responses", "scores", "certificates")
        return {t: int(self.db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0])
                for t in tables}

    def scores(self) -> list[tuple[str, str, str, float, bool, int]]:
        """(learner id, name, quiz id, score, passed, attempts) for every scored pair."""
        rows = self.db.execute(
            "SELECT s.learner_id, l.name, s.quiz_id, s.score, s.passed, s.attempts"
            " FROM scores s JOIN learners l USING (learner_id) ORDER BY s.learner_id, s.quiz_id")
        return [(a, b, c, float(d), bool(e), int(f)) for a, b, c, d, e, f in rows]

    def first_attempt_responses(self, quiz_id: str) -> list[tuple[str, str, str, float]]:
        """(learner id, item id, response JSON, score) of every learner's first attempt."""
        rows = self.db.execute(
            "WITH firsts AS (SELECT attempt_id, learner_id, ROW_NUMBER() OVER (PARTITION BY"
            " learner_id ORDER BY started_at, submitted_at, submission_digest) AS n"
            " FROM attempts WHERE quiz_id = ?)"
            " SELECT f.learner_id, r.item_id, r.response, r.score FROM firsts f"
            " JOIN item_responses r USING (attempt_id) WHERE f.n = 1"
            " ORDER BY f.learner_id, r.item_id", (quiz_id,))
        return [(str(a), str(b), str(c), float(d)) for a, b, c, d in rows]

    def quizzes(self) -> list[tuple[str, str, float]]:
        """(quiz id, title, max points) of every quiz with attempts."""
        rows = self.db.execute("SELECT quiz_id, title, max_points FROM quizzes ORDER BY quiz_id")
        return [(str(a), str(b), float(c)) for a, b, c in rows]
