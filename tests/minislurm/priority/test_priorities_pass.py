"""``MultifactorPriority.priorities`` (one ``PriorityCalcPeriod`` pass) gives each job
the number of sprio's sum (``factors(job, now).priority``), pass after pass.

The pass keeps each job's time-independent terms between passes (per job id) and
looks them up inline; an entry is used only while the fields it was computed from are
the same.  Here those fields change between passes (``scontrol update`` of Nice,
Partition, QOS, TimeLimit, node and CPU counts) and every number is compared with
sprio's sum, from the same plugin and from a fresh one: a stale entry would differ.
Also covered: held jobs (0), an eligible time still to come (no negative age), the
age cap, and a sum over ``2**32 - 1`` (clamped).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from minislurm.common.accounts import QOS, Association, AssociationSet
from minislurm.job import JobRecord
from minislurm.priority.factors import (
    MAX_PRIORITY,
    ClusterView,
    MultifactorParams,
    PartitionView,
    PriorityWeights,
)
from minislurm.priority.multifactor import MultifactorPriority
from minislurm.states import JobState, Reason

T0 = 1767600000
DAY = 86400


def _job(job_id: int, **kw: Any) -> JobRecord:
    base: dict[str, Any] = dict(
        job_id=job_id, name="train", user="alice", uid=1001, group="alice", gid=1001,
        account="llm", partition="gpu", qos="normal", state=JobState.PENDING,
        reason=Reason.PRIORITY, submit_time=T0, eligible_time=T0, accrue_time=T0,
        num_nodes=1, num_cpus=4, time_limit=60,
    )  # fmt: skip
    base.update(kw)
    return JobRecord(**base)


def _cluster() -> ClusterView:
    tot = {"cpu": 16, "mem": 16000, "node": 4, "billing": 16}
    return ClusterView(node_count=4, cpu_count=16, partitions={
        "debug": PartitionView("debug", 1, 60, tot), "gpu": PartitionView("gpu", 10, 120, tot)})


def _assocs() -> AssociationSet:
    return AssociationSet("mini", (
        Association("root", parent=None),
        Association("llm", parent="root", shares=1, priority=5),
        Association("eval", parent="root", shares=3, priority=10),
        Association("llm", user="alice", parent="llm", priority=5),
        Association("eval", user="dave", parent="eval", priority=10),
    ), (QOS("normal", priority=0), QOS("high", priority=100), QOS("huge", priority=100)))


def _plugin(qos_weight: int = 1000) -> MultifactorPriority:
    params = MultifactorParams(
        weights=PriorityWeights(age=1000, assoc=100, fairshare=10000, job_size=1000,
                                partition=1000, qos=qos_weight),
        max_age=2 * DAY,
    )  # fmt: skip
    plugin = MultifactorPriority(params, _cluster(), _assocs(), start=T0)
    plugin.record_usage("alice", "llm", {"cpu": 3600.0 * 16}, T0 + 600)
    return plugin


def _sprio(plugin: MultifactorPriority, jobs: list[JobRecord], now: int) -> list[int]:
    return [0 if j.hold else plugin.factors(j, now).priority for j in jobs]


def test_each_pass_gives_sprios_sum_while_the_jobs_change() -> None:
    plugin = _plugin()
    jobs = [
        _job(1), _job(2, user="dave", account="eval", partition="debug"),
        _job(3, num_nodes=2, num_cpus=8, qos="high", nice=10), _job(4, hold=True),
        _job(5, eligible_time=None, accrue_time=None),
        _job(6, eligible_time=T0 + 3 * DAY, accrue_time=T0 + 3 * DAY),  # not yet: age 0
        _job(7, eligible_time=T0 - 3 * DAY, accrue_time=T0 - 3 * DAY),  # age capped at 1
    ]  # fmt: skip
    updates: list[dict[str, Any]] = [
        {"nice": -50}, {"partition": "gpu"}, {"qos": "normal"}, {"hold": False},
        {"time_limit": 30}, {"num_nodes": 4, "num_cpus": 16}, {"user": "dave", "account": "eval"},
    ]  # fmt: skip
    seen: set[int] = set()
    for step, now in enumerate((T0 + 900, T0 + DAY, T0 + DAY + 7, T0 + 5 * DAY)):
        batch = plugin.priorities(jobs, now)
        assert batch == _sprio(plugin, jobs, now)
        assert batch == _sprio(_plugin(), jobs, now)  # no entry kept at all
        seen.update(batch)
        jobs = [replace(j, **updates[(k + step) % len(updates)]) for k, j in enumerate(jobs)]
    assert len(seen) >= 10  # the factors and the changes matter


def test_a_sum_over_the_highest_priority_is_clamped() -> None:
    plugin = _plugin(qos_weight=2**33)
    jobs = [_job(1, qos="huge"), _job(2)]
    batch = plugin.priorities(jobs, T0 + 900)
    assert batch[0] == MAX_PRIORITY
    assert batch == _sprio(plugin, jobs, T0 + 900)
