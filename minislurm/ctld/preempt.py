"""preempt/qos (``PreemptType=preempt/qos``; src/plugins/preempt/qos, src/slurmctld/preempt.c).

A job whose QOS lists others in ``Preempt=`` (``sacctmgr modify qos high set
Preempt=scavenger``) may take the resources of running jobs of those QOS when it
cannot start otherwise.  As in Slurm 22.05:

* the candidates are the running jobs of those QOS in slurmctld's job list order
  (creation order), sorted (stably) by ``_gen_job_prio``: the QOS priority (capped
  at 0xffff) << 16 plus the job's node count, smallest first -- so smaller jobs of
  the least important QOS go first; ``SchedulerParameters=preempt_youngest_first``
  sorts by start time instead, latest first;
* select/cons_tres takes candidates away one at a time until the job fits, and only
  the removed candidates that overlap the nodes it then picks are preempted (the
  others keep running);
* what happens to a victim follows its QOS's ``PreemptMode`` (or the cluster's):
  ``REQUEUE`` puts a requeueable batch job back to PENDING (the attempt is logged
  PREEMPTED, BeginTime 121 s on), ``CANCEL`` ends it PREEMPTED with ExitCode 0:15
  (``PreemptTime=`` in ``scontrol show job``); either way slurmd stops it like any
  job (SIGTERM ``DUE TO PREEMPTION``, SIGKILL after KillWait: lifecycle.py), and the
  job waits for its victims' nodes (reason Resources) without preempting more.
"""

from __future__ import annotations

import numpy as np

from minislurm.job import Allocation
from minislurm.select.cons_tres import select
from minislurm.select.table import BoolArray
from minislurm.states import JobState

from . import lifecycle
from .job_mgr import Job
from .runner import SIGTERM
from .state import CtldState


def _mode(ctl: CtldState, victim: Job) -> str:
    qos = ctl.qos.get(victim.qos)
    mode = (qos.preempt_mode if qos is not None else "cluster").upper() or "CLUSTER"
    if mode == "CLUSTER":
        mode = ctl.preempt_mode.split(",")[0]
    return mode


def try_preempt(ctl: CtldState, job: Job, allowed: BoolArray) -> Allocation | None:
    """Preempt just enough lower QOS jobs for ``job`` to fit; its allocation or None."""
    if ctl.preempt_type != "preempt/qos":
        return None
    qos = ctl.qos.get(job.qos)
    victims_qos = set(qos.preempt) if qos is not None else set()
    if not victims_qos:
        return None
    if any(j.state is JobState.COMPLETING and j.final_state is JobState.PREEMPTED
           for j in ctl.running_jobs()):
        return None  # victims are still stopping (KillWait): wait for their nodes
    cands = [j for j in ctl.running_jobs() if j.qos in victims_qos and j.allocation is not None
             and j.state is JobState.RUNNING and _mode(ctl, j) in ("REQUEUE", "CANCEL")]
    cands.sort(key=lambda j: j.job_id)  # job_list order: list_for_each(job_list, ...)
    if youngest_first(ctl):
        cands.sort(key=lambda j: -(j.start_time or 0))  # _sort_by_youngest
    else:
        cands.sort(key=lambda j: preempt_prio(ctl, j))  # _sort_by_prio
    removed: list[Job] = []
    found = None
    for victim in cands:
        assert victim.allocation is not None
        ctl.table.release(victim.allocation)
        removed.append(victim)
        res = select(job.request, ctl.table, allowed)
        if isinstance(res, Allocation):
            found = res
            break
    for victim in removed:
        assert victim.allocation is not None
        ctl.table.allocate(victim.allocation)
    if found is None:
        return None
    picked = set(found.node_names)  # preempt only the removed jobs on the picked nodes
    victims = [v for v in removed if v.allocation is not None
               and picked.intersection(v.allocation.node_names)]
    for victim in victims:
        victim.preempt_time = ctl.now
        if _mode(ctl, victim) == "REQUEUE" and victim.requeue and victim.batch_flag:
            lifecycle.requeue(ctl, victim, JobState.PREEMPTED)
        else:
            lifecycle.terminate(ctl, victim, JobState.PREEMPTED, 0, SIGTERM)
    on_picked = allowed & np.isin(np.asarray(ctl.table.names), sorted(picked))
    res = select(job.request, ctl.table, on_picked)
    if not isinstance(res, Allocation):
        res = select(job.request, ctl.table, allowed)
    return res if isinstance(res, Allocation) else None


def preempt_prio(ctl: CtldState, job: Job) -> int:
    """preempt/qos's ``_gen_job_prio``: QOS priority (16 bits) << 16 + node count."""
    qos = ctl.qos.get(job.qos)
    prio = (qos.priority if qos is not None else 0) or 0
    nodes = len(job.allocation.nodes) if job.allocation is not None else job.num_nodes
    return (min(prio, 0xFFFF) << 16) + min(nodes, 0xFFFF)


def youngest_first(ctl: CtldState) -> bool:
    """``SchedulerParameters=preempt_youngest_first`` (22.05 has no PreemptParameters=)."""
    return "preempt_youngest_first" in dict(ctl.config.scheduler.other)


__all__ = ["preempt_prio", "try_preempt", "youngest_first"]
