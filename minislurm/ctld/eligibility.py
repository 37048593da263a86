"""Whether a pending job may be considered, where, and why not (the scheduler's view).

``blocker`` gives the reasons that keep a job out of scheduling altogether (held,
``Dependency``, ``BeginTime``, partition limits, ``Reservation``,
``JobArrayTaskLimit``, QOS limits); ``allowed`` the nodes it may use (its
partition's usable nodes, minus advance reservations in its way); ``try_select``
asks select/cons_tres and, when the job does not fit, preempt/qos, and finally
says why (``Resources``, ``ReqNodeNotAvail, UnavailableNodes:n4``, or nodes DOWN or
DRAINED).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from minislurm.common.hostlist import compress
from minislurm.job import Allocation
from minislurm.select.cons_tres import config_mask, select
from minislurm.select.table import BoolArray, NodeTable
from minislurm.states import Reason

from .depend import NEVER, OK, evaluate
from .job_mgr import Job

if TYPE_CHECKING:
    from .controller import Controller

#: select_nodes' state_desc when the nodes a job needs are up but reserved.
MAY_BE_RESERVED = "May be reserved for other job"


class EligibilityMixin:
    """The scheduler-facing checks of the controller."""

    def blocker(self: Controller, job: Job) -> Reason | None:  # type: ignore[misc]
        """Why ``job`` cannot be considered now (None: it can)."""
        if job.hold is not None:
            return Reason.JOB_HELD_ADMIN if job.hold == "admin" else Reason.JOB_HELD_USER
        if job.dependency:
            status = evaluate(job, self._targets, self._singleton_waits, self.now)
            if status == NEVER:
                if job.kill_on_invalid_dep:
                    self.env.timeout(0).callbacks.append(lambda _e: self._cancel_pending(job, 0))
                return Reason.DEPENDENCY_NEVER_SATISFIED
            if status != OK:
                return Reason.DEPENDENCY
        if job.begin_time is not None and job.begin_time > self.now:
            return Reason.BEGIN_TIME
        if job._eligible_time is None:  # (the property's getter, inline: every pass)
            job.eligible_time = self.now
        if job.static_reason is not None:
            return job.static_reason
        part = self.parts.get(job.partition)
        if part is not None and part.state in ("DOWN", "INACTIVE"):
            return Reason.PARTITION_DOWN if part.state == "DOWN" else Reason.PARTITION_INACTIVE
        if job.reservation:
            resv = self.reservations_by_name.get(job.reservation)
            if resv is None:
                return Reason.RESERVATION_DELETED
            if not resv.active(self.now):  # type: ignore[attr-defined]
                return Reason.RESERVATION
        if job.array_max is not None and job.array_job_id is not None and (
            self._array_running.get(job.array_job_id, 0) >= job.array_max
        ):
            return Reason.JOB_ARRAY_TASK_LIMIT
        return self._qos_blocker(job)

    def _qos_blocker(self: Controller, job: Job) -> Reason | None:  # type: ignore[misc]
        qos = self.qos.get(job.qos)
        if qos is None:
            return None
        max_jobs = getattr(qos, "max_jobs_per_user", None)
        max_gpu = (getattr(qos, "max_tres_per_user", None) or {}).get("gres/gpu")
        if max_jobs is None and max_gpu is None:
            return None
        use = self._user_running.get((job.qos, job.user), [0, 0])
        if max_jobs is not None and use[0] >= max_jobs:
            return Reason.QOS_MAX_JOBS_PER_USER
        if max_gpu is not None and use[1] + job.gpus_total > max_gpu:
            return Reason.QOS_MAX_GRES_PER_USER
        return None

    def _targets(self: Controller, job_id: int) -> list[Job]:  # type: ignore[misc]
        if job_id in self._array_tasks:
            return self._array_tasks[job_id]
        job = self._jobs.get(job_id)
        return [job] if job is not None else []

    def _singleton_waits(self: Controller, job: Job) -> bool:  # type: ignore[misc]
        ids = self._active_names.get((job.user, job.name), set())
        return any(i < job.job_id for i in ids if i != job.job_id)

    def allowed(self: Controller, job: Job, duration: int) -> BoolArray:  # type: ignore[misc]
        """Partition nodes that accept jobs, minus reservations in the way."""
        part = self.parts.get(job.partition)
        mask = (part.mask if part is not None else np.ones(len(self.table), np.bool_)).copy()
        mask &= self.table.usable
        now = self.now
        for resv in self.reservations_by_name.values():
            idx = list(resv.nodes)  # type: ignore[attr-defined]
            if job.reservation == resv.name:  # type: ignore[attr-defined]
                only = np.zeros_like(mask)
                only[idx] = True
                mask &= only
            elif resv.overlaps(now, now + duration):  # type: ignore[attr-defined]
                mask[idx] = False
        return mask

    def try_select(  # type: ignore[misc]
        self: Controller, job: Job, allowed: BoolArray, *, preempt: bool = True
    ) -> Allocation | Reason:
        """select/cons_tres plus the reason squeue shows when the job does not fit.

        ``preempt``: when the job does not fit, preempt/qos may make room on ``allowed``.
        The main scheduler does; the backfill pass does not (its ``allowed`` is only
        the nodes its map found free, so preempting there would pick other victims
        than Slurm, whose main scheduler makes room at submission on all the job's
        nodes, as measured on 22.05.8 in tests/test_fidelity_preemption.py).
        """
        res = select(job.request, self.table, allowed)
        if isinstance(res, Allocation):
            return res
        preempted = self._try_preempt(job, allowed) if preempt else None
        if preempted is not None:
            return preempted
        return self._why_not(job)

    def waiting_reason(self: Controller, job: Job) -> Reason:  # type: ignore[misc]
        """Priority for a job behind a blocked one, unless its ``-w`` nodes are unavailable."""
        req = job.request.req_nodes
        if req and not self.table.usable[sorted(req)].all():
            return self._why_not(job)
        job.reason_detail = ""
        return Reason.PRIORITY

    def explain(self: Controller, job: Job) -> Reason:  # type: ignore[misc]
        """Why ``job`` does not fit now, as squeue prints it."""
        return self._why_not(job)

    def _why_not(self: Controller, job: Job) -> Reason:  # type: ignore[misc]
        """The reason of a job that does not fit now, as 22.05.8's select_nodes gives it
        (measured on the reference cluster, tests/test_fidelity_resv_reasons.py):

        * a ``-w`` node DOWN/DRAINED: ``ReqNodeNotAvail, UnavailableNodes:<down nodes>``;
          a ``-w`` node in another reservation: ``ReqNodeNotAvail, May be reserved for
          other job``;
        * fewer usable nodes than ``-N`` once down nodes and other reservations are left
          out: ``Nodes required for job are DOWN, DRAINED or reserved for jobs in higher
          priority partitions``;
        * the job would not fit on those nodes even if they were idle (``-n13`` with one
          of four 4-CPU nodes reserved or drained): ``ReqNodeNotAvail,
          UnavailableNodes:<down and reserved nodes>`` when a node is down, else ``...,
          May be reserved for other job``;
        * otherwise ``Resources``.
        """
        part = self.parts.get(job.partition)
        pmask = part.mask if part is not None else np.ones(len(self.table), np.bool_)
        down = pmask & ~self.table.usable
        req = job.request
        if req.req_nodes and (~self.table.usable[list(req.req_nodes)]).any():
            job.reason_detail = "UnavailableNodes:" + compress(
                [self.table.names[i] for i in np.flatnonzero(down)])
            return Reason.REQ_NODE_NOT_AVAIL
        reserved = self._reserved_for_others(job) & pmask
        if req.req_nodes and reserved[list(req.req_nodes)].any():
            job.reason_detail = MAY_BE_RESERVED
            return Reason.REQ_NODE_NOT_AVAIL
        job.reason_detail = ""
        avail = pmask & self.table.usable & ~reserved
        if req.exc_nodes:
            avail[list(req.exc_nodes)] = False
        fits = avail if req.spread else avail & config_mask(req, self.table)
        if (down.any() or reserved.any()) and int(fits.sum()) < req.node_count:
            return Reason.NODES_DOWN_DRAINED
        if (down.any() or reserved.any()) and not job.reservation and not isinstance(
            select(req, self._idle_table(), avail), Allocation
        ):
            if down.any():
                job.reason_detail = "UnavailableNodes:" + compress(
                    [self.table.names[i] for i in np.flatnonzero(down | reserved)])
            else:
                job.reason_detail = MAY_BE_RESERVED
            return Reason.REQ_NODE_NOT_AVAIL
        return Reason.RESOURCES

    def _reserved_for_others(self: Controller, job: Job) -> BoolArray:  # type: ignore[misc]
        """Nodes of the reservations (other than the job's) in the job's way now."""
        mask = np.zeros(len(self.table), np.bool_)
        now, end = self.now, self.now + self.duration(job)
        for resv in self.reservations_by_name.values():
            if job.reservation != resv.name and resv.overlaps(now, end):  # type: ignore[attr-defined]
                mask[list(resv.nodes)] = True  # type: ignore[attr-defined]
        return mask

    def _idle_table(self: Controller) -> NodeTable:  # type: ignore[misc]
        """The nodes as they are configured, all idle (would the job ever fit?)."""
        table: NodeTable | None = getattr(self, "_idle_nodes", None)
        if table is None:
            table = self._idle_nodes = NodeTable(self.table.shapes)
        return table

    def _try_preempt(self: Controller, job: Job, allowed: BoolArray) -> Allocation | None:  # type: ignore[misc]
        from .preempt import try_preempt

        return try_preempt(self, job, allowed)


__all__ = ["EligibilityMixin"]
