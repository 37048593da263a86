"""The job queue orders pending jobs only through the priority plugin interface.

A third ``PriorityType`` (here a tiny "shortest limit first" plugin, nowhere in the
controller) plugs in with ``Controller(priority=...)``: its numbers order the queue,
its ``recalculates`` says whether ``PriorityCalcPeriod`` passes run, and its
``renice`` answers ``scontrol update Nice=``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ctld_helpers import ref_controller, sub

from minislurm.priority import PriorityPlugin
from minislurm.priority.factors import PriorityFactors
from minislurm.states import JobState

#: PriorityCalcPeriod=1 (minutes): passes every 60 s while jobs wait.
PERIOD = "PriorityCalcPeriod=1\n"


class ShortestFirst:
    """Shorter time limits first; counts how often it is asked."""

    name = "priority/shortest"

    def __init__(self, *, recalculates: bool, renice_to: int | None = None) -> None:
        self.recalculates = recalculates
        self.renice_to = renice_to
        self.asked = 0

    def priority(self, job: Any, now: int) -> int:
        self.asked += 1
        return 0 if job.hold else 100_000 - int(job.time_limit or 0)

    def priorities(self, jobs: Sequence[Any], now: int) -> list[int]:
        return [self.priority(j, now) for j in jobs]

    def unread_pass(self, now: int) -> bool:
        return False

    def renice(self, priority: int, old_nice: int, new_nice: int) -> int | None:
        return self.renice_to

    def factors(self, job: Any, now: int) -> PriorityFactors:
        raise NotImplementedError

    def record_usage(self, user: str, account: str, tres_seconds: Mapping[str, float],
                     now: int) -> None:
        return None


def _busy_then_three(plugin: ShortestFirst, extra: str = "") -> tuple[Any, list[int]]:
    ctl = ref_controller(extra, priority=plugin)
    sub(ctl, 600, nodes_min=4, exclusive="exclusive", time_limit=20)  # the whole cluster, 10 min
    ctl.run_for(0)  # it starts
    ids = [sub(ctl, 60, nodes_min=4, exclusive="exclusive", time_limit=t) for t in (30, 10, 20)]
    return ctl, ids


def test_a_third_plugin_satisfies_the_interface() -> None:
    assert isinstance(ShortestFirst(recalculates=False), PriorityPlugin)


def test_a_third_plugin_orders_the_queue_and_the_starts() -> None:
    ctl, (long, short, middle) = _busy_then_three(ShortestFirst(recalculates=False))
    assert [j.job_id for j in ctl.pending()] == [short, middle, long]
    ctl.run()
    starts = {j: ctl.job(j).start_time or 0 for j in (long, short, middle)}
    assert starts[short] < starts[middle] < starts[long]


def test_a_plugin_that_does_not_recalculate_gets_no_periodic_passes() -> None:
    plugin = ShortestFirst(recalculates=False)
    ctl, ids = _busy_then_three(plugin, PERIOD)
    asked = plugin.asked
    ctl.run_for(300)  # five PriorityCalcPeriods while the jobs wait
    assert all(ctl.job(j).state is JobState.PENDING for j in ids)
    assert plugin.asked == asked


def test_a_plugin_that_recalculates_gets_the_periodic_passes() -> None:
    plugin = ShortestFirst(recalculates=True)
    ctl, ids = _busy_then_three(plugin, PERIOD)
    asked = plugin.asked
    ctl.run_for(300)
    assert plugin.asked >= asked + 3 * len(ids)


def test_nice_asks_the_plugin_then_computes_anew_when_it_declines() -> None:
    ctl, (long, short, _middle) = _busy_then_three(ShortestFirst(recalculates=False,
                                                                 renice_to=7))
    ctl.update_job(long, nice=100)
    assert ctl.job(long).priority == 7  # the plugin's own answer
    ctl2, (long2, _s, _m) = _busy_then_three(ShortestFirst(recalculates=False))
    before = ctl2.job(long2).priority
    ctl2.update_job(long2, nice=100)  # renice() -> None: priority() again
    assert ctl2.job(long2).priority == before == 100_000 - 30
    assert short != long
