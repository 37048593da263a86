"""The notebook face of a lab: task, answer box (or a file in JupyterLab's editor), Check,
feedback and the hint ladder.

``lab_widget("first-job")`` shows the task (and, for a diagnose lab, minislurm's
output), a Textarea holding the lab's skeleton, a **Check** button and a **Hint**
button.  ``lab_widget("first-job", file="train.sh")`` checks a file instead: the
widget writes the skeleton there if the file does not exist yet and links it, so
JupyterLab opens it in its editor; each Check reads the saved file.  All logic is
in `quizzes.labs.feedback.LabSession` (attempts policy, hints); this class only
wires widgets to it, and its callbacks are plain methods tested headless.

``lang=`` (default `quizzes.i18n.resolve`: ``$COURSE_LANG``, else the ``.course-lang``
marker of the kernel's folder, else English) picks the language of the title, task and
hints (`quizzes.labs.i18n`, falling back to English for a stale translation) and of the
widget's own words and the checkers' feedback (the ``quizzes`` gettext catalogue).
Slurm's words, the lab's files and minislurm's output are the same bytes in every
language.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from quizzes.i18n import DEFAULT_LANG, resolve, tr
from quizzes.labs.catalog import lab
from quizzes.labs.feedback import LabSession
from quizzes.labs.i18n import localise
from quizzes.labs.model import MAX_ANSWER_BYTES, Lab, Verdict
from quizzes.policy import Policy
from quizzes.prose import code_block, to_html
from quizzes.widget import TYPED_ANSWER


def _lines(text: str, kind: str) -> str:
    """Feedback and hints (``kind``: the block's class): their line breaks kept, in the
    page's font, wrapped between words only (a <pre> in JupyterLab's output area breaks
    words anywhere)."""
    return (f"<div class='{kind}' style='white-space: pre-wrap; word-break: normal;"
            f" overflow-wrap: normal; margin: 4px 0'>{html.escape(text)}</div>")


def task_html(item: Lab, lang: str = DEFAULT_LANG) -> str:
    """The task as prose, and what is code as code: minislurm's output for a diagnose
    lab, the lab's files and the starting file (``lab show`` prints the same parts).
    ``item`` is shown as given: `quizzes.labs.i18n.localise` it first for ``lang``."""
    from quizzes.labs.diagnose import exhibit

    def code(name: str) -> str:
        return f"<code>{html.escape(name)}</code>"

    parts = [f"<p><i>{html.escape(f'{item.id}: {item.title} ({item.lesson})')}</i></p>"]
    if item.practice:
        parts.append("<p>" + tr(lang, "<b>PRACTICE</b>: needs real execution; not counted "
                                      "toward the score.") + "</p>")
    parts.append(to_html(item.task))
    if item.kind == "diagnose":
        parts.append(code_block(exhibit(item.scenario).text.rstrip("\n")))
    for name, content in item.files:
        parts.append("<p>" + tr(lang, "{name} (in the lab's folder):").format(name=code(name))
                     + "</p>" + code_block(content.rstrip("\n")))
    if item.skeleton:
        parts.append("<p>" + tr(lang, "{name} (start from this):").format(
            name=code(item.answer_file)) + "</p>" + code_block(item.skeleton.rstrip("\n")))
    return "".join(parts)


class LabWidget:
    """The widgets of one lab (``.view`` is what to display)."""

    def __init__(self, lab_id: str, *, policy: Policy | None = None,
                 file: str | Path | None = None, lang: str | None = None) -> None:
        import ipywidgets as w

        self.lang = t = resolve(lang)
        item = localise(lab(lab_id), t)
        self.session = LabSession(item, policy or Policy(), lang=t)
        self.file = Path(file) if file is not None else None
        self.read_error: str | None = None  # why the file could not be read, at the last Check
        self.header = w.HTML()
        self.task = w.HTML(task_html(item, t))
        self.answer = w.Textarea(value=item.skeleton if item.kind != "diagnose" else "",
                                 placeholder=tr(t, "your answer"), rows=8,
                                 layout=w.Layout(width="95%"), **TYPED_ANSWER)
        self.link = w.HTML()
        if self.file is not None:
            if not self.file.exists() and item.skeleton:
                self.file.write_text(item.skeleton, encoding="utf-8")
            link = (f"<a href='{html.escape(self.file.as_posix())}' target='_blank'>"
                    f"{html.escape(self.file.name)}</a>")
            self.link.value = tr(t, "Edit {file} in JupyterLab's editor, save it, then "
                                    "Check.").format(file=link)
        self.check_button = w.Button(description=tr(t, "Check"), button_style="primary")
        self.hint_button = w.Button(description=tr(t, "Hint"))
        self.feedback = w.HTML()
        self.hints = w.HTML()
        self.check_button.on_click(lambda _b: self.on_check())
        self.hint_button.on_click(lambda _b: self.on_hint())
        box = [self.header, self.task]
        box += [self.link] if self.file is not None else [self.answer]
        box += [w.HBox([self.check_button, self.hint_button]), self.feedback, self.hints]
        self.view = w.VBox(box)
        self._refresh()

    def text(self) -> str:
        """The answer: the Textarea, or the saved file (at most 64 KiB + 1 byte read;
        a file that cannot be read gives "" and sets ``read_error``)."""
        self.read_error = None
        if self.file is None:
            return str(self.answer.value)
        try:
            with self.file.open("rb") as fh:
                data = fh.read(MAX_ANSWER_BYTES + 1)
        except OSError as exc:
            self.read_error = tr(self.lang, "cannot read {file}: {reason}").format(
                file=self.file, reason=exc.strerror)
            return ""
        return data.decode("utf-8", errors="surrogateescape")

    def on_check(self) -> Verdict:
        text = self.text()
        error = self.read_error
        verdict = Verdict(False, error) if error else self.session.check(text)
        colour = "#1a7f37" if verdict.passed else "#b35900"
        self.feedback.value = (f"<div style='color: {colour}'>"
                               f"{_lines(verdict.text(self.lang), 'lab-feedback')}</div>")
        self._refresh()
        return verdict

    def on_hint(self) -> str:
        text = self.session.next_hint()
        self.hints.value += _lines(text, 'lab-hint')
        return text

    def _refresh(self) -> None:
        item = self.session.lab
        self.header.value = (f"<b>Lab {html.escape(item.id)}</b>: {html.escape(item.title)}"
                             f" &mdash; {html.escape(self.session.status())}")
        self.check_button.disabled = self.session.closed


def lab_widget(lab_id: str, *, policy: Policy | None = None,
               file: str | Path | None = None, lang: str | None = None) -> Any:
    """Display-ready widget of a lab (a counted lab uses its lesson bank's policy when
    the bank can be read; practice labs have unlimited checks), in ``lang`` (default:
    `quizzes.i18n.resolve`)."""
    if policy is None and lab(lab_id).counted:
        policy = _bank_policy(lab(lab_id).lesson)
    return LabWidget(lab_id, policy=policy, file=file, lang=lang).view


def _bank_policy(lesson: str) -> Policy | None:
    try:
        from quizzes.bank import load_banks

        bank = load_banks().get(lesson)
    except Exception:  # no banks here: the lab still works with unlimited checks
        return None
    return bank.policy if bank is not None else None
