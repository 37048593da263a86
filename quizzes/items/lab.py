"""Lab items: the learner's script, command lines or diagnosis, graded on what Slurm did.

A bank entry names a lab of the catalogue (`quizzes.labs.catalog`)::

    - id: lab-first-job
      type: lab
      lab: first-job
      objectives: ["01.3"]
      prompt: "Lab: your first GPU job"
      explanation: ...

The bank holds no key: grading replays the response on a fresh minislurm cluster
on the simulated clock (`quizzes.labs.check`), exactly as the learner's check
did, so ``quizzes grade`` regrades from the submitted text and never runs it as
a process.  Practice labs (``counted: False`` in the catalogue: they need real
execution) are refused in banks: they never count toward a score.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from quizzes.items.base import Common, Outcome, Presented, as_text, fill
from quizzes.where import Where


@dataclass(frozen=True, slots=True)
class LabItem:
    """``type: lab``: ``lab: <lab id>``."""

    common: Common
    lab_id: str

    @classmethod
    def from_bank(
        cls, common: Common, raw: Mapping[str, Any], where: Where, variants: Sequence[str]
    ) -> LabItem:
        from quizzes.labs import lab

        lab_id = where.require(raw, "lab", str)
        try:
            item = lab(lab_id)
        except KeyError:
            raise where.error("lab", f"'{lab_id}' is not a lab of the catalogue") from None
        if item.practice:
            raise where.error("lab", f"'{lab_id}' is a practice lab (real execution): it is "
                                     "not counted, keep it out of banks")
        return cls(common, lab_id)

    def present(self, params: Mapping[str, Any], seed: int = 0) -> Presented:
        """The task as prose, the lab's files and starting file as fenced code (so
        :mod:`quizzes.prose` keeps their lines), and a diagnose lab's minislurm output
        in ``exhibit``: the widgets and the exam page show it as preformatted text,
        squeue's columns and line breaks intact (``lab show`` prints the same parts,
        `quizzes.labs.cli.show_text`)."""
        from quizzes.labs import lab
        from quizzes.labs.diagnose import exhibit

        item = lab(self.lab_id)
        lines = [fill(self.common.prompt, params), "",
                 f"{item.id}: {item.title} ({item.lesson})", "", item.task]
        for name, content in item.files:
            lines += ["", f"`{name}` (in the lab's folder):", "", *_fenced(content)]
        if item.skeleton:
            lines += ["", f"`{item.answer_file}` (start from this):", "",
                      *_fenced(item.skeleton)]
        shown = exhibit(item.scenario).text.rstrip("\n") if item.kind == "diagnose" else ""
        return Presented(self.common.id, "lab", "\n".join(lines), points=self.common.points,
                         exhibit=shown)

    def grade(self, response: Any, params: Mapping[str, Any], salt: str, variant: str) -> Outcome:
        from quizzes.labs import check

        text = as_text(response)
        if text is None or not text.strip():
            return Outcome(0.0, "Write the lab's answer (a script, command lines or a "
                                "diagnosis).")
        verdict = check(self.lab_id, text)
        feedback = verdict.feedback
        if verdict.slurm:  # Slurm's own words are part of the feedback the gradebook keeps
            feedback += " Slurm said: " + " ".join(verdict.slurm.split())
        return Outcome(1.0 if verdict.passed else 0.0, feedback, verdict.details)


def _fenced(text: str) -> list[str]:
    """``text`` as a fenced code block (:mod:`quizzes.prose` shows it preformatted)."""
    return ["```", *text.rstrip("\n").split("\n"), "```"]


def author_key(source: Mapping[str, Any], salt: str, item_id: str, variants: Sequence[str],
               where: Where) -> dict[str, Any]:
    """Lab items store no key; the private ``answer`` (a model answer) must pass its lab."""
    from quizzes.labs import check, lab

    lab_id = source.get("lab")
    if not isinstance(lab_id, str):
        raise where.error("lab", "is required (a lab id of the catalogue)")
    try:
        lab(lab_id)
    except KeyError:
        raise where.error("lab", f"'{lab_id}' is not a lab of the catalogue") from None
    answer = source.get("answer")
    if not isinstance(answer, str):
        raise where.error("answer", "needs a model answer (it must pass the lab)")
    verdict = check(lab_id, answer)
    if not verdict.passed:
        raise where.error("answer", f"the model answer does not pass: {verdict.feedback}")
    return {}
