"""select/cons_tres CPU shares with ``-N`` and no ``--ntasks-per-node``, against real Slurm.

Every expectation below was measured on real Slurm 22.05.8 (the reference cluster:
4 nodes of 4 CPUs and 4,000 MB, DefMemPerCPU=1000) with
``sbatch -N.. -n.. --wrap 'echo $SLURM_JOB_NODELIST $SLURM_JOB_CPUS_PER_NODE
$SLURM_TASKS_PER_NODE'``; minislurm's simulated cluster on the same slurm.conf must
give the same nodes, CPUs per node and tasks per node (cons_tres ``_eval_nodes`` +
``_cpus_to_use`` + ``_set_task_dist``).
"""

from __future__ import annotations

import shlex

import numpy as np
import pytest

from minislurm.common.layout import distribute, tasks_per_node_string
from minislurm.conf import SlurmConfig, load_config
from minislurm.job import Allocation, NodeAlloc
from minislurm.select.cons_tres import select
from minislurm.select.eval_nodes import cpus_to_use, dist_tasks
from minislurm.select.request import ResourceRequest
from minislurm.select.table import NodeShape, NodeTable
from minislurm.sim import Cluster
from minislurm.states import Reason

CONF = """\
ClusterName=mini
SlurmctldHost=localhost
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=1,bf_resolution=1,sched_min_interval=0
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1000
GresTypes=gpu
NodeName=n[1-4] CPUs=4 Boards=1 SocketsPerBoard=1 CoresPerSocket=4 ThreadsPerCore=1 \
RealMemory=4000 State=UNKNOWN
PartitionName=debug Nodes=n[1-4] Default=YES MaxTime=01:00:00 DefaultTime=00:10:00 State=UP
"""

#: sbatch options -> (SLURM_JOB_NODELIST, SLURM_JOB_CPUS_PER_NODE, SLURM_TASKS_PER_NODE)
#: on real Slurm 22.05.8, idle cluster.
IDLE = {
    "-N2 -n4": ("n[1-2]", "3,1", "3,1"),
    "-N2 -n3": ("n[1-2]", "2,1", "2,1"),
    "-N2 -n5": ("n[1-2]", "4,1", "4,1"),
    "-N2 -n6": ("n[1-2]", "4,2", "4,2"),
    "-N2 -n7": ("n[1-2]", "4,3", "4,3"),
    "-N2 -n8": ("n[1-2]", "4(x2)", "4(x2)"),
    "-N3 -n4": ("n[1-3]", "2,1(x2)", "2,1(x2)"),
    "-N3 -n5": ("n[1-3]", "3,1(x2)", "3,1(x2)"),
    "-N4 -n5": ("n[1-4]", "2,1(x3)", "2,1(x3)"),
    "-N2 -n2": ("n[1-2]", "1(x2)", "1(x2)"),
    "-N2": ("n[1-2]", "1(x2)", "1(x2)"),
    "-N2 -c2": ("n[1-2]", "2(x2)", "1(x2)"),
    "-N2 -n4 -c2": ("n[1-2]", "4(x2)", "2(x2)"),
    "-N2 -n3 -c2": ("n[1-2]", "4,2", "2,1"),
    "-N3 -n3 -c2": ("n[1-3]", "2(x3)", "1(x3)"),
    "-N2 -n2 -c3": ("n[1-2]", "3(x2)", "1(x2)"),
    "-N3 -n4 -c2": ("n[1-3]", "4,2(x2)", "2,1(x2)"),
    "-N1-2 -n4": ("n[1-2]", "3,1", "3,1"),
    "-N2-3 -n4": ("n[1-3]", "2,1(x2)", "2,1(x2)"),
    "-N2 -n4 --mem-per-cpu=1500": ("n[1-2]", "2(x2)", "2(x2)"),
    "-N2 -n4 --mem=2000": ("n[1-2]", "3,1", "3,1"),
    "-N2 -n4 -m cyclic": ("n[1-2]", "3,1", "3,1"),
    "-N2 --ntasks-per-node=2": ("n[1-2]", "2(x2)", "2(x2)"),
    "-N2 -n4 --exclusive": ("n[1-2]", "4(x2)", "2(x2)"),
    "-N2 -n4 -w n3,n2": ("n[2-3]", "3,1", "3,1"),
    "-N2 -n4 -w n3": ("n[3-4]", "3,1", "3,1"),
    "-n6": ("n[1-2]", "4,2", "4,2"),
    "-n6 -c2": ("n[1-3]", "4(x3)", "2(x3)"),
}

#: Same, with a 2-CPU job on n1 and a 3-CPU job on n2 running (n1: 2 free, n2: 1 free),
#: measured on real 22.05.8.
BUSY = {
    "-N2 -n4": ("n[1,3]", "2(x2)", "2(x2)"),
    "-N3 -n4": ("n[1-3]", "2,1(x2)", "2,1(x2)"),
    "-N2 -n2": ("n[1-2]", "1(x2)", "1(x2)"),
    "-N2 -n5": ("n[1,3]", "2,3", "2,3"),
    # cons_tres choose_nodes: when _eval_nodes fails, the nodes with the fewest usable
    # CPUs are dropped and it tries again (-N2 -n7: n1 2 + 5 on one node fails; without
    # n2 the set n3-n4 fits 4 + 3); a -n alone job takes the best-fitting set
    "-N2 -n7": ("n[3-4]", "4,3", "4,3"),
    "-N3 -n10": ("n[1,3-4]", "2,4(x2)", "2,4(x2)"),
    "-N2 -n3": ("n[1-2]", "2,1", "2,1"),
    "-N2 -n6": ("n[1,3]", "2,4", "2,4"),
    "-n3": ("n3", "3", "3"),
    "-n4": ("n3", "4", "4"),
}


