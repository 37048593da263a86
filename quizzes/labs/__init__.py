"""Hands-on labs: the learner does Slurm, and is graded on what Slurm did.

A lab (`quizzes.labs.model.Lab`, catalogue in `quizzes.labs.catalog`) is a task,
starting files and a checker.  `check` plays the learner's text on a fresh
minislurm cluster on the simulated clock (`quizzes.labs.runner`; nothing the
learner wrote runs as a process) and grades Slurm's records
(`quizzes.labs.checkers`), or grades a diagnosis against what minislurm reports
(`quizzes.labs.diagnose`).
"""

from __future__ import annotations

from functools import lru_cache

from quizzes.i18n import M
from quizzes.labs.catalog import LABS, LESSONS, by_lesson, lab
from quizzes.labs.model import Lab, Verdict
from quizzes.labs.runner import LabLimit, decode_answer

__all__ = ["LABS", "LESSONS", "Lab", "Verdict", "by_lesson", "check", "check_text", "lab"]


def check(lab_id: str, answer: bytes | str) -> Verdict:
    """Grade one answer (bytes or text) to lab ``lab_id``; never raises for bad answers."""
    item = lab(lab_id)
    try:
        text = decode_answer(answer)
    except LabLimit as exc:
        return Verdict.said(False, exc.said)
    return check_text(item.id, text)


@lru_cache(maxsize=1024)
def check_text(lab_id: str, text: str) -> Verdict:
    """Grade decoded text (cached: a class sends the same answers many times; a play is
    deterministic, so the verdict of a text never changes)."""
    from quizzes.labs import checkers, diagnose

    item = lab(lab_id)
    if not text.strip():
        return Verdict.said(False, M("The answer is empty: write it, then check."))
    if item.kind == "diagnose":
        return diagnose.grade(item.scenario, text)
    from quizzes.labs.runner import play

    trial = play(item, text)
    return checkers.CHECKERS[item.checker](trial)
