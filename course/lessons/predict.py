"""What every lesson's experiment widget shares: predict, then check; and a busy indicator.

Predict, then check. Before an experiment shows its result, the learner commits a
prediction (when does the big run start? which job backfills? which node gets the
job?). `PredictStep` holds the question, an answer field and a **Check** button; the
widget's body stays hidden until the first check. Checking computes the truth from the
same simulation the widget runs (the question's ``truth`` callable), scores the guess
with `score_number` (absolute and relative error, in the question's unit) or
`score_choice` (right or wrong, with the true answer), and reveals the widget, which
from then on works as an explorer.

Busy. A widget that recomputes on every slider move shows at once that it is working:
`BusyIndicator.working` sets its label before the computation and clears it after,
also when the computation raises. ipywidgets sends a state change to the browser when
the trait is set, so the label shows while the kernel computes.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import ipywidgets as widgets

from course.i18n import N_, t, widget_lang

__all__ = ["BusyIndicator", "ChoiceQuestion", "NumberQuestion", "PredictStep", "Question",
           "Score", "score_choice", "score_number"]


@dataclass(frozen=True, slots=True)
class Score:
    """How close a prediction was.

    ``correct``: a right choice, or a number within the question's tolerance.
    ``error``: guess - truth (numbers only); ``relative``: ``|error| / |truth|``
    (numbers only; ``None`` when the truth is 0). ``message``: what the learner reads.
    """

    correct: bool
    message: str
    error: float | None = None
    relative: float | None = None


def _number(value: float, unit: str, digits: int, lang: str = "en") -> str:
    text = f"{value:,.{digits}f}"
    if lang != "en":   # pt-BR: 1.234,5
        text = text.replace(",", "\0").replace(".", ",").replace("\0", ".")
        unit = t(lang, unit) if unit else unit
    return f"{text} {unit}" if unit else text


def score_number(guess: float, truth: float, *, unit: str = "", tolerance: float = 0.0,
                 rel_tolerance: float = 0.0, digits: int = 2, low: str = N_("low"),
                 high: str = N_("high"), lang: str = "en") -> Score:
    """Score a numeric prediction: the error in ``unit`` and relative to the truth.

    ``tolerance`` (absolute, in ``unit``) or ``rel_tolerance`` (a share of the truth):
    within the larger of the two the guess counts as right.
    ``low``/``high``: the words for a guess under/over the truth ("early"/"late").
    ``lang``: the language of the message (the ``course`` catalogue; units and the
    low/high words are messages too).
    """
    if not (math.isfinite(guess) and math.isfinite(truth)):
        raise ValueError("a prediction and its truth must be finite numbers")
    if tolerance < 0 or rel_tolerance < 0:
        raise ValueError("the tolerance cannot be negative")
    tolerance = max(tolerance, rel_tolerance * abs(truth))
    error = guess - truth
    relative = abs(error) / abs(truth) if truth else None
    said = t(lang, "You predicted {guess}; the simulation says {truth}").format(
        guess=_number(guess, unit, digits, lang), truth=_number(truth, unit, digits, lang))
    if round(abs(error), digits) == 0:
        return Score(True, t(lang, "{said}: exactly right.").format(said=said), error,
                     relative)
    how = t(lang, "{amount} too {direction}").format(
        amount=_number(abs(error), unit, digits, lang),
        direction=t(lang, low if error < 0 else high))
    if relative is not None:
        share = f"{relative:.0%}".replace(".", ",") if lang != "en" else f"{relative:.0%}"
        how += t(lang, " ({share} of the true value)").format(share=share)
    if abs(error) <= tolerance:
        verdict = t(lang, "close enough (within ±{tolerance})").format(
            tolerance=_number(tolerance, unit, digits, lang))
        return Score(True, t(lang, "{said}: {how}, {verdict}.").format(
            said=said, how=how, verdict=verdict), error, relative)
    return Score(False, t(lang, "{said}: {how}.").format(said=said, how=how), error,
                 relative)


def score_choice(guess: str, truth: str, lang: str = "en") -> Score:
    """Score a choice: right, or wrong with the true answer (in ``lang``; the options are
    messages too, shown translated when the catalogue has them)."""
    shown_guess, shown_truth = t(lang, guess), t(lang, truth)
    if guess == truth:
        return Score(True, t(lang, "Right: {truth}.").format(truth=shown_truth))
    return Score(False, t(lang, "Not this time: you picked {guess}; the simulation says "
                         "{truth}.").format(guess=shown_guess, truth=shown_truth))


@dataclass(frozen=True, slots=True)
class NumberQuestion:
    """A numeric prediction; ``truth`` computes the answer from the widget's simulation."""

    prompt: str
    truth: Callable[[], float]
    unit: str = ""
    tolerance: float = 0.0
    rel_tolerance: float = 0.0
    digits: int = 2
    low: str = N_("low")
    high: str = N_("high")

    def score(self, guess: float, lang: str = "en") -> Score:
        """`score_number` of ``guess`` against the simulation's answer."""
        return score_number(float(guess), float(self.truth()), unit=self.unit,
                            tolerance=self.tolerance, rel_tolerance=self.rel_tolerance,
                            digits=self.digits, low=self.low,
                            high=self.high, lang=lang)


