"""The attempts policy of a quiz: how many attempts, the retry penalty, which counts.

``policy: {attempts: 3, penalty_per_retry: 0.1, counts: best, time_limit_minutes: 30}``

* ``attempts``: attempts allowed (omitted = unlimited); later attempts are
  recorded but do not count.
* ``penalty_per_retry``: attempt k (1-based) is worth at most
  ``1 - penalty * (k - 1)`` of its raw score (never below zero).
* ``counts``: ``best`` (default), ``last`` or ``first`` counted attempt.
* ``time_limit_minutes``: answers given after the limit (from the attempt's
  ``started_at``) score zero.
* ``draw``: how many of the bank's items one attempt shows (omitted = all): the
  bank is a pool, each learner and attempt gets its own draw, covering every
  objective when ``draw`` allows (:func:`quizzes.variants.draw`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from quizzes.errors import BankError
from quizzes.i18n import DEFAULT_LANG, N_, tr

COUNTS = ("best", "last", "first")
#: What ``counts`` means, said to the learner (:meth:`Policy.describe`).
COUNTED = {"best": N_("best attempt counts"), "last": N_("last attempt counts"),
           "first": N_("first attempt counts")}


@dataclass(frozen=True, slots=True)
class Policy:
    attempts: int | None = None
    penalty_per_retry: float = 0.0
    counts: str = "best"
    time_limit_minutes: int | None = None
    draw: int | None = None

    def factor(self, attempt_no: int) -> float:
        """Multiplier applied to the raw score of attempt ``attempt_no`` (1-based)."""
        return max(0.0, 1.0 - self.penalty_per_retry * (attempt_no - 1))

    def counted(self, attempt_no: int) -> bool:
        return self.attempts is None or attempt_no <= self.attempts

    def final(self, scores: Sequence[float]) -> float | None:
        """The quiz score from the penalised scores of counted attempts, in order."""
        if not scores:
            return None
        if self.counts == "last":
            return scores[-1]
        if self.counts == "first":
            return scores[0]
        return max(scores)

    def describe(self, lang: str = DEFAULT_LANG) -> str:
        """The policy in one line, in ``lang`` (``3 attempt(s), -10% per retry, best
        attempt counts``; the exam page and the quiz service show it to the learner)."""
        parts = [tr(lang, "{n} attempt(s)").format(n=self.attempts) if self.attempts
                 else tr(lang, "unlimited attempts")]
        if self.penalty_per_retry:
            parts.append(tr(lang, "-{percent} per retry").format(
                percent=f"{self.penalty_per_retry:.0%}"))
        parts.append(tr(lang, COUNTED.get(self.counts, self.counts)))
        if self.draw:
            parts.append(tr(lang, "{n} items drawn per attempt").format(n=self.draw))
        if self.time_limit_minutes:
            parts.append(tr(lang, "{n} min time limit").format(n=self.time_limit_minutes))
        return ", ".join(parts)


def parse_policy(raw: Any, file: str) -> Policy:
    """Validate the ``policy`` mapping of a bank."""
    if raw is None:
        return Policy()

    def bad(fieldname: str, problem: str) -> BankError:
        return BankError(f"{file}: quiz: field 'policy.{fieldname}': {problem}")

    if not isinstance(raw, Mapping):
        raise BankError(f"{file}: quiz: field 'policy': must be a mapping")
    unknown = set(raw) - {"attempts", "penalty_per_retry", "counts", "time_limit_minutes",
                        "draw"}
    if unknown:
        raise bad(sorted(unknown)[0], "unknown field")
    attempts = raw.get("attempts")
    if attempts is not None and (not isinstance(attempts, int) or isinstance(attempts, bool)
                                 or attempts < 1):
        raise bad("attempts", "must be a positive integer")
    penalty = raw.get("penalty_per_retry", 0.0)
    if not isinstance(penalty, int | float) or isinstance(penalty, bool) or not 0 <= penalty <= 1:
        raise bad("penalty_per_retry", "must be a number between 0 and 1")
    counts = raw.get("counts", "best")
    if counts not in COUNTS:
        raise bad("counts", f"must be one of {', '.join(COUNTS)}")
    limit = raw.get("time_limit_minutes")
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 1):
        raise bad("time_limit_minutes", "must be a positive integer")
    draw = raw.get("draw")
    if draw is not None and (not isinstance(draw, int) or isinstance(draw, bool) or draw < 1):
        raise bad("draw", "must be a positive integer (items shown per attempt)")
    return Policy(attempts, float(penalty), str(counts), limit, draw)


def as_mapping(policy: Policy) -> Mapping[str, Any]:
    return {"attempts": policy.attempts, "penalty_per_retry": policy.penalty_per_retry,
            "counts": policy.counts, "time_limit_minutes": policy.time_limit_minutes,
            "draw": policy.draw}
