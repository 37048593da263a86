"""The widgets' re-simulations run with the cyclic collector paused (course.lessons.collector)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from course.lessons.collector import collector_paused


@pytest.fixture(autouse=True)
def _collector_on() -> None:
    assert gc.isenabled()


def test_paused_inside_and_restored_after() -> None:
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_nested_pauses_keep_it_off_until_the_outermost_ends() -> None:
    with collector_paused():
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_restored_after_an_error() -> None:
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_a_collector_left_off_stays_off() -> None:
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_simulation_runs_paused_and_gives_the_same_result(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from contextlib import contextmanager, nullcontext

    from course.lessons import scaling
    from course.lessons.scaling import ScaleParams, simulate_run

    seen: list[bool] = []

    @contextmanager
    def spy() -> Iterator[None]:
        with collector_paused():
            seen.append(gc.isenabled())
            yield

    p = ScaleParams(64)
    monkeypatch.setattr(scaling, "collector_paused", nullcontext)
    plain = simulate_run(p, 6.0, seed=3)  # the collector running throughout
    monkeypatch.setattr(scaling, "collector_paused", spy)
    paused = simulate_run(p, 6.0, seed=3)
    assert seen == [False]
    assert gc.isenabled()
    assert paused.breakdown == plain.breakdown and paused.node_failures == plain.node_failures
