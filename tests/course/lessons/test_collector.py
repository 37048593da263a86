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


def test_a_goodput_sweep_keeps_it_off_until_its_last_run_ended(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Lesson 7's sweep holds one pause over all its runs: each run's cluster is garbage
    before the collector comes back, instead of surviving into an older generation."""
    from course.lessons import goodput
    from course.lessons.goodput import FailureModel, interval_grid

    real = goodput.measure
    seen: list[bool] = []

    def spy(m: FailureModel, tau: float, *, seed: int = 0) -> goodput.Measured:
        seen.append(gc.isenabled())
        result = real(m, tau, seed=seed, failures=5)
        seen.append(gc.isenabled())
        return result

    m = FailureModel(mtbf=6, checkpoint=0.1)
    taus = interval_grid(m, points=3)
    monkeypatch.setattr(goodput, "measure", spy)
    goodput.sweep.cache_clear()
    points = goodput.sweep(m, taus)
    goodput.sweep.cache_clear()
    assert seen == [False] * 6
    assert gc.isenabled()
    assert [p.tau for p in points] == list(taus)
