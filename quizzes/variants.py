"""Per-learner, per-attempt variants: the same learner and attempt always see the same
numbers, the same items and the same order; a new attempt sees new ones.

A quiz seed is ``HMAC-SHA256(key=quiz id, msg=learner id)``; each item derives
its own seed as ``sha256(quiz seed | item id)`` for attempt 1 (the rule before
attempts counted, so earlier submissions regrade unchanged) and
``sha256(quiz seed | item id | "#" attempt)`` for attempt 2 on.  The item's
parameters (``params: {n: [2, 4, 8], ...}`` in the bank) span a grid of
combinations in a fixed order (:func:`combinations`); attempt k gets combination
``(first seed + k - 1) mod len(grid)`` (:func:`variant_index`), so consecutive
attempts never repeat a variant while the grid has more than one.  The attempt's
own item seed shuffles that item's options; :func:`attempt_seed` orders and
draws the items of the attempt (:func:`draw`).
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import random
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


def item_seed(learner_id: str, quiz_id: str, item_id: str, attempt: int = 1) -> int:
    """The integer seed of one item for one learner and attempt (1-based)."""
    tail = "" if attempt <= 1 else f"#{attempt}"
    digest = hashlib.sha256(quiz_seed(learner_id, quiz_id) + (item_id + tail).encode("utf-8"))
    return int.from_bytes(digest.digest()[:8], "big")


def attempt_seed(learner_id: str, quiz_id: str, attempt: int) -> int:
    """The seed that orders and draws the items of one attempt."""
    msg = f"order\x1f{attempt}".encode()
    digest = hashlib.sha256(quiz_seed(learner_id, quiz_id) + msg).digest()
    return int.from_bytes(digest[:8], "big")


def variant_index(learner_id: str, quiz_id: str, item_id: str, attempt: int, size: int) -> int:
    """Which of ``size`` combinations attempt ``attempt`` gets: attempt 1's choice, then the
    next ones in turn (a retry always has new numbers when there are any)."""
    first = item_seed(learner_id, quiz_id, item_id, 1)
    return (first + max(attempt, 1) - 1) % size


def draw(items: Sequence[tuple[str, tuple[str, ...]]], count: int | None, seed: int
         ) -> list[str]:
    """The ids of the items an attempt shows, in the order it shows them.

    ``items`` are (item id, objectives) in bank order.  They are shuffled by
    ``seed``; with ``count`` (the policy's ``draw``) below their number, the first
    item of each objective not yet covered is taken first, then the rest in the
    shuffled order, so a drawn quiz still assesses every objective it can.
    """
    order = [item_id for item_id, _ in items]
    random.Random(seed).shuffle(order)
    if count is None or count >= len(order):
        return order
    tags = dict(items)
    picked: list[str] = []
    covered: set[str] = set()
    for item_id in order:
        if len(picked) < count and not set(tags[item_id]) <= covered:
            picked.append(item_id)
            covered |= set(tags[item_id])
    for item_id in order:
        if len(picked) < count and item_id not in picked:
            picked.append(item_id)
    chosen = set(picked)
    return [item_id for item_id in order if item_id in chosen]


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


def choose(params: Params, index: int) -> dict[str, Any]:
    """The combination at ``index`` (taken modulo the grid's size)."""
    grid = combinations(params)
    return grid[index % len(grid)]


def params_of(variant: str) -> dict[str, Any]:
    """Inverse of :func:`quizzes.hashing.variant_key`."""
    return dict(json.loads(variant)) if variant else {}


def count(params: Sequence[tuple[str, Sequence[Any]]]) -> int:
    n = 1
    for _, values in params:
        n *= len(values)
    return n
