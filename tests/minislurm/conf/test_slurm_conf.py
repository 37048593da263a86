"""slurm.conf and gres.conf, read like Slurm 22.05 reads them.

Error texts marked "verified" were compared with what the real ``scontrol``
(Slurm 22.05.8) logs for the same file; when ``scontrol`` is installed the
last test repeats that comparison.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from captures import capture_root

from minislurm.common.gres import NodeGres
from minislurm.conf import (
    NodeConfig,
    PartitionConfig,
    SchedulerParameters,
    conf_lines,
    default_config,
    key_values,
    load_config,
    parse_config,
    time_str2mins,
)
from minislurm.errors import ConfigError

HEAD = "ClusterName=test\nSlurmctldHost=localhost\n"
FATAL = "fatal: Unable to process configuration file"


def conf(*lines: str, gres: str | None = None):
    return parse_config(HEAD + "\n".join(lines) + "\n", "/etc/slurm/slurm.conf", gres)


def error_of(*lines: str) -> list[str]:
    with pytest.raises(ConfigError) as info:
        conf(*lines)
    return info.value.message.split("\n")


# ---- the reference cluster (captures) and the default cluster -----------------------------


@pytest.mark.skipif(capture_root() is None, reason="slurm-reference captures not found")
def test_reference_cluster_loads_unchanged() -> None:
    root = capture_root()
    assert root is not None
    config = load_config(str(root / "slurm.conf"))
    assert config.cluster_name == "mini"
    assert config.node_names == ("n1", "n2", "n3", "n4")
    for index, node in enumerate(config.nodes):
        assert (node.cpus, node.boards, node.sockets, node.cores_per_socket) == (4, 1, 1, 4)
        assert node.threads_per_core == 1
        assert node.real_memory == 4000
        assert node.port == 17001 + index
        assert (node.node_addr, node.node_hostname) == ("127.0.0.1", "localhost")
        (gpu,) = node.gres
        assert (gpu.name, gpu.type, gpu.count, gpu.indices) == ("gpu", "a100", 4, (0, 1, 2, 3))
        assert gpu.files == tuple(f"/srv/slurm-ref/dev/nvidia{i}" for i in range(4))
        assert node.gres_count("gpu") == 4 and node.gres_count("gpu", "h100") == 0
    assert [p.name for p in config.partitions] == ["debug", "gpu", "short"]
    assert config.default_partition is not None and config.default_partition.name == "debug"
    debug, gpu_part, short = config.partitions
    assert (debug.max_time, debug.default_time, debug.nodes) == (60, 10, config.node_names)
    assert (gpu_part.max_time, gpu_part.default_time, gpu_part.default) == (120, None, False)
    assert (short.max_time, short.default_time, short.nodes) == (5, 1, ("n1", "n2"))
    assert config.scheduler.bf_interval == 1 and config.scheduler.bf_resolution == 1
    assert config.scheduler.sched_min_interval == 0
    assert config.scheduler.bf_window == 1440
    assert (config.select_type, config.select_type_parameters) == (
        "select/cons_tres",
        "CR_Core_Memory",
    )
    assert config.def_mem_per_cpu == 1000
    assert (config.kill_wait, config.min_job_age, config.return_to_service) == (5, 600, 1)
    assert config.enforce_part_limits == "NO"
    assert config.gres_types == ("gpu",)
    assert "gres/gpu" in config.accounting_storage_tres
    assert config.extra["SlurmctldPort"] == "16817"
    assert config.extra["AuthType"] == "auth/munge"
    assert any("SlurmctldPort" in note for note in config.notes)


def test_default_cluster() -> None:
    config = default_config()
    assert config.cluster_name == "minicluster"
    assert config.node_names == (
        "cpu01",
        "cpu02",
        "cpu03",
        "cpu04",
        "gpu01",
        "gpu02",
        "gpu03",
        "gpu04",
    )  # node-table order (verified with slurmctld)
    gpu_nodes = [n for n in config.nodes if n.name.startswith("gpu")]
    cpu_nodes = [n for n in config.nodes if n.name.startswith("cpu")]
    assert [n.name for n in gpu_nodes] == ["gpu01", "gpu02", "gpu03", "gpu04"]
    assert [n.name for n in cpu_nodes] == ["cpu01", "cpu02", "cpu03", "cpu04"]
    for node in gpu_nodes:
        assert (node.cpus, node.sockets, node.cores_per_socket, node.threads_per_core) == (
            64,
            2,
            32,
            1,
        )
        assert node.real_memory == 512000
        assert node.gres == (
            NodeGres("gpu", "a100", 8, tuple(f"/dev/nvidia{i}" for i in range(8)), tuple(range(8))),
        )
    for node in cpu_nodes:
        assert (node.cpus, node.real_memory, node.gres) == (32, 128000, ())
    assert config.default_partition_name == "gpu"
    gpu, cpu, debug = (config.partition(name) for name in ("gpu", "cpu", "debug"))
    assert (gpu.max_time, gpu.default_time, gpu.nodes) == (
        2 * 1440,
        60,
        tuple(n.name for n in gpu_nodes),
    )
    assert (cpu.max_time, cpu.nodes) == (1440, tuple(n.name for n in cpu_nodes))
    assert (debug.max_time, debug.default_time, debug.nodes) == (30, 10, config.node_names)
    assert debug.priority_job_factor > gpu.priority_job_factor
    assert config.scheduler_type == "sched/backfill"
    assert (config.scheduler.bf_window, config.scheduler.bf_resolution) == (1440, 60)
    assert (config.select_type, config.select_type_parameters) == (
        "select/cons_tres",
        "CR_Core_Memory",
    )
    prio = config.priority
    assert prio.type == "priority/multifactor"
    assert (prio.weight_age, prio.weight_fairshare, prio.weight_job_size) == (1000, 10000, 1000)
    assert (prio.weight_partition, prio.weight_qos) == (1000, 1000)
    assert prio.decay_half_life == prio.max_age == 7 * 86400  # seconds
    assert (config.preempt_type, config.preempt_mode) == ("preempt/qos", "REQUEUE")
    assert (config.kill_wait, config.def_mem_per_cpu, config.max_array_size) == (30, 2000, 1001)


def test_default_cluster_files_are_commented_for_learners() -> None:
    import minislurm

    etc = Path(minislurm.__file__).parent / "etc"
    text = (etc / "slurm.conf").read_text()
    comments = [line for line in text.splitlines() if line.startswith("#")]
    assert len(comments) > 40
    assert "File=/dev/nvidia[0-7]" in (etc / "gres.conf").read_text()


# ---- where the file comes from --------------------------------------------------------------


def test_load_config_prefers_path_then_slurm_conf_then_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = tmp_path / "a" / "slurm.conf", tmp_path / "b" / "slurm.conf"
    for path, name in ((first, "alpha"), (second, "beta")):
        path.parent.mkdir()
        path.write_text(
            f"ClusterName={name}\nSlurmctldHost=h\nGresTypes=gpu\nNodeName=g1 Gres=gpu:2\n"
        )
    (second.parent / "gres.conf").write_text("Name=gpu File=/dev/nvidia[6-7]\n")
    monkeypatch.delenv("SLURM_CONF", raising=False)
    assert load_config().cluster_name == "minicluster"
    monkeypatch.setenv("SLURM_CONF", str(second))
    beta = load_config()
    assert beta.cluster_name == "beta"
    assert beta.nodes[0].gres[0].files == ("/dev/nvidia6", "/dev/nvidia7")  # gres.conf beside
    assert load_config(str(first)).cluster_name == "alpha"
    assert load_config(str(first)).nodes[0].gres[0].files == ()


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(str(tmp_path / "nope.conf"))
    assert info.value.message == (
        f"error: s_p_parse_file: cannot stat file {tmp_path / 'nope.conf'}: No such file or "
        f"directory, retrying in 1sec up to 60sec\n{FATAL}"
    )


# ---- the tokenizer ---------------------------------------------------------------------------


def test_comments_continuations_escapes_and_quotes() -> None:
    text = (
        "# a comment\n"
        "\n"
        "NodeName=a1 CPUs=2 \\\n"
        "   RealMemory=10   # trailing comment\n"
        "Feature=x\\#y\n"
        'Name="two words" other=1\n'
    )
    assert conf_lines(text) == [
        (3, "NodeName=a1 CPUs=2    RealMemory=10   "),
        (5, "Feature=x#y"),
        (6, 'Name="two words" other=1'),
    ]
    assert key_values('Name="two words" other=1') == ([("Name", "two words"), ("other", "1")], "")


def test_keys_are_case_insensitive_values_are_not() -> None:
    config = parse_config(
        "clustername=Test\nSLURMCTLDHOST=h\nnodename=Big1 cpus=2 REALMEMORY=100\n"
        "partitionname=Main nodes=Big1 default=yes\n"
    )
    assert config.cluster_name == "test"  # ClusterName is lower-cased, like Slurm does
    assert config.node("Big1").real_memory == 100
    assert config.partition("Main").default


def test_last_value_of_a_repeated_key_wins() -> None:
    assert conf("KillWait=10", "KillWait=20").kill_wait == 20


# ---- nodes ------------------------------------------------------------------------------------


def test_node_defaults() -> None:
    (node,) = conf("NodeName=a1").nodes
    assert node == NodeConfig(
        name="a1",
        cpus=1,
        boards=1,
        sockets=1,
        cores_per_socket=1,
        threads_per_core=1,
        real_memory=1,
        gres=(),
        features=(),
        weight=1,
        state="UNKNOWN",
        node_addr="a1",
        node_hostname="a1",
        port=6818,
    )


def test_cpus_default_to_the_product_of_the_layout() -> None:
    config = conf("NodeName=a1 Boards=2 SocketsPerBoard=2 CoresPerSocket=8 ThreadsPerCore=2")
    node = config.nodes[0]
    assert (node.cpus, node.sockets, node.sockets_per_board, node.cores) == (64, 4, 2, 32)


def test_sockets_are_inferred_from_cpus() -> None:
    node = conf("NodeName=a1 CPUs=16 CoresPerSocket=4").nodes[0]
    assert (node.sockets, node.cpus) == (4, 16)


def test_inconsistent_cpus_are_reset_with_slurms_note() -> None:
    config = conf("NodeName=b1 CPUs=6 CoresPerSocket=4")
    assert config.nodes[0].cpus == 4
    assert (
        "NodeNames=b1 CPUs=6 match no Sockets, Sockets*CoresPerSocket or "
        "Sockets*CoresPerSocket*ThreadsPerCore. Resetting CPUs."
    ) in config.notes  # verified


def test_hostlist_ranges_ports_and_addresses_spread_over_nodes() -> None:
    config = conf("NodeName=n[1-3] NodeAddr=10.0.0.[1-3] Port=17001-17003 NodeHostname=h")
    assert [(n.name, n.node_addr, n.port, n.node_hostname) for n in config.nodes] == [
        ("n1", "10.0.0.1", 17001, "h"),
        ("n2", "10.0.0.2", 17002, "h"),
        ("n3", "10.0.0.3", 17003, "h"),
    ]
    assert [n.port for n in conf("SlurmdPort=7000", "NodeName=m[1-2]").nodes] == [7000, 7000]


def test_nodename_default_lines_apply_to_the_lines_after_them() -> None:
    config = conf(
        "NodeName=DEFAULT CPUs=8 RealMemory=1000",
        "NodeName=a1",
        "NodeName=DEFAULT RealMemory=2000",
        "NodeName=a2 Weight=5",
    )
    assert [(n.cpus, n.real_memory, n.weight) for n in config.nodes] == [(8, 1000, 1), (8, 2000, 5)]


def test_nodes_are_in_slurmctld_node_table_order() -> None:
    """verified with slurmctld: the node table is sorted by name (strnatcmp), whatever the
    order of the NodeName lines; ``Nodes=`` of a partition prints as a sorted hostlist."""
    config = conf(
        "NodeName=n10", "NodeName=b1", "NodeName=n9", "NodeName=a2,a1", "NodeName=n09",
        "PartitionName=p Nodes=n10,b1,n9 Default=YES", "PartitionName=q Nodes=ALL",
    )  # fmt: skip
    assert config.node_names == ("a1", "a2", "b1", "n09", "n9", "n10")
    assert config.partition("p").nodes == ("b1", "n9", "n10")
    assert config.partition("p").node_list == "b1,n[9-10]"
    assert config.partition("q").node_list == "a[1-2],b1,n[9-10,09]"


def test_node_lookup() -> None:
    config = conf("NodeName=z[1-2] CPUs=2", "NodeName=a1 CPUs=4 Features=fast,big State=DRAIN")
    assert config.node("a1").features == ("fast", "big")
    assert config.node("a1").state == "DRAIN"
    assert config.find_node("q") is None
    with pytest.raises(KeyError):
        config.node("q")


def test_gres_conf_is_merged_into_the_nodes() -> None:
    config = conf(
        "GresTypes=gpu",
        "NodeName=g[1-2] Gres=gpu:a100:2,gpu:v100:1",
        gres=(
            "NodeName=g[1-2] Name=gpu Type=a100 File=/dev/nvidia[0-1]\n"
            "NodeName=g1 Name=gpu Type=v100 File=/dev/nvidia2\n"
            "AutoDetect=nvml\n"
        ),
    )
    g1, g2 = config.nodes
    assert g1.gres == (
        NodeGres("gpu", "a100", 2, ("/dev/nvidia0", "/dev/nvidia1"), (0, 1)),
        NodeGres("gpu", "v100", 1, ("/dev/nvidia2",), (2,)),
    )
    assert g2.gres[1] == NodeGres("gpu", "v100", 1, (), (2,))
    assert any("AutoDetect is ignored" in note for note in config.notes)


def test_gres_count_mismatch_is_noted() -> None:
    config = conf(
        "GresTypes=gpu",
        "NodeName=g1 Gres=gpu:4",
        gres="NodeName=g1 Name=gpu File=/dev/nvidia[0-1]\n",
    )
    assert any("gres/gpu count reported lower than configured (2 < 4)" in n for n in config.notes)
    more = conf(
        "GresTypes=gpu",
        "NodeName=g1 Gres=gpu:a100:2",
        gres="NodeName=g1 Name=gpu Type=a100 File=/dev/nvidia[0-3]\n",
    )
    assert more.nodes[0].gres[0].files == ("/dev/nvidia0", "/dev/nvidia1")  # extra ones ignored
    assert (
        "A line in /etc/slurm/gres.conf for GRES gpu:a100 has 2 more configured than expected "
        "in slurm.conf. Ignoring extra GRES." in more.notes
    )


# ---- partitions --------------------------------------------------------------------------


def test_partition_defaults() -> None:
    (part,) = conf("NodeName=a1", "PartitionName=p").partitions
    assert part == PartitionConfig(
        name="p",
        nodes=(),
        default=False,
        max_time=None,
        default_time=None,
        max_nodes=None,
        min_nodes=0,
        state="UP",
        priority_job_factor=1,
        priority_tier=1,
        over_subscribe="NO",
        preempt_mode="OFF",
        qos=None,
    )
    assert conf("PartitionName=p").default_partition is None


def test_partition_options() -> None:
    config = conf(
        "PreemptMode=SUSPEND,GANG",
        "NodeName=n[1-4]",
        "PartitionName=DEFAULT MaxTime=1-00:00:00 State=UP",
        "PartitionName=a Nodes=n[3-4],n1 Default=YES DefaultTime=30 MaxNodes=2 MinNodes=1 "
        "PriorityJobFactor=5 PriorityTier=2 OverSubscribe=FORCE:2 QOS=normal",
        "PartitionName=b Nodes=ALL MaxTime=UNLIMITED Priority=7 Shared=YES PreemptMode=requeue "
        "State=DRAIN AllowAccounts=Alpha,beta Hidden=YES",
        "PartitionName=c Nodes=n2 Default=YES State=INACTIVE OverSubscribe=EXCLUSIVE MaxTime=5:30",
    )
    a, b, c = config.partitions
    assert a.nodes == ("n1", "n3", "n4")  # config order, like Slurm's node bitmap
    assert (a.max_time, a.default_time, a.max_nodes, a.min_nodes) == (1440, 30, 2, 1)
    assert (a.priority_job_factor, a.priority_tier, a.over_subscribe, a.qos) == (
        5,
        2,
        "FORCE:2",
        "normal",
    )
    assert a.preempt_mode == "SUSPEND,GANG"  # inherited from the cluster
    assert b.nodes == ("n1", "n2", "n3", "n4")
    assert (b.max_time, b.priority_job_factor, b.priority_tier) == (None, 7, 7)
    assert (b.over_subscribe, b.preempt_mode, b.state) == ("YES:4", "REQUEUE", "DRAIN")
    assert b.allow_accounts == ("alpha", "beta") and b.hidden
    assert (c.state, c.over_subscribe, c.max_time) == ("INACTIVE", "EXCLUSIVE", 6)
    assert config.default_partition_name == "c"  # the last Default=YES wins


def test_oversubscribe_counts_below_the_minimum_mean_no() -> None:
    """verified with slurmctld: ``Ignoring bad OverSubscribe value: YES:1``, then NO."""
    config = conf("PartitionName=a OverSubscribe=YES:1", "PartitionName=b OverSubscribe=FORCE:0",
                  "PartitionName=c OverSubscribe=YES:4x")  # fmt: skip
    assert [p.over_subscribe for p in config.partitions] == ["NO", "NO", "YES:4"]
    assert "Ignoring bad OverSubscribe value: YES:1" in config.notes
    assert "Ignoring bad OverSubscribe value: FORCE:0" in config.notes


def test_odd_partition_values_as_slurmctld_shows_them() -> None:
    """verified with slurmctld + ``scontrol show partition``."""
    config = conf(
        "NodeName=n1",
        "PartitionName=p1 Nodes=ALL MaxTime=0 DefaultTime=UNLIMITED",
        "PartitionName=p2 Nodes=n1 MaxTime=5:30 Priority=7 MaxNodes=0 State=UPPER",
        "PartitionName=p3 Nodes=n1 MaxTime=-1 MaxNodes=UNLIMITED OverSubscribe=force",
    )
    p1, p2, p3 = config.partitions
    assert (p1.max_time, p1.default_time) == (0, None)  # MaxTime=00:00:00 DefaultTime=NONE
    assert (p2.max_time, p2.priority_job_factor, p2.priority_tier) == (6, 7, 7)
    assert (p2.max_nodes, p2.state) == (0, "UP")
    assert (p3.max_time, p3.max_nodes, p3.over_subscribe) == (None, None, "FORCE:4")


def test_node_layouts_as_slurmctld_shows_them() -> None:
    """verified with slurmctld + ``scontrol show node`` (CPUTot, Sockets, Boards, ...)."""
    config = conf(
        "NodeName=a1 CPUs=16 CoresPerSocket=4",
        "NodeName=a2 Boards=2 SocketsPerBoard=2 CoresPerSocket=8 ThreadsPerCore=2",
        "NodeName=a3 CPUs=6 CoresPerSocket=4",
        "NodeName=a4 CPUs=8",
        "NodeName=a5 CPUs=8 Sockets=2",
    )
    shown = [(n.cpus, n.sockets, n.boards, n.cores_per_socket, n.threads_per_core)
             for n in config.nodes]  # fmt: skip
    assert shown == [(16, 4, 1, 4, 1), (64, 4, 2, 8, 2), (4, 1, 1, 4, 1), (8, 8, 1, 1, 1),
                     (2, 2, 1, 1, 1)]  # fmt: skip


@pytest.mark.parametrize(
    ("text", "minutes"),
    [
        ("30", 30),
        ("1:30", 2),
        ("2:00:00", 120),
        ("1-0", 1440),
        ("1-2:30", 1590),
        ("0-0:0:1", 1),
        ("UNLIMITED", None),
        ("infinite", None),
        ("-1", None),
        ("0", 0),
    ],
)
def test_time_str2mins(text: str, minutes: int | None) -> None:
    assert time_str2mins(text) == minutes


# ---- cluster-wide options ---------------------------------------------------------------


def test_slurm_defaults() -> None:
    config = conf()
    assert (config.scheduler_type, config.select_type, config.select_type_parameters) == (
        "sched/backfill",
        "select/linear",
        "NONE",
    )
    assert config.scheduler == SchedulerParameters()
    assert (config.priority.type, config.priority.weight_age, config.priority.max_age) == (
        "priority/basic",
        0,
        7 * 86400,
    )
    assert (config.preempt_type, config.preempt_mode, config.kill_wait) == (
        "preempt/none",
        "OFF",
        30,
    )
    assert (config.def_mem_per_cpu, config.max_array_size, config.enforce_part_limits) == (
        None,
        1001,
        "NO",
    )
    assert (config.min_job_age, config.return_to_service, config.max_job_count) == (300, 0, 10000)
    assert (config.first_job_id, config.gres_types) == (1, ())
    assert config.notes == ("SlurmctldHost is accepted (as Slurm does) but ignored by minislurm",)


def test_scheduler_parameters() -> None:
    config = conf(
        "SchedulerParameters=bf_window=2880,bf_resolution=120,bf_max_job_test=50,bf_continue,"
        "bf_interval=5,bf_min_prio_reserve=100,bf_max_job_user=3,sched_interval=30,"
        "sched_min_interval=1000,default_queue_depth=20,defer,max_rpc_cnt=150,bf_window=abc"
    )
    s = config.scheduler
    assert (s.bf_window, s.bf_resolution, s.bf_max_job_test, s.bf_continue) == (2880, 120, 50, True)
    assert (s.bf_interval, s.bf_min_prio_reserve, s.bf_max_job_user) == (5, 100, 3)
    assert (s.sched_interval, s.sched_min_interval, s.default_queue_depth) == (30, 1000, 20)
    assert s.other == (("defer", None), ("max_rpc_cnt", "150"))
    assert s.get("max_rpc_cnt") == "150"
    assert "Invalid SchedulerParameters bf_window: abc" in config.notes


def test_priority_options() -> None:
    p = conf(
        "AccountingStorageType=accounting_storage/slurmdbd",
        "PriorityType=priority/multifactor",
        "PriorityWeightAge=10",
        "PriorityWeightFairshare=20",
        "PriorityWeightJobSize=30",
        "PriorityWeightPartition=40",
        "PriorityWeightQOS=50",
        "PriorityWeightAssoc=60",
        "PriorityWeightTRES=CPU=1000,Mem=2000,GRES/gpu=3000",
        "PriorityMaxAge=1-0",
        "PriorityDecayHalfLife=14-0",
        "PriorityFavorSmall=YES",
        "PriorityFlags=SMALL_RELATIVE_TO_TIME,max_tres",
        "PriorityCalcPeriod=00:01:00",
        "PriorityUsageResetPeriod=monthly",
        "FairShareDampeningFactor=3",
    ).priority
    assert (p.type, p.weight_age, p.weight_fairshare, p.weight_job_size) == (
        "priority/multifactor",
        10,
        20,
        30,
    )
    assert (p.weight_partition, p.weight_qos, p.weight_assoc) == (40, 50, 60)
    assert p.weight_tres == {"CPU": 1000.0, "Mem": 2000.0, "GRES/gpu": 3000.0}
    assert (p.max_age, p.decay_half_life, p.favor_small) == (86400, 14 * 86400, True)
    assert p.flags == ("SMALL_RELATIVE_TO_TIME", "MAX_TRES")
    assert (p.calc_period, p.usage_reset_period, p.damp_factor) == (60, "MONTHLY", 3)


def test_other_modelled_options() -> None:
    config = conf(
        "PreemptType=preempt/partition_prio",
        "PreemptMode=requeue",
        "KillWait=5",
        "DefMemPerCPU=512",
        "MaxMemPerNode=4k",
        "MaxArraySize=5000",
        "EnforcePartLimits=YES",
        "MinJobAge=60",
        "ReturnToService=2",
        "GresTypes=gpu,mps",
        "MaxJobCount=50",
        "FirstJobId=100",
        "AccountingStorageTRES=gres/gpu,license/x",
        "AccountingStorageType=accounting_storage/slurmdbd",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=cr_core_memory,CR_ONE_TASK_PER_CORE",
    )
    assert (config.preempt_type, config.preempt_mode, config.kill_wait) == (
        "preempt/partition_prio",
        "REQUEUE",
        5,
    )
    assert (config.def_mem_per_cpu, config.max_mem_per_node, config.max_array_size) == (
        512,
        4096,
        5000,
    )
    assert config.enforce_part_limits == "ANY"  # YES is a synonym of ANY
    assert (config.min_job_age, config.return_to_service, config.gres_types) == (
        60,
        2,
        ("gpu", "mps"),
    )
    assert (config.max_job_count, config.first_job_id) == (50, 100)
    assert config.accounting_storage_tres[-2:] == ("gres/gpu", "license/x")
    assert config.select_type_parameters == "CR_Core_Memory,CR_ONE_TASK_PER_CORE"


def test_accepted_but_unmodelled_keys_go_to_extra_with_a_note() -> None:
    config = conf("SlurmctldPort=6817", "AuthType=auth/munge", "SlurmdLogFile=/var/log/d.log")
    assert config.extra["SlurmctldPort"] == "6817"
    assert config.extra["SlurmdLogFile"] == "/var/log/d.log"
    assert config.extra["SlurmctldHost"] == "localhost"
    assert "AuthType is accepted (as Slurm does) but ignored by minislurm" in config.notes


def test_age_and_fairshare_need_slurmdbd() -> None:
    """verified with slurmctld: without accounting_storage/slurmdbd both weights are ignored."""
    config = conf("PriorityType=priority/multifactor", "PriorityWeightAge=10",
                  "PriorityWeightFairshare=20", "PriorityWeightQOS=30")  # fmt: skip
    assert (config.priority.weight_age, config.priority.weight_fairshare) == (0, 0)
    assert config.priority.weight_qos == 30
    assert "PriorityWeightAge can only be used with SlurmDBD, ignoring" in config.notes
    assert "PriorityWeightFairshare can only be used with SlurmDBD, ignoring" in config.notes


def test_extra_tres_need_slurmdbd() -> None:
    """verified with slurmctld (it stops with this fatal)."""
    assert error_of("AccountingStorageTRES=cpu,license/foo,gres/gpu")[-1] == (
        "fatal: slurmdbd is required to run with TRES license/foo. Either setup slurmdbd or "
        "remove this TRES from your configuration."
    )


def test_unknown_priority_flags_are_ignored_like_slurm() -> None:
    config = conf("PriorityFlags=bogus")
    assert config.priority.flags == ()
    assert "PriorityFlags BOGUS unknown, ignored" in config.notes


# ---- errors -----------------------------------------------------------------------------------

WHERE = 'error: in file /etc/slurm/slurm.conf line 3: "{}"'
PARSE = 'error: Parse error in file /etc/slurm/slurm.conf line 3: "{}"'

ERRORS = [  # (extra line 3, Slurm's lines; None = minislurm's location line), all verified
    ("Foo=bar", ["error: _parse_next_key: Parsing error at unrecognized key: Foo", None]),
    (
        "NodeName=x1 CPUs=4 Foo=1 RealMemory=5",
        ["error: Parsing error at unrecognized key: Foo", PARSE.format(" Foo=1 RealMemory=5")],
    ),
    (
        "NodeName=x1 CPUs=abc RealMemory=5",
        ['error: CPUs value "abc" is not a valid number', PARSE.format(" CPUs=abc RealMemory=5")],
    ),
    ("KillWait=abc", ['error: KillWait value "abc" is not a valid number', None]),
    ("MinJobAge=12x", ["error: MinJobAge value (12x) is not a valid number", None]),
    ("KillWait=70000", ["error: KillWait value (70000) is greater than 65535", None]),
    ("KillWait=-3", ["error: KillWait value (-3) is less than zero", None]),
    (
        "PartitionName=p Default=maybe",
        ['error: "maybe" is not a valid option for "Default"', PARSE.format(" Default=maybe")],
    ),
    ("ClusterName=a b", [PARSE.format(" b")]),
    ("garbage", [PARSE.format("garbage")]),
    ("PartitionName=p MaxTime=abc", ['error: Bad value "abc" for MaxTime', None]),
    ("PartitionName=p DefaultTime=1:2:3:4", ['error: Bad value "1:2:3:4" for DefaultTime', None]),
    ("PartitionName=p State=FOO", ['error: Bad value "FOO" for State', None]),
    (
        "PartitionName=p OverSubscribe=sometimes",
        ['error: Bad value "sometimes" for OverSubscribe', None],
    ),
    ("PartitionName=p PreemptMode=bogus", ['error: Bad value "bogus" for PreemptMode', None]),
    ("NodeName=DEFAULT NodeAddr=x", ["error: NodeAddr not allowed with NodeName=DEFAULT", None]),
    ("EnforcePartLimits=bogus", ["error: Bad EnforcePartLimits: bogus", None]),
    ("SelectTypeParameters=CR_Bogus", ["error: Bad SelectTypeParameter: CR_Bogus", None]),
    (
        "PriorityUsageResetPeriod=bogus",
        ['error: Bad value "bogus" for PriorityUsageResetPeriod', None],
    ),
    ("PriorityDecayHalfLife=abc", ['error: Bad value "abc" for PriorityDecayHalfLife', None]),
    ("PreemptMode=bogus", ["error: PreemptMode=bogus invalid", None]),
]


@pytest.mark.parametrize(("line", "expected"), ERRORS, ids=[e[0] for e in ERRORS])
def test_error_messages_name_file_and_line(line: str, expected: list[str | None]) -> None:
    wanted = [WHERE.format(line) if text is None else text for text in expected]
    assert error_of(line) == [*wanted, FATAL]


def test_all_parse_errors_are_reported_together() -> None:
    lines = error_of("Foo=1", "Bar=2")
    assert lines[0].endswith("key: Foo") and lines[2].endswith("key: Bar") and lines[-1] == FATAL


def test_reserved_node_name() -> None:
    assert error_of("NodeName=ALL CPUs=1") == [
        "fatal: 'ALL' is a reserved word disallowed for use with NodeName"
    ]


def test_required_keys() -> None:
    with pytest.raises(ConfigError) as info:
        parse_config("# empty\n")
    assert info.value.message == f"error: ClusterName needs to be specified\n{FATAL}"
    with pytest.raises(ConfigError) as info:
        parse_config("ClusterName=x\n")
    assert info.value.message == f"error: No SlurmctldHost defined.\n{FATAL}"
    assert parse_config("ClusterName=x\nControlMachine=h\n").cluster_name == "x"


def test_unknown_partition_node() -> None:
    """verified with slurmctld (plus minislurm's location line)."""
    assert error_of("NodeName=n[1-2]", "PartitionName=p Nodes=n[1-2],n9") == [
        'error: _find_node_record: lookup failure for node "n9"',
        'error: in file /etc/slurm/slurm.conf line 4: "PartitionName=p Nodes=n[1-2],n9"',
        "fatal: Invalid node names in partition p",
    ]
    assert error_of("NodeName=n[1-2]", "PartitionName=p Nodes=n[2-1]") == [
        "error: _parse_single_range: Invalid range: `2-1'",
        "error: nodespec_to_hostlist: hostlist_create() error for n[2-1]",
        'error: in file /etc/slurm/slurm.conf line 4: "PartitionName=p Nodes=n[2-1]"',
        "fatal: Invalid node names in partition p",
    ]


SLURMCTLD_FATALS = [  # (lines, fatal) -- verified with slurmctld -D of Slurm 22.05.8
    (["NodeName=n1", "NodeName=n1"], "fatal: Duplicated NodeName n1 in the config file"),
    (["PartitionName=p", "PartitionName=p"],
     "fatal: _build_single_partitionline_info: duplicate entry for partition p"),
    (["NodeName=n[1-3] Port=1,2"],
     "fatal: Port count must equal that of NodeName records or there must be no more than "
     "one (2 != 3)"),
    (["NodeName=n[1-3] NodeAddr=a,b"],
     "fatal: NodeAddr count must equal that of NodeName records of there must be no more "
     "than one"),
    (["SelectType=select/foo"], "fatal: Can't find plugin for select/foo"),
    (["NodeName=n1 State=BOGUS"], "fatal: Invalid state BOGUS from n1"),
]  # fmt: skip


@pytest.mark.parametrize(("lines", "fatal"), SLURMCTLD_FATALS)
def test_errors_slurmctld_finds_later(lines: list[str], fatal: str) -> None:
    got = error_of(*lines)
    assert got[-1] == fatal
    assert got[-2].startswith("error: in file /etc/slurm/slurm.conf line ")


@pytest.mark.parametrize("kind", ["sched", "priority", "preempt"])
def test_unknown_plugins(kind: str) -> None:
    """verified: the three errors of plugin_context_create, then the plugin's fatal."""
    key = {"sched": "SchedulerType", "priority": "PriorityType", "preempt": "PreemptType"}[kind]
    got = error_of(f"{key}={kind}/foo")
    assert got[:3] == [
        f"error: Couldn't find the specified plugin name for {kind}/foo looking at all files",
        f"error: cannot find {kind} plugin for {kind}/foo",
        f"error: cannot create {kind} context for {kind}/foo",
    ]
    fatal = "Failed" if kind == "sched" else "failed"
    assert got[-1] == f"fatal: {fatal} to initialize {kind} plugin"


def test_node_state_message() -> None:
    assert (
        error_of("NodeName=n[1-2] State=BOGUS")[0] == "error: node n[1-2] has invalid state BOGUS"
    )


def test_unusable_node_gres_is_dropped_with_a_note() -> None:
    """slurmctld starts without a word; the GRES just is not there."""
    config = conf("GresTypes=gpu", "NodeName=n1 Gres=gpu:a:b:c", "NodeName=n2 Gres=gpu:2,mps:10")
    assert config.node("n1").gres == ()
    assert config.node("n2").gres == (NodeGres("gpu", None, 2, (), (0, 1)),)
    assert (
        "NodeName=n1 Gres=gpu:a:b:c: Invalid generic resource (gres) specification, ignored"
        in config.notes
    )
    assert "NodeName=n2: gres/mps ignored (not listed in GresTypes)" in config.notes


def test_fewer_node_hostnames_than_nodes_is_accepted() -> None:
    config = conf("NodeName=x[1-3] NodeHostname=a,b NodeAddr=10.0.0.1")
    assert [n.node_hostname for n in config.nodes] == ["a", "b", "b"]
    assert {n.node_addr for n in config.nodes} == {"10.0.0.1"}


def test_bad_gres_conf_is_a_config_error() -> None:
    with pytest.raises(ConfigError) as info:
        conf("GresTypes=gpu", "NodeName=n1 Gres=gpu:1", gres="Name=gpu Bogus=1\n")
    assert info.value.message.endswith("fatal: error opening/reading /etc/slurm/gres.conf")


# ---- the same errors as the real scontrol, when it is installed ----------------------------

SCONTROL = shutil.which("scontrol")


@pytest.mark.skipif(SCONTROL is None, reason="real scontrol (Slurm 22.05) not installed")
def test_errors_match_real_scontrol(tmp_path: Path) -> None:
    assert SCONTROL is not None
    path = tmp_path / "slurm.conf"
    for line, _expected in ERRORS[:12]:
        path.write_text(f"{HEAD}{line}\n")
        real = subprocess.run(
            [SCONTROL, "show", "hostnames", "x1"],
            env={**os.environ, "SLURM_CONF": str(path)},
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        )
        with pytest.raises(ConfigError) as info:
            load_config(str(path))
        mine = [m for m in info.value.message.split("\n") if not m.startswith("error: in file ")]
        assert real.stderr.replace("scontrol: ", "").splitlines() == mine, line


def test_include_files(tmp_path: Path) -> None:
    (tmp_path / "nodes.conf").write_text("NodeName=q[1-2] CPUs=2\n")
    (tmp_path / "slurm.conf").write_text(f"{HEAD}Include nodes.conf\nPartitionName=p Nodes=ALL\n")
    config = load_config(str(tmp_path / "slurm.conf"))
    assert config.partition("p").nodes == ("q1", "q2")


def test_errors_in_included_files_name_both_files(tmp_path: Path) -> None:
    """verified: the included file's error, then ``"Include" failed in file ... line ...``."""
    (tmp_path / "nodes.conf").write_text("NodeName=q1 CPUs=2 Foo=1\n")
    (tmp_path / "slurm.conf").write_text(f"{HEAD}Include nodes.conf\n")
    with pytest.raises(ConfigError) as info:
        load_config(str(tmp_path / "slurm.conf"))
    assert info.value.message.split("\n") == [
        "error: Parsing error at unrecognized key: Foo",
        f'error: Parse error in file {tmp_path / "nodes.conf"} line 1: " Foo=1"',
        f'error: "Include" failed in file {tmp_path / "slurm.conf"} line 3',
        FATAL,
    ]


@pytest.mark.parametrize(
    ("lines", "first", "fatal"),
    [
        (["NodeName=n1 Port=abc"], "error: Unable to create Port list from [abc]", FATAL),
        (["NodeName=n1 Port=70000"], "error: Invalid Port 70000 for NodeName=n1", FATAL),
        (["NodeName=n[1-2] NodeAddr=a[2-1]"], "error: Unable to create NodeAddr list from a[2-1]",
         FATAL),
    ],
)  # fmt: skip
def test_bad_hostlists_in_node_and_partition_lines(
    lines: list[str], first: str, fatal: str
) -> None:
    got = error_of(*lines)
    assert (got[0], got[-1]) == (first, fatal)
    assert got[1].startswith("error: in file /etc/slurm/slurm.conf line ")


# ---- the reference cluster against what its slurmctld showed ------------------------------


def _show_records(text: str, first_key: str) -> list[dict[str, str]]:
    """``scontrol show partition/node`` output -> one dict of Key=Value per record."""
    records: list[dict[str, str]] = []
    for token in text.split():
        key, eq, value = token.partition("=")
        if not eq:
            continue
        if key == first_key:
            records.append({})
        if records:
            records[-1][key] = value
    return records


@pytest.mark.skipif(capture_root() is None, reason="slurm-reference captures not found")
def test_reference_partitions_and_node_match_scontrol_show() -> None:
    """c2_formats_and_reasons/00: ``scontrol show partition`` and ``show node n1``."""
    from captures import load_case

    from minislurm.common.hostlist import compress

    root = capture_root()
    assert root is not None
    config = load_config(str(root / "slurm.conf"))
    out = load_case("c2_formats_and_reasons", "00_idle_views").out
    partitions_text, node_text = out.split("NodeName=n1", 1)
    shown = _show_records(partitions_text, "PartitionName")
    assert [p["PartitionName"] for p in shown] == [p.name for p in config.partitions]
    for rec, part in zip(shown, config.partitions, strict=True):
        assert rec["Default"] == ("YES" if part.default else "NO")
        assert time_str2mins(rec["MaxTime"]) == part.max_time
        default_time = None if rec["DefaultTime"] == "NONE" else time_str2mins(rec["DefaultTime"])
        assert default_time == part.default_time
        assert rec["MaxNodes"] == ("UNLIMITED" if part.max_nodes is None else str(part.max_nodes))
        assert int(rec["MinNodes"]) == part.min_nodes
        assert rec["MaxCPUsPerNode"] == "UNLIMITED" and part.max_cpus_per_node is None
        assert int(rec["PriorityJobFactor"]) == part.priority_job_factor
        assert int(rec["PriorityTier"]) == part.priority_tier
        assert rec["OverSubscribe"] == part.over_subscribe
        assert rec["PreemptMode"] == part.preempt_mode
        assert rec["State"] == part.state
        assert rec["QoS"] == (part.qos or "N/A")
        assert rec["Nodes"] == compress(part.nodes)
        assert int(rec["TotalNodes"]) == len(part.nodes)
        assert int(rec["TotalCPUs"]) == sum(config.node(n).cpus for n in part.nodes)
    (node_rec,) = _show_records("NodeName=n1" + node_text, "NodeName")
    n1 = config.node("n1")
    assert int(node_rec["CoresPerSocket"]) == n1.cores_per_socket
    assert int(node_rec["CPUTot"]) == n1.cpus
    assert node_rec["Gres"] == ",".join(str(g) for g in n1.gres)
    assert (node_rec["NodeAddr"], node_rec["NodeHostName"]) == (n1.node_addr, n1.node_hostname)
    assert int(node_rec["Port"]) == n1.port
    assert int(node_rec["RealMemory"]) == n1.real_memory
    assert (int(node_rec["Sockets"]), int(node_rec["Boards"])) == (n1.sockets, n1.boards)
    assert int(node_rec["ThreadsPerCore"]) == n1.threads_per_core
    assert (int(node_rec["TmpDisk"]), int(node_rec["Weight"])) == (n1.tmp_disk, n1.weight)
    assert node_rec["AvailableFeatures"] == (",".join(n1.features) or "(null)")
    assert node_rec["Partitions"] == ",".join(p.name for p in config.partitions if "n1" in p.nodes)


def test_backslashes_follow_strip_escapes() -> None:
    """``\\\\`` is one backslash; an odd run at the end of a line continues it."""
    assert conf_lines("A=a\\\\b\nC=1 \\\\\\\n D=2\n") == [(1, "A=a\\b"), (2, "C=1 \\ D=2")]
