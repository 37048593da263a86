"""Numeric items with an absolute or relative tolerance and units.

The stored key of a variant is a grid: ``quantum`` q = tolerance / 4 and the
hashes of every integer k with ``|k*q - answer| <= tolerance``.  A response y
(converted to the item's unit, see :mod:`quizzes.items.units`) is accepted when
``round(y / q)`` is one of those cells, i.e. within the tolerance give or take
q/2 at the edges.  The answer itself never appears in the bank.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from quizzes.hashing import answer_hash
from quizzes.items.base import Common, Outcome, Presented, Where, as_text, fill, variant_table
from quizzes.items.units import parse_quantity

MAX_CELLS = 64


@dataclass(frozen=True, slots=True)
class NumericKey:
    quantum: float
    cells: frozenset[str]


@dataclass(frozen=True, slots=True)
class NumericItem:
    """``type: numeric``; ``unit`` (optional) and ``tolerance`` ({abs: x} or {rel: r})."""

    common: Common
    unit: str
    tolerance_text: str
    keys: Mapping[str, NumericKey]

    @classmethod
    def from_bank(
        cls, common: Common, raw: Mapping[str, Any], where: Where, variants: Sequence[str]
    ) -> NumericItem:
        unit = where.optional(raw, "unit", str, "")
        tol = where.require(raw, "tolerance", dict)
        tolerance_text = describe_tolerance(where, tol)
        table = variant_table(where, raw, "keys", variants)
        keys: dict[str, NumericKey] = {}
        for variant in variants:
            entry = table[variant]
            if not isinstance(entry, dict):
                raise where.error("keys", "each variant key must be a mapping")
            quantum = where.require(entry, "quantum", (int, float))
            if quantum <= 0:
                raise where.error("keys", "quantum must be positive")
            cells = where.require(entry, "cells", list)
            keys[variant] = NumericKey(float(quantum), frozenset(map(str, cells)))
        return cls(common, unit, tolerance_text, keys)

    def present(self, params: Mapping[str, Any], seed: int = 0) -> Presented:
        return Presented(self.common.id, "numeric", fill(self.common.prompt, params),
                         unit=self.unit, points=self.common.points)

    def grade(self, response: Any, params: Mapping[str, Any], salt: str, variant: str) -> Outcome:
        text = as_text(response)
        value = parse_quantity(text, self.unit) if text is not None else None
        if value is None or not math.isfinite(value):
            unit = f" (in {self.unit}, or with a unit)" if self.unit else ""
            return Outcome(0.0, f"Answer with a number{unit}.")
        key = self.keys[variant]
        cell = str(round(value / key.quantum))
        ok = answer_hash(salt, self.common.id, variant, cell) in key.cells
        return Outcome(1.0 if ok else 0.0, "Correct." if ok else
                       f"Incorrect (answers {self.tolerance_text} are accepted).")


def describe_tolerance(where: Where, tol: Mapping[str, Any]) -> str:
    if set(tol) == {"abs"} and isinstance(tol["abs"], int | float) and tol["abs"] > 0:
        return f"within ±{tol['abs']:g}"
    if set(tol) == {"rel"} and isinstance(tol["rel"], int | float) and 0 < tol["rel"] < 1:
        return f"within ±{tol['rel'] * 100:g}%"
    raise where.error("tolerance", "must be {abs: <positive number>} or {rel: <0..1>}")


def author_cells(
    answer: float, tol: Mapping[str, float], salt: str, item_id: str, variant: str
) -> dict[str, Any]:
    """The grid key for one variant's plain answer."""
    width = float(tol["abs"]) if "abs" in tol else abs(answer) * float(tol["rel"])
    if width <= 0:
        width = 1e-9
    quantum = width / 4
    lo, hi = math.ceil((answer - width) / quantum), math.floor((answer + width) / quantum)
    cells = [answer_hash(salt, item_id, variant, str(k)) for k in range(lo, hi + 1)]
    assert 0 < len(cells) <= MAX_CELLS
    return {"quantum": quantum, "cells": cells}
