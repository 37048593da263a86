"""What a lab is: a task, starting files, an injected event and a checker.

A `Lab` is data (frozen): the task statement, the file the learner edits and its
skeleton, the lab's other starting files (``preprocess.sh``...), what the lab
does to the cluster while the answer runs (`Event`: a node failure at a time),
how the answer is graded (a checker name in `quizzes.labs.checkers`, or a
diagnose scenario in `quizzes.labs.diagnose`), and the hint ladder: hints first,
then the relevant lines of Slurm's documentation, never the answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from minislurm.errors import SlurmError
from quizzes.i18n import DEFAULT_LANG, Msg, tr

#: What a lab answer may be: a batch script (or command lines that submit one),
#: a shell snippet, or a diagnosis (a word or a sentence).
KINDS = ("script", "snippet", "diagnose")

#: Largest answer a lab reads (bytes of UTF-8).
MAX_ANSWER_BYTES = 64 * 1024


class Refusal(SlurmError):
    """An answer the lab does not play (shell it does not interpret, a size limit): the
    reason as a message (``said``), said in the learner's language by the verdict;
    ``message`` is its English text."""

    def __init__(self, said: Msg) -> None:
        super().__init__(said.render())
        self.said = said


@dataclass(frozen=True, slots=True)
class Event:
    """An event the lab injects ``at`` seconds after the job named ``job`` (or the
    first job) starts.

    ``kind`` ``node_failure``: the job's first node fails (``scontrol update
    nodename=... state=down`` as slurmctld sees a dead slurmd). ``preemption``: another
    user (``submit``: the user and sbatch arguments) submits a job of a preempting QOS
    pinned to the job's first node (``--nodelist``), and preempt/qos does the rest with
    the cluster's ``PreemptType``/``PreemptMode``.
    """

    kind: str
    at: int = 600
    job: str = ""
    submit: tuple[str, tuple[str, ...]] = ("", ())


@dataclass(frozen=True, slots=True)
class Lab:
    """One lab of the catalogue (`quizzes.labs.catalog.LABS`)."""

    id: str
    lesson: str
    title: str
    task: str
    kind: str
    answer_file: str = "answer.sh"
    skeleton: str = ""
    files: tuple[tuple[str, str], ...] = ()
    alternate_files: tuple[tuple[str, str], ...] = ()  # replayed with these too
    checker: str = ""
    scenario: str = ""  # diagnose labs: the scenario name in quizzes.labs.diagnose
    event: Event | None = None
    hints: tuple[str, ...] = ()
    docs: tuple[str, ...] = ()
    counted: bool = True
    #: Jobs other users have queued before the answer runs: (user, sbatch arguments).
    setup: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: QOS the lab's cluster lets a user use on top of the course's associations
    #: (``sacctmgr modify user student set qos+=scavenger``): (user, QOS).
    grant_qos: tuple[tuple[str, str], ...] = ()
    horizon: int = 3 * 86400  # simulated seconds a check may play at most
    objectives: tuple[str, ...] = field(default=())

    @property
    def practice(self) -> bool:
        """A practice lab (needs real execution) is shown but never counted."""
        return not self.counted


@dataclass(frozen=True, slots=True)
class Verdict:
    """The grading of one answer: pass or not, feedback in Slurm's terms, and what
    Slurm printed when it refused something (``slurm``).

    ``feedback`` and ``details`` are English (the gradebook's text); a checker's verdict
    also carries them as messages (``message``, ``detail_messages``: `quizzes.i18n.Msg`,
    made by :meth:`said`) so the CLI, the widget and a quiz say them in the learner's
    language, Slurm's words (commands, options, states, reasons, job ids) being their
    arguments, the same bytes in every language."""

    passed: bool
    feedback: str
    details: tuple[str, ...] = ()
    slurm: str = ""
    message: Msg | None = None
    detail_messages: tuple[Msg, ...] = ()

    @classmethod
    def said(cls, passed: bool, message: Msg, details: tuple[Msg, ...] = (),
             slurm: str = "") -> Verdict:
        """A verdict whose feedback is ``message`` (its English text kept alongside)."""
        return cls(passed, message.render(), tuple(d.render() for d in details), slurm,
                   message, details)

    def in_language(self, lang: str) -> tuple[str, tuple[str, ...]]:
        """(feedback, details) in ``lang``; the English text when the verdict has no
        message (a plain-text verdict: the lab's input limits, a file read error)."""
        if self.message is None:
            return self.feedback, self.details
        details = tuple(d.render(lang) for d in self.detail_messages) \
            if len(self.detail_messages) == len(self.details) else self.details
        return self.message.render(lang), details

    def text(self, lang: str = DEFAULT_LANG) -> str:
        """Feedback, details and Slurm's own words, as the CLI and the widget print them.

        The frame (the pass/not-yet lead-in, the line before Slurm's words) and the
        checkers' sentences are in ``lang`` (:meth:`in_language`); what Slurm printed
        (``slurm``) is Slurm's bytes."""
        feedback, details = self.in_language(lang)
        lead = tr(lang, "PASS: {feedback}") if self.passed \
            else tr(lang, "NOT YET: {feedback}")
        lines = [lead.format(feedback=feedback)]
        lines += [f"  - {d}" for d in details]
        if self.slurm:
            lines += [tr(lang, "Slurm said:"),
                      *("  " + s for s in self.slurm.rstrip().splitlines())]
        return "\n".join(lines)
