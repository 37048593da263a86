"""Exam mode's desk without a hub: what a resumed attempt shows is filled for its variant."""

from __future__ import annotations

from quizzes.bank import load_banks
from quizzes.exam import ExamDesk
from quizzes.keys import generate, load_private


def test_a_resumed_attempt_shows_filled_explanations_for_the_items_answered(tmp_path):
    banks = load_banks()
    bank = banks["08-frontier-scale"]
    varied = [it.common.id for it in bank.items
              if it.common.params and "{{" in it.common.explanation]
    assert varied, "bank 08 has an item whose explanation depends on its parameters"
    desk = ExamDesk(banks, str(tmp_path / "gb.sqlite"),
                    load_private(generate(tmp_path / "issuer")[0]))
    try:
        att = desk.start("ada", "Ada", bank.quiz_id)
        item = next(i for i in att["items"] if i["item_id"] in varied)
        first = desk.answer("ada", att["attempt_id"], item["item_id"], "1")
        again = desk.start("ada", "Ada", bank.quiz_id)  # the open attempt, resumed
        shown = again["answered"][item["item_id"]]
        assert again["attempt_id"] == att["attempt_id"]
        assert "{{" not in shown["explanation"] and shown["explanation"]
        assert shown["explanation"] == first["explanation"]
    finally:
        desk.close()


#: The exam tables as the first exam-mode release made them (no languages yet).
OLD_SCHEMA = """
CREATE TABLE exam_attempts (
  attempt_id TEXT PRIMARY KEY, learner_id TEXT NOT NULL, learner_name TEXT NOT NULL,
  quiz_id TEXT NOT NULL, attempt_no INTEGER NOT NULL, bank_version TEXT NOT NULL,
  items TEXT NOT NULL, started_at INTEGER NOT NULL, deadline INTEGER, submitted_at INTEGER,
  UNIQUE (learner_id, quiz_id, attempt_no));
CREATE TABLE exam_answers (
  attempt_id TEXT NOT NULL REFERENCES exam_attempts(attempt_id), item_id TEXT NOT NULL,
  response TEXT NOT NULL, answered_at INTEGER NOT NULL, score REAL NOT NULL,
  feedback TEXT NOT NULL, PRIMARY KEY (attempt_id, item_id));
"""


def test_a_class_gradebook_from_before_languages_is_brought_up_to_date(tmp_path):
    """A running class upgraded: its open attempt (made without a language) resumes,
    shows the English feedback it stored, takes answers and hands in as English."""
    import json
    import sqlite3

    from quizzes.grade import attempt_items

    bank = load_banks()["01-what-is-slurm"]
    db = str(tmp_path / "gb.sqlite")
    items = [it.common.id for it in attempt_items(bank, "ada", 1)]
    with sqlite3.connect(db) as conn:
        conn.executescript(OLD_SCHEMA)
        conn.execute("INSERT INTO exam_attempts VALUES ('a1', 'ada', 'Ada', ?, 1, ?, ?, 0,"
                     " NULL, NULL)", (bank.quiz_id, bank.version, json.dumps(items)))
        conn.execute("INSERT INTO exam_answers VALUES ('a1', ?, '\"x\"', 0, 0.0,"
                     " 'Incorrect.')", (items[0],))
    desk = ExamDesk({bank.quiz_id: bank}, db, load_private(generate(tmp_path / "k")[0]))
    try:
        again = desk.start("ada", "Ada", bank.quiz_id)
        assert again["attempt_id"] == "a1" and again["lang"] == "en"
        assert again["answered"][items[0]]["feedback"] == "Incorrect."
        desk.answer("ada", "a1", items[1], "x")
        result = desk.submit("ada", "a1")
        assert result["lang"] == "en" and result["attempt"] == 1
    finally:
        desk.close()


def test_numbers_are_read_in_the_learners_language(tmp_path):
    """cpu-efficiency (a number with decimals): a pt-BR learner writes it with a decimal
    comma and is right; an English learner's same text is not read as that number."""
    from course.classroom.harness import correct_responses
    from quizzes.author import load_sources
    from quizzes.errors import ExamError
    from quizzes.grade import attempt_items

    bank = load_banks()["02-sbatch"]
    source = load_sources()[bank.quiz_id]

    def fits(who: str) -> bool:  # the item is drawn for them and its answer has decimals
        drawn = {it.common.id for it in attempt_items(bank, who, 1)}
        return "cpu-efficiency" in drawn and \
            correct_responses(bank, source, who, 1)["cpu-efficiency"] % 1 != 0
    pt, en = [w for w in (f"learner{k}" for k in range(200)) if fits(w)][:2]
    desk = ExamDesk({bank.quiz_id: bank}, str(tmp_path / "gb.sqlite"),
                    load_private(generate(tmp_path / "k")[0]))
    try:
        right = correct_responses(bank, source, pt, 1)["cpu-efficiency"]
        att = desk.start(pt, pt, bank.quiz_id, "pt-BR")
        fb = desk.answer(pt, att["attempt_id"], "cpu-efficiency", f"{right:g}".replace(".", ","))
        assert fb["correct"], fb
        right = correct_responses(bank, source, en, 1)["cpu-efficiency"]
        att = desk.start(en, en, bank.quiz_id, "en")
        comma = f"{right:g}".replace(".", ",")
        try:
            fb = desk.answer(en, att["attempt_id"], "cpu-efficiency", comma)
        except ExamError as exc:  # read as thousands or refused: never as the right number
            assert exc.unreadable and exc.status == 400
        else:
            assert not fb["correct"], fb
    finally:
        desk.close()


def test_refusals_a_learner_reads_are_in_their_language(tmp_path):
    """The time limit passed, an item answered twice, no attempt left: pt-BR words for a
    pt-BR attempt, English for an English one (the status stays the same)."""
    import pytest

    from quizzes.errors import ExamError

    bank = load_banks()["01-what-is-slurm"]
    timed = type(bank)(**{**{f: getattr(bank, f) for f in bank.__slots__},
                          "policy": type(bank.policy)(1, 0.1, "best", 20)})
    now = [1_800_000_000.0]
    desk = ExamDesk({bank.quiz_id: timed}, str(tmp_path / "gb.sqlite"),
                    load_private(generate(tmp_path / "k")[0]), clock=lambda: now[0])
    try:
        for who, lang, twice, late, none_left in (
                ("gil", "pt-BR", "já foi respondido", "limite de tempo", "não restam"),
                ("hal", "en", "already answered", "time limit", "no attempts left")):
            att = desk.start(who, who, bank.quiz_id, lang)
            first, second = [(i["item_id"], i["options"][0][0]) for i in att["items"]
                             if i["options"] and not i["multiple"]][:2]
            desk.answer(who, att["attempt_id"], *first)
            with pytest.raises(ExamError, match=twice) as again:
                desk.answer(who, att["attempt_id"], *first)
            now[0] += 21 * 60
            with pytest.raises(ExamError, match=late) as after:
                desk.answer(who, att["attempt_id"], *second)
            desk.submit(who, att["attempt_id"])
            with pytest.raises(ExamError, match=none_left) as spent:
                desk.start(who, who, bank.quiz_id, lang)
            assert (again.value.status, after.value.status, spent.value.status) == \
                (409, 409, 409)
    finally:
        desk.close()
