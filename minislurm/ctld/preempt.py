"""preempt/qos (``PreemptType=preempt/qos``; src/plugins/preempt/qos).

A job whose QOS lists others in ``Preempt=`` (``sacctmgr modify qos high set
Preempt=scavenger``) may take the resources of running jobs of those QOS when it
cannot start otherwise.  The victims are the lowest-priority, most recently
started jobs first, just enough of them for the preemptor to fit.  What happens
to a victim follows the QOS's ``PreemptMode`` (or the cluster's when ``cluster``):
``REQUEUE`` puts it back to PENDING (the attempt is logged PREEMPTED) and
``CANCEL`` ends it PREEMPTED.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from minislurm.job import Allocation
from minislurm.select.cons_tres import select
from minislurm.select.table import BoolArray
from minislurm.states import JobState

from . import lifecycle
from .job_mgr import Job
from .runner import SIGKILL

if TYPE_CHECKING:
    from .controller import Controller


def _mode(ctl: Controller, victim: Job) -> str:
    qos = ctl.qos.get(victim.qos)
    mode = str(getattr(qos, "preempt_mode", "cluster") or "cluster").upper()
    if mode == "CLUSTER":
        mode = ctl.preempt_mode.split(",")[0]
    return mode


def try_preempt(ctl: Controller, job: Job, allowed: BoolArray) -> Allocation | None:
    """Preempt just enough lower QOS jobs for ``job`` to fit; its allocation or None."""
    if ctl.preempt_type != "preempt/qos":
        return None
    qos = ctl.qos.get(job.qos)
    victims_qos = set(getattr(qos, "preempt", ()) or ())
    if not victims_qos:
        return None
    cands = [j for j in ctl.running_jobs() if j.qos in victims_qos and j.allocation is not None
             and j.state is JobState.RUNNING and _mode(ctl, j) in ("REQUEUE", "CANCEL")]
    cands.sort(key=lambda j: (j.priority, -(j.start_time or 0), -j.job_id))
    released: list[Job] = []
    found = None
    for victim in cands:
        assert victim.allocation is not None
        ctl.table.release(victim.allocation)
        released.append(victim)
        res = select(job.request, ctl.table, allowed)
        if isinstance(res, Allocation):
            found = res
            break
    for victim in released:
        assert victim.allocation is not None
        ctl.table.allocate(victim.allocation)
    if found is None:
        return None
    for victim in released:
        if _mode(ctl, victim) == "REQUEUE" and victim.requeue and victim.batch_flag:
            lifecycle.requeue(ctl, victim, JobState.PREEMPTED)
        else:
            ctl.runner.kill(victim.job_id, SIGKILL)
            victim.end_time = None
            lifecycle.finish(ctl, victim, JobState.PREEMPTED, 0, SIGKILL)
    res = select(job.request, ctl.table, allowed)
    return res if isinstance(res, Allocation) else None


__all__ = ["try_preempt"]
