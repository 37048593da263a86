"""srun steps of a batch script on the simulated clock (what sacct shows as ``JOBID.0``).

On the wall clock a script's ``srun`` asks slurmctld for a step (`daemon/step_service.py`) and
sacct lists it when it ends.  On the simulated clock no script runs, so
`minislurm.sim.simscript` reads the ``srun`` lines of the script (``JobBody.steps``, `SimStep`:
when each starts after the job, how long it sleeps, srun's arguments) and this module plays
them: each step is planned inside the job's allocation as srun would get it
(`step_mgr.plan_step`), shows ``RUNNING`` from its start and ``COMPLETED`` at its end.
A step still running when its job ends (``scancel``, a time limit, ``scontrol
requeue``, a node failure) ends ``CANCELLED`` with the job's signal, as slurmstepd
reports a step it killed.  Step ids count from 0 in script order.
"""

from __future__ import annotations

from dataclasses import replace

from minislurm.common.hostlist import compress
from minislurm.ctld.job_mgr import Job
from minislurm.ctld.runner import JobBody, SimStep
from minislurm.ctld.state import CtldState
from minislurm.ctld.step_mgr import plan_step
from minislurm.errors import SlurmError
from minislurm.job import Allocation, StepRecord
from minislurm.options.srun import parse_srun
from minislurm.states import JobState


def step_record(job_id: int, alloc: Allocation, step: SimStep, step_id: int,
                start: int) -> StepRecord | None:
    """The RUNNING record of ``step`` (None when srun could not create it)."""
    try:
        inv = parse_srun(list(step.argv), env={}, cwd="/", now=start)
        plan = plan_step(job_id, alloc, inv.options, step_id)
    except SlurmError:
        return None  # srun: error: Unable to create step ...: no step in sacct
    nodes = plan.layout.nodes
    by_name = {n.node: n for n in alloc.nodes}
    tres = {"cpu": sum(plan.cpus_on_node), "mem": sum(by_name[n].mem_mb for n in nodes),
            "node": len(nodes)}
    gpus = sum(len(g) for g in plan.gpus)
    if gpus:
        tres["gres/gpu"] = gpus
    return StepRecord(
        step_id=step_id, name=inv.command[0].rsplit("/", 1)[-1] if inv.command else "srun",
        state=JobState.RUNNING, nodelist=compress(nodes), num_nodes=len(nodes),
        ntasks=sum(len(t) for t in plan.layout.task_ids), num_cpus=sum(plan.cpus_on_node),
        start_time=start, end_time=None, tres_alloc=tres,
    )  # fmt: skip


def arm_steps(ctl: CtldState, job: Job, attempt: int) -> None:
    """Schedule the script's steps of this attempt (a no-op for a script without srun)."""
    steps = job.body.steps if isinstance(job.body, JobBody) else ()
    if not steps or job.allocation is None or job.start_time is None:
        return
    start = job.start_time
    for step_id, step in enumerate(steps):
        def begin(_ev: object, step: SimStep = step, step_id: int = step_id) -> None:
            alloc = job.allocation  # a --no-kill job may have lost nodes since its start
            if job.attempt != attempt or job.state is not JobState.RUNNING or alloc is None:
                return
            record = step_record(job.job_id, alloc, step, step_id, ctl.now)
            if record is None:
                return
            job.steps.append(record)
            if step.duration is not None:  # else it ends with the job (end_steps)
                ctl.env.timeout(max(0, step.duration)).callbacks.append(
                    lambda _e: _end(job, attempt, step_id, ctl.now, JobState.COMPLETED, 0))

        ctl.env.timeout(max(0, start + step.offset - ctl.now)).callbacks.append(begin)


def _end(job: Job, attempt: int, step_id: int, now: int, state: JobState, sig: int) -> None:
    if job.attempt != attempt:
        return
    for i, rec in enumerate(job.steps):
        if rec.step_id == step_id and rec.state is JobState.RUNNING:
            job.steps[i] = replace(rec, state=state, end_time=now, signal=sig)


def end_steps(job: Job, now: int, sig: int) -> None:
    """The job's attempt ends: steps still running end CANCELLED with ``sig``; with no
    signal the script itself ended, so a step ending at this same instant COMPLETED."""
    state = JobState.CANCELLED if sig else JobState.COMPLETED
    for i, rec in enumerate(job.steps):
        if rec.step_id != "batch" and rec.state is JobState.RUNNING:
            job.steps[i] = replace(rec, state=state, end_time=now, signal=sig)


__all__ = ["SimStep", "arm_steps", "end_steps", "step_record"]
