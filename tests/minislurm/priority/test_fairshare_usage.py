"""Decaying usage (PriorityDecayHalfLife, PriorityUsageResetPeriod) as the decay
thread of priority_multifactor.c keeps it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from minislurm.common.accounts import QOS, Association, AssociationSet
from minislurm.errors import ConfigError
from minislurm.priority.usage import (
    UsageTracker,
    billable_seconds,
    decay_factor,
    next_reset,
    rollup,
)

DAY = 86400


def ts(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> int:
    return int(datetime(year, month, day, hour, minute, tzinfo=UTC).timestamp())


def small_tree() -> AssociationSet:
    return AssociationSet(
        "c",
        (
            Association("root", parent=None),
            Association("ml", parent="root"),
            Association("llm", parent="ml"),
            Association("llm", user="alice", parent="llm"),
            Association("ml", user="bob", parent="ml"),
        ),
        (QOS("normal"),),
    )


def test_decay_factor_is_slurms_first_order_approximation() -> None:
    assert decay_factor(7 * DAY) == 1 - 0.693 / (7 * DAY)
    assert decay_factor(0) == 1.0  # PriorityDecayHalfLife=0: no decay


def test_usage_halves_after_one_half_life() -> None:
    t = UsageTracker(small_tree(), half_life=DAY, start=0)
    t.record(("llm", "alice"), 1000.0, now=0)
    assert t.raw_usage(DAY)[("llm", "alice")] == pytest.approx(500.0, rel=1e-3)
    assert t.raw_usage(3 * DAY)[("llm", "alice")] == pytest.approx(125.0, rel=1e-3)


def test_decay_is_the_same_however_often_it_is_applied() -> None:
    a = UsageTracker(small_tree(), half_life=3600, start=0)
    b = UsageTracker(small_tree(), half_life=3600, start=0)
    for t in (a, b):
        t.record(("ml", "bob"), 100.0, now=0)
    for now in range(0, 7201, 300):  # every PriorityCalcPeriod
        a.advance(now)
    assert a.raw_usage(7200) == pytest.approx(b.raw_usage(7200))


def test_no_decay_without_half_life() -> None:
    t = UsageTracker(small_tree(), half_life=0, start=0)
    t.record(("ml", "bob"), 100.0, now=0)
    assert t.raw_usage(30 * DAY)[("ml", "bob")] == 100.0


def test_usage_is_charged_to_every_ancestor() -> None:
    t = UsageTracker(small_tree(), half_life=0)
    t.record(("llm", "alice"), 30.0, now=10)
    t.record(("ml", "bob"), 12.0, now=10)
    raw = t.raw_usage(10)
    assert raw[("llm", None)] == 30.0
    assert raw[("ml", None)] == 42.0
    assert raw[("root", None)] == 42.0


def test_a_recorded_slice_decays_over_its_own_period_like_slurm() -> None:
    t = UsageTracker(small_tree(), half_life=3600)
    t.record(("ml", "bob"), 300.0, now=300, period=300)
    assert t.raw_usage(300)[("ml", "bob")] == pytest.approx(300 * decay_factor(3600) ** 300)


def test_unknown_association_is_refused() -> None:
    t = UsageTracker(small_tree())
    with pytest.raises(KeyError):
        t.record(("nosuch", "alice"), 1.0, now=0)


def test_billable_seconds_prefer_billing_then_cpu() -> None:
    assert billable_seconds({"cpu": 8.0, "billing": 16.0}) == 16.0
    assert billable_seconds({"cpu": 8.0, "mem": 1000.0}) == 8.0
    assert billable_seconds({}) == 0.0


@pytest.mark.parametrize(
    ("period", "last", "expected"),
    [
        ("DAILY", ts(2026, 1, 5, 8), ts(2026, 1, 6)),
        ("WEEKLY", ts(2026, 1, 5, 8), ts(2026, 1, 11)),  # a Monday -> next Sunday
        ("WEEKLY", ts(2026, 1, 11, 8), ts(2026, 1, 18)),  # a Sunday -> a week later
        ("MONTHLY", ts(2026, 12, 15, 8), ts(2027, 1, 1)),
        ("QUARTERLY", ts(2026, 2, 15), ts(2026, 4, 1)),
        ("QUARTERLY", ts(2026, 11, 2), ts(2027, 1, 1)),
        ("YEARLY", ts(2026, 6, 1), ts(2027, 1, 1)),
        ("NONE", ts(2026, 6, 1), None),
    ],
)
def test_next_reset(period: str, last: int, expected: int | None) -> None:
    assert next_reset(period, last) == expected


def test_bad_reset_period() -> None:
    with pytest.raises(ConfigError, match="PriorityUsageResetPeriod"):
        next_reset("HOURLY", 0)


def test_daily_reset_clears_usage_at_midnight() -> None:
    start = ts(2026, 1, 5, 8)
    t = UsageTracker(small_tree(), half_life=0, reset_period="DAILY", start=start)
    t.record(("ml", "bob"), 50.0, now=start + 3600)
    assert t.raw_usage(ts(2026, 1, 5, 23))[("ml", "bob")] == 50.0
    assert t.raw_usage(ts(2026, 1, 6, 0, 1))[("ml", "bob")] == 0.0


def test_rollup_of_nothing_is_zero_everywhere() -> None:
    aset = small_tree()
    assert set(rollup(aset, {}).values()) == {0.0}
