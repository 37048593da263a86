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


def _number(value: float, unit: str, digits: int) -> str:
    text = f"{value:,.{digits}f}"
    return f"{text} {unit}" if unit else text


def score_number(guess: float, truth: float, *, unit: str = "", tolerance: float = 0.0,
                 rel_tolerance: float = 0.0, digits: int = 2, low: str = "low",
                 high: str = "high") -> Score:
    """Score a numeric prediction: the error in ``unit`` and relative to the truth.

    ``tolerance`` (absolute, in ``unit``) or ``rel_tolerance`` (a share of the truth):
    within the larger of the two the guess counts as right.
    ``low``/``high``: the words for a guess under/over the truth ("early"/"late").
    """
    if not (math.isfinite(guess) and math.isfinite(truth)):
        raise ValueError("a prediction and its truth must be finite numbers")
    if tolerance < 0 or rel_tolerance < 0:
        raise ValueError("the tolerance cannot be negative")
    tolerance = max(tolerance, rel_tolerance * abs(truth))
    error = guess - truth
    relative = abs(error) / abs(truth) if truth else None
    said = f"You predicted {_number(guess, unit, digits)}; the simulation says " \
           f"{_number(truth, unit, digits)}"
    if round(abs(error), digits) == 0:
        return Score(True, f"{said}: exactly right.", error, relative)
    how = f"{_number(abs(error), unit, digits)} too {low if error < 0 else high}"
    if relative is not None:
        how += f" ({relative:.0%} of the true value)"
    if abs(error) <= tolerance:
        verdict = f"close enough (within ±{_number(tolerance, unit, digits)})"
        return Score(True, f"{said}: {how}, {verdict}.", error, relative)
    return Score(False, f"{said}: {how}.", error, relative)


def score_choice(guess: str, truth: str) -> Score:
    """Score a choice: right, or wrong with the true answer."""
    if guess == truth:
        return Score(True, f"Right: {truth}.")
    return Score(False, f"Not this time: you picked {guess}; the simulation says {truth}.")


@dataclass(frozen=True, slots=True)
class NumberQuestion:
    """A numeric prediction; ``truth`` computes the answer from the widget's simulation."""

    prompt: str
    truth: Callable[[], float]
    unit: str = ""
    tolerance: float = 0.0
    rel_tolerance: float = 0.0
    digits: int = 2
    low: str = "low"
    high: str = "high"

    def score(self, guess: float) -> Score:
        """`score_number` of ``guess`` against the simulation's answer."""
        return score_number(float(guess), float(self.truth()), unit=self.unit,
                            tolerance=self.tolerance, rel_tolerance=self.rel_tolerance,
                            digits=self.digits, low=self.low,
                            high=self.high)


@dataclass(frozen=True, slots=True)
class ChoiceQuestion:
    """A choice among ``options``; ``truth`` returns the right one from the simulation."""

    prompt: str
    options: tuple[str, ...]
    truth: Callable[[], str]

    def score(self, guess: str) -> Score:
        """`score_choice` of ``guess`` against the simulation's answer."""
        if guess not in self.options:
            raise ValueError(f"{guess!r} is not one of the options")
        truth = self.truth()
        if truth not in self.options:
            raise ValueError(f"the simulation's answer {truth!r} is not one of the options")
        return score_choice(guess, truth)


Question = NumberQuestion | ChoiceQuestion

_BUSY_HTML = ("<span style='color:#9a6700'><i class='fa fa-spinner fa-spin'></i> "
              "{text}</span>")


class BusyIndicator:
    """A label that says "working" while a widget recomputes (empty otherwise).

    Nested ``working`` blocks (a submit that redraws) keep the label until the
    outermost one ends, then restore the outer text.
    """

    def __init__(self) -> None:
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
    def working(self, text: str = "working…") -> Iterator[None]:
        """Show ``text`` for the duration of the ``with`` block, even if it raises."""
        self._texts.append(text)
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
                 busy: BusyIndicator | None = None) -> None:
        self.question = question
        self.body = body
        self.on_checked = on_checked
        self.busy = busy or BusyIndicator()
        self.answer: widgets.ValueWidget
        if isinstance(question, ChoiceQuestion):
            self.answer = widgets.Dropdown(options=list(question.options), value=None,
                                           description="your answer",
                                           layout=widgets.Layout(width="420px"))
        else:
            self.answer = widgets.FloatText(value=0.0, description=f"your answer "
                                            f"({question.unit})" if question.unit
                                            else "your answer",
                                            style={"description_width": "initial"})
        self.button = widgets.Button(description="Check", button_style="primary",
                                     icon="check")
        self.button.on_click(lambda _b: self.check())
        self.feedback = widgets.HTML("")
        self.score: Score | None = None
        body.layout.display = "none"
        self.view = widgets.VBox([
            widgets.HTML(f"<b>Predict first:</b> {_prose(question.prompt)}"),
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
            self.feedback.value = "<span style='color:#cf222e'>Pick an answer first.</span>"
            return None
        if isinstance(self.question, NumberQuestion) and not math.isfinite(float(value)):
            self.feedback.value = "<span style='color:#cf222e'>Type a number first.</span>"
            return None
        with self.busy.working("computing the answer…"):
            if isinstance(self.question, ChoiceQuestion):
                score = self.question.score(str(value))
            else:
                score = self.question.score(float(value))
            self.score = score
            self.answer.disabled = True
            self.button.disabled = True
            colour = "#1a7f37" if score.correct else "#cf222e"
            self.feedback.value = (f"<span style='color:{colour}'>{_html(score.message)}"
                                   "</span> Now explore: the widget below is yours.")
            self.body.layout.display = None
            if self.on_checked is not None:
                self.on_checked()
        return score

