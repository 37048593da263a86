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
