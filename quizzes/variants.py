"""Per-learner variants: the same learner always sees the same numbers.

A quiz seed is ``HMAC-SHA256(key=quiz id, msg=learner id)``; each item derives
its own seed as ``sha256(quiz seed | item id)``.  The item's parameters
(``params: {n: [2, 4, 8], ...}`` in the bank) span a grid of combinations in a
fixed order (:func:`combinations`); the learner gets combination
``item seed mod len(grid)``, and the same item seed shuffles choice options.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from quizzes.hashing import variant_key

MAX_VARIANTS = 64
Params = tuple[tuple[str, tuple[Any, ...]], ...]


@lru_cache(maxsize=8192)
def quiz_seed(learner_id: str, quiz_id: str) -> bytes:
    """32 bytes that depend only on (learner id, quiz id)."""
    return hmac.new(quiz_id.encode("utf-8"), learner_id.encode("utf-8"), hashlib.sha256).digest()


def item_seed(learner_id: str, quiz_id: str, item_id: str) -> int:
    """The integer seed of one item for one learner."""
    digest = hashlib.sha256(quiz_seed(learner_id, quiz_id) + item_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big")


@lru_cache(maxsize=1024)
def combinations(params: Params) -> list[dict[str, Any]]:
    """Every parameter combination, in the order variants are numbered (cached: do not
    mutate the returned dicts)."""
    if not params:
        return [{}]
    names = [name for name, _ in params]
    return [dict(zip(names, values, strict=True))
            for values in itertools.product(*(vals for _, vals in params))]


def variant_keys(params: Params) -> list[str]:
    """The canonical keys (:func:`quizzes.hashing.variant_key`) of every combination."""
    return [variant_key(c) for c in combinations(params)]


def choose(params: Params, seed: int) -> dict[str, Any]:
    """The combination an item seed selects."""
    grid = combinations(params)
    return grid[seed % len(grid)]


def params_of(variant: str) -> dict[str, Any]:
    """Inverse of :func:`quizzes.hashing.variant_key`."""
    return dict(json.loads(variant)) if variant else {}


def count(params: Sequence[tuple[str, Sequence[Any]]]) -> int:
    n = 1
    for _, values in params:
        n *= len(values)
    return n
