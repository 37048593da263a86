"""Numeric items with an absolute or relative tolerance and units.

The stored key of a variant is the set of hashed *cells* of a grid that lies
within the tolerance of the answer.  The grid depends on the tolerance only,
never on the answer (:class:`Grid`), so the bank holds no number from which the
answer could be worked out:

* ``{abs: t}``: linear cells of width q = t/4, cell ``round(y / q)``;
* ``{rel: r}``: logarithmic cells of ratio (1 + r)^(1/8), cell
  ``round(log|y| / s)`` with s = log1p(r)/8 (prefixed ``neg:`` for y < 0;
  ``zero`` for 0), i.e. 8 cells between the answer and its upper bound.

A response y (converted to the item's unit, see :mod:`quizzes.items.units`) is
accepted when its cell is one of the stored ones, i.e. within the tolerance give
or take half a cell at the edges.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from quizzes.hashing import answer_hash
from quizzes.i18n import M, Msg
from quizzes.items.base import (
    Common,
    Outcome,
    Presented,
    as_text,
    fill,
    variant_table,
    with_extras,
)
from quizzes.items.units import comma_problem, parse_quantity
from quizzes.where import Where

MAX_CELLS = 128  # rel 0.9999 needs 115 log cells; abs always 9


@dataclass(frozen=True, slots=True)
class Grid:
    """The cells answers fall into: ``linear`` (step t/4) or ``log`` (step log1p(r)/8)."""

    kind: str  # "linear" | "log"
    step: float

    @classmethod
    def of(cls, tol: Mapping[str, Any]) -> Grid:
        if "abs" in tol:
            return cls("linear", float(tol["abs"]) / 4)
        return cls("log", math.log1p(float(tol["rel"])) / 8)

    def cell(self, y: float) -> str:
        if self.kind == "linear":
            return str(round(y / self.step))
        if y == 0:
            return "zero"
        k = str(round(math.log(abs(y)) / self.step))
        return k if y > 0 else f"neg:{k}"

    def cells_near(self, answer: float, tol: Mapping[str, Any]) -> list[str]:
        """Every cell whose centre lies within the tolerance of ``answer``."""
        if self.kind == "linear":
            width = float(tol["abs"])
            lo = math.ceil((answer - width) / self.step)
            hi = math.floor((answer + width) / self.step)
            return [str(k) for k in range(lo, hi + 1)]
        rel = float(tol["rel"])
        if answer == 0:
            return ["zero"]
        lo = math.ceil(math.log(abs(answer) * (1 - rel)) / self.step)
        hi = math.floor(math.log(abs(answer) * (1 + rel)) / self.step)
        return [str(k) if answer > 0 else f"neg:{k}" for k in range(lo, hi + 1)]


@dataclass(frozen=True, slots=True)
class NumericKey:
    cells: frozenset[str]


@dataclass(frozen=True, slots=True)
class NumericItem:
    """``type: numeric``; ``unit`` (optional) and ``tolerance`` ({abs: x} or {rel: r})."""

    common: Common
    unit: str
    tolerance_text: str
    grid: Grid
    keys: Mapping[str, NumericKey]

    @classmethod
    def from_bank(
        cls, common: Common, raw: Mapping[str, Any], where: Where, variants: Sequence[str]
    ) -> NumericItem:
        common = with_extras(common, raw, where)
        unit = where.optional(raw, "unit", str, "")
        tol = where.require(raw, "tolerance", dict)
        tolerance_text = describe_tolerance(where, tol)
        table = variant_table(where, raw, "keys", variants)
        keys: dict[str, NumericKey] = {}
        for variant in variants:
            entry = table[variant]
            if not isinstance(entry, dict):
                raise where.error("keys", "each variant key must be a mapping")
            if set(entry) != {"cells"}:
                raise where.error("keys", "a numeric key holds only 'cells' (hashes)")
            cells = where.require(entry, "cells", list)
            keys[variant] = NumericKey(frozenset(map(str, cells)))
        return cls(common, unit, tolerance_text, Grid.of(tol), keys)

    def present(self, params: Mapping[str, Any], seed: int = 0) -> Presented:
        return Presented(self.common.id, "numeric", fill(self.common.prompt, params),
                         unit=self.unit, points=self.common.points)

    def grade(self, response: Any, params: Mapping[str, Any], salt: str, variant: str) -> Outcome:
        text = as_text(response)
        value = parse_quantity(text, self.unit) if text is not None else None
        if value is None or not math.isfinite(value):
            problem = comma_problem(text) if text is not None else None
            if problem:
                return Outcome.said(0.0, M("Cannot read this number: {reason}.",
                                           reason=Msg(problem)), readable=False)
            if self.unit:
                return Outcome.said(0.0, M("Answer with a number (in {unit}, or with a unit).",
                                           unit=self.unit), readable=False)
            return Outcome.said(0.0, M("Answer with a number."), readable=False)
        key = self.keys[variant]
        ok = answer_hash(salt, self.common.id, variant, self.grid.cell(value)) in key.cells
        if ok:
            return Outcome.said(1.0, M("Correct."))
        return Outcome.said(0.0, M("Incorrect. {expected}", expected=self.expected_message()))

    def expected(self) -> str:
        """What a right answer looks like: the tolerance and the unit (never the value)."""
        return self.expected_message().render()

    def expected_message(self) -> Msg:
        """:meth:`expected` as a message, to say in the learner's language."""
        within = M("within ±{tolerance}", tolerance=self.tolerance_text.removeprefix("within ±"))
        if self.unit:
            return M("Answers {within} of the expected value are accepted, in {unit} (or with a "
                     "unit such as {example}).", within=within, unit=self.unit,
                     example=example_unit(self.unit))
        return M("Answers {within} of the expected value are accepted.", within=within)


def example_unit(unit: str) -> str:
    """Another spelling of ``unit`` a learner may use (``GB`` for MB, ``h`` for minutes)."""
    from quizzes.items.units import MEMORY_MB, TIME_MIN

    if unit.lower() in MEMORY_MB:
        return "64G"
    if unit.lower() in TIME_MIN:
        return "2 h"
    return f"12 {unit}"


def describe_tolerance(where: Where, tol: Mapping[str, Any]) -> str:
    if set(tol) == {"abs"} and isinstance(tol["abs"], int | float) and tol["abs"] > 0:
        return f"within ±{tol['abs']:g}"
    if set(tol) == {"rel"} and isinstance(tol["rel"], int | float) and 0 < tol["rel"] < 1:
        return f"within ±{tol['rel'] * 100:g}%"
    raise where.error("tolerance", "must be {abs: <positive number>} or {rel: <0..1>}")


def author_cells(
    answer: float, tol: Mapping[str, float], salt: str, item_id: str, variant: str
) -> dict[str, Any]:
    """The hashed grid key for one variant's plain answer (no number is stored)."""
    cells = [answer_hash(salt, item_id, variant, c)
             for c in Grid.of(tol).cells_near(answer, tol)]
    assert 0 < len(cells) <= MAX_CELLS
    return {"cells": cells}
