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
from quizzes.errors import ExamError
from quizzes.exam import ExamDesk, present_items
from quizzes.examclient import ExamClient
from quizzes.keys import generate, load_private
from quizzes.prose import plain
from quizzes.widget import exam, quiz

QUIZ = "01-what-is-slurm"


class DeskClient:
    """The exam API's calls answered by a real ExamDesk for one learner (no HTTP)."""

    service_url = "http://class.invalid/services/quizzes/"

    def __init__(self, desk: ExamDesk, learner: str) -> None:
        self.desk, self.learner, self.calls = desk, learner, 0

    def _do(self, fn: Any, *args: Any) -> dict[str, Any]:
        self.calls += 1
        return dict(fn(self.learner, *args))  # the desk's ExamError is the client's

    def status(self, quiz_id: str, lang: str = "en") -> dict[str, Any]:
        if quiz_id not in self.desk.banks:
            raise ExamError(404, f"unknown quiz '{quiz_id}'")
        return self._do(lambda who, q, t: self.desk.attempts(who, q, t), quiz_id, lang)

    def start(self, quiz_id: str, lang: str = "en") -> dict[str, Any]:
        return self._do(lambda who, q, t: self.desk.start(who, who, q, t), quiz_id, lang)

    def answer(self, attempt_id: str, item_id: str, response: Any,
               lang: str = "en") -> dict[str, Any]:
        return self._do(self.desk.answer, attempt_id, item_id, response, lang)

    def submit(self, attempt_id: str, lang: str | None = None) -> dict[str, Any]:
        return self._do(self.desk.submit, attempt_id, lang)


@pytest.fixture()
def desk(tmp_path):
    key, _ = generate(tmp_path / "issuer")
    d = ExamDesk(load_banks(), str(tmp_path / "gb.sqlite"), load_private(key))
    yield d
    d.close()


def opened(desk: ExamDesk) -> int:
    return int(desk.book.db.execute("SELECT COUNT(*) FROM exam_attempts").fetchone()[0])


def started(panel: Any) -> Any:
    """Press the panel's Start attempt button; the exam widget that replaces the panel."""
    assert len(panel.children) == 3, "the panel shows a Start attempt button"
    panel.children[1].click()
    assert len(panel.children) == 1, panel.children[-1].value
    return panel.children[0]


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
    view = started(exam(QUIZ, client, mode="all"))
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

    panel = exam(QUIZ, client, mode="all")  # the cell run again: the attempt resumes
    assert len(panel.children) == 1, "an open attempt is resumed without a button"
    again = panel.children[0]
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
        view = started(exam(QUIZ, client, mode="all"))
        view.children[2].children[-1].click()
        assert "Graded: 0%." in view.children[3].value
        assert "Certificate" not in view.children[3].value
    refused = exam(QUIZ, client)
    assert len(refused.children) == 1, "no attempt left: no Start attempt button"
    assert "no attempts left at 01-what-is-slurm: 3 of 3 used" in refused.children[0].value
    view = exam("no-such-quiz", client)
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
    with pytest.raises(ExamError) as away:
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
        panel = exam(QUIZ, DeskClient(desk, "ada"), mode="all")
        assert "time limit: 20 min" in panel.children[0].value and opened(desk) == 0
        now[0] += 30 * 60  # reading the panel for half an hour costs no time
        view = started(panel)
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


def test_running_the_quiz_cell_opens_no_attempt_until_start_is_pressed(desk):
    """The cell shows the quiz's title, its attempts left and its time limit and a Start
    attempt button; only the button opens an attempt (the service's attempt count)."""
    bank = load_banks()[QUIZ]
    client = DeskClient(desk, "ada")
    panel = exam(QUIZ, client, mode="all")
    info, button, _ = panel.children
    assert bank.title in info.value and "attempts left: 3 of 3" in info.value
    assert "no time limit" in info.value and "used no attempt" in info.value
    assert button.description == "Start attempt" and opened(desk) == 0
    again = exam(QUIZ, client, mode="all")  # run the cell twice: still nothing opened
    assert len(again.children) == 3 and opened(desk) == 0
    view = started(panel)
    assert opened(desk) == 1 and "attempt 1, 2 left" in view.children[0].value
    assert desk.attempts("ada", QUIZ)["open"]["attempt"] == 1


