"""priority/multifactor: each factor and the weighted sum, as
https://slurm.schedmd.com/priority_multifactor.html documents them."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from minislurm.common.accounts import QOS, Association, AssociationSet
from minislurm.conf import parse_config
from minislurm.errors import ConfigError
from minislurm.job import JobRecord
from minislurm.priority.factors import (
    ClusterView,
    MultifactorParams,
    PartitionView,
    PriorityFactors,
    PriorityWeights,
    parse_tres_weights,
)
from minislurm.priority.multifactor import (
    MultifactorPriority,
    age_factor,
    job_size_factor,
    partition_factor,
    qos_factor,
    tres_factors,
)
from minislurm.states import JobState, Reason

T0 = 1767600000
DAY = 86400


def job(job_id: int = 1, **kw: Any) -> JobRecord:
    base: dict[str, Any] = dict(
        job_id=job_id, name="train", user="alice", uid=1001, group="alice", gid=1001,
        account="llm", partition="gpu", qos="normal", state=JobState.PENDING,
        reason=Reason.PRIORITY, submit_time=T0, eligible_time=T0, accrue_time=T0,
        num_nodes=1, num_cpus=4, time_limit=60,
    )  # fmt: skip
    base.update(kw)
    return JobRecord(**base)


def cluster() -> ClusterView:
    """4 nodes x 4 CPUs x 4 GPUs (the reference cluster), partitions with factors 1/10."""
    tot = {"cpu": 16, "mem": 16000, "node": 4, "billing": 16, "gres/gpu": 16}
    return ClusterView(
        node_count=4,
        cpu_count=16,
        partitions={
            "debug": PartitionView("debug", 1, 60, tot),
            "gpu": PartitionView("gpu", 10, 120, tot),
        },
    )


def assocs() -> AssociationSet:
    return AssociationSet(
        "mini",
        (
            Association("root", parent=None),
            Association("llm", parent="root", shares=1, priority=5),
            Association("eval", parent="root", shares=1, priority=10),
            Association("llm", user="alice", parent="llm", priority=5),
            Association("eval", user="dave", parent="eval", priority=10),
        ),
        (QOS("normal", priority=0), QOS("high", priority=100), QOS("scav", usage_factor=0.0)),
    )


# ----------------------------------------------------------------- the factors


def test_age_grows_linearly_to_priority_max_age() -> None:
    assert age_factor(T0 + DAY, accrue_time=T0, submit_time=T0, max_age=2 * DAY) == 0.5
    assert age_factor(T0 + 9 * DAY, accrue_time=T0, submit_time=T0, max_age=7 * DAY) == 1.0
    assert age_factor(T0 - 5, accrue_time=T0, submit_time=T0, max_age=DAY) == 0.0


def test_age_does_not_accrue_before_eligibility_unless_accrue_always() -> None:
    kw: dict[str, Any] = dict(accrue_time=None, submit_time=T0, max_age=DAY)
    assert age_factor(T0 + DAY // 2, **kw) == 0.0
    assert age_factor(T0 + DAY // 2, accrue_always=True, **kw) == 0.5


def test_job_size_favours_large_jobs_by_default() -> None:
    size: dict[str, Any] = dict(node_count=4, cpu_count=16)
    assert job_size_factor(num_nodes=4, num_cpus=16, **size) == 1.0  # the whole machine
    assert job_size_factor(num_nodes=2, num_cpus=8, **size) == 0.5
    assert job_size_factor(num_nodes=1, num_cpus=1, **size) == pytest.approx((1 / 4 + 1 / 16) / 2)


def test_priority_favor_small_inverts_the_size() -> None:
    size: dict[str, Any] = dict(node_count=4, cpu_count=16, favor_small=True)
    assert job_size_factor(num_nodes=1, num_cpus=1, **size) == pytest.approx((3 / 4 + 15 / 16) / 2)
    assert job_size_factor(num_nodes=4, num_cpus=16, **size) == 0.0


def test_small_relative_to_time_divides_by_the_time_limit() -> None:
    size: dict[str, Any] = dict(node_count=4, cpu_count=16, small_relative_to_time=True)
    # "a full-system job with a time limit of one will receive a job size factor of 1.0"
    assert job_size_factor(num_nodes=4, num_cpus=16, time_limit=1, **size) == 1.0
    assert job_size_factor(num_nodes=1, num_cpus=2, time_limit=10, **size) == pytest.approx(
        4 / 10 / 16  # max(2 CPUs, 1 node x 4 CPUs per node) / 10 min / 16 CPUs
    )
    # no --time: the partition's MaxTime
    assert job_size_factor(
        num_nodes=1, num_cpus=16, time_limit=None, partition_max_time=4, **size
    ) == pytest.approx(16 / 4 / 16)
    favor = job_size_factor(
        num_nodes=4,
        num_cpus=16,
        time_limit=1,
        favor_small=True,
        node_count=4,
        cpu_count=16,
        small_relative_to_time=True,
    )
    assert favor == 0.0


def test_partition_and_qos_factors_normalise_to_the_highest() -> None:
    assert partition_factor(10, 10) == 1.0
    assert partition_factor(1, 10) == 0.1
    assert partition_factor(1, 10, normalize=False) == 1.0  # NO_NORMAL_PART
    assert qos_factor(50, 100) == 0.5
    assert qos_factor(0, 100) == 0.0


def test_tres_factor_is_the_share_of_the_partition() -> None:
    got = tres_factors(("cpu", "gres/gpu"), {"cpu": 4, "gres/gpu": 8}, {"cpu": 16, "gres/gpu": 16})
    assert got == (("cpu", 0.25), ("gres/gpu", 0.5))
    raw = tres_factors(("cpu",), {"cpu": 4}, {"cpu": 16}, normalize=False)
    assert raw == (("cpu", 4.0),)


def test_parse_tres_weights_lowercases_and_orders_like_slurm() -> None:
    assert parse_tres_weights("GRES/gpu=3000,CPU=1000,Mem=2000") == (
        ("cpu", 1000.0), ("mem", 2000.0), ("gres/gpu", 3000.0),
    )  # fmt: skip
    with pytest.raises(ConfigError):
        parse_tres_weights("cpu")


# ----------------------------------------------------------------- the sum


def test_priority_is_the_documented_weighted_sum_minus_nice() -> None:
    w = PriorityWeights(age=1000, assoc=100, fairshare=10000, job_size=1000, partition=1000,
                        qos=2000, tres=(("cpu", 100.0),))  # fmt: skip
    f = PriorityFactors(job_id=1, partition="gpu", user="alice", account="llm", weights=w,
                        site=7, age=0.5, assoc=0.5, fairshare=0.25, job_size=0.125, part=1.0,
                        qos=0.5, nice=100, tres=(("cpu", 0.25),))  # fmt: skip
    expected = 7 + 500 + 50 + 2500 + 125 + 1000 + 1000 + 25 - 100
    assert f.priority == expected


def test_priority_never_drops_below_one() -> None:
    f = PriorityFactors(1, "gpu", "alice", "llm", PriorityWeights(age=10), age=1.0, nice=5000)
    assert f.priority == 1


def test_plugin_combines_all_factors_for_a_job() -> None:
    params = MultifactorParams(
        weights=PriorityWeights(age=1000, assoc=100, job_size=1000, partition=1000, qos=1000,
                                tres=(("gres/gpu", 1000.0),)),
        max_age=2 * DAY,
    )  # fmt: skip
    plugin = MultifactorPriority(params, cluster(), assocs())
    j = job(num_nodes=2, num_cpus=8, qos="high", nice=10, tres_req={"gres/gpu": 4})
    f = plugin.factors(j, T0 + DAY)
    assert (f.age, f.job_size, f.part, f.qos) == (0.5, 0.5, 1.0, 1.0)
    assert f.assoc == 0.5  # llm's Priority 5 / the highest, 10
    assert f.tres == (("gres/gpu", 0.25),)
    assert plugin.priority(j, T0 + DAY) == 500 + 50 + 500 + 1000 + 1000 + 250 - 10


def test_held_jobs_have_priority_zero() -> None:
    plugin = MultifactorPriority(MultifactorParams(PriorityWeights(age=1000)), cluster(), assocs())
    assert plugin.priority(job(hold=True), T0 + DAY) == 0


def test_a_zero_weight_leaves_its_factor_at_zero() -> None:
    plugin = MultifactorPriority(MultifactorParams(PriorityWeights(age=10)), cluster(), assocs())
    f = plugin.factors(job(num_nodes=4, num_cpus=16), T0 + DAY)
    assert f.job_size == 0.0 and f.part == 0.0


def test_fair_share_orders_users_by_their_usage() -> None:
    params = MultifactorParams(PriorityWeights(fairshare=10000))
    plugin = MultifactorPriority(params, cluster(), assocs(), start=T0)
    plugin.record_usage("alice", "llm", {"cpu": 3600.0 * 16}, T0 + 600)
    alice = plugin.priority(job(1), T0 + 900)
    dave = plugin.priority(job(2, user="dave", account="eval"), T0 + 900)
    assert dave > alice
    # Fair Tree by default: 2 users, dave ranked 2/2, alice 1/2
    assert (dave, alice) == (10000, 5000)


def test_no_fair_tree_selects_the_classic_algorithm() -> None:
    params = MultifactorParams(PriorityWeights(fairshare=10000), flags=frozenset({"NO_FAIR_TREE"}))
    plugin = MultifactorPriority(params, cluster(), assocs(), start=T0)
    plugin.record_usage("alice", "llm", {"cpu": 100.0}, T0)
    # alice: S = 0.5, U_E = 1.0 -> 2**-2; dave: unused -> 2**0
    assert plugin.factors(job(1), T0).fairshare == pytest.approx(0.25)
    assert plugin.factors(job(2, user="dave", account="eval"), T0).fairshare == 1.0


def test_qos_usage_factor_scales_recorded_usage() -> None:
    params = MultifactorParams(PriorityWeights(fairshare=100))
    plugin = MultifactorPriority(params, cluster(), assocs(), start=T0)
    plugin.record_usage("alice", "llm", {"cpu": 1000.0}, T0, qos="scav")
    assert plugin.usage.raw_usage(T0)[("root", None)] == 0.0
    plugin.record_usage("alice", "llm", {"cpu": 1000.0}, T0, qos="normal")
    assert plugin.usage.raw_usage(T0)[("root", None)] == 1000.0


def test_params_from_a_priority_config() -> None:
    cfg = parse_config("\n".join([
        "ClusterName=c", "SlurmctldHost=localhost", "PriorityType=priority/multifactor",
        # age and fair share count only with SlurmDBD (22.05 ignores them otherwise)
        "AccountingStorageType=accounting_storage/slurmdbd", "PriorityWeightAge=1000",
        "PriorityWeightFairshare=2000", "PriorityWeightJobSize=3", "PriorityWeightPartition=4",
        "PriorityWeightQOS=5", "PriorityWeightTRES=CPU=1,GRES/gpu=2", "PriorityMaxAge=60",
        "PriorityFavorSmall=YES", "PriorityFlags=SMALL_RELATIVE_TO_TIME",
        "PriorityDecayHalfLife=1", "PriorityCalcPeriod=30", "PriorityUsageResetPeriod=DAILY",
        "NodeName=n1 CPUs=4", "PartitionName=debug Nodes=n1"]), "slurm.conf")
    p = MultifactorParams.from_config(cfg.priority)
    assert p.weights == PriorityWeights(1000, 0, 2000, 3, 4, 5, (("cpu", 1.0), ("gres/gpu", 2.0)))
    # slurm.conf gives the durations in minutes; the params hold seconds, as slurmctld
    assert (p.max_age, p.favor_small, p.calc_period, p.usage_reset_period) == (
        3600, True, 1800, "DAILY",
    )  # fmt: skip
    assert p.decay_half_life == 60
    assert p.has("SMALL_RELATIVE_TO_TIME") and p.fair_tree


def test_flags_are_checked() -> None:
    with pytest.raises(ConfigError, match="PriorityFlags"):
        MultifactorParams(flags=frozenset({"FAIRER_TREE"}))
    assert MultifactorParams(flags=frozenset({"NO_NORMAL_ALL"})).has("NO_NORMAL_QOS")
    assert not MultifactorParams(flags=frozenset({"DEPTH_OBLIVIOUS"})).fair_tree


def test_cluster_view_from_a_config() -> None:
    view = ClusterView.from_config(parse_config("\n".join([
        "ClusterName=c", "SlurmctldHost=localhost", "GresTypes=gpu",
        "NodeName=n[1-4] CPUs=4 RealMemory=4000 Gres=gpu:a100:4",
        "PartitionName=debug Nodes=n[1-4] MaxTime=60 PriorityJobFactor=1",
        "PartitionName=short Nodes=n[1-2] MaxTime=5 PriorityJobFactor=3"]), "slurm.conf"))
    assert (view.node_count, view.cpu_count, view.max_partition_priority) == (4, 16, 3)
    assert view.partitions["short"].tres_total == {
        "cpu": 8, "mem": 8000, "node": 2, "billing": 8, "gres/gpu": 8, "gres/gpu:a100": 8,
    }  # fmt: skip


def test_a_job_in_an_unknown_partition_gets_no_partition_factor() -> None:
    plugin = MultifactorPriority(MultifactorParams(PriorityWeights(partition=1000)), cluster())
    assert plugin.factors(replace(job(), partition="nosuch"), T0).part == 0.0


def test_factors_list_is_what_sprio_shows() -> None:
    plugin = MultifactorPriority(MultifactorParams(PriorityWeights(age=1000)), cluster(), assocs())
    jobs = [
        job(3, partition="debug,gpu"),
        job(1),
        job(2, state=JobState.RUNNING),
        job(4, hold=True),
        job(5, eligible_time=T0 + DAY, begin_time=T0 + DAY),  # --begin in the future
        job(6, eligible_time=None),  # not eligible (e.g. a dependency)
    ]
    rows = plugin.factors_list(jobs, T0 + 60)
    assert [(f.job_id, f.partition) for f in rows] == [(1, "gpu"), (3, "debug"), (3, "gpu")]
    only = plugin.factors_list(jobs, T0 + 60, job_ids={3}, partitions={"gpu"})
    assert [(f.job_id, f.partition) for f in only] == [(3, "gpu")]
    assert plugin.factors_list(jobs, T0 + 60, users={"nobody"}) == []


def test_incr_only_keeps_the_highest_priority_seen() -> None:
    params = MultifactorParams(PriorityWeights(fairshare=1000), flags=frozenset({"INCR_ONLY"}))
    plugin = MultifactorPriority(params, cluster(), assocs(), start=T0)
    before = plugin.priority(job(1), T0)
    plugin.record_usage("alice", "llm", {"cpu": 1e6}, T0 + 1)
    assert plugin.factors(job(1), T0 + 2).priority < before
    assert plugin.priority(job(1), T0 + 2) == before


def test_one_recalculation_gives_each_job_what_priority_and_sprio_give() -> None:
    """``priorities`` (the PriorityCalcPeriod pass) shares the work of many jobs; its
    numbers are those of ``priority`` and of ``factors(...).priority`` (sprio's sum)."""
    params = MultifactorParams(
        weights=PriorityWeights(age=1000, assoc=100, fairshare=10000, job_size=1000,
                                partition=1000, qos=1000, tres=(("gres/gpu", 1000.0),)),
        max_age=2 * DAY,
    )  # fmt: skip
    plugin = MultifactorPriority(params, cluster(), assocs(), start=T0)
    plugin.record_usage("alice", "llm", {"cpu": 3600.0 * 16}, T0 + 600)
    jobs = [
        job(1), job(2, user="dave", account="eval", partition="debug"),
        job(3, num_nodes=2, num_cpus=8, qos="high", nice=10, tres_req={"gres/gpu": 4}),
        job(4, hold=True), job(5, eligible_time=None, accrue_time=None),
        job(6, submit_time=T0 + DAY, eligible_time=T0 + DAY, accrue_time=T0 + DAY),
        job(7, eligible_time=T0 - 3 * DAY, accrue_time=T0 - 3 * DAY),  # age capped at 1
    ]  # fmt: skip
    for now in (T0 + 900, T0 + DAY + 7, T0 + 5 * DAY):
        batch = plugin.priorities(jobs, now)
        assert batch == [plugin.priority(j, now) for j in jobs]
        assert batch == [0 if j.hold else plugin.factors(j, now).priority for j in jobs]
    assert len(set(plugin.priorities(jobs, T0 + DAY + 7))) >= 5  # the factors matter


def test_a_recalculation_with_incr_only_never_lowers_a_priority() -> None:
    params = MultifactorParams(PriorityWeights(fairshare=1000), flags=frozenset({"INCR_ONLY"}))
    plugin = MultifactorPriority(params, cluster(), assocs(), start=T0)
    (before,) = plugin.priorities([job(1)], T0)
    plugin.record_usage("alice", "llm", {"cpu": 1e6}, T0 + 1)
    assert plugin.factors(job(1), T0 + 2).priority < before
    assert plugin.priorities([job(1)], T0 + 2) == [before]
