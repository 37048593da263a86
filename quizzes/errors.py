"""Typed errors of the quiz engine.

They subclass :class:`minislurm.errors.SlurmError` so that every command of the
project reports failures the same way: ``message`` is the full text printed on
stderr (already prefixed ``quizzes: error: ...``), ``exit_code`` the status the
``quizzes`` command exits with.  Nothing here ever surfaces as a traceback.
"""

from __future__ import annotations

from minislurm.errors import SlurmError


class QuizError(SlurmError):
    """Base class of quiz-engine failures (exit 1 unless stated)."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        if not message.startswith("quizzes: "):
            message = f"quizzes: error: {message}"
        super().__init__(message, exit_code)


class BankError(QuizError):
    """A question bank failed validation; the message names file, item and field."""


class SubmissionError(QuizError):
    """A submission is malformed, oversized, for an unknown quiz or an outdated bank."""


class CertificateError(QuizError):
    """A certificate, key, ID or revocation list could not be read."""


class UsageError(QuizError):
    """Bad command-line usage (exit 2, like argparse)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, exit_code=2)


class ExamError(QuizError):
    """A refused exam request, as the service says it and as its client (the notebook's
    exam widget) receives it: ``status`` is the HTTP status (0 when the service cannot
    be reached), the message says why;
    ``unreadable``: the answer could not be read (a hint: change it, the item stays open)."""

    def __init__(self, status: int, message: str, *, unreadable: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.reason = message
        self.unreadable = unreadable
