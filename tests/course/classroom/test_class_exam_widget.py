"""The quiz widget in exam mode: items, verdicts, attempts and the hand-in come from the
quiz service, never from a bank in the learner's server.

The service side here is a real :class:`quizzes.exam.ExamDesk` (real banks, grading,
gradebook), reached through :class:`DeskClient` instead of HTTP; the same widget over
a real hub, proxy and learner server is in test_class_service.py.
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("ipywidgets")

from course.classroom.harness import correct_responses
from quizzes.author import load_sources
from quizzes.bank import load_banks
from quizzes.exam import ExamDesk, ExamError, present_items
from quizzes.examclient import ExamClient, ExamRefused
from quizzes.keys import generate, load_private
from quizzes.widget import exam, quiz

QUIZ = "01-what-is-slurm"


class DeskClient:
    """The exam API's calls answered by a real ExamDesk for one learner (no HTTP)."""

    service_url = "http://class.invalid/services/quizzes/"

    def __init__(self, desk: ExamDesk, learner: str) -> None:
        self.desk, self.learner, self.calls = desk, learner, 0

    def _do(self, fn: Any, *args: Any) -> dict[str, Any]:
        self.calls += 1
        try:
            return dict(fn(self.learner, *args))
        except ExamError as exc:
            raise ExamRefused(exc.status, exc.reason) from None

    def start(self, quiz_id: str) -> dict[str, Any]:
        return self._do(lambda who, q: self.desk.start(who, who, q), quiz_id)

    def answer(self, attempt_id: str, item_id: str, response: Any) -> dict[str, Any]:
        return self._do(self.desk.answer, attempt_id, item_id, response)

    def submit(self, attempt_id: str) -> dict[str, Any]:
        return self._do(self.desk.submit, attempt_id)


@pytest.fixture()
def desk(tmp_path):
    key, _ = generate(tmp_path / "issuer")
    d = ExamDesk(load_banks(), str(tmp_path / "gb.sqlite"), load_private(key))
    yield d
    d.close()


def answered_rows(desk: ExamDesk) -> list[tuple[Any, ...]]:
    return desk.book.db.execute("SELECT item_id, score FROM exam_answers ORDER BY 1").fetchall()


def cards(view: Any) -> list[Any]:
    """The item cards of an exam widget shown in 'all' mode."""
    return list(view.children[1].children)


def choose(card: Any, response: Any) -> None:
    box = card.children[1]
    kind = type(box).__name__
    if kind == "VBox":  # checkboxes: the tooltip holds the option id
        for cb in box.children:
            cb.value = cb.tooltip in response
    else:
        box.value = response if kind == "RadioButtons" else str(response)


def test_the_widget_shows_the_services_items_and_its_verdicts(desk):
    bank = load_banks()[QUIZ]
    client = DeskClient(desk, "ada")
    view = exam(QUIZ, client, mode="all")  # type: ignore[arg-type]
    shown = [c.children[0].value for c in cards(view)]
    expected = present_items(bank, "ada", 1)
    assert len(shown) == len(expected)
    assert all(p.item_id in html for p, html in zip(expected, shown, strict=True))
    answers = correct_responses(bank, load_sources()[QUIZ], "ada", 1)
    first = cards(view)[0]
    first.children[2].click()  # nothing chosen: a hint, nothing sent or stored
    assert "has no answer yet" in first.children[3].value and answered_rows(desk) == []
    choose(first, answers[expected[0].item_id])
    first.children[2].click()
    assert answered_rows(desk) == [(expected[0].item_id, 1.0)]
    assert first.children[2].disabled and "quiz-feedback" in first.children[3].value
    assert "score so far 1 / 1" in view.children[0].value

    again = exam(QUIZ, client, mode="all")  # the cell run again: the attempt resumes
    resumed = cards(again)
    assert resumed[0].children[2].disabled and "quiz-feedback" in resumed[0].children[3].value
    assert not resumed[1].children[2].disabled
    for card, item in zip(resumed[1:], expected[1:], strict=True):
        choose(card, answers[item.item_id])
        card.children[2].click()
        assert card.children[2].disabled, card.children[3].value
    again.children[2].children[-1].click()  # Finish and hand in
    result = again.children[3].value
    assert "Graded: 100%." in result and "quiz-certificate" in result
    cert = desk.book.db.execute("SELECT cert_id FROM certificates").fetchone()[0]
    assert f"{client.service_url}verify/{cert}" in result
    assert desk.book.db.execute("SELECT COUNT(*) FROM attempts").fetchone()[0] == 1


