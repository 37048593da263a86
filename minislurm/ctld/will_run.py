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

from dataclasses import dataclass

import numpy as np

from minislurm.common.hostlist import compress
from minislurm.errors import Errno
from minislurm.options import JobOptions

from .job_mgr import Job
from .sched_view import SchedView
from .state import CtldState
from .submit import reject
from .submit_api import fill

#: sbatch's answer when the job could never start (``slurm_job_will_run``).
NOT_AVAILABLE = Errno.ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE


@dataclass(frozen=True, slots=True)
class WillRun:
    """The answer of ``--test-only``."""

    job_id: int
    start_time: int
    num_cpus: int
    nodelist: str
    partition: str


def will_run_test(state: CtldState, view: SchedView, options: JobOptions, *,
                  name: str = "sbatch", user: str = "root", uid: int = 0, cwd: str = "/tmp",
                  prog: str = "sbatch") -> WillRun:
    """Check ``options`` like a submission and say when and where the job would start.

    Raises `SubmitError` with the submission's text when slurmctld would refuse it, or
    with ``Requested node configuration is not available`` when it fits nowhere.
    The start is ``SchedView.earliest_start``'s: the controller's one model of it.
    """
    part_name = (options.partition or state.default_partition).split(",")[0]
    job_id = state.next_job_id() if part_name in state.parts else 0
    job = Job(job_id, options.job_name or name, state.now)
    job.user, job.uid = user, uid
    fill(state, job, options, prog, cwd)
    req = job.request
    allowed = view.allowed(job, state.duration(job))
    if req.req_nodes:  # job_start_data(): the -w nodes are the only candidates
        allowed = allowed & np.isin(np.arange(len(allowed)), sorted(req.req_nodes))
    found = view.earliest_start(req, allowed)
    if found is None:
        raise reject(prog, NOT_AVAILABLE)
    start, alloc = found
    return WillRun(job_id, start, alloc.num_cpus, compress(alloc.node_names), job.partition)


__all__ = ["NOT_AVAILABLE", "WillRun", "will_run_test"]
