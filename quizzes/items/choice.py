"""Single- and multiple-choice items.

Key storage: a single-choice key is the hash of the correct option id; a
multiple-choice key stores, per option, the hash of ``"<id>=1"`` if the option is
correct and of ``"<id>=0"`` otherwise, so the grader recognises each mark.

Partial credit (multiple choice): with C correct options, R of them selected and
W incorrect options selected, the score is ``max(0, (R - W) / C)``.  Selecting
everything therefore scores ``(C - (N - C)) / C`` (zero when half are wrong),
selecting nothing scores 0, and only the exact set scores 1.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from quizzes.hashing import answer_hash
from quizzes.i18n import M
from quizzes.items.base import (
    Common,
    Outcome,
    Presented,
    fill,
    hashes,
    variant_table,
    with_extras,
)
from quizzes.where import Where


@dataclass(frozen=True, slots=True)
class ChoiceItem:
    """``type: single`` or ``type: multiple``."""

    common: Common
    options: tuple[tuple[str, str], ...]
    shuffle: bool
    keys: Mapping[str, tuple[str, ...]]

    @property
    def multiple(self) -> bool:
        return self.common.type == "multiple"

    @classmethod
    def from_bank(
        cls, common: Common, raw: Mapping[str, Any], where: Where, variants: Sequence[str]
    ) -> ChoiceItem:
        common = with_extras(common, raw, where)
        options = parse_options(where, raw)
        shuffle = where.optional(raw, "shuffle", bool, True)
        table = variant_table(where, raw, "keys", variants)
        keys: dict[str, tuple[str, ...]] = {}
        for variant in variants:
            entry = table[variant]
            if not isinstance(entry, dict):
                raise where.error("keys", "each variant key must be a mapping")
            if common.type == "single":
                keys[variant] = hashes(where, entry, "answer")
            else:
                marks = hashes(where, entry, "marks")
                if len(marks) != len(options):
                    raise where.error("keys", "needs one mark per option")
                keys[variant] = marks
        return cls(common, options, shuffle, keys)

    def order(self, seed: int) -> tuple[tuple[str, str], ...]:
        """Options in the order this learner sees them in this attempt (:func:`shuffled`)."""
        return shuffled(self.options, seed) if self.shuffle else self.options

    def present(self, params: Mapping[str, Any], seed: int = 0) -> Presented:
        opts = tuple((oid, fill(text, params)) for oid, text in self.order(seed))
        return Presented(self.common.id, self.common.type, fill(self.common.prompt, params),
                         opts, self.multiple, points=self.common.points)

    def grade(self, response: Any, params: Mapping[str, Any], salt: str, variant: str) -> Outcome:
        ids = [oid for oid, _ in self.options]
        key = self.keys[variant]
        if not self.multiple:
            if not isinstance(response, str) or response not in ids:
                return Outcome.said(0.0, M("Choose one of: {ids}.", ids=", ".join(ids)),
                                    readable=False)
            ok = answer_hash(salt, self.common.id, variant, response) in key
            return Outcome.said(1.0 if ok else 0.0, M("Correct.") if ok else M("Incorrect."))
        if isinstance(response, str):
            response = [response]
        if not isinstance(response, list) or not all(isinstance(r, str) for r in response):
            return Outcome.said(0.0, M("Answer with a list of option ids."), readable=False)
        chosen = set(response)
        unknown = sorted(chosen - set(ids))
        if unknown:
            return Outcome.said(0.0, M("Unknown option(s): {ids}.", ids=", ".join(unknown)),
                                readable=False)
        correct = {oid for oid, mark in zip(ids, key, strict=True)
                   if answer_hash(salt, self.common.id, variant, f"{oid}=1") == mark}
        right = len(chosen & correct)
        wrong = len(chosen - correct)
        score = max(0.0, (right - wrong) / len(correct)) if correct else float(not chosen)
        if score >= 1.0:
            return Outcome.said(1.0, M("Correct."))
        verdict = M("Partly right") if score > 0 else M("Incorrect")
        return Outcome.said(score, M("{verdict}: {right} of {total} correct options chosen, "
                                     "{wrong} wrong.", verdict=verdict, right=right,
                                     total=len(correct), wrong=wrong))


def shuffled(options: tuple[tuple[str, str], ...], seed: int) -> tuple[tuple[str, str], ...]:
    """``options`` in the order one learner sees them in one attempt (the item seed
    includes learner, quiz and attempt).  Every list is shuffled unless the item says
    ``shuffle: false`` (options whose order carries meaning, such as ranges); grading
    is by option id, so the order never changes a score."""
    out = list(options)
    random.Random(seed).shuffle(out)
    return tuple(out)


def parse_options(where: Where, raw: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """``options: [{id: a, text: ...}, ...]`` with unique ids, at least two."""
    value = where.require(raw, "options", list)
    if len(value) < 2:
        raise where.error("options", "needs at least two options")
    seen: set[str] = set()
    out = []
    for i, opt in enumerate(value):
        if not isinstance(opt, dict) or not isinstance(opt.get("id"), str) \
                or not isinstance(opt.get("text"), str):
            raise where.error(f"options[{i}]", "must be a mapping with string 'id' and 'text'")
        if opt["id"] in seen:
            raise where.error(f"options[{i}]", f"duplicate option id '{opt['id']}'")
        seen.add(opt["id"])
        out.append((opt["id"], opt["text"]))
    return tuple(out)


def author_key(
    source: Mapping[str, Any], salt: str, item_id: str, variants: Sequence[str], where: Where
) -> dict[str, Any]:
    """Hash the ``correct: true`` flags of the private source into ``keys``."""
    options = source.get("options") or []
    correct = [o.get("id") for o in options if isinstance(o, dict) and o.get("correct")]
    if not correct:
        raise where.error("options", "no option is marked 'correct: true'")
    if source.get("type") == "single" and len(correct) != 1:
        raise where.error("options", "a single-choice item needs exactly one correct option")
    keys: dict[str, Any] = {}
    for variant in variants:
        if source.get("type") == "single":
            keys[variant] = {"answer": [answer_hash(salt, item_id, variant, str(correct[0]))]}
        else:
            keys[variant] = {"marks": [
                answer_hash(salt, item_id, variant, f"{o['id']}={int(o['id'] in correct)}")
                for o in options]}
    return keys