def test_the_service_refusing_is_shown_not_raised(desk):
    bank = load_banks()[QUIZ]
    client = DeskClient(desk, "bob")
    for _ in range(bank.policy.attempts or 0):
        view = exam(QUIZ, client, mode="all")  # type: ignore[arg-type]
        view.children[2].children[-1].click()
        assert "Graded: 0%." in view.children[3].value
        assert "Certificate" not in view.children[3].value
    refused = exam(QUIZ, client)  # type: ignore[arg-type]
    assert "no attempts left" in refused.value
    view = exam("no-such-quiz", client)  # type: ignore[arg-type]
    assert "unknown quiz" in view.value


def test_in_a_class_quiz_asks_the_service_and_loads_no_bank(tmp_path):
    env = {"COURSE_QUIZ_SERVICE": "http://127.0.0.1:9/services/quizzes/",
           "JUPYTERHUB_API_TOKEN": "x" * 32, "JUPYTERHUB_USER": "ada"}
    box = quiz(QUIZ, env=env, banks=str(tmp_path / "no-banks-here"))
    assert "cannot reach the quiz service at http://127.0.0.1:9/" in box.children[0].value
    assert repr(box) == f"quiz('{QUIZ}')"
    env.pop("JUPYTERHUB_API_TOKEN")  # the service but no server token: its exam page
    box = quiz(QUIZ, env=env, banks=str(tmp_path / "no-banks-here"))
    assert f"/services/quizzes/exam/{QUIZ}" in box.children[0].value


def test_the_client_sends_the_token_and_reads_refusals():
    client = ExamClient.from_env({"COURSE_QUIZ_SERVICE": "http://127.0.0.1:9/s/",
                                  "JUPYTERHUB_API_TOKEN": "abc"})
    assert client is not None and client.token == "abc"
    assert ExamClient.from_env({"COURSE_QUIZ_SERVICE": "http://x/"}) is None
    with pytest.raises(ExamRefused) as away:
        client.start(QUIZ)
    assert away.value.status == 0 and "cannot reach" in away.value.reason


def test_the_time_limit_is_the_services(tmp_path):
    """A timed quiz: the header shows the time the service says is left, and an answer
    after the deadline is refused by the service (shown in the card, nothing stored)."""
    bank = load_banks()[QUIZ]
    timed = type(bank)(**{**{f: getattr(bank, f) for f in bank.__slots__},
                          "policy": type(bank.policy)(3, 0.1, "best", 20)})
    now = [1_800_000_000.0]
    key, _ = generate(tmp_path / "issuer")
    desk = ExamDesk({QUIZ: timed}, str(tmp_path / "gb.sqlite"), load_private(key),
                    clock=lambda: now[0])
    try:
        view = exam(QUIZ, DeskClient(desk, "ada"), mode="all")  # type: ignore[arg-type]
        assert "time left at last action: 20 min" in view.children[0].value
        answers = correct_responses(bank, load_sources()[QUIZ], "ada", 1)
        first, second = cards(view)[:2]
        items = present_items(bank, "ada", 1)
        now[0] += 5 * 60
        choose(first, answers[items[0].item_id])
        first.children[2].click()
        assert "time left at last action: 15 min" in view.children[0].value
        now[0] += 15 * 60  # the deadline
        choose(second, answers[items[1].item_id])
        second.children[2].click()
        assert "time limit" in second.children[3].value and not second.children[2].disabled
        assert answered_rows(desk) == [(items[0].item_id, 1.0)]
    finally:
        desk.close()
