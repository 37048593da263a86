"""Properties of the controller on random workloads (hypothesis), for every scheduler.

Random jobs (nodes, GPUs, CPUs, run time and time limit, some cancelled, some not
requeue-able) on a small GPU cluster with random node failures (an MTBF, repairs):

* never more CPUs, memory or GPUs held on a node than it has, and no GPU index
  given to two jobs at once (checked by walking the running jobs every minute);
* every job reaches a terminal state;
* the usage accounting holds adds up to allocated TRES x elapsed over every attempt;
* with EASY and the top job alone, backfill never delays it
(tests/minislurm/sched/test_backfill.py);
* the same workload and seed give the same schedule.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import partial

import pytest
from ctld_helpers import gpu_cluster
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from minislurm.ctld import Controller, JobBody
from minislurm.options import JobOptions
from minislurm.sched.backfill import POLICIES

NODES, GPUS, CPUS = 3, 4, 8


@dataclass(frozen=True)
class Spec:
    nodes: int
    gpus: int
    cpus: int
    run: int
    limit: int  # minutes
    requeue: bool
    cancel_at: int | None


specs = st.builds(
    Spec,
    nodes=st.integers(1, 2),
    gpus=st.integers(0, GPUS),
    cpus=st.integers(1, 4),
    run=st.integers(10, 3000),
    limit=st.integers(1, 60),
    requeue=st.booleans(),
    cancel_at=st.one_of(st.none(), st.integers(0, 4000)),
)
workloads = st.lists(st.tuples(st.integers(0, 1800), specs), min_size=1, max_size=25)


def _run(policy: str, workload: list[tuple[int, Spec]], seed: int,
         check: bool = True) -> tuple[Controller, list[int]]:
    ctl = gpu_cluster(nodes=NODES, gpus=GPUS, cpus=CPUS, policy=policy)
    start = ctl.now
    ctl.random_failures(mtbf_hours=2.0, repair_after=600, seed=seed, until=start + 4 * 3600)
    ids: list[int] = []
    for at, s in sorted(workload, key=lambda w: w[0]):
        if start + at > ctl.now:
            _advance(ctl, start + at, check)
        opts = JobOptions(nodes_min=s.nodes, nodes_max=s.nodes, ntasks_per_node=1,
                          cpus_per_task=s.cpus, gres=f"gpu:{s.gpus}" if s.gpus else None,
                          time_limit=s.limit, time_limit_set=True, requeue=s.requeue)
        jid = ctl.submit(opts, name="j", body=JobBody(s.run))
        ids.append(jid)
        if s.cancel_at is not None:
            ctl.later(s.cancel_at, partial(ctl.cancel, jid))
    _advance(ctl, start + 4 * 3600, check)
    # ReturnToService=0 (Slurm's default): a failed node stays DOWN until an admin
    # resumes it, and a job needing it pends forever (Reason=ReqNodeNotAvail/NodeDown).
    down = [n.name for n in ctl.nodes() if n.state.base.name == "DOWN"]
    if down:
        ctl.update_node(",".join(down), "resume")
    _advance(ctl, start + 4 * 3600 + 2 * 86400, check)
    return ctl, ids


def _advance(ctl: Controller, until: int, check: bool) -> None:
    while ctl.now < until:
        ctl.run(until=min(until, ctl.now + 60))
        if check:
            _no_overcommit(ctl)
        if not ctl._pending and not ctl._running and ctl.env.peek() == float("inf"):
            break


def _no_overcommit(ctl: Controller) -> None:
    cpus: Counter[str] = Counter()
    mem: Counter[str] = Counter()
    gpus: dict[str, list[int]] = {}
    for job in ctl.running_jobs():
        assert job.allocation is not None
        for na in job.allocation.nodes:
            cpus[na.node] += na.cpus
            mem[na.node] += na.mem_mb
            gpus.setdefault(na.node, []).extend(i for _t, i in na.gpus)
    for node in ctl.nodes():
        assert cpus[node.name] <= node.cpus, node.name
        assert mem[node.name] <= node.real_memory, node.name
        held = gpus.get(node.name, [])
        assert len(held) == len(set(held)) <= node.gpus_total, (node.name, held)


@pytest.mark.parametrize("policy", POLICIES)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workload=workloads, seed=st.integers(0, 10_000))
def test_random_workloads_keep_the_invariants(policy: str, workload: list[tuple[int, Spec]],
                                              seed: int) -> None:
    ctl, ids = _run(policy, workload, seed)
    for jid in ids:
        assert ctl.job(jid).state.is_terminal, ctl.job(jid)
    attempts = [r for r in ctl.accounting() if r.start_time is not None]
    for key in ("cpu", "gres/gpu"):
        expected = sum(r.tres_alloc.get(key, 0) * r.elapsed for r in attempts)
        assert ctl.accounting_store.total(key) == pytest.approx(expected), key


@settings(max_examples=10, deadline=None)
@given(workload=workloads, seed=st.integers(0, 10_000))
def test_same_workload_and_seed_same_schedule(workload: list[tuple[int, Spec]],
                                              seed: int) -> None:
    def schedule() -> list[tuple[object, ...]]:
        ctl, _ids = _run("slurm", workload, seed, check=False)
        return [(r.job_id, r.state, r.start_time, r.end_time, r.nodelist)
                for r in ctl.accounting()]

    assert schedule() == schedule()
