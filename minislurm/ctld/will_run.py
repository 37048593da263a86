"""``sbatch --test-only``: when and where would this job start? (job_mgr.c ``job_allocate``
with ``will_run``, answered like ``slurm_job_will_run``).

The request is checked exactly as a submission is (same errors), then placed as
select/cons_tres's ``_will_run_test`` does: select on the nodes as they are now; if the
job does not fit, the running jobs are taken away one by one in the order their time
limits end, and select is tried again after each: the job would start when the limit of
the last one taken away ends (no pending job's reservation counts, and no
``bf_resolution`` rounding: measured, a job behind one started at 19:51:21 with
``-t 5`` is told 19:56:21).  The CPUs and nodes are select's own answer, so
``-N2 -n5`` beside busy nodes gets ``5 processors on nodes n[1,3]`` (2 + 3), as on
Slurm; only the ``-w`` nodes are candidates (``job_start_data``), so ``-N2 -w n1`` is
never answered.  The job is not queued.  As on Slurm 22.05.8 (measured): the check takes a job
id even though no job is created, except when the partition does not exist; sbatch prints
``sbatch: Job N to start at T using C processors on nodes X in partition P``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from minislurm.common.hostlist import compress
from minislurm.job import Allocation
from minislurm.options import JobOptions
from minislurm.select.cons_tres import ResourceRequest, select
from minislurm.select.table import BoolArray

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
    req = job.request
    allowed = ctl.allowed(job, ctl.duration(job))
    if req.req_nodes:  # job_start_data(): the -w nodes are the only candidates
        allowed = allowed & np.isin(np.arange(len(allowed)), sorted(req.req_nodes))
    found = _earliest_fit(ctl, req, allowed)
    if found is None:
        raise reject(prog, NOT_AVAILABLE)
    start, alloc = found
    return WillRun(job_id, start, alloc.num_cpus, compress(alloc.node_names), job.partition)


def _earliest_fit(
    ctl: Controller, req: ResourceRequest, allowed: BoolArray
) -> tuple[int, Allocation] | None:
    """(start, allocation) of ``req``: now, or when enough running jobs have ended."""
    res = select(req, ctl.table, allowed)
    if isinstance(res, Allocation):
        return ctl.now, res
    ending = sorted(
        (j.start_time + j.time_limit * 60, j.job_id, j.allocation)
        for j in ctl.running_jobs()
        if j.allocation is not None and j.start_time is not None and j.time_limit is not None
        and j.time_limit >= 0
    )  # fmt: skip
    if not ending:
        return None
    table = copy.deepcopy(ctl.table)
    for end, _job_id, alloc in ending:
        table.release(alloc)
        res = select(req, table, allowed)
        if isinstance(res, Allocation):
            return max(end, ctl.now), res
    return None
