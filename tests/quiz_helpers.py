"""Helpers for the quiz tests (tests/quizzes/): a tiny bank built with the shipped banks'
item builder, so each key is hashed exactly as in a shipped bank."""

from __future__ import annotations

from quizzes.author import build_item
from quizzes.bank import parse_bank

SALT = "0123456789abcdef"


def bank_of(*items: dict, policy: dict | None = None, objectives: dict | None = None):
    """A parsed bank of ``items`` (each a source item without the common fields)."""
    data = {
        "schema": 1,
        "quiz_id": "t",
        "title": "T",
        "course": "C",
        "pass_mark": 0.5,
        "salt": SALT,
        "objectives": objectives or {"o": "objective"},
        "items": [
            build_item(
                {"objectives": [next(iter(objectives or {"o": 0}))], "explanation": "because",
                 "prompt": "?", **it},
                SALT, "t.yaml",
            )
            for it in items
        ],
    }
    if policy:
        data["policy"] = policy
    return parse_bank(data, "t.yaml")

