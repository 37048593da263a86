"""When the controller acts: the main scheduler, sched/backfill and priority loops.

Scheduling is event driven (``kick``): a submission, a job end or an update runs the
main scheduler at this instant and a backfill pass ``bf_interval`` seconds later;
``PriorityCalcPeriod`` recomputes pending priorities while something can change.
``idle`` says when nothing can happen any more without an outside change, so that
``env.run()`` returns (slurmctld's own timers would tick forever).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import simpy

from minislurm.ctld.lifecycle import running_end
from minislurm.sched.backfill import backfill_pass
from minislurm.sched.builtin import main_pass

if TYPE_CHECKING:
    from .controller import Controller


class LoopsMixin:
    """The controller's scheduling triggers and periodic loops."""

    # state the loops keep (initialised by ``Controller.__init__``)
    events: int
    passes: dict[str, int]
    _main_scheduled: bool
    _bf_enabled: bool
    _bf_dirty: bool
    _bf_wake: simpy.Event | None
    _prio_wake: simpy.Event | None
    _prio_period: int
    _timers: int
    _order_dirty: bool
    bf_estimates: bool
    unobserved: bool

    def kick(self: Controller) -> None:  # type: ignore[misc]
        """Something changed: run the main scheduler at this instant, backfill later."""
        self.events += 1
        self._bf_dirty = True
        self._wake_priority()
        if self._bf_wake is not None and not self._bf_wake.triggered:
            self._bf_wake.succeed()
        if not self._main_scheduled:
            self._main_scheduled = True
            self.env.timeout(0).callbacks.append(self._main)

    def _wake_at(self: Controller, timestamp: int | None) -> None:  # type: ignore[misc]
        if timestamp is not None and timestamp > self.now:
            self.later(timestamp - self.now, self.kick)

    def later(self: Controller, delay: float, action: Callable[[], None]) -> None:  # type: ignore[misc]
        """Run ``action`` ``delay`` seconds from now; ``idle`` is False until it ran."""
        self._timers += 1

        def fire(_ev: object) -> None:
            self._timers -= 1
            action()

        self.env.timeout(max(0.0, delay)).callbacks.append(fire)

    def _wake_priority(self: Controller) -> None:  # type: ignore[misc]
        if self._prio_wake is not None and not self._prio_wake.triggered:
            self._prio_wake.succeed()

    @property
    def idle(self: Controller) -> bool:  # type: ignore[misc]
        """True when nothing runs and no pending job can start without an outside change.

        No job is running or completing, no scheduler pass is due and no wake-up of the
        controller (a BeginTime, a reservation's start or end, a node repair) is to come:
        the pending jobs, if any, wait for something only a user or an administrator can
        do (a partition limit with ``EnforcePartLimits=NO``, a DOWN partition, a hold).
        """
        return (not self._running and not self._main_scheduled and self._timers == 0
                and not (self._bf_enabled and self._bf_dirty))

    def _main(self: Controller, _ev: object = None) -> None:  # type: ignore[misc]
        self._main_scheduled = False
        self.passes["main"] += 1
        main_pass(self, policy=self.policy, depth=self.queue_depth)

    def _backfill_loop(self: Controller):  # type: ignore[misc, no-untyped-def]
        while True:
            if not self._bf_dirty:
                self._bf_wake = self.env.event()
                yield self._bf_wake
                self._bf_wake = None
            yield self.env.timeout(max(self.bf.bf_interval, 1))
            self._bf_dirty = False
            self.run_backfill()

    def run_backfill(self: Controller) -> int:  # type: ignore[misc]
        """One sched/backfill pass now (normally every bf_interval after a change)."""
        from minislurm.sched.backfill import Running

        t = self.table
        if not self._pending:
            return 0
        if not self.bf_estimates and not (t.usable & (t.free_cpu > 0)).any():
            return 0  # nothing is free, so no job could start, and nobody reads estimates
        self.passes["backfill"] += 1
        now = self.now

        def running() -> list[Running]:  # built only when the pass needs the map
            return [  # a running job's end_time (after any scontrol update TimeLimit=)
                Running(j.allocation, None if (end := running_end(j)) is None
                        else max(end, now + 1))
                for j in self._running.values() if j.allocation is not None
            ]  # fmt: skip

        return backfill_pass(self, self.table, running, self.bf, policy=self.policy,
                             estimates=self.bf_estimates)

    def _priority_loop(self: Controller):  # type: ignore[misc, no-untyped-def]
        """PriorityCalcPeriod (seconds): recompute the priorities of pending jobs.

        It sleeps while no job is pending or the controller is ``idle`` (no pending job
        could start before a submission, a job end or an update), so ``env.run()``
        returns once only such jobs are left, instead of ticking forever.  In a trace
        simulation (``unobserved``: no user reads a priority between events) a pass
        followed by the next one before any other event only decays the usage: its
        numbers would be overwritten unread.
        """
        while True:
            if not self._pending or self.idle:
                self._prio_wake = self.env.event()
                yield self._prio_wake
                self._prio_wake = None
                continue
            yield self.env.timeout(self._prio_period)
            if (self.unobserved and self._pending and not self.idle  # it ticks again
                    and self.env.peek() > self.env.now + self._prio_period):
                self.decay_priorities()  # the next pass comes first: nobody reads these
            else:
                self.recalc_priorities()


__all__ = ["LoopsMixin"]
