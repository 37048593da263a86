"""The notebook face of a quiz: an ipywidgets UI over :class:`quizzes.session.QuizSession`.

``quiz("02-sbatch", learner_id="ada")`` shows one item at a time (``mode="one"``,
Previous/Next) or all items (``mode="all"``); each item has a Check button that
gives immediate correct/incorrect feedback and the explanation, and the header
shows the score so far, attempts left and the time limit.  Finish saves the
submission JSON (and sends it to ``quizzes serve`` when ``service_url`` is
given, showing the score and certificate ID it returns).  All logic lives in the
session; this module only wires widgets to it.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from minislurm.errors import SlurmError
from quizzes.bank import load_banks
from quizzes.items.base import Presented
from quizzes.prose import code_block, inline, to_html
from quizzes.session import Feedback, NoAnswer, QuizSession, attempts_used


def _input_for(item: Presented) -> Any:
    import ipywidgets as w

    if item.type == "single" or (item.type == "scheduler" and item.options):
        return w.RadioButtons(options=[(text, oid) for oid, text in item.options], value=None,
                              layout=w.Layout(width="auto"))
    if item.type == "multiple":
        return w.VBox([w.Checkbox(description=text, value=False, indent=False,
                                  layout=w.Layout(width="auto"), tooltip=oid)
                       for oid, text in item.options])
    if item.type == "sbatch":
        return w.Textarea(placeholder="#SBATCH --nodes=2\n#SBATCH ...  or  sbatch -N2 ...",
                          layout=w.Layout(width="90%", height="90px"))
    unit = f" ({item.unit})" if item.unit else ""
    return w.Text(placeholder=f"your answer{unit}", layout=w.Layout(width="50%"))


def prompt_html(item: Presented) -> str:
    """The item's heading, its prompt as prose (:mod:`quizzes.prose`) and its exhibit as
    preformatted command output."""
    head = f"<b>{html.escape(item.item_id)}</b> ({item.points:g} pt)"
    exhibit = code_block(item.exhibit) if item.exhibit else ""
    return f"<div class='quiz-prompt'>{head}{to_html(item.prompt)}{exhibit}</div>"


def feedback_html(fb: Feedback) -> str:
    """The verdict once (it opens the grader's feedback line), what was expected, the
    details and the explanation, as prose."""
    colour = "#1a7f37" if fb.correct else ("#9a6700" if fb.score else "#cf222e")
    extra = "".join(f"<br>{html.escape(d)}" for d in fb.details)
    return (f"<div class='quiz-feedback'><b style='color:{colour}'>{inline(fb.feedback)}</b>"
            f"{extra}<div class='quiz-explanation'><i>{to_html(fb.explanation)}</i></div>"
            "</div>")


def _value_of(item: Presented, box: Any) -> Any:
    if item.type == "multiple":
        return [oid for (oid, _), cb in zip(item.options, box.children, strict=True) if cb.value]
    return box.value


class QuizWidget:
    """Builds and holds the widgets of one session (``.view`` is what to display)."""

    def __init__(self, session: QuizSession, *, mode: str = "one",
                 folder: str | Path = "submissions", service_url: str | None = None) -> None:
        import ipywidgets as w

        self.session, self.mode, self.folder, self.url = session, mode, folder, service_url
        self.items = session.items()
        self.index = 0
        self.header = w.HTML()
        self.cards = [self._card(i) for i in self.items]
        self.prev = w.Button(description="Previous")
        self.next = w.Button(description="Next")
        self.finish = w.Button(description="Finish and hand in", button_style="primary")
        self.result = w.HTML()
        self.prev.on_click(lambda _b: self._move(-1))
        self.next.on_click(lambda _b: self._move(1))
        self.finish.on_click(lambda _b: self._finish())
        self.body = w.VBox()
        nav = [self.prev, self.next] if mode == "one" else []
        self.view = w.VBox([self.header, self.body, w.HBox([*nav, self.finish]), self.result])
        self._refresh()

    def _card(self, item: Presented) -> Any:
        import ipywidgets as w

        box = _input_for(item)
        check = w.Button(description="Check", button_style="info")
        out = w.HTML()
        prompt = w.HTML(prompt_html(item), layout=w.Layout(width="auto"))

        def on_check(_b: Any) -> None:
            try:
                fb = self.session.answer(item.item_id, _value_of(item, box))
            except NoAnswer as exc:
                hint = exc.message.removeprefix("quizzes: error: ")
                out.value = f"<span style='color:#9a6700'>{html.escape(hint)}</span>"
                return
            except SlurmError as exc:
                out.value = f"<span style='color:#cf222e'>{html.escape(exc.message)}</span>"
                return
            except Exception as exc:  # never a traceback out of a click handler
                out.value = ("<span style='color:#cf222e'>This answer could not be checked: "
                             f"{html.escape(f'{type(exc).__name__}: {exc}')}</span>")
                return
            out.value = feedback_html(fb)
            check.disabled = True
            self._refresh()

        check.on_click(on_check)
        return w.VBox([prompt, box, check, out])

    def _move(self, step: int) -> None:
        self.index = max(0, min(len(self.cards) - 1, self.index + step))
        self._refresh()

    def _refresh(self) -> None:
        got, asked = self.session.score()
        left = self.session.attempts_left
        remaining = self.session.remaining_seconds()
        bits = [f"<b>{html.escape(self.session.bank.title)}</b>",
                f"score so far {got:g} / {asked:g} (of {self.session.max_points:g})",
                f"attempt {self.session.attempt}" + ("" if left is None else f", {left} left")]
        if remaining is not None:
            bits.append(f"time left at last action: {remaining // 60} min")
        self.header.value = " &middot; ".join(bits)
        if self.mode == "one":
            self.body.children = [self.cards[self.index]]
            self.prev.disabled = self.index == 0
            self.next.disabled = self.index == len(self.cards) - 1
        else:
            self.body.children = self.cards

    def _finish(self) -> None:
        path = self.session.save(self.folder)
        message = f"Saved {html.escape(str(path))}."
        if self.url:
            try:
                reply = self.session.send(self.url)
            except SlurmError as exc:
                message += f" <span style='color:#cf222e'>{html.escape(exc.message)}</span>"
            else:
                message += f" Graded: {reply['score']:.0%}."
                if reply.get("certificate_id"):
                    message += (f" Certificate <code>{html.escape(reply['certificate_id'])}"
                                "</code> (verify at "
                                f"{html.escape(reply.get('verify_url', ''))}).")
        self.finish.disabled = True
        self.result.value = message


def quiz(quiz_id: str, learner_id: str, learner_name: str = "", *, mode: str = "one",
         folder: str | Path = "submissions", service_url: str | None = None,
         banks: str | None = None) -> Any:
    """Display-ready widget for one quiz (the previous saved attempts count)."""
    bank = load_banks(banks)[quiz_id]
    session = QuizSession(bank, learner_id, learner_name,
                          attempts_used=attempts_used(folder, learner_id, quiz_id))
    return QuizWidget(session, mode=mode, folder=folder, service_url=service_url).view
