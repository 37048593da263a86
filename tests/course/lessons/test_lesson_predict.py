"""Predict, then check: scoring a prediction, the question widget, the busy indicator."""

from __future__ import annotations

import ipywidgets as widgets
import pytest

from course.lessons.predict import (
    BusyIndicator,
    ChoiceQuestion,
    NumberQuestion,
    PredictStep,
    score_choice,
    score_number,
)


def test_a_numeric_prediction_gets_its_error_in_the_unit_and_relative() -> None:
    s = score_number(16.0, 18.0, unit="h", tolerance=0.5, low="early", high="late")
    assert not s.correct and s.error == -2.0 and s.relative == pytest.approx(1 / 9)
    assert s.message == ("You predicted 16.00 h; the simulation says 18.00 h: "
                         "2.00 h too early (11% of the true value).")
    late = score_number(18.3, 18.0, unit="h", tolerance=0.5, low="early", high="late")
    assert late.correct and "0.30 h too late" in late.message
    assert "close enough (within ±0.50 h)" in late.message
    exact = score_number(4, 4, digits=0)
    assert exact.correct and exact.message.endswith("exactly right.") and exact.error == 0


def test_a_relative_tolerance_scales_with_the_truth() -> None:
    s = score_number(100, 120, unit="min", rel_tolerance=0.25, digits=0)
    assert s.correct and "within ±30 min" in s.message
    assert not score_number(85, 120, unit="min", rel_tolerance=0.25).correct
    assert score_number(85, 120, tolerance=40, rel_tolerance=0.25).correct  # the larger


def test_a_numeric_prediction_of_a_zero_truth_has_no_relative_error() -> None:
    s = score_number(0.2, 0.0, tolerance=0.1)
    assert not s.correct and s.relative is None and "%" not in s.message


def test_numbers_must_be_finite_and_tolerances_not_negative() -> None:
    with pytest.raises(ValueError, match="finite"):
        score_number(float("nan"), 1.0)
    with pytest.raises(ValueError, match="tolerance"):
        score_number(1.0, 1.0, tolerance=-1)
    with pytest.raises(ValueError, match="tolerance"):
        score_number(1.0, 1.0, rel_tolerance=-0.1)


def test_a_choice_is_right_or_wrong_with_the_true_answer() -> None:
    assert score_choice("gpu03", "gpu03").correct
    wrong = score_choice("gpu04", "gpu03")
    assert not wrong.correct and wrong.message == (
        "Not this time: you picked gpu04; the simulation says gpu03.")


def test_questions_compute_the_truth_at_scoring_time() -> None:
    calls: list[int] = []

    def truth() -> str:
        calls.append(1)
        return "b"

    q = ChoiceQuestion("which?", ("a", "b"), truth)
    assert not calls
    assert q.score("b").correct and calls == [1]
    with pytest.raises(ValueError, match="not one of the options"):
        q.score("c")
    bad = ChoiceQuestion("which?", ("a",), truth)
    with pytest.raises(ValueError, match="simulation's answer 'b'"):
        bad.score("a")
    n = NumberQuestion("how long?", lambda: 2.5, unit="h", tolerance=0.25)
    assert n.score(2.7).correct and not n.score(3).correct


def test_the_busy_indicator_shows_during_the_block_and_clears_after() -> None:
    busy = BusyIndicator()
    assert not busy.shown and busy.view.value == ""
    with busy.working("simulating 500 jobs…"):
        assert busy.shown and "simulating 500 jobs…" in busy.view.value
    assert not busy.shown and busy.view.value == ""


def test_the_busy_indicator_clears_after_an_exception() -> None:
    busy = BusyIndicator()
    with pytest.raises(ZeroDivisionError), busy.working():
        assert busy.shown
        _ = 1 / 0
    assert not busy.shown and busy.view.value == ""


def test_the_body_stays_hidden_until_the_first_check() -> None:
    body = widgets.VBox([widgets.IntSlider()])
    revealed: list[bool] = []
    step = PredictStep(ChoiceQuestion("which node gets `-N1 <x>`?", ("gpu01", "gpu02"),
                                      lambda: "gpu02"),
                       body, on_checked=lambda: revealed.append(True))
    assert step.view.children[0].value == (
        "<b>Predict first:</b> which node gets <code>-N1 &lt;x&gt;</code>?")
    assert body.layout.display == "none" and not step.checked
    assert step.check() is None  # nothing picked yet
    assert "Pick an answer first" in step.feedback.value and body.layout.display == "none"
    step.answer.value = "gpu01"
    score = step.check()
    assert score is not None and not score.correct
    assert body.layout.display is None and revealed == [True] and step.checked
    assert "the simulation says gpu02" in step.feedback.value
    assert step.answer.disabled and step.button.disabled
    assert step.check("gpu02") is score and revealed == [True]  # one check only


def test_a_numeric_step_scores_the_number_field_and_clicking_checks() -> None:
    body = widgets.VBox()
    step = PredictStep(NumberQuestion("when?", lambda: 18.0, unit="h", tolerance=1), body)
    assert step.answer.description == "your answer (h)"
    step.answer.value = 17.5
    step.button.click()
    assert step.score is not None and step.score.correct
    assert "0.50 h too low" in step.feedback.value and not step.busy.shown


def test_a_number_that_is_not_finite_is_refused_without_a_traceback() -> None:
    body = widgets.VBox()
    step = PredictStep(NumberQuestion("when?", lambda: 18.0, unit="h"), body)
    assert step.check(float("inf")) is None and step.check(float("nan")) is None
    assert "Type a number first" in step.feedback.value and body.layout.display == "none"
    assert not step.checked and not step.button.disabled


def test_the_step_shows_busy_while_it_computes_the_truth() -> None:
    seen: list[bool] = []
    busy = BusyIndicator()

    def truth() -> float:
        seen.append(busy.shown)
        return 1.0

    step = PredictStep(NumberQuestion("?", truth), widgets.VBox(), busy=busy)
    step.check(1.0)
    assert seen == [True] and not busy.shown


def test_nested_busy_blocks_keep_the_label_until_the_outer_one_ends() -> None:
    busy = BusyIndicator()
    with busy.working("submitting…"):
        with busy.working("drawing the map…"):
            assert busy.text == "drawing the map…" and "drawing" in busy.view.value
        assert busy.shown and "submitting…" in busy.view.value
    assert not busy.shown and busy.text == "" and busy.view.value == ""
