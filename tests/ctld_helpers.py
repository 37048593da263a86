"""Small clusters and shortcuts shared by the controller tests."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from minislurm.conf import parse_config
from minislurm.ctld import Controller, JobBody, SimulatedRunner
from minislurm.job import JobRecord
from minislurm.options import JobOptions
from minislurm.priority import PriorityPlugin

#: The captured reference cluster (4 nodes x 4 CPUs x 4 a100), inline.
REF_CONF = """ClusterName=mini
SlurmctldHost=localhost
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=1,bf_resolution=1,sched_min_interval=0
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1000
GresTypes=gpu
KillWait=5
ReturnToService=1
NodeName=n[1-4] CPUs=4 RealMemory=4000 Gres=gpu:a100:4 State=UNKNOWN
PartitionName=debug Nodes=n[1-4] Default=YES MaxTime=01:00:00 DefaultTime=00:10:00 State=UP
PartitionName=gpu Nodes=n[1-4] MaxTime=02:00:00 State=UP
PartitionName=short Nodes=n[1-2] MaxTime=00:05:00 DefaultTime=00:01:00 State=UP
"""


def ref_controller(extra: str = "", policy: str | None = None, *,
                   priority: PriorityPlugin | None = None) -> Controller:
    """A Controller on the reference cluster (``extra`` lines are appended)."""
    cfg = parse_config(REF_CONF + extra, "slurm.conf")
    return Controller(cfg, policy=policy, priority=priority)


def gpu_cluster(nodes: int = 4, gpus: int = 8, cpus: int = 32, policy: str | None = None,
                params: str = "bf_interval=1,bf_resolution=60") -> Controller:
    """An AI cluster of ``nodes`` x ``gpus`` a100 (one partition ``gpu``)."""
    conf = f"""ClusterName=ai
SlurmctldHost=localhost
SchedulerType=sched/backfill
SchedulerParameters={params}
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1000
GresTypes=gpu
NodeName=g[1-{nodes}] CPUs={cpus} RealMemory={cpus * 4000} Gres=gpu:a100:{gpus}
PartitionName=gpu Nodes=g[1-{nodes}] Default=YES MaxTime=UNLIMITED State=UP
"""
    return Controller(parse_config(conf, "slurm.conf"), policy=policy)


def sub(ctl: Controller, run: int | None = 60, code: int = 0, *, name: str = "job",
        user: str = "root", **opts: Any) -> int:
    """Submit ``JobOptions(**opts)`` whose simulated body runs ``run`` s and exits ``code``
    (``opts`` are JobOptions' fields, each of its own type)."""
    if "time_limit" in opts:
        opts.setdefault("time_limit_set", True)
    return ctl.submit(JobOptions(**opts), name=name, user=user,
                      body=JobBody(run, code))


def signals_sent(ctl: Controller) -> list[tuple[int, int, int]]:
    """The signals ``ctl``'s simulated runner delivered: ``(SimPy time, job id, signal)``
    (the test fails if ``ctl`` runs real processes)."""
    runner = ctl.runner
    assert isinstance(runner, SimulatedRunner), runner
    return runner.signals


def started_at(job: JobRecord) -> int:
    """A started job's ``start_time`` (the test fails if it has none)."""
    assert job.start_time is not None, job
    return job.start_time


def ended_at(job: JobRecord) -> int:
    """An ended job's ``end_time`` (the test fails if it has none)."""
    assert job.end_time is not None, job
    return job.end_time


@dataclass(frozen=True)
class Launched:
    """A job as a runner is handed it (`minislurm.ctld.runner.Launch`) when the test needs
    only its id: asking it for its record fails the test."""

    job_id: int

    def snapshot(self) -> JobRecord:
        raise AssertionError(f"the runner asked job {self.job_id}'s record")