@dataclass(frozen=True, slots=True)
class ChoiceQuestion:
    """A choice among ``options``; ``truth`` returns the right one from the simulation."""

    prompt: str
    options: tuple[str, ...]
    truth: Callable[[], str]

    def score(self, guess: str, lang: str = "en") -> Score:
        """`score_choice` of ``guess`` against the simulation's answer."""
        if guess not in self.options:
            raise ValueError(f"{guess!r} is not one of the options")
        truth = self.truth()
        if truth not in self.options:
            raise ValueError(f"the simulation's answer {truth!r} is not one of the options")
        return score_choice(guess, truth, lang)


Question = NumberQuestion | ChoiceQuestion

_BUSY_HTML = ("<span style='color:#9a6700'><i class='fa fa-spinner fa-spin'></i> "
              "{text}</span>")


class BusyIndicator:
    """A label that says "working" while a widget recomputes (empty otherwise).

    Nested ``working`` blocks (a submit that redraws) keep the label until the
    outermost one ends, then restore the outer text.
    """

    def __init__(self, lang: str | None = None) -> None:
        self.lang = widget_lang(lang)
        self.view = widgets.HTML("")
        self._texts: list[str] = []

    @property
    def text(self) -> str:
        """What the label says now ("" when idle)."""
        return self._texts[-1] if self._texts else ""

    @property
    def shown(self) -> bool:
        """Whether the label currently says the widget is working."""
        return bool(self._texts)

    def _show(self) -> None:
        self.view.value = _BUSY_HTML.format(text=self.text) if self._texts else ""

    @contextmanager
    def working(self, text: str = N_("working…"), **args: object) -> Iterator[None]:
        """Show ``text`` (a ``course`` message, formatted with ``args``, in the widget's
        language) for the duration of the ``with`` block, even if it raises."""
        self._texts.append(t(self.lang, text).format(**args) if args else t(self.lang, text))
        self._show()
        try:
            yield
        finally:
            self._texts.pop()
            self._show()


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _prose(text: str) -> str:
    """``text`` as HTML, with Markdown's `code` spans as <code>."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", _html(text))


class PredictStep:
    """The question in front of a widget: an answer field, **Check**, the feedback.

    ``body`` (the widget's controls and results) stays hidden until the first check;
    `check` scores the answer, shows the feedback, reveals ``body`` and calls
    ``on_checked`` (the widget may move its controls to the question's setting so the
    learner sees the answer in the figure). Later checks are not possible: the widget
    is then an explorer.
    """

    def __init__(self, question: Question, body: widgets.Widget,
                 on_checked: Callable[[], None] | None = None,
                 busy: BusyIndicator | None = None, lang: str | None = None) -> None:
        self.lang = widget_lang(lang) if lang or busy is None else busy.lang
        lang = self.lang
        self.question = question
        self.body = body
        self.on_checked = on_checked
        self.busy = busy or BusyIndicator(lang)
        self.answer: widgets.ValueWidget
        your_answer = t(lang, "your answer")
        if isinstance(question, ChoiceQuestion):
            # shown in the learner's language, the value stays the option itself
            self.answer = widgets.Dropdown(options=[(t(lang, o), o) for o in question.options],
                                           value=None, description=your_answer,
                                           style={"description_width": "initial"},
                                           layout=widgets.Layout(width="420px"))
        else:
            unit = t(lang, question.unit) if question.unit else ""
            self.answer = widgets.FloatText(value=0.0, description=f"{your_answer} ({unit})"
                                            if unit else your_answer,
                                            style={"description_width": "initial"})
        self.button = widgets.Button(description=t(lang, "Check"), button_style="primary",
                                     icon="check")
        self.button.on_click(lambda _b: self.check())
        self.feedback = widgets.HTML("")
        self.score: Score | None = None
        body.layout.display = "none"
        predict_first = t(lang, "Predict first:")
        self.view = widgets.VBox([
            widgets.HTML(f"<b>{predict_first}</b> {_prose(t(lang, question.prompt))}"),
            widgets.HBox([self.answer, self.button, self.busy.view]), self.feedback])

    @property
    def checked(self) -> bool:
        """Whether the learner has committed a prediction (the body is shown)."""
        return self.score is not None

    def check(self, guess: float | str | None = None) -> Score | None:
        """Score ``guess`` (default: the answer field), show the feedback, reveal the body.

        With no answer picked (or no finite number) yet, say so and reveal nothing
        (returns ``None``).
        """
        if self.checked:
            return self.score
        value = self.answer.value if guess is None else guess
        if value is None:
            pick = t(self.lang, "Pick an answer first.")
            self.feedback.value = f"<span style='color:#cf222e'>{pick}</span>"
            return None
        if isinstance(self.question, NumberQuestion) and not math.isfinite(float(value)):
            typed = t(self.lang, "Type a number first.")
            self.feedback.value = f"<span style='color:#cf222e'>{typed}</span>"
            return None
        with self.busy.working("computing the answer…"):
            if isinstance(self.question, ChoiceQuestion):
                score = self.question.score(str(value), self.lang)
            else:
                score = self.question.score(float(value), self.lang)
            self.score = score
            self.answer.disabled = True
            self.button.disabled = True
            colour = "#1a7f37" if score.correct else "#cf222e"
            explore = t(self.lang, "Now explore: the widget below is yours.")
            self.feedback.value = (f"<span style='color:{colour}'>{_html(score.message)}"
                                   f"</span> {explore}")
            self.body.layout.display = None
            if self.on_checked is not None:
                self.on_checked()
        return score

