"""Short-text items, compared after normalisation.

Normalisation (:func:`normalise`): Unicode NFKC, case folding, surrounding
quotes/backticks and a final full stop removed, runs of whitespace collapsed to
one space.  ``case_sensitive: true`` skips the case folding (for names Slurm
spells exactly, e.g. pending reasons such as ``Resources``).  Every accepted
spelling is stored as a salted hash of its normal form.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from quizzes.hashing import answer_hash
from quizzes.i18n import M
from quizzes.items.base import (
    Common,
    Outcome,
    Presented,
    as_text,
    fill,
    hashes,
    variant_table,
    with_extras,
)
from quizzes.where import Where

_SPACE = re.compile(r"\s+")


def normalise(text: str, *, case_sensitive: bool = False) -> str:
    """The form both author and grader hash.

    >>> normalise('  "The   Node Daemon." ')
    'the node daemon'
    """
    out = unicodedata.normalize("NFKC", text).strip()
    out = out.strip("\"'`").strip()
    out = out.removesuffix(".").strip()
    out = _SPACE.sub(" ", out)
    return out if case_sensitive else out.casefold()


@dataclass(frozen=True, slots=True)
class TextItem:
    """``type: text``."""

    common: Common
    case_sensitive: bool
    keys: Mapping[str, frozenset[str]]

    @classmethod
    def from_bank(
        cls, common: Common, raw: Mapping[str, Any], where: Where, variants: Sequence[str]
    ) -> TextItem:
        common = with_extras(common, raw, where)
        case_sensitive = where.optional(raw, "case_sensitive", bool, False)
        table = variant_table(where, raw, "keys", variants)
        keys = {}
        for variant in variants:
            entry = table[variant]
            if not isinstance(entry, dict):
                raise where.error("keys", "each variant key must be a mapping")
            keys[variant] = frozenset(hashes(where, entry, "accept"))
        return cls(common, case_sensitive, keys)

    def present(self, params: Mapping[str, Any], seed: int = 0) -> Presented:
        return Presented(self.common.id, "text", fill(self.common.prompt, params),
                         points=self.common.points)

    def grade(self, response: Any, params: Mapping[str, Any], salt: str, variant: str) -> Outcome:
        text = as_text(response)
        if text is None or not text.strip():
            return Outcome.said(0.0, M("Answer with a short text."), readable=False)
        form = normalise(text, case_sensitive=self.case_sensitive)
        ok = answer_hash(salt, self.common.id, variant, form) in self.keys[variant]
        return Outcome.said(1.0 if ok else 0.0, M("Correct.") if ok else M("Incorrect."))


def author_key(
    source: Mapping[str, Any], salt: str, item_id: str, variants: Sequence[str], where: Where
) -> dict[str, Any]:
    """Hash the plain ``accept`` spellings (templated with ``{{param}}``) per variant.

    An entry may be a mapping of a language to its spellings (``{pt-BR: [daemon do
    nó]}``): those are accepted too, whatever language the learner answers in (a
    learner may answer in either), and the tag says which language they belong to.
    ``accept`` is private, so none of them reaches the bank in plain text."""
    from quizzes.i18n import language
    from quizzes.variants import params_of

    raw = source.get("accept")
    if not isinstance(raw, list) or not raw:
        raise where.error("accept", "must be a non-empty list of accepted answers")
    accept: list[Any] = []
    for entry in raw:
        if not isinstance(entry, dict):
            accept.append(entry)
            continue
        for tag, forms in entry.items():
            try:
                language(str(tag))
            except ValueError as exc:
                raise where.error("accept", str(exc)) from None
            if not isinstance(forms, list) or not forms \
                    or not all(isinstance(f, str | int | float) for f in forms):
                raise where.error("accept", f"'{tag}' must list its accepted answers")
            accept.extend(forms)
    cs = bool(source.get("case_sensitive", False))
    keys = {}
    for variant in variants:
        params = params_of(variant)
        forms = sorted({normalise(fill(str(a), params), case_sensitive=cs) for a in accept})
        keys[variant] = {"accept": [answer_hash(salt, item_id, variant, f) for f in forms]}
    return keys
