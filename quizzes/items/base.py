"""What every item type shares: common fields, presentation, grading outcome, errors.

An item type is a module under ``quizzes/items/`` exposing a frozen dataclass with

* ``from_bank(common, raw, where)``: build it from a learner-facing bank entry,
  raising :class:`~quizzes.errors.BankError` that names file, item and field;
* ``grade(response, params, salt) -> Outcome``: score one response to one variant;
* ``present(params) -> Presented``: what the learner sees (prompt, options);

and a module function ``author_key(source, salt, item_id, variants) -> dict`` that
turns the plain answers of the private authoring source into the stored key.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from quizzes.exhibit import Exhibit, parse_exhibit
from quizzes.i18n import Msg
from quizzes.template import fill, placeholders
from quizzes.where import Where

__all__ = ["Common", "Outcome", "Presented", "as_text", "fill", "hashes",
           "placeholders", "string_list", "variant_table", "with_extras"]

@dataclass(frozen=True, slots=True)
class Common:
    """Fields every item has, whatever its type."""

    id: str
    type: str
    prompt: str
    explanation: str
    objectives: tuple[str, ...]
    points: float = 1.0
    params: tuple[tuple[str, tuple[Any, ...]], ...] = ()
    exhibit: Exhibit | None = None  # minislurm output shown with the prompt (quizzes.exhibit)

    def param_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.params)


@dataclass(frozen=True, slots=True)
class Presented:
    """One item as the learner sees it, parameters filled in."""

    item_id: str
    type: str
    prompt: str
    options: tuple[tuple[str, str], ...] = ()  # (option id, text) in display order
    multiple: bool = False
    unit: str = ""
    points: float = 1.0
    exhibit: str = ""  # command output shown as preformatted text under the prompt


@dataclass(frozen=True, slots=True)
class Outcome:
    """The grading of one response: a fraction in [0, 1] plus feedback for the learner."""

    score: float
    feedback: str
    details: tuple[str, ...] = field(default=())
    readable: bool = True  # False: the response could not be read (the item stays open)
    #: The feedback and details as messages (:mod:`quizzes.i18n`), to say them in the
    #: learner's language; ``feedback``/``details`` are their English text (the gradebook's).
    message: Msg | None = None
    detail_messages: tuple[Msg, ...] = field(default=())

    @property
    def correct(self) -> bool:
        return self.score >= 1.0 - 1e-9

    @classmethod
    def said(cls, score: float, message: Msg, details: tuple[Msg, ...] = (),
             readable: bool = True) -> Outcome:
        """An outcome whose feedback is ``message`` (English text kept alongside)."""
        return cls(score, message.render(), tuple(d.render() for d in details), readable,
                   message, details)

    def in_language(self, lang: str) -> tuple[str, tuple[str, ...]]:
        """(feedback, details) in ``lang``; the stored English text when there is no
        message (a plain-text outcome: a lab's input limits)."""
        if self.message is None:
            return self.feedback, self.details
        details = tuple(d.render(lang) for d in self.detail_messages) \
            if len(self.detail_messages) == len(self.details) else self.details
        return self.message.render(lang), details


def as_text(response: Any) -> str | None:
    """A free-text response, or None if the learner gave something else."""
    if isinstance(response, str):
        return response
    if isinstance(response, bool):
        return None
    if isinstance(response, int | float):
        return str(response)
    return None


def string_list(where: Where, raw: Mapping[str, Any], name: str) -> tuple[str, ...]:
    """A required non-empty list of strings."""
    value = where.require(raw, name, list)
    if not value or not all(isinstance(v, str) for v in value):
        raise where.error(name, "must be a non-empty list of strings")
    return tuple(value)


def hashes(where: Where, raw: Mapping[str, Any], name: str) -> tuple[str, ...]:
    """A required list of hex answer hashes."""
    values = string_list(where, raw, name)
    for v in values:
        if not re.fullmatch(r"[0-9a-f]{24}", v):
            raise where.error(name, f"'{v}' is not an answer hash (24 hex digits)")
    return values


def variant_table(
    where: Where, raw: Mapping[str, Any], name: str, variants: Sequence[str]
) -> Mapping[str, Any]:
    """A ``keys`` mapping with one entry per variant key."""
    table = where.require(raw, name, dict)
    missing = [v for v in variants if v not in table]
    if missing:
        raise where.error(name, f"has no key for variant {missing[0] or '(default)'}")
    return table


def with_extras(common: Common, raw: Mapping[str, Any], where: Where) -> Common:
    """``common`` plus the optional fields every item type may carry (``exhibit``);
    each type's ``from_bank`` calls it on the fields the bank left to it."""
    exhibit = parse_exhibit(where, raw)
    return common if exhibit is None else replace(common, exhibit=exhibit)
