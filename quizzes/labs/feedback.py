"""The hint ladder and the checks of one learner at one lab (the widget's logic).

After each miss the learner may climb one rung: first the lab's hints, then the
relevant lines of Slurm's documentation; the ladder never holds the answer.
`LabSession` applies the quiz engine's attempts policy (`quizzes.policy.Policy`)
to the checks: at most ``attempts`` checks, each retry worth
``1 - penalty_per_retry * (k - 1)``; a pass or the last allowed miss closes it.

A session speaks its ``lang`` (messages of the ``quizzes`` gettext catalogue); the hints
come from the lab it is given (`quizzes.labs.i18n.localise` puts them in that language),
the documentation lines are Slurm's man pages, quoted in English.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from quizzes.i18n import DEFAULT_LANG, tr
from quizzes.labs.model import Lab, Verdict
from quizzes.policy import Policy


def ladder(lab: Lab, lang: str = DEFAULT_LANG) -> tuple[str, ...]:
    """The rungs in order: hints, then documentation lines (rung labels in ``lang``)."""
    return tuple(tr(lang, "Hint: {hint}").format(hint=h) for h in lab.hints) + tuple(
        tr(lang, "From the documentation: {line}").format(line=d) for d in lab.docs)


def hint(lab: Lab, rung: int, lang: str = DEFAULT_LANG) -> str | None:
    """Rung ``rung`` (0-based) of the ladder, or None past its top."""
    rungs = ladder(lab, lang)
    return rungs[rung] if 0 <= rung < len(rungs) else None


@dataclass
class LabSession:
    """One learner's checks of one lab under a quiz policy."""

    lab: Lab
    policy: Policy = field(default_factory=Policy)
    checks: list[Verdict] = field(default_factory=list)
    rung: int = 0
    lang: str = DEFAULT_LANG

    @property
    def passed(self) -> bool:
        return any(v.passed for v in self.checks)

    @property
    def checks_left(self) -> int | None:
        limit = self.policy.attempts
        return None if limit is None else max(0, limit - len(self.checks))

    @property
    def closed(self) -> bool:
        return self.passed or self.checks_left == 0

    @property
    def score(self) -> float:
        """The lab's score: the penalised pass, 0 without one; a practice lab scores 0."""
        if not self.lab.counted:
            return 0.0
        for k, verdict in enumerate(self.checks, start=1):
            if verdict.passed:
                return self.policy.factor(k)
        return 0.0

    def check(self, answer: str) -> Verdict:
        """Grade ``answer`` (counts as a check unless it is empty or the lab is closed)."""
        from quizzes.labs import check

        t = self.lang
        if self.passed:
            return Verdict(True, tr(t, "Already passed: nothing more to check."))
        if self.checks_left == 0:
            return Verdict(False, tr(t, "No checks left ({used} of {attempts} used).").format(
                used=len(self.checks), attempts=self.policy.attempts))
        if not answer.strip():
            return Verdict(False, tr(t, "The answer is empty: write it, then check "
                                        "(not counted)."))
        verdict = check(self.lab.id, answer)
        self.checks.append(verdict)
        return verdict

    def next_hint(self) -> str:
        """The next rung after a miss (a hint is earned by a miss, never before one)."""
        misses = sum(1 for v in self.checks if not v.passed)
        t = self.lang
        if misses == 0:
            return tr(t, "Check an answer first: hints come after a miss.")
        if self.rung >= misses:
            return tr(t, "One hint per miss: check another answer to climb further.")
        text = hint(self.lab, self.rung, t)
        if text is None:
            return tr(t, "No more hints: re-read the task and the feedback.")
        self.rung += 1
        return text

    def status(self) -> str:
        """``2 checks used, 1 left`` / ``passed (score 0.9)`` for the widget header
        (in pt-BR with a decimal comma: ``pontuação 0,9``)."""
        t = self.lang
        score = f"{self.score:g}".replace(".", "," if t == "pt-BR" else ".")
        tag = tr(t, "practice, not counted") if self.lab.practice \
            else tr(t, "score {score}").format(score=score)
        if self.passed:
            return tr(t, "passed on check {n} ({tag})").format(n=len(self.checks), tag=tag)
        left = self.checks_left
        more = tr(t, "unlimited checks") if left is None \
            else tr(t, "{n} check(s) left").format(n=left)
        return tr(t, "{n} check(s) used, {more} ({tag})").format(n=len(self.checks),
                                                                 more=more, tag=tag)
