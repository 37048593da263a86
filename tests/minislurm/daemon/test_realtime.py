"""The second clock: `minislurm.daemon.realtime` drives one SimPy environment by the wall clock.

These tests show the contract the daemon relies on: ``env.now`` follows the
clock it is given; ``RealtimeDriver.call`` runs a function with the clock
caught up (every event that is due has happened, none that is not); the
background thread fires events on time; ``wait`` blocks until a predicate
holds or a timeout passes; a failure inside the simulation stops the clock
and every later ``call`` says so instead of hanging.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Generator, Iterator

import pytest
import simpy

from minislurm.daemon.realtime import MAX_SLEEP, RealtimeDriver, realtime_environment


class FakeClock:
    """A clock a test moves by hand (epoch seconds)."""

    def __init__(self, now: float = 1_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def driver() -> Iterator[RealtimeDriver]:
    """A driver on the real clock, its thread started; stopped afterwards."""
    drv = RealtimeDriver(realtime_environment())
    drv.start()
    try:
        yield drv
    finally:
        drv.stop()


def test_the_environment_starts_at_the_clock() -> None:
    assert realtime_environment(FakeClock(1234.5)).now == 1234.5
    before = time.time()
    assert before - 1 <= realtime_environment().now <= time.time() + 1


def test_call_catches_the_clock_up_before_running_the_function() -> None:
    clock = FakeClock(1_000.0)
    env = realtime_environment(clock)
    fired: list[float] = []
    env.process(_at(env, 5, fired))
    drv = RealtimeDriver(env, clock=clock)

    clock.now = 1_004.0
    assert drv.call(lambda: env.now) == 1_004.0
    assert fired == []                       # due at 1005: not yet

    clock.now = 1_006.5
    assert drv.call(lambda: (env.now, list(fired))) == (1_006.5, [1_005.0])


def test_call_returns_the_functions_value_and_propagates_its_errors() -> None:
    clock = FakeClock()
    drv = RealtimeDriver(realtime_environment(clock), clock=clock)
    assert drv.call(lambda: "answer") == "answer"
    with pytest.raises(ZeroDivisionError):
        drv.call(lambda: 1 // 0)


def test_call_processes_events_due_at_this_very_instant() -> None:
    """A process that schedules work "now" (zero delay) is run by the same call."""
    clock = FakeClock()
    env = realtime_environment(clock)
    seen: list[str] = []
    drv = RealtimeDriver(env, clock=clock)

    def submit() -> None:
        env.process(_at(env, 0, seen, label="scheduled"))

    drv.call(submit)
    assert drv.call(lambda: list(seen)) == ["scheduled"]


def test_the_thread_fires_timeouts_on_the_wall_clock(driver: RealtimeDriver) -> None:
    env = driver.env
    fired: list[float] = []
    start = time.time()
    driver.call(lambda: env.process(_at(env, 0.3, fired)))
    assert driver.wait(lambda: bool(fired), timeout=5)
    elapsed = time.time() - start
    assert 0.25 <= elapsed < 3, elapsed
    assert fired[0] == pytest.approx(start + 0.3, abs=0.2)


def test_wait_returns_false_when_the_timeout_passes(driver: RealtimeDriver) -> None:
    start = time.monotonic()
    assert driver.wait(lambda: False, timeout=0.2) is False
    assert 0.15 <= time.monotonic() - start < 2


def test_wait_sees_changes_made_from_another_thread(driver: RealtimeDriver) -> None:
    """A command thread changes state through ``call``; a waiter wakes up."""
    state = {"done": False}

    def finish_later() -> None:
        time.sleep(0.1)
        driver.call(lambda: state.update(done=True))

    threading.Thread(target=finish_later).start()
    assert driver.wait(lambda: state["done"], timeout=MAX_SLEEP * 6)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_crash_in_the_simulation_stops_the_clock_and_calls_say_so(
    driver: RealtimeDriver,
) -> None:
    env = driver.env

    def crash() -> Generator[simpy.Event, None, None]:
        yield env.timeout(0.05)
        raise ValueError("boom")

    driver.call(lambda: env.process(crash()))
    deadline = time.monotonic() + 5
    while driver.error is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert isinstance(driver.error, ValueError)
    with pytest.raises(RuntimeError, match="the controller's clock stopped"):
        driver.call(lambda: None)
    with pytest.raises(RuntimeError, match="the controller's clock stopped"):
        driver.wait(lambda: False, timeout=1)


def test_stop_leaves_queued_events_queued() -> None:
    env = realtime_environment()
    drv = RealtimeDriver(env)
    fired: list[float] = []
    drv.start()
    drv.call(lambda: env.process(_at(env, 60, fired)))
    drv.call(lambda: None)                 # the process has started and sleeps 60 s
    drv.stop()
    assert fired == []
    assert env.peek() == pytest.approx(time.time() + 60, abs=5)


def test_start_twice_keeps_one_thread() -> None:
    drv = RealtimeDriver(realtime_environment())
    drv.start()
    try:
        first = drv._thread
        drv.start()
        assert drv._thread is first
    finally:
        drv.stop()
    assert drv._thread is None


def _at(env: simpy.Environment, delay: float, log: list, label: str | None = None
        ) -> Generator[simpy.Event, None, None]:
    """A process that records ``env.now`` (or ``label``) after ``delay`` seconds."""
    yield env.timeout(delay)
    log.append(env.now if label is None else label)