def _cluster() -> Cluster:
    conf: SlurmConfig = load_config_text(CONF)
    return Cluster(conf)


def load_config_text(text: str) -> SlurmConfig:
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "slurm.conf"
        path.write_text(text)
        return load_config(str(path))


def _shown(c: Cluster, args: str) -> tuple[str, str, str]:
    jid = c.sbatch("#!/bin/bash\ntrue\n", *shlex.split(args), runtime=30)
    c.advance(0.5)
    job = next(j for j in c.controller.jobs() if j.job_id == jid)
    assert job.allocation is not None, (args, job.state, job.reason)
    cpus = [n.cpus for n in job.allocation.nodes]
    ntasks = job.num_tasks or sum(cpus) // (job.cpus_per_task or 1)
    layout = distribute(ntasks, job.allocation.node_names, cpus,
                        cpus_per_task=job.cpus_per_task)
    return job.nodelist, tasks_per_node_string(cpus), layout.tasks_per_node_string()


@pytest.mark.parametrize("args", sorted(IDLE))
def test_idle_cluster_like_real_slurm(args: str) -> None:
    assert _shown(_cluster(), args) == IDLE[args]


@pytest.mark.parametrize("args", sorted(BUSY))
def test_busy_nodes_like_real_slurm(args: str) -> None:
    c = _cluster()
    c.sbatch("#!/bin/bash\nsleep 300\n", "-w", "n1", "-n2", runtime=300)
    c.sbatch("#!/bin/bash\nsleep 300\n", "-w", "n2", "-n3", runtime=300)
    c.advance(0.5)
    assert _shown(c, args) == BUSY[args]


def test_cpus_to_use_leaves_one_cpu_per_node_to_come() -> None:
    assert cpus_to_use(4, 4, 2, 1) == 3
    assert cpus_to_use(4, 1, 1, 1) == 1
    assert cpus_to_use(2, 4, 2, 1) == 2          # less than the limit: all of it
    assert cpus_to_use(4, 2, 2, 2) == 2          # never under one task (-c2)
    assert cpus_to_use(4, 0, 1, 2) == 2


def test_dist_tasks_one_per_node_first_then_round_robin() -> None:
    assert dist_tasks(4, [3, 1], 1) == [3, 1]
    assert dist_tasks(4, [4, 3, 2], 2) == [2, 1, 1]
    assert dist_tasks(3, [4, 2, 2], 2) == [1, 1, 1]
    assert dist_tasks(1, [1, 1], 1) == [1, 1]    # every node keeps one task's CPUs


def _table() -> NodeTable:
    return NodeTable([NodeShape(f"n{i + 1}", 4, 4000) for i in range(4)])


def test_node_with_one_free_cpu_still_counts() -> None:
    """A node qualifies with one task's CPUs free, not an even share: with n1 and n2
    full, n3 holding 3 free CPUs and n4 one, ``-N2 -n4`` fits as 3 + 1 (an even
    2 + 2 would not); afterwards nothing is free and ``-N2 -n2`` waits."""
    t = _table()
    allowed = np.ones(4, dtype=np.bool_)
    t.allocate(Allocation(tuple(
        _na(t, i, c) for i, c in ((0, 4), (1, 4), (2, 1), (3, 3)))))
    res = select(ResourceRequest(min_nodes=2, ntasks=4, mem_per_cpu=1000), t, allowed)
    assert isinstance(res, Allocation)
    assert [(n.node, n.cpus, n.mem_mb) for n in res.nodes] == [("n3", 3, 3000), ("n4", 1, 1000)]
    t.allocate(res)
    t.check()
    assert select(ResourceRequest(min_nodes=2, ntasks=2), t, allowed) is Reason.RESOURCES


def _na(t: NodeTable, i: int, cpus: int) -> NodeAlloc:
    return t.node_alloc(i, cpus, cpus * 1000, 0, None)


def test_last_node_must_cover_the_rest() -> None:
    """``max_nodes == 1 && avail < rem_cpus``: a too small last node is skipped."""
    t = _table()
    allowed = np.ones(4, dtype=np.bool_)
    t.allocate(Allocation((_na(t, 0, 2), _na(t, 1, 3))))  # n1: 2 free, n2: 1 free
    res = select(ResourceRequest(min_nodes=2, ntasks=5), t, allowed)
    assert isinstance(res, Allocation)
    assert [(n.node, n.cpus) for n in res.nodes] == [("n1", 2), ("n3", 3)]


def test_backfill_map_accounts_the_uneven_shares() -> None:
    """sched/backfill's node-space map frees what the job really holds (3 + 1 CPUs) at
    its time limit, not an even 2 + 2."""
    from minislurm.sched.node_space import NodeSpaceMap

    t = _table()
    allowed = np.ones(4, dtype=np.bool_)
    alloc = select(ResourceRequest(min_nodes=2, ntasks=4, mem_per_cpu=1000), t, allowed)
    assert isinstance(alloc, Allocation)
    t.allocate(alloc)
    space = NodeSpaceMap(t, now=0, resolution=1, window=3600)
    space.add_releases([(alloc, 600)])
    assert space.times == [0, 600]
    assert space.cpu[0].tolist() == [1, 3, 4, 4]
    assert space.mem[0].tolist() == [1000, 3000, 4000, 4000]
    assert space.cpu[1].tolist() == [4, 4, 4, 4]
