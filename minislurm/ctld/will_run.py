"""``sbatch --test-only``: when and where would this job start? (job_mgr.c ``job_allocate``
with ``will_run``, answered like ``slurm_job_will_run``).

The request is checked exactly as a submission is (same errors), then placed in the
node-space map sched/backfill uses (`minislurm.sched.node_space`): the resources free
now plus every running job's coming back at its time limit. The answer is the first
slot where the job fits for its whole time limit and the nodes it would get; the job is
not queued. As on Slurm 22.05.8 (measured): the check takes a job id even though no job
is created, except when the partition does not exist; sbatch prints
``sbatch: Job N to start at T using C processors on nodes X in partition P``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from minislurm.hostlist import compress
from minislurm.options import JobOptions
from minislurm.sched.node_space import NodeSpaceMap
from minislurm.select.cons_tres import order_nodes, spread_node_estimate

from .job_mgr import Job
from .submit import reject

if TYPE_CHECKING:
    from .controller import Controller

#: sbatch's answer when the job could never start (``slurm_job_will_run``).
NOT_AVAILABLE = "Requested node configuration is not available"


@dataclass(frozen=True, slots=True)
class WillRun:
    """The answer of ``--test-only``."""

    job_id: int
    start_time: int
    num_cpus: int
    nodelist: str
    partition: str


def will_run(ctl: Controller, options: JobOptions, *, name: str = "sbatch",
             user: str = "root", uid: int = 0, cwd: str = "/tmp",
             prog: str = "sbatch") -> WillRun:
    """Check ``options`` like a submission and say when and where the job would start.

    Raises `SubmitError` with the submission's text when slurmctld would refuse it, or
    with ``Requested node configuration is not available`` when it fits nowhere.
    """
    part_name = (options.partition or ctl.default_partition).split(",")[0]
    job_id = ctl.next_job_id() if part_name in ctl.parts else 0
    job = Job(job_id, options.job_name or name, ctl.now)
    job.user, job.uid = user, uid
    ctl._fill(job, options, prog, cwd)
    table = ctl.table
    req = job.request
    duration = ctl.duration(job)
    allowed = ctl.allowed(job, duration)
    count = spread_node_estimate(req, table, allowed) if req.spread else req.node_count
    space = NodeSpaceMap(table, ctl.now, ctl.bf.bf_resolution, ctl.bf.bf_window * 60)
    space.add_releases([
        (j.allocation, None if j.time_limit is None or j.start_time is None
         else max(j.start_time + j.time_limit * 60, ctl.now + 1))
        for j in ctl.running_jobs() if j.allocation is not None
    ])
    found = space.earliest(req, allowed, count, duration)
    if found is None or int(found[1].sum()) < count:
        raise reject(prog, NOT_AVAILABLE)
    start, free = found
    chosen = sorted(int(i) for i in order_nodes(table, np.flatnonzero(free))[:count])
    per_node_cpus = req.cpus_on_node(count)
    cpus = sum(int(table.cpus[i]) if req.exclusive else per_node_cpus for i in chosen)
    return WillRun(job_id, int(start), cpus, compress(table.names[i] for i in chosen),
                   job.partition)
