"""The second clock: one SimPy environment driven by the wall clock.

minislurm has one engine and two clocks. On the simulated clock
(``simpy.Environment``) time jumps from event to event. Here the very same
environment is driven so that ``env.now`` follows ``time.time()``: a thread
processes every event whose time has come, then sleeps until the next one or
until another thread changes something (a command arrives, a process exits).

Anything that touches the controller from another thread goes through
`RealtimeDriver.call` (which first brings the clock up to now) or
`RealtimeDriver.wait`; SimPy itself is not thread-safe, the lock makes it so.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TypeVar

import simpy

T = TypeVar("T")

#: Longest the driver sleeps without looking at the clock (seconds).
MAX_SLEEP = 0.5


class RealtimeEnvironment(simpy.Environment):
    """A SimPy environment whose ``now`` starts at the wall clock (epoch seconds).

    ``started_at`` is that start: slurmctld counts its periodic ``job_time_limit()``
    checks (every ``PERIODIC_TIMEOUT`` = 30 s) from its own start, not from multiples of
    30 s of the Unix clock (``ctld.lifecycle.limit_check_phase`` reads it).
    """

    def __init__(self, initial_time: float) -> None:
        super().__init__(initial_time=initial_time)
        self.started_at = initial_time


def realtime_environment(clock: Callable[[], float] = time.time) -> RealtimeEnvironment:
    """A SimPy environment whose ``now`` starts at the wall clock (epoch seconds)."""
    return RealtimeEnvironment(clock())


class RealtimeDriver:
    """Runs ``env`` on the wall clock in a background thread.

    ``call(fn)`` runs ``fn`` with the clock caught up to now, under the lock;
    ``wait(predicate)`` blocks (without holding the lock) until ``predicate()``.
    """

    def __init__(self, env: simpy.Environment, *, clock: Callable[[], float] = time.time) -> None:
        self.env = env
        self.clock = clock
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
        self._running = False
        self._thread: threading.Thread | None = None
        self.error: BaseException | None = None

    def _catch_up(self) -> None:
        now = self.clock()
        if now > self.env.now:
            self.env.run(until=now)
        # SimPy re-queues the stop event of run(until) at the current instant
        # (priority -1, no callbacks); process it and anything else due now.
        while self.env.peek() <= self.env.now:
            self.env.step()

    def _loop(self) -> None:
        with self.changed:
            while self._running:
                try:
                    self._catch_up()
                except BaseException as exc:
                    self.error = exc
                    self._running = False
                    self.changed.notify_all()
                    raise
                self.changed.notify_all()
                delay = min(max(self.env.peek() - self.clock(), 0.0), MAX_SLEEP)
                if delay > 0:
                    self.changed.wait(delay)

    def start(self) -> None:
        """Start the clock thread."""
        if self._thread is not None:
            return
        self._running = True
        self._thread = threading.Thread(target=self._loop, name="realtime-clock", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the clock thread (events still queued stay queued)."""
        with self.changed:
            self._running = False
            self.changed.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def call(self, fn: Callable[[], T]) -> T:
        """Run ``fn()`` under the lock with the clock caught up; wake the clock thread."""
        with self.changed:
            if self.error is not None:
                raise RuntimeError("the controller's clock stopped") from self.error
            self._catch_up()
            try:
                return fn()
            finally:
                self.changed.notify_all()

    def wait(self, predicate: Callable[[], bool], timeout: float | None = None) -> bool:
        """Block until ``predicate()`` holds (checked under the lock); False on timeout."""
        deadline = None if timeout is None else self.clock() + timeout
        with self.changed:
            while not predicate():
                if self.error is not None:
                    raise RuntimeError("the controller's clock stopped") from self.error
                remaining = MAX_SLEEP if deadline is None else min(MAX_SLEEP,
                                                                   deadline - self.clock())
                if remaining <= 0:
                    return False
                self.changed.wait(remaining)
            return True
