"""Checks that a lesson widget shows its busy indicator while it recomputes.

`assert_busy_while` replaces one function a widget calls during a recomputation by a
wrapper that records whether the indicator was shown, then calls the real function;
then by one that raises, and checks the indicator is cleared after the error too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from course.lessons.predict import BusyIndicator


class Boom(RuntimeError):
    """The error the probe injects."""


def assert_busy_while(monkeypatch: pytest.MonkeyPatch, target: Any, name: str,
                      busy: BusyIndicator, trigger: Callable[[], object]) -> None:
    """``trigger()`` must call ``target.name`` with ``busy`` shown, and clear it after,
    whether the call returns or raises."""
    real = getattr(target, name)
    seen: list[bool] = []

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(busy.shown and bool(busy.view.value))
        return real(*args, **kwargs)

    monkeypatch.setattr(target, name, spy)
    assert not busy.shown
    trigger()
    assert seen and all(seen), "the indicator was not shown during the computation"
    assert not busy.shown and busy.view.value == ""

    def boom(*_args: Any, **_kwargs: Any) -> Any:
        assert busy.shown
        raise Boom("injected")

    monkeypatch.setattr(target, name, boom)
    with pytest.raises(Boom):
        trigger()
    assert not busy.shown and busy.view.value == "", "the indicator stayed after an error"
    monkeypatch.setattr(target, name, real)