#: Learners of the language test and their languages.
PT, EN = "gil", "hal"


def test_a_pt_br_learner_takes_the_exam_in_portuguese_and_the_gradebook_stays_one_row(desk):
    """lang=pt-BR: the panel, the prompts, options and feedback are Portuguese (the bank's
    translation, as self-study shows them); what is stored is English and keyed by item
    id, so an English learner's answers to the same item share its rows; the certificate
    records pt-BR."""
    from quizzes import translations
    from quizzes.exam import present_items as shown_items

    bank = load_banks()[QUIZ]
    words = translations.load(bank, "pt-BR")
    assert words is not None and words.title
    panel = exam(QUIZ, DeskClient(desk, PT), mode="all", lang="pt-BR")
    assert words.title in panel.children[0].value
    assert "tentativas restantes: 3 de 3" in panel.children[0].value
    assert panel.children[1].description == "Iniciar tentativa"
    view = started(panel)
    portuguese = shown_items(bank, PT, 1, words)
    english = present_items(bank, PT, 1)
    prompts = [c.children[0].value for c in cards(view)]
    translated = [(p, e) for p, e in zip(portuguese, english, strict=True)
                  if p.prompt != e.prompt]
    assert translated, "the bank's pt-BR translation changes some prompts"
    for p, e in translated:
        html = next(v for v in prompts if f"<b>{p.item_id}</b>" in v or p.item_id in v)
        assert p.prompt.split("\n")[0][:30] in html.replace("&#x27;", "'")
        assert e.prompt.split("\n")[0][:30] not in html.replace("&#x27;", "'")
    answers = correct_responses(bank, load_sources()[QUIZ], PT, 1)
    choice = next(p for p in portuguese if p.options and not p.multiple)
    card = next(c for c, p in zip(cards(view), portuguese, strict=True)
                if p.item_id == choice.item_id)
    labels = str(card.children[1].options)
    assert all(plain(t) in labels for _, t in choice.options), labels  # options in pt-BR
    wrong = next(o for o, _ in choice.options if o != answers[choice.item_id])
    choose(card, wrong)
    card.children[2].click()
    assert "Incorreto" in card.children[3].value, card.children[3].value
    assert desk.book.db.execute("SELECT feedback FROM exam_answers WHERE item_id = ?",
                                (choice.item_id,)).fetchone()[0].startswith("Incorrect")
    for c, p in zip(cards(view), portuguese, strict=True):
        if not c.children[2].disabled:
            choose(c, answers[p.item_id])
            c.children[2].click()
    view.children[2].children[-1].click()
    assert "quiz-certificate" in view.children[3].value
    # an English learner answers the same item: one item, one row each, same item id
    en = started(exam(QUIZ, DeskClient(desk, EN), mode="all"))
    en_items = present_items(bank, EN, 1)
    en_answers = correct_responses(bank, load_sources()[QUIZ], EN, 1)
    for c, p in zip(cards(en), en_items, strict=True):
        choose(c, en_answers[p.item_id])
        c.children[2].click()
        assert c.children[2].disabled, c.children[3].value
    en.children[2].children[-1].click()
    shared = set(i.item_id for i in portuguese) & set(i.item_id for i in en_items)
    assert shared, "the two learners' attempts share items"
    rows = desk.book.db.execute(
        "SELECT a.learner_id, r.item_id, r.feedback FROM item_responses r JOIN attempts a"
        " USING (attempt_id) ORDER BY 2, 1").fetchall()
    for item_id in shared:
        mine = [(who, fb) for who, i, fb in rows if i == item_id]
        assert [who for who, _ in mine] == [PT, EN]
        assert all(not fb.startswith(("Correto", "Incorreto")) for _, fb in mine), mine
    import json
    docs = {json.loads(d)["record"]["learner_id"]: json.loads(d)["record"]
            for (d,) in desk.book.db.execute("SELECT document FROM certificates")}
    assert docs[PT]["lang"] == "pt-BR" and docs[EN]["lang"] == "en"
    assert docs[PT]["assessment"] == "exam"


def test_an_unknown_language_is_refused_and_opens_nothing(desk):
    with pytest.raises(ExamError) as bad:
        desk.start("ada", "ada", QUIZ, "fr")
    assert bad.value.status == 400 and "unknown language 'fr'" in bad.value.reason
    assert opened(desk) == 0
