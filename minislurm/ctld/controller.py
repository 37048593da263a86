"""slurmctld's public face: the ``Controller``.

``Controller(config, env)`` holds nodes, partitions, jobs and reservations and
decides *what order* (the priority plugin, through ``queue.JobQueue``), *where*
(select/cons_tres) and *when* (sched/builtin + sched/backfill, through
``sched_view.SchedView``).  It runs under any SimPy environment:
``simpy.Environment`` for simulated time, ``simpy.rt.RealtimeEnvironment`` for
wall-clock mode; it never reads the wall clock itself.  The creator says which
(``clock=SIMULATED`` starts at ``epoch``, 2026-01-05T08:00:00 UTC; ``clock=WALL_CLOCK``
when ``env.now`` already counts epoch seconds; see ``state.py``).

The controller *is* its state (``state.CtldState``: the records, the clock, the
bookkeeping and the wake-ups) plus the public operations, each a thin call of the
module that owns the rule: ``submit_api`` (sbatch/srun/salloc), ``admin`` (scancel,
hold/release/requeue, nodes, partitions, reservations, failure injection),
``job_update`` (``scontrol update JobId=``), ``will_run`` (``--test-only``),
``loops`` (the schedulers' triggers and periodic passes) and the snapshots below
(what squeue, sinfo, scontrol and sacct read).

Scheduling is event driven: a submission or a job end triggers the main
scheduler (once per instant however many events happened), and a backfill pass
follows ``bf_interval`` seconds after a change; nothing ticks while idle.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import simpy

from minislurm.common.accounts import AssociationSet
from minislurm.common.billing import billable_tres
from minislurm.conf import SlurmConfig
from minislurm.job import JobRecord, StepRecord
from minislurm.node import NodeRecord, PartitionRecord, ReservationRecord
from minislurm.options import JobOptions
from minislurm.priority import PriorityPlugin
from minislurm.states import JobState

from . import admin, job_update, loops, submit_api
from .accounting import batch_step
from .runner import JobBody, JobRunner
from .sched_view import SchedView
from .state import DEFAULT_EPOCH, SIMULATED, WALL_CLOCK, CtldState
from .will_run import WillRun, will_run_test


class Controller(CtldState):
    """A faithful, compact slurmctld.  See the module docstring."""

    def __init__(
        self,
        config: SlurmConfig,
        env: simpy.Environment | None = None,
        *,
        runner: JobRunner | None = None,
        policy: str | None = None,
        priority: PriorityPlugin | None = None,
        associations: AssociationSet | None = None,
        clock: str | None = None,
        epoch: int = DEFAULT_EPOCH,
        seed: int = 0,
    ) -> None:
        super().__init__(config, env, runner=runner, policy=policy, priority=priority,
                         associations=associations, clock=clock,
                         epoch=epoch, seed=seed)
        #: the schedulers' view of this controller (``SchedulerContext``)
        self.view = SchedView(self)
        self.main_pass = self._main_pass
        if self.bf_enabled:
            loops.BackfillAgent(self, self.view)
        if self.queue.recalculates:
            self.env.process(loops.priority_loop(self, self))

    def _main_pass(self) -> None:
        loops.run_main(self, self.view)

    # ---- submissions (submit_api.py, will_run.py) ------------------------------------
    def submit(
        self,
        options: JobOptions,
        script: str = "",
        *,
        name: str | None = None,
        user: str = "root",
        uid: int = 0,
        group: str | None = None,
        gid: int | None = None,
        cwd: str = "/tmp",
        command: str = "",
        body: JobBody | None = None,
        bodies: Mapping[int, JobBody] | None = None,
        prog: str = "sbatch",
        batch: bool = True,
        exact_limit: int | None = None,
    ) -> int:
        """Queue a job like ``sbatch`` (``prog='srun'``/``'salloc'`` change the error wording).

        ``body`` says what a simulated job does (run time, exit code); ``bodies`` per
        array task index.  ``exact_limit``: the time limit in seconds, finer than
        ``--time``'s minutes (``Job.exact_limit``; simulate's textbook EASY only).
        Returns the job id; raises ``SubmitError`` when rejected.
        """
        return submit_api.submit(self, self.view, options, script, name=name, user=user,
                                 uid=uid, group=group, gid=gid, cwd=cwd, command=command,
                                 body=body, bodies=bodies, prog=prog, batch=batch,
                                 exact_limit=exact_limit)

    def submit_invocation(self, inv: Any, **kw: Any) -> int:
        """``submit`` for an ``SbatchInvocation`` (options, script text, name, args)."""
        path = inv.script_path  # --wrap and a script on stdin: Command=(null), as 22.05.8
        cmd = " ".join([path, *inv.script_args]) if path else ""
        kw.setdefault("command", cmd)
        return self.submit(inv.options, inv.script_text, name=inv.job_name, **kw)

    def will_run(self, options: JobOptions, *, name: str = "sbatch", user: str = "root",
                 uid: int = 0, cwd: str = "/tmp", prog: str = "sbatch") -> WillRun:
        """``sbatch --test-only``: when and where the job would start (``WillRun``), from
        the controller's one model of it (``SchedView.earliest_start``).  Raises
        ``SubmitError`` with slurmctld's text; the job is not queued."""
        return will_run_test(self, self.view, options, name=name, user=user, uid=uid,
                             cwd=cwd, prog=prog)

    # ---- scancel, scontrol (admin.py, job_update.py) ---------------------------------
    def cancel(self, job_id: int, *, task: int | None = None, uid: int = 0) -> None:
        """``scancel JOBID`` (``task``: ``scancel 108_3``); unknown or ended ids are ignored."""
        admin.cancel(self, job_id, task=task, uid=uid)

    def signal_job(self, job_id: int, signal: int, *, uid: int = 0) -> None:
        """``scancel --signal=SIG JOBID``: deliver a signal to a running job's processes."""
        admin.signal_job(self, job_id, signal, uid=uid)

    def cancel_where(self, *, user: str | None = None, state: str | None = None,
                     name: str | None = None, partition: str | None = None,
                     uid: int = 0) -> list[int]:
        """``scancel -u USER -t STATE -n NAME -p PART``: cancel every matching active job."""
        return admin.cancel_where(self, user=user, state=state, name=name,
                                  partition=partition, uid=uid)

    def hold(self, job_id: int, *, user: bool = False) -> None:
        """``scontrol hold`` (JobHeldAdmin) or ``scontrol uhold`` (JobHeldUser)."""
        admin.hold(self, job_id, user=user)

    def release(self, job_id: int) -> None:
        """``scontrol release``: the job may run again (it gets a new priority)."""
        admin.release(self, job_id)

    def requeue(self, job_id: int) -> None:
        """``scontrol requeue``: a running batch job goes back to PENDING."""
        admin.requeue(self, job_id)

    def update_job(self, job_id: int, *, uid: int = 0,
                   time_limit: int | object | None = job_update.UNCHANGED,
                   partition: str | None = None, num_nodes: int | None = None,
                   nice: int | None = None, start_time: int | None = None) -> None:
        """``scontrol update JobId=ID TimeLimit= Partition= NumNodes= Nice= StartTime=``."""
        job_update.update_job(self, job_id, uid=uid, time_limit=time_limit,
                              partition=partition, num_nodes=num_nodes, nice=nice,
                              start_time=start_time)

    def update_node(self, nodes: str, state: str, reason: str = "", *,
                    user: str = "root") -> None:
        """``scontrol update nodename=NODES state=down|drain|resume reason=...``."""
        admin.update_node(self, nodes, state, reason, user=user)

    def fail_node(self, name: str, *, repair_after: int | None = None) -> None:
        """The node dies now (slurmd stops answering): DOWN*, its jobs requeued or NODE_FAIL."""
        admin.fail_node(self, name, repair_after=repair_after)

    def schedule_node_failure(self, name: str, at: int, *,
                              repair_after: int | None = None) -> None:
        """Inject a failure of ``name`` at epoch time ``at``."""
        admin.schedule_node_failure(self, name, at, repair_after=repair_after)

    def random_failures(self, mtbf_hours: float, repair_after: int, *, seed: int = 0,
                        until: int | None = None, nodes: Iterable[str] | None = None,
                        ) -> list[tuple[int, str]]:
        """Exponential failures with the given MTBF per node; returns the (time, node) plan."""
        return admin.random_failures(self, mtbf_hours, repair_after, seed=seed, until=until,
                                     nodes=nodes)

    def update_partition(self, name: str, state: str) -> None:
        """``scontrol update partitionname=NAME state=UP|DOWN|DRAIN|INACTIVE``."""
        admin.update_partition(self, name, state)

    def create_reservation(self, name: str, start: int, duration: int, nodes: str, *,
                           users: Iterable[str] = (), accounts: Iterable[str] = (),
                           flags: Iterable[str] = (), node_cnt: int | None = None,
                           partition: str = "") -> str:
        """``scontrol create reservation`` (``duration`` in minutes); scontrol's line."""
        return admin.create_reservation(self, name, start, duration, nodes, users=users,
                                        accounts=accounts, flags=flags, node_cnt=node_cnt,
                                        partition=partition)

    def update_reservation(
        self, name: str, *, start: int | None = None, duration: int | None = None,
        end: int | None = None, nodes: str | None = None, users: Iterable[str] | None = None,
        accounts: Iterable[str] | None = None, flags: Iterable[str] | None = None,
        node_cnt: int | None = None, partition: str | None = None,
    ) -> str:
        """``scontrol update reservationname=NAME ...``; ``Reservation updated.``"""
        return admin.update_reservation(self, name, start=start, duration=duration, end=end,
                                        nodes=nodes, users=users, accounts=accounts,
                                        flags=flags, node_cnt=node_cnt, partition=partition)

    def delete_reservation(self, name: str) -> None:
        """``scontrol delete reservation=NAME``."""
        admin.delete_reservation(self, name)

    # ---- slurmd's reports ------------------------------------------------------------
    def add_step(self, job_id: int, step: StepRecord) -> None:
        """An srun step ended: slurmd's step completion is kept in the job's accounting.

        ``KeyError`` for an unknown job.  A step that reports after its job's attempt was
        recorded (the job ended first) is added to that attempt's accounting record.
        """
        job = self._jobs[job_id]
        if step.step_id in job.resized_steps:
            return  # closed RESIZING when a --no-kill job lost its node (lifecycle.shrink)
        if any(s.step_id == step.step_id and s.state is not JobState.RUNNING
               for s in job.steps):
            return  # the job's end already closed it (CANCELLED with the job's signal)
        if job.state is not JobState.PENDING:  # a requeued job's steps were its last attempt's
            job.steps[:] = [s for s in job.steps  # it replaces the step's RUNNING record
                            if s.step_id != step.step_id]
            job.steps.append(step)
        if job.state.is_terminal or job.state is JobState.PENDING:
            self.accounting_store.add_step(job_id, step)

    def step_started(self, job_id: int, step: StepRecord) -> None:
        """An srun step runs (``squeue -s`` and sacct show it ``RUNNING``)."""
        job = self._jobs[job_id]
        if job.state is JobState.RUNNING:
            job.steps.append(step)

    # ---- the schedulers (loops.py) -------------------------------------------------
    def run_backfill(self) -> int:
        """One sched/backfill pass now (normally every bf_interval after a change)."""
        return loops.run_backfill(self, self.view)

    def recalc_priorities(self) -> None:
        """``PriorityCalcPeriod``: every pending job's priority anew (multifactor's decay
        thread); a plugin that does not recalculate (priority/basic) has nothing to redo."""
        self.queue.recalc(self.now)

    def decay_priorities(self) -> None:
        """A ``PriorityCalcPeriod`` pass whose numbers the next pass replaces unread: the
        plugin's ``unread_pass`` (multifactor without ``INCR_ONLY``: the usage decay
        only), else the full pass."""
        if not self.priority_plugin.unread_pass(self.now):
            self.recalc_priorities()

    # ---- queries (snapshots) -----------------------------------------------------------
    def job(self, job_id: int) -> JobRecord:
        """One job's snapshot; ``KeyError`` if unknown."""
        return self._jobs[job_id].snapshot()

    def jobs(self, *, expand_arrays: bool = False, include_done: bool = True) -> list[JobRecord]:
        """All jobs slurmctld knows, in job id order (``squeue``/``scontrol show job``).

        ``expand_arrays`` gives one record per pending array task (``squeue -r``).
        """
        out: list[JobRecord] = []
        for job in sorted(self._jobs.values(), key=lambda j: j.job_id):
            if not include_done and job.state.is_terminal:
                continue
            if expand_arrays and job.is_array_meta:
                out += [job.snapshot(task_index=i) for i in job.array_pending]
            else:
                out.append(job.snapshot())
        return out

    def nodes(self) -> list[NodeRecord]:
        """All nodes in config order (``sinfo``/``scontrol show node``)."""
        records = [self.nodes_mgr.snapshot(i) for i in range(len(self.table))]
        if any(c.billing_weights for c in self.part_cfg.values()):
            records = [dataclasses.replace(r, billing=self._node_billing(r)) for r in records]
        return records

    def _node_billing(self, node: NodeRecord) -> int:
        """``_set_node_billing_tres``: the node's highest billing over its partitions
        with ``TRESBillingWeights``, else its CPU count."""
        tres = {"cpu": node.cpus, "mem": node.real_memory, "node": 1}
        if node.gpus_total:
            tres["gres/gpu"] = node.gpus_total
        weights = (self.part_cfg[p].billing_weights for p in node.partitions
                   if p in self.part_cfg)
        best = max((billable_tres(tres, w) for w in weights if w is not None), default=0.0)
        return int(best or node.cpus)

    def partitions(self) -> list[PartitionRecord]:
        """All partitions in config order."""
        out = []
        for name, pv in self.parts.items():
            cfg = self.part_cfg[name]
            m = pv.mask
            out.append(PartitionRecord(
                name=name, nodes=tuple(self.table.names[i] for i in np.flatnonzero(m)),
                default=name == self.default_partition, state=pv.state, max_time=pv.max_time,
                default_time=pv.default_time, max_nodes=pv.max_nodes, min_nodes=pv.min_nodes,
                priority_job_factor=cfg.priority_job_factor, priority_tier=cfg.priority_tier,
                over_subscribe=cfg.over_subscribe, preempt_mode=cfg.preempt_mode,
                qos=cfg.qos or "", total_cpus=int(self.table.cpus[m].sum()),
                total_nodes=int(m.sum()), total_mem=int(self.table.mem[m].sum()),
                total_gpus=int(self.table.gpus[m].sum()),
            ))  # fmt: skip
            weights = cfg.billing_weights
            if weights is not None:
                rec = out[-1]
                tres = {"cpu": rec.total_cpus, "mem": rec.total_mem, "node": rec.total_nodes}
                if rec.total_gpus:
                    tres["gres/gpu"] = rec.total_gpus
                out[-1] = dataclasses.replace(rec, billing_weights=weights.text,
                                  billing=int(billable_tres(tres, weights)))
        return out

    def reservations(self) -> list[ReservationRecord]:
        """All reservations (``scontrol show reservation``)."""
        return [r.record(self.now) for r in self.reservations_by_name.values()]

    def accounting(self) -> list[JobRecord]:
        """What sacct reads: every ended attempt, then the jobs still active."""
        done = list(self.accounting_store.attempts)
        active = [_with_running_batch(j.snapshot(accounting=True))
                  for j in self._jobs.values() if not j.state.is_terminal and not j.unrecorded]
        return sorted(done + active, key=lambda r: (r.job_id, r.restart_count, r.end_time or 0))

    def pending(self) -> Iterable[JobRecord]:
        """Pending jobs in scheduling order."""
        return [j.snapshot() for j in self.pending_in_order()]


def _with_running_batch(record: JobRecord) -> JobRecord:
    """A running batch job's record as sacct sees it: its ``.batch`` step runs too."""
    if record.state is not JobState.RUNNING or any(s.step_id == "batch" for s in record.steps):
        return record
    step = batch_step(record, None, 0, 0)
    return record if step is None else dataclasses.replace(record, steps=(step, *record.steps))


__all__ = ["DEFAULT_EPOCH", "SIMULATED", "WALL_CLOCK", "Controller", "JobState"]
