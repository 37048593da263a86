"""A simulation runs with the collector widened (minislurm.sim.collector)."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext

import pytest

from minislurm.conf import load_config
from minislurm.sim import simulate as simulate_module
from minislurm.sim.collector import WIDE, collector_widened
from minislurm.sim.simulate import simulate
from minislurm.sim.workload import WorkloadSpec, generate


@pytest.fixture(autouse=True)
def _default_collector() -> Iterator[None]:
    before = (gc.get_threshold(), gc.get_freeze_count())
    yield
    assert (gc.get_threshold(), gc.get_freeze_count()) == before


def test_widened_inside_and_put_back_after() -> None:
    old = gc.get_threshold()
    assert old != WIDE
    kept = [object() for _ in range(3)]  # something tracked exists before the body
    with collector_widened():
        assert gc.get_threshold() == WIDE
        assert gc.get_freeze_count() > 0  # what existed before is out of the collections
    assert gc.get_threshold() == old
    assert gc.get_freeze_count() == 0
    assert kept


def test_put_back_after_an_error() -> None:
    old = gc.get_threshold()
    with pytest.raises(RuntimeError), collector_widened():
        raise RuntimeError("boom")
    assert gc.get_threshold() == old and gc.get_freeze_count() == 0


def test_a_callers_freeze_stays_frozen() -> None:
    gc.freeze()
    try:
        assert gc.get_freeze_count() > 0
        with collector_widened():
            pass
        assert gc.get_freeze_count() > 0  # not unfrozen by the simulation (that empties it)
    finally:
        gc.unfreeze()


def test_nested_runs_keep_it_widened_until_the_outermost_ends() -> None:
    old = gc.get_threshold()
    with collector_widened():
        with collector_widened():
            assert gc.get_threshold() == WIDE
        assert gc.get_threshold() == WIDE and gc.get_freeze_count() > 0
    assert gc.get_threshold() == old and gc.get_freeze_count() == 0


def test_runs_overlapping_in_threads_put_it_back_when_the_last_ends() -> None:
    """The first run in ends before the second: the second must not restore the
    thresholds the first had set (WIDE), nor run unwidened after the first ends."""
    old = gc.get_threshold()
    first_in, second_in, first_out = (threading.Event() for _ in range(3))
    seen: list[tuple[int, int, int]] = []

    def first() -> None:
        with collector_widened():
            first_in.set()
            second_in.wait(5)
        first_out.set()

    def second() -> None:
        first_in.wait(5)
        with collector_widened():
            second_in.set()
            first_out.wait(5)
            seen.append(gc.get_threshold())  # the first one has ended

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert seen == [WIDE]
    assert gc.get_threshold() == old and gc.get_freeze_count() == 0


def test_cycles_made_in_the_run_are_still_collected() -> None:
    class Node:
        other: object = None

    with collector_widened():
        a, b = Node(), Node()
        a.other, b.other = b, a
        del a, b
        assert gc.collect() >= 2  # the young cycle, not frozen with the old objects


def test_a_simulation_runs_widened_and_gives_the_same_result(
        monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = load_config(None)
    jobs = list(generate(WorkloadSpec(seed=5, days=0.3)))
    seen: list[tuple[int, int, int]] = []

    @contextmanager
    def spy() -> Iterator[None]:
        with collector_widened():
            seen.append(gc.get_threshold())
            yield

    monkeypatch.setattr(simulate_module, "collector_widened", nullcontext)
    plain = simulate(jobs, cfg, scheduler="slurm")
    monkeypatch.setattr(simulate_module, "collector_widened", spy)
    widened = simulate(jobs, cfg, scheduler="slurm")
    assert seen == [WIDE]
    assert [(j.job_id, j.start_time, j.end_time, j.nodelist) for j in widened.jobs] == [
        (j.job_id, j.start_time, j.end_time, j.nodelist) for j in plain.jobs]
