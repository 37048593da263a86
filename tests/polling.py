"""Waiting for a state in tests that read a cluster (real Slurm, or minislurm on either
clock): `poll` reads until the state shows, and fails naming what it waited for and the
last thing it read when it does not, instead of going on to assert on an older state."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import pytest

T = TypeVar("T")


def poll(read: Callable[[], T], done: Callable[[T], bool], *, what: str, tries: int,
         every: float = 0.5, pause: Callable[[float], None] = time.sleep) -> T:
    """``read()`` until ``done`` of it, at most ``tries`` times, ``pause(every)`` before
    each read (on a simulated clock ``pause`` advances it); returns what satisfied
    ``done``, else fails the test with ``what`` and the last value read."""
    value: T | None = None
    for _ in range(tries):
        pause(every)
        value = read()
        if done(value):
            return value
    pytest.fail(f"{what}: not seen within {tries} reads {every:g} s apart; last read: "
                f"{value!r}")
