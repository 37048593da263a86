"""The controller's timers: `CtldState.later_each` is `later` once per call, and
`random_failures` schedules its plan as `schedule_node_failure` would, failure by failure.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from ctld_helpers import gpu_cluster, sub

from minislurm.ctld import Controller

Batch = Callable[[Controller, list[tuple[float, str]], Callable[[str], None]], None]


def _instant(batch: Batch) -> list[str]:
    """What runs when: the timers ``batch`` schedules among other events of their
    instants (timeouts scheduled before and after them, a `later` timer after)."""
    ctl = gpu_cluster()
    env = ctl.env
    seen: list[str] = []

    def note(what: str) -> None:
        seen.append(f"{env.now:g} {what}")

    for delay in (0, 5, 7):
        env.timeout(delay).callbacks.append(lambda _ev, d=delay: note(f"before {d}"))
    batch(ctl, [(5, "a"), (0, "b"), (5, "c"), (7, "d"), (5, "e")], note)
    for delay in (0, 5, 7):
        env.timeout(delay).callbacks.append(lambda _ev, d=delay: note(f"after {d}"))
    ctl.later(5, partial(note, "later 5"))
    assert not ctl.idle
    env.run(until=6)
    assert not ctl.idle  # the timer of 7 s is still to come
    env.run()
    assert ctl.idle
    return seen


def test_later_each_runs_as_one_later_per_call() -> None:
    def one_by_one(ctl: Controller, plan: list[tuple[float, str]],
                   note: Callable[[str], None]) -> None:
        for delay, arg in plan:
            ctl.later(delay, partial(note, arg))

    def at_once(ctl: Controller, plan: list[tuple[float, str]],
                note: Callable[[str], None]) -> None:
        ctl.later_each(iter(plan), note)

    expected = _instant(one_by_one)
    assert expected == ["0 before 0", "0 b", "0 after 0", "5 before 5", "5 a", "5 c", "5 e",
                        "5 after 5", "5 later 5", "7 before 7", "7 d", "7 after 7"]
    assert _instant(at_once) == expected


def _run_with_failures(schedule: Callable[[Controller], None]) -> Controller:
    """Jobs on a cluster whose nodes fail (``schedule`` plans the failures)."""
    ctl = gpu_cluster(nodes=4)
    schedule(ctl)
    for i in range(12):
        sub(ctl, 1800 + 300 * i, nodes_min=1 + i % 3, gres="gpu:8", exclusive="exclusive",
            requeue=bool(i % 2), time_limit=120)
    ctl.run(until=ctl.now + 12 * 3600)
    return ctl


def test_random_failures_fail_nodes_as_schedule_node_failure_does() -> None:
    plans: list[list[tuple[int, str]]] = []

    def randomly(ctl: Controller) -> None:
        plans.append(ctl.random_failures(3.0, 1200, seed=4, until=ctl.now + 10 * 3600))

    def one_by_one(ctl: Controller) -> None:
        for t, name in plans[0]:
            ctl.schedule_node_failure(name, t, repair_after=1200)

    a = _run_with_failures(randomly)
    b = _run_with_failures(one_by_one)
    assert len(plans[0]) > 10
    assert any(r.state.value == "NODE_FAIL" for r in a.accounting())
    assert a.accounting() == b.accounting()
    assert a.nodes() == b.nodes()
    assert (a.events, a.passes) == (b.events, b.passes)
