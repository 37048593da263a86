"""What the learner sees of one item's variant: every text filled from the same parameters.

:func:`present` is the one place an item becomes its learner-facing form: the
item type's own presentation (prompt, options in this learner's order, unit)
plus the exhibit (:mod:`quizzes.exhibit`) played for this variant.
:func:`explanation` and :func:`feedback` fill the texts shown after answering
from the same parameters, so no ``{{placeholder}}`` ever reaches a learner.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from quizzes.exhibit import render
from quizzes.items.base import Presented
from quizzes.template import fill

if TYPE_CHECKING:
    from quizzes.bank import Item


def present(item: Item, params: Mapping[str, Any], seed: int) -> Presented:
    """The item as this variant shows it (exhibit included)."""
    shown = item.present(params, seed)
    exhibit = render(item.common.exhibit, params)
    return replace(shown, exhibit=exhibit) if exhibit else shown


def explanation(item: Item, params: Mapping[str, Any]) -> str:
    """The explanation unsealed after answering, filled for this variant."""
    return fill(item.common.explanation, params)


def feedback(text: str, params: Mapping[str, Any]) -> str:
    """A grader's feedback line, filled for this variant."""
    return fill(text, params)
