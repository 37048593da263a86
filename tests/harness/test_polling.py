"""tests/polling.py's `poll`: returns the first value that satisfies the check, and fails
naming what it waited for and the last value read when none does."""

from __future__ import annotations

import pytest
from polling import poll


def test_poll_returns_the_first_value_that_satisfies_the_check() -> None:
    values = iter([1, 2, 3, 4])
    paused: list[float] = []
    assert poll(lambda: next(values), lambda v: v >= 3, what="three", tries=5, every=2,
                pause=paused.append) == 3
    assert paused == [2, 2, 2]  # a pause before each read


def test_poll_fails_with_what_it_waited_for_and_the_last_read() -> None:
    values = iter(["a", "b"])
    with pytest.raises(pytest.fail.Exception,
                       match=r"job done: not seen within 2 reads 1 s apart; last read: 'b'"):
        poll(lambda: next(values), lambda v: v == "done", what="job done", tries=2, every=1,
             pause=lambda _: None)
