"""The learner's side: a quiz session with instant feedback, and the ipywidgets face over it."""

from __future__ import annotations

import json

import pytest

from quizzes.author import load_sources, model_answer
from quizzes.bank import load_banks
from quizzes.errors import QuizError
from quizzes.grade import item_variant
from quizzes.session import QuizSession, attempts_used
from quizzes.submission import parse_submission


class Clock:
    def __init__(self, t: float = 1767600000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


@pytest.fixture(scope="module")
def bank():
    return load_banks()["02-sbatch"]


def right_answer(bank, learner, item_id):
    src = {i["id"]: i for i in load_sources()[bank.quiz_id]["items"]}
    return model_answer(src[item_id], item_variant(bank, learner, item_id)[0])


def test_immediate_feedback_with_explanation_and_score_so_far(bank):
    s = QuizSession(bank, "ada", "Ada", clock=Clock())
    fb = s.answer("nodes-and-tasks", right_answer(bank, "ada", "nodes-and-tasks"))
    assert fb.correct and fb.explanation.startswith("-N/--nodes sets the node count")
    wrong = s.answer("directive-after-command", "b")
    assert not wrong.correct and wrong.feedback == "Incorrect."
    assert "stops reading #SBATCH directives" in wrong.explanation
    assert s.score() == (1.0, 2.0)


def test_an_item_is_answered_once_per_attempt(bank):
    s = QuizSession(bank, "ada", clock=Clock())
    s.answer("time-limit-precedence", "b")
    with pytest.raises(QuizError, match="already answered in this attempt"):
        s.answer("time-limit-precedence", "a")


def test_the_time_limit_is_enforced(bank):
    clock = Clock()
    s = QuizSession(bank, "ada", clock=clock)
    assert s.remaining_seconds() == 30 * 60
    clock.t += 31 * 60
    fb = s.answer("time-limit-precedence", "a")
    assert fb.score == 0 and fb.feedback == "The time limit has passed."


def test_the_submission_file_is_what_the_grader_accepts(bank, tmp_path):
    clock = Clock()
    s = QuizSession(bank, "ada", "Ada Lovelace", clock=clock)
    s.answer("time-limit-precedence", "a")
    clock.t += 60
    path = s.save(tmp_path)
    assert path.name == "ada-02-sbatch-1.json"
    doc = json.loads(path.read_text())
    assert doc["answers"]["time-limit-precedence"] == {"response": "a",
                                                       "answered_at": 1767600000}
    sub = parse_submission(path.read_bytes(), load_banks())
    assert (sub.learner_name, sub.submitted_at) == ("Ada Lovelace", 1767600060)
    with pytest.raises(QuizError, match="this attempt is finished"):
        s.answer("nodes-and-tasks", "x")


def test_the_attempts_limit(bank, tmp_path):
    for _ in range(3):  # the bank allows 3 attempts
        used = attempts_used(tmp_path, "ada", bank.quiz_id)
        QuizSession(bank, "ada", attempts_used=used).save(tmp_path)
    with pytest.raises(QuizError, match="no attempts left at 02-sbatch: 3 of 3 used"):
        QuizSession(bank, "ada", attempts_used=attempts_used(tmp_path, "ada", bank.quiz_id))


def test_the_widget_is_a_thin_face_over_the_session(bank, tmp_path):
    pytest.importorskip("ipywidgets")
    from quizzes.widget import QuizWidget

    s = QuizSession(bank, "ada", "Ada", clock=Clock())
    w = QuizWidget(s, mode="one", folder=tmp_path)
    assert len(w.body.children) == 1 and w.prev.disabled
    card = w.body.children[0]
    _prompt, box, check, out = card.children
    box.value = str(right_answer(bank, "ada", w.items[0].item_id))
    check.click()
    assert "Correct" in out.value and check.disabled
    assert "score so far 1 / 1" in w.header.value
    w.next.click()
    assert w.body.children[0] is w.cards[1]
    multi = QuizWidget(QuizSession(load_banks()["03-gres-gpus"], "bob", clock=Clock()),
                       mode="all", folder=tmp_path)
    assert len(multi.body.children) == len(multi.items)
    card = next(c for c, i in zip(multi.cards, multi.items, strict=True)
                if i.type == "multiple")
    for cb in card.children[1].children:
        cb.value = cb.description.startswith("--g")     # --gres=gpu:4, --gpus-per-node=4, ...
    card.children[2].click()
    assert "Partly right" in card.children[3].value     # --gpus=4 is one wrong pick
    w.finish.click()
    assert "Saved" in w.result.value and (tmp_path / "ada-02-sbatch-1.json").exists()


def test_check_is_disabled_before_the_verdict_shows(bank, tmp_path):
    """The front end applies the kernel's widget updates in the order they are sent: with
    the verdict first, the page showed it while Check was still enabled (a second click
    could land in between, and the class browser test once read the button then)."""
    pytest.importorskip("ipywidgets")
    from quizzes.widget import QuizWidget

    w = QuizWidget(QuizSession(bank, "ada", "Ada", clock=Clock()), mode="one", folder=tmp_path)
    _prompt, box, check, out = w.body.children[0].children
    seen: list[bool] = []
    out.observe(lambda change: seen.append(check.disabled), names="value")
    box.value = str(right_answer(bank, "ada", w.items[0].item_id))
    check.click()
    assert seen == [True] and "Correct" in out.value


def test_typed_answers_reach_the_kernel_before_the_click(tmp_path):
    """Every box a learner types an answer into, then presses a button for (each text,
    numeric, sbatch and lab item of the banks, the certificate's name prompt, a lab's
    answer), sends its value when it loses focus, not at every key: ipywidgets' front end
    holds a widget's next state update until the kernel has handled the previous one but
    sends a click at once, so under load a Check pressed right after typing was graded on
    an older text (the browser test's lab got a job id of another answer's). Fewer
    updates also leave less for ipykernel 7 to reorder (it handles a comm message at once
    while a cell awaits; the course pins ipykernel<7: tests/course/test_kernel_message_order.py)."""
    pytest.importorskip("ipywidgets")
    import ipywidgets

    from quizzes.labs.widget import LabWidget
    from quizzes.widget import NamePrompt, QuizWidget

    typed = []
    for quiz_id, bank in sorted(load_banks().items()):
        w = QuizWidget(QuizSession(bank, "ada", clock=Clock()), mode="all", folder=tmp_path)
        typed += [(f"{quiz_id} {i.item_id}", c.children[1]) for c, i in
                  zip(w.cards, w.items, strict=True)
                  if isinstance(c.children[1], ipywidgets.Text | ipywidgets.Textarea)]
    kinds = {type(box).__name__ for _, box in typed}
    assert kinds == {"Text", "Textarea"}, kinds  # the banks have both kinds of typed items
    typed += [("name prompt", NamePrompt(lambda _learner: None, env={}).text),
              ("lab first-job", LabWidget("first-job").answer)]
    assert [where for where, box in typed if box.continuous_update] == []
