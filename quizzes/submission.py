"""Submission files: what the learner's notebook hands to the instructor or the service.

```json
{"format": "quizzes-submission/1", "learner_id": "ada", "learner_name": "Ada Lovelace",
 "quiz_id": "02-sbatch", "bank_version": "3f2a...", "started_at": 1767600000,
 "submitted_at": 1767600420,
 "answers": {"sbatch-nodes": {"response": "#SBATCH -N2", "answered_at": 1767600100}}}
```

Timestamps are epoch seconds (ISO 8601 strings ending in ``Z`` are accepted too).
:func:`parse_submission` checks everything before anything touches the gradebook:
size, JSON, fields, the quiz id, the bank version and the item ids.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from quizzes.bank import Bank
from quizzes.errors import SubmissionError
from quizzes.hashing import canonical_json
from quizzes.i18n import language

FORMAT = "quizzes-submission/1"
MAX_BYTES = 256 * 1024
MAX_TEXT = 4000
#: Longest lab answer (a batch script or command lines): 64 KiB of UTF-8.
MAX_LAB_TEXT = 64 * 1024
MAX_ATTEMPT = 1000
MAX_EPOCH = 253402300799  # 9999-12-31T23:59:59Z: the last second a calendar date can name


@dataclass(frozen=True, slots=True)
class Answer:
    response: Any
    answered_at: int | None


@dataclass(frozen=True, slots=True)
class Submission:
    learner_id: str
    learner_name: str
    quiz_id: str
    bank_version: str
    started_at: int
    submitted_at: int
    answers: tuple[tuple[str, Answer], ...]
    digest: str  # sha256 of the canonical submission: the idempotence key
    attempt: int = 1  # 1-based attempt number (the variant seed depends on it)
    lang: str = "en"  # the language it was answered in (numbers are read in it)

    def answer(self, item_id: str) -> Answer | None:
        return dict(self.answers).get(item_id)

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "learner_id": self.learner_id,
                "learner_name": self.learner_name, "quiz_id": self.quiz_id,
                "bank_version": self.bank_version, "started_at": self.started_at,
                "submitted_at": self.submitted_at, "attempt": self.attempt, "lang": self.lang,
                "answers": {k: {"response": a.response, "answered_at": a.answered_at}
                            for k, a in self.answers}}


def timestamp(value: Any, name: str) -> int:
    """Epoch seconds (0 .. :data:`MAX_EPOCH`, i.e. up to the year 9999) from an int or an
    ISO 8601 string; anything else raises SubmissionError."""
    seconds: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        seconds = value
    elif isinstance(value, str):
        with contextlib.suppress(ValueError, OverflowError, OSError):
            seconds = int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp())
    if seconds is None:
        raise SubmissionError(f"field '{name}' must be epoch seconds or an ISO 8601 time")
    if not 0 <= seconds <= MAX_EPOCH:
        raise SubmissionError(f"field '{name}' is out of range (epoch seconds from 0 to "
                              f"{MAX_EPOCH}, i.e. 1970 to the year 9999)")
    return seconds


def parse_submission(
    data: bytes | str, banks: Mapping[str, Bank], *, source: str = "submission"
) -> Submission:
    """Validate one submission against the known banks; raises SubmissionError."""

    def fail(problem: str) -> SubmissionError:
        return SubmissionError(f"{source}: {problem}")

    raw_bytes = data.encode("utf-8") if isinstance(data, str) else data
    if len(raw_bytes) > MAX_BYTES:
        raise fail(f"too large (larger than {MAX_BYTES} bytes, the limit)")
    try:
        decoded = raw_bytes.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise fail(f"not valid JSON: not UTF-8 text (byte {exc.start} cannot be "
                   "decoded)") from None
    try:
        obj = json.loads(decoded)
    except json.JSONDecodeError as exc:
        raise fail(f"not valid JSON: {exc}") from None
    if not isinstance(obj, dict):
        raise fail("must be a JSON object")
    if obj.get("format") != FORMAT:
        raise fail(f"field 'format' must be \"{FORMAT}\"")
    for name in ("learner_id", "quiz_id", "bank_version"):
        if not isinstance(obj.get(name), str) or not obj[name].strip():
            raise fail(f"field '{name}' must be a non-empty string")
    if len(obj["learner_id"]) > 200:
        raise fail("field 'learner_id' is longer than 200 characters")
    bank = banks.get(obj["quiz_id"])
    if bank is None:
        raise fail(f"unknown quiz '{obj['quiz_id']}'")
    if obj["bank_version"] != bank.version:
        raise fail(f"bank version {obj['bank_version']} of quiz '{bank.quiz_id}' is outdated "
                   f"(the grader has {bank.version}); retake the quiz with the current bank")
    try:
        started = timestamp(obj.get("started_at"), "started_at")
        submitted = timestamp(obj.get("submitted_at"), "submitted_at")
    except SubmissionError as exc:
        raise fail(exc.message.removeprefix("quizzes: error: ")) from None
    if submitted < started:
        raise fail("'submitted_at' is before 'started_at'")
    attempt = obj.get("attempt", 1)
    if not isinstance(attempt, int) or isinstance(attempt, bool) \
            or not 1 <= attempt <= MAX_ATTEMPT:
        raise fail("field 'attempt' must be a positive integer")
    try:
        lang = language(str(obj.get("lang") or "en"))
    except ValueError as exc:
        raise fail(f"field 'lang': {exc}") from None
    answers_raw = obj.get("answers")
    if not isinstance(answers_raw, dict):
        raise fail("field 'answers' must be an object mapping item ids to answers")
    known = {it.common.id for it in bank.items}
    labs = {it.common.id for it in bank.items if it.common.type == "lab"}
    answers = []
    for item_id, entry in sorted(answers_raw.items()):
        if item_id not in known:
            raise fail(f"answer for unknown item '{item_id}' of quiz '{bank.quiz_id}'")
        if not isinstance(entry, dict) or "response" not in entry:
            raise fail(f"answer '{item_id}' must be an object with a 'response'")
        response = entry["response"]
        if item_id in labs and isinstance(response, str):
            size = len(response.encode("utf-8", "surrogatepass"))
            if size > MAX_LAB_TEXT:
                raise fail(f"answer '{item_id}': the lab answer is {size} bytes, larger than "
                           f"{MAX_LAB_TEXT} bytes (64 KiB, the limit)")
        elif not _plain(response):
            raise fail(f"answer '{item_id}': response must be text, a number or a list of text")
        at = entry.get("answered_at")
        try:
            answered = None if at is None else timestamp(at, f"answers.{item_id}.answered_at")
        except SubmissionError as exc:
            raise fail(exc.message.removeprefix("quizzes: error: ")) from None
        answers.append((item_id, Answer(response, answered)))
    learner_name = obj.get("learner_name", obj["learner_id"])
    if not isinstance(learner_name, str):
        raise fail("field 'learner_name' must be a string")
    digest = hashlib.sha256(canonical_json(obj).encode("utf-8")).hexdigest()
    return Submission(obj["learner_id"].strip(),
                      learner_name.strip() or obj["learner_id"].strip(),
                      bank.quiz_id, bank.version, started, submitted, tuple(answers), digest,
                      attempt, lang)


def _plain(value: Any) -> bool:
    if isinstance(value, str):
        return len(value) <= MAX_TEXT
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return True
    if isinstance(value, list):
        return len(value) <= 64 and all(isinstance(v, str) and len(v) <= 200 for v in value)
    return False
