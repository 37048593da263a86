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
from dataclasses import dataclass, replace
from typing import Any

from quizzes.i18n import M
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
        from quizzes.labs.i18n import statement_markdown

        item = lab(self.lab_id)
        prompt = fill(self.common.prompt, params) + "\n\n" + statement_markdown(item)
        shown = exhibit(item.scenario).text.rstrip("\n") if item.kind == "diagnose" else ""
        return Presented(self.common.id, "lab", prompt, points=self.common.points,
                         exhibit=shown)

    def in_language(self, presented: Presented, lang: str) -> Presented:
        """``presented`` (from :meth:`present`) with the lab's statement in ``lang``
        (`quizzes.labs.i18n.statement_markdown`: title, task and the files' labels; the
        English statement when the lab's translation is stale or missing).  The item's
        own prompt before it is left to the bank's translation
        (`quizzes.translations.Translation.prompt`); the files, the starting file and a
        diagnose lab's minislurm output are the same bytes in every language."""
        from quizzes.labs import lab
        from quizzes.labs.i18n import statement_markdown

        item = lab(self.lab_id)
        english = statement_markdown(item)
        if not presented.prompt.endswith(english):
            return presented
        said = statement_markdown(item, lang)
        return replace(presented, prompt=presented.prompt[:-len(english)] + said)

    def grade(self, response: Any, params: Mapping[str, Any], salt: str, variant: str) -> Outcome:
        from quizzes.labs import check

        text = as_text(response)
        if text is None or not text.strip():
            return Outcome.said(0.0, M("Write the lab's answer (a script, command lines or a "
                                       "diagnosis)."))
        verdict = check(self.lab_id, text)
        feedback, message = verdict.feedback, verdict.message
        if verdict.slurm:  # Slurm's own words are part of the feedback the gradebook keeps
            said = " ".join(verdict.slurm.split())
            feedback += " Slurm said: " + said
            if message is not None:
                message = M("{feedback} Slurm said: {slurm}", feedback=message, slurm=said)
        # the checker's sentences as messages: the learner reads them in their language
        # (Outcome.in_language), the gradebook keeps the English ``feedback``
        return Outcome(1.0 if verdict.passed else 0.0, feedback, verdict.details,
                       message=message, detail_messages=verdict.detail_messages)


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
