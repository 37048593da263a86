"""The priority plugin registry (``PriorityType``) and priority/basic (FIFO)."""

from __future__ import annotations

from typing import Any

import pytest

from minislurm.conf import SlurmConfig, parse_config
from minislurm.errors import ConfigError, SlurmError
from minislurm.job import JobRecord
from minislurm.priority import (
    PLUGINS,
    BasicPriority,
    MultifactorPriority,
    PriorityPlugin,
    make_priority_plugin,
)
from minislurm.priority.basic import SPRIO_UNSUPPORTED, TOP_PRIORITY
from minislurm.states import JobState, Reason

T0 = 1767600000


def job(job_id: int, **kw: Any) -> JobRecord:
    base: dict[str, Any] = dict(
        job_id=job_id, name="j", user="alice", uid=1001, group="alice", gid=1001,
        account="llm", partition="debug", qos="normal", state=JobState.PENDING,
        reason=Reason.PRIORITY, submit_time=T0,
    )  # fmt: skip
    base.update(kw)
    return JobRecord(**base)


def conf(*lines: str) -> SlurmConfig:
    """One node n1 (4 CPUs, 4 A100s) in partition debug, plus ``lines`` of slurm.conf."""
    return parse_config("\n".join([
        "ClusterName=c", "SlurmctldHost=localhost", "GresTypes=gpu", *lines,
        "NodeName=n1 CPUs=4 RealMemory=4000 Gres=gpu:a100:4",
        "PartitionName=debug Nodes=n1 MaxTime=60 Default=YES"]), "slurm.conf")


def test_registry_uses_slurms_plugin_names() -> None:
    assert set(PLUGINS) == {"priority/basic", "priority/multifactor"}


def test_make_priority_plugin_builds_the_configured_plugin() -> None:
    basic = make_priority_plugin(conf("PriorityType=priority/basic"))
    multi = make_priority_plugin(
        conf("PriorityType=priority/multifactor", "PriorityWeightAge=1000",
             "AccountingStorageType=accounting_storage/slurmdbd"))
    assert isinstance(basic, BasicPriority) and isinstance(multi, MultifactorPriority)
    assert isinstance(multi, PriorityPlugin)
    assert multi.params.weights.age == 1000
    # no PriorityType: the 22.05 default, priority/basic
    assert isinstance(make_priority_plugin(conf()), BasicPriority)


def test_unknown_priority_type_fails_like_slurmctld() -> None:
    with pytest.raises(ConfigError) as err:
        make_priority_plugin(conf("PriorityType=priority/nosuch"))
    assert "Couldn't find the specified plugin name for priority/nosuch" in err.value.message


def test_fifo_priorities_count_down_from_top_priority() -> None:
    fifo = BasicPriority()
    assert TOP_PRIORITY == 0xFFFF0000
    assert [fifo.priority(job(i), T0) for i in (1, 2, 3)] == [4294901759, 4294901758, 4294901757]
    # asking again does not change a priority
    assert fifo.priority(job(1), T0 + 3600) == 4294901759


def test_fifo_subtracts_nice_without_moving_the_counter() -> None:
    """Measured on 22.05.8 (tests/minislurm/ctld/test_scenarios_realslurm.py): --nice=0,300,100,0,50
    submitted in that order get base, base-301, base-102, base-3, base-54."""
    fifo = BasicPriority()
    base = 4294901759
    got = [fifo.priority(job(i, nice=n), T0) for i, n in enumerate((0, 300, 100, 0, 50), 1)]
    assert [p - base for p in got] == [0, -301, -102, -3, -54]


def test_fifo_held_job_goes_to_the_back_on_release() -> None:
    fifo = BasicPriority()
    fifo.priority(job(1), T0)
    assert fifo.priority(job(1, hold=True), T0) == 0
    fifo.priority(job(2), T0)
    assert fifo.priority(job(1), T0) < fifo.priority(job(2), T0)


def test_sprio_refuses_priority_basic() -> None:
    with pytest.raises(SlurmError) as err:
        BasicPriority().factors(job(1), T0)
    assert err.value.message == SPRIO_UNSUPPORTED
    assert err.value.exit_code == 1
    assert SPRIO_UNSUPPORTED.splitlines()[0] == "You are not running a supported priority plugin"


def test_the_embedded_cluster_gets_multifactor_with_its_weights() -> None:
    config = pytest.importorskip("minislurm.conf").default_config()
    from minislurm.common.accounts import load_associations

    plugin = make_priority_plugin(config, load_associations())
    assert isinstance(plugin, MultifactorPriority)
    w = plugin.params.weights
    assert (w.age, w.fairshare, w.job_size, w.partition, w.qos) == (1000, 10000, 1000, 1000, 1000)
    assert plugin.params.max_age == 7 * 86400 and plugin.params.fair_tree
    view = plugin.cluster
    assert view.node_count == len(config.nodes)
    assert view.cpu_count == sum(n.cpus for n in config.nodes)
    gpu = view.partitions["gpu"].tres_total
    assert gpu["gres/gpu"] == sum(g.count for n in config.nodes for g in n.gres)
    # debug has PriorityJobFactor=10, the highest: its jobs get the full partition factor
    assert view.max_partition_priority == 10
    j = job(1, partition="debug", account="llm", user="alice", accrue_time=T0)
    assert plugin.factors(j, T0).part == 1.0
    assert plugin.factors(job(2, partition="gpu", account="llm"), T0).part == 0.1
