"""Scheduler plugins (``SchedulerType=``): ``sched/builtin`` and ``sched/backfill``."""

from minislurm.sched.backfill import POLICIES, BackfillParams, backfill_pass
from minislurm.sched.builtin import main_pass

__all__ = ["POLICIES", "BackfillParams", "backfill_pass", "main_pass"]
