"""Decaying usage per association (the ``usage_raw`` slurmctld's decay thread keeps).

Mirrors ``_decay_thread``, ``_apply_decay``, ``_apply_new_usage`` and ``_reset_usage``
of ``src/plugins/priority/multifactor/priority_multifactor.c``:

- ``PriorityDecayHalfLife``: every second past usage is multiplied by
  ``decay_factor = 1 - 0.693 / half_life`` (Slurm's first-order approximation of
  ``2 ** (-1 / half_life)``); over ``n`` seconds by ``decay_factor ** n``.  A half-life
  of 0 means no decay.
- New usage of a running job over a period of ``run_delta`` seconds is charged as
  ``billable_tres * run_delta * decay_factor ** run_delta`` (Slurm decays the slice it
  adds), times the job QOS's ``UsageFactor``, to the job's association *and every
  ancestor up to root* (so root holds the cluster's total).
- ``PriorityUsageResetPeriod`` (NONE, NOW, DAILY, WEEKLY, MONTHLY, QUARTERLY, YEARLY):
  all usage is zeroed at midnight of each period boundary (UTC here; Slurm uses the
  controller's local time).

The tracker stores each association's *own* usage; ``raw_usage()`` rolls it up the
tree, which is the same thing Slurm stores because decay is one common factor.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from minislurm.common.accounts import AssociationSet, AssocKey
from minislurm.errors import ConfigError

#: Values of ``PriorityUsageResetPeriod``.
RESET_PERIODS = ("NONE", "NOW", "DAILY", "WEEKLY", "MONTHLY", "QUARTERLY", "YEARLY")


def decay_factor(half_life_seconds: float) -> float:
    """Per-second decay factor of ``PriorityDecayHalfLife`` (1.0 = no decay)."""
    if half_life_seconds <= 0:
        return 1.0
    return 1.0 - 0.693 / half_life_seconds


def billable_seconds(tres_seconds: Mapping[str, float]) -> float:
    """The usage Slurm charges: ``billing`` TRES-seconds, else CPU-seconds.

    Without ``TRESBillingWeights`` a job's billing TRES equals its CPU count.
    """
    if "billing" in tres_seconds:
        return float(tres_seconds["billing"])
    return float(tres_seconds.get("cpu", 0.0))


def next_reset(period: str, last_reset: int) -> int | None:
    """When usage is next cleared after ``last_reset`` (``_next_reset``); None = never."""
    period = period.upper()
    if period not in RESET_PERIODS:
        raise ConfigError(f'Bad value "{period}" for PriorityUsageResetPeriod')
    if period in ("NONE", "NOW"):
        return None
    t = datetime.fromtimestamp(last_reset, UTC).replace(hour=0, minute=0, second=0)
    if period == "DAILY":
        nxt = t + timedelta(days=1)
    elif period == "WEEKLY":
        # Slurm: midnight of the next Sunday (tm_wday 0 = Sunday)
        days = 7 - ((t.weekday() + 1) % 7)
        nxt = t + timedelta(days=days)
    elif period == "MONTHLY":
        nxt = t.replace(day=1, year=t.year + (t.month == 12), month=t.month % 12 + 1)
    elif period == "QUARTERLY":
        q = next(m for m in (4, 7, 10, 13) if m > t.month)
        nxt = t.replace(day=1, year=t.year + (q == 13), month=1 if q == 13 else q)
    else:  # YEARLY
        nxt = t.replace(day=1, month=1, year=t.year + 1)
    return int(nxt.timestamp())


class UsageTracker:
    """Decaying raw usage of every association, advanced on a simulated clock.

    ``record_usage`` charges usage to one association; ``raw_usage(now)`` gives every
    association's rolled-up, decayed ``usage_raw`` (what ``sshare`` prints as RawUsage).
    """

    def __init__(
        self,
        associations: AssociationSet,
        *,
        half_life: float = 7 * 86400,
        reset_period: str = "NONE",
        start: int = 0,
    ) -> None:
        self.associations = associations
        self.half_life = half_life
        self.factor = decay_factor(half_life)
        self.reset_period = reset_period.upper()
        self._next_reset = next_reset(self.reset_period, start)
        self._own: dict[AssocKey, float] = {}
        self._last = start
        self.version = 0  # bumped on every change (lets callers cache derived values)

    def advance(self, now: int) -> None:
        """Apply decay (and any usage reset) up to ``now``; going back in time is a no-op."""
        if now <= self._last:
            return
        while self._next_reset is not None and now >= self._next_reset:
            self._decay(self._next_reset - self._last)
            self._own.clear()
            self._last = self._next_reset
            self._next_reset = next_reset(self.reset_period, self._next_reset)
        self._decay(now - self._last)
        self._last = now
        self.version += 1

    def _decay(self, seconds: float) -> None:
        if seconds <= 0 or self.factor == 1.0:
            return
        real = self.factor**seconds
        for key in self._own:
            self._own[key] *= real

    def record(self, key: AssocKey, amount: float, now: int, *, period: float = 0.0) -> None:
        """Charge ``amount`` usage to association ``key`` at ``now``.

        ``period`` = the seconds the amount accrued over; like Slurm, the slice is
        decayed by ``decay_factor ** period``.
        """
        if self.associations.get(key) is None:
            raise KeyError(key)
        self.advance(now)
        self._own[key] = self._own.get(key, 0.0) + amount * self.factor**period
        self.version += 1

    def reset(self, now: int) -> None:
        """Clear all usage now (``PriorityUsageResetPeriod=NOW`` at startup)."""
        self.advance(now)
        self._own.clear()
        self.version += 1

    def own_usage(self, now: int | None = None) -> dict[AssocKey, float]:
        """Usage charged directly to each association (decayed to ``now``)."""
        if now is not None:
            self.advance(now)
        return dict(self._own)

    def raw_usage(self, now: int | None = None) -> dict[AssocKey, float]:
        """Every association's ``usage_raw``: its own usage plus all its descendants'."""
        return rollup(self.associations, self.own_usage(now))

    def export_state(self) -> dict[str, Any]:
        """What slurmctld saves in ``assoc_usage`` (`minislurm.ctld.state_save.KeepsState`):
        each association's own usage as decayed at the last advance, that instant, and
        the next usage reset."""
        return {"own": [[list(k), v] for k, v in self._own.items()],
                "last": self._last, "next_reset": self._next_reset}

    def import_state(self, data: Mapping[str, Any]) -> None:
        self._own = {(str(k[0]), str(k[1])): float(v) for k, v in data.get("own", [])}
        self._last = int(data.get("last", self._last))
        self._next_reset = data.get("next_reset", self._next_reset)
        self.version += 1


def rollup(associations: AssociationSet, own: Mapping[AssocKey, float]) -> dict[AssocKey, float]:
    """Sum own usage up the tree (Slurm adds a job's usage to every ancestor)."""
    total = {a.key: 0.0 for a in associations.associations}
    for key, amount in own.items():
        for k in associations.lineage(key):
            if k in total:
                total[k] += amount
    return total


__all__ = [
    "RESET_PERIODS",
    "UsageTracker",
    "billable_seconds",
    "decay_factor",
    "next_reset",
    "rollup",
]
