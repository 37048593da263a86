"""slurmctld's answers to srun: allocations, steps and their end (proc_req.c's step RPCs).

``allocate`` is ``REQUEST_RESOURCE_ALLOCATION`` (srun/salloc without a job),
``create`` is ``REQUEST_JOB_STEP_CREATE``: slurmctld plans the step
(`minislurm.ctld.step_mgr.plan_step`) and, standing in for the slurmd of each
node, builds every task's environment (`minislurm.slurmd.stepd.step_tasks`);
srun starts the tasks itself, tells which process groups they are in
(``pids``) so that a cancel, a time limit or a node failure reaches them,
and reports how they ended (``complete``), which sacct shows as the step.
What each running step holds of its job is kept here: a step that does not fit
beside them is answered ``busy`` and srun waits (``ended``) for a step to end.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from minislurm.common.hostlist import compress
from minislurm.conf import SlurmConfig
from minislurm.ctld.controller import Controller
from minislurm.ctld.lifecycle import next_limit_check
from minislurm.ctld.state_codec import decode, encode
from minislurm.ctld.step_mgr import NODES_BUSY, StepBusy, StepIdUsed, StepUse, plan_step
from minislurm.errors import Errno, SlurmError
from minislurm.job import StepRecord
from minislurm.options.srun import parse_salloc, parse_srun
from minislurm.slurmd.context import StepContext
from minislurm.slurmd.env import allocation_environment
from minislurm.slurmd.process_runner import ProcessBody, ProcessRunner
from minislurm.slurmd.stepd import step_identity, step_tasks
from minislurm.states import JobState


def _beyond_shrunk(wanted: int | None, nodes: int, env: dict[str, str]) -> bool:
    """A ``--no-kill`` job that lost nodes still has the old count in its environment
    (``SLURM_JOB_NUM_NODES``: nothing updates it), so srun's own ``Only allocated N
    nodes`` check lets ``srun -N<old count>`` through and slurmctld answers "busy":
    srun waits ``step creation temporarily disabled, retrying (Requested nodes are
    busy)`` until the job ends (measured on 22.05.8)."""
    try:
        known = int(env.get("SLURM_JOB_NUM_NODES") or nodes)
    except ValueError:
        known = nodes
    return wanted is not None and nodes < wanted <= known


class StepService:
    """The step bookkeeping of one controller (called under the clock's lock)."""

    def __init__(self, controller: Controller, runner: ProcessRunner, config: SlurmConfig) -> None:
        self.controller = controller
        self.runner = runner
        self.config = config
        self._next_step: dict[int, int] = {}
        self._open: dict[tuple[int, int], dict[str, Any]] = {}
        # (job id, attempt) -> step id -> node -> what the step holds there
        self._holds: dict[tuple[int, int], dict[int, dict[str, StepUse]]] = {}
        self._ended: dict[int, int] = {}  # steps ended per job (srun's busy wait)
        self._memory = "memory" in config.select_type_parameters.lower()

    def allocate(self, req: dict[str, Any]) -> dict[str, Any]:
        """srun/salloc without a job: submit one that holds its nodes until released."""
        env = dict(req.get("env") or {})
        cwd = str(req.get("cwd") or "/")
        prog = str(req.get("prog", "srun"))
        parse = parse_salloc if prog == "salloc" else parse_srun
        inv = parse(list(req["argv"]), env=env, cwd=cwd, now=self.controller.now)
        body = ProcessBody(run_time=None, options=inv.options, submit_env=env, submit_dir=cwd,
                           interactive=True)
        job_id = self.controller.submit(
            inv.options, "", name=inv.job_name, user=str(req.get("user", "root")),
            uid=int(req.get("uid", 0)), group=str(req.get("group", "root")),
            gid=int(req.get("gid", 0)), cwd=cwd, command=" ".join(inv.command), body=body,
            prog=prog, batch=False,
        )
        env_ = self.controller.env
        while env_.peek() <= env_.now:  # let the main scheduler run at this instant
            env_.step()
        record = self.controller.job(job_id)
        return {"job_id": job_id, "state": record.state.value, "reason": record.reason.value}

    def create(self, req: dict[str, Any]) -> dict[str, Any]:
        """Plan a step of a running job and build each task's launch description."""
        job_id = int(req["job_id"])
        try:
            job = self.controller.job(job_id)
        except (KeyError, SlurmError):
            # srun's existing_allocation()
            raise SlurmError(f"srun: error: Unable to confirm allocation for job {job_id}: "
                             f"{Errno.ESLURM_INVALID_JOB_ID}\n"
                             "srun: Check SLURM_JOB_ID environment variable. "
                             f"Expired or invalid job {job_id}", 1) from None
        allocation = self.runner.allocations.get(job_id)
        body = self.runner.bodies.get(job_id)
        if job.state is not JobState.RUNNING or allocation is None or body is None:
            raise SlurmError(f"srun: error: Unable to create step for job {job_id}: "
                             f"{Errno.ESLURM_ALREADY_DONE}", 1)
        env = dict(req.get("env") or {})
        cwd = str(req.get("cwd") or job.work_dir or "/")
        inv = parse_srun(list(req["argv"]), env=env, cwd=cwd, now=self.controller.now)
        step_id = self._next_step.get(job_id, 0)
        opts = inv.options
        if not self._memory:  # SelectTypeParameters without memory: steps need none
            opts = dataclasses.replace(opts, mem_mb=None, mem_per_cpu_mb=None)
        attempt = (job_id, job.restart_count)
        for old in [a for a in self._holds if a[0] == job_id and a != attempt]:
            del self._holds[old]  # an earlier attempt's steps
        holds = self._holds.setdefault(attempt, {})
        if _beyond_shrunk(opts.nodes_min, len(allocation.nodes), env):
            return {"busy": NODES_BUSY, "ended": self._ended.get(job_id, 0)}
        in_use: dict[str, StepUse] = {}
        for per_node in holds.values():
            for node, use in per_node.items():
                in_use[node] = in_use.get(node, StepUse()) + use
        try:
            plan = plan_step(job_id, allocation, opts, step_id, job=body.options, in_use=in_use)
        except StepBusy:
            return {"busy": NODES_BUSY, "ended": self._ended.get(job_id, 0)}
        except StepIdUsed:
            self._next_step[job_id] = step_id + 1
            raise
        self._next_step[job_id] = step_id + 1
        holds[step_id] = dict(zip(plan.layout.nodes, plan.holds, strict=True))
        step = StepContext(
            step_id=step_id, layout=plan.layout, launcher_port=int(req["launcher_port"]),
            inside_allocation=bool(req.get("inside", True)), cpus_on_node=plan.cpus_on_node,
            gpus=plan.gpus, cpus_per_task=opts.cpus_per_task,
            ntasks_per_node=opts.ntasks_per_node, distribution=opts.distribution,
            label=bool(opts.label), gpus_per_task=opts.gpus_per_task,
            gpu_bind=dict(opts.other).get("gpu-bind"), export=opts.export,
        )
        job_ctx = self.runner.job_context(job, body)
        tasks = step_tasks(job_ctx, allocation, step, inv.command, base_env=env,
                           cwd=opts.chdir or cwd)
        ident = step_identity(job_ctx, step_id)
        # srun -J names the step; SLURM_JOB_NAME (the job's) does not inside a job
        name = opts.job_name if opts.job_name not in (None, env.get("SLURM_JOB_NAME")) \
            else inv.command[0].rsplit("/", 1)[-1]
        # the step's start is slurmctld's, when it creates the step (step_create sets
        # step_ptr->start_time): sacct's Start and the step's time limit count from it
        start = self.controller.now
        info: dict[str, Any] = {"name": name, "nodes": plan.layout.nodes,
                                "ntasks": len(tasks), "cpus": sum(plan.cpus_on_node),
                                "start": start}
        if bool(req.get("inside", True)) and opts.time_limit_set and opts.time_limit:
            info["limit_end"] = start + opts.time_limit * 60
            info["restart"] = job.restart_count
        self._open[(job_id, step_id)] = info
        self.runner.step_created(job_id, step_id)
        self.controller.step_started(job_id, self._record(job_id, step_id, JobState.RUNNING,
                                                          start, None))
        self._arm_step_limit(job_id, step_id)
        return {
            "step_id": step_id,
            "tasks": [{"task_id": t.task_id, "node": t.node, "node_index": t.node_index,
                       "argv": list(t.argv), "env": dict(t.env), "cwd": t.cwd} for t in tasks],
            "identity": {"job_id": ident.job_id, "step_id": ident.step_id,
                         "job_name": ident.job_name, "user": ident.user,
                         "array_job_id": ident.array_job_id,
                         "array_task_id": ident.array_task_id},
            "stdio": {"output": opts.output, "error": opts.error, "input": opts.input,
                      "open_mode": opts.open_mode or "truncate", "label": bool(opts.label)},
            "kill_wait": self.config.kill_wait,
        }

    def export_state(self) -> dict[str, Any]:
        """What a restarted slurmctld needs (`minislurm.ctld.state_save.KeepsState`):
        each job's next step id and the steps still open."""
        return {"next": {str(k): v for k, v in self._next_step.items()},
                "open": encode([[k[0], k[1], v] for k, v in self._open.items()])}

    def import_state(self, data: Mapping[str, Any]) -> None:
        self._next_step.update({int(k): int(v) for k, v in (data.get("next") or {}).items()})
        for job_id, step_id, info in decode(data.get("open") or []):
            self._open[(int(job_id), int(step_id))] = info

    def recovered(self) -> None:
        """A restarted slurmctld: the time limits of the steps still open count on."""
        for job_id, step_id in list(self._open):
            self._arm_step_limit(job_id, step_id)

    def _arm_step_limit(self, job_id: int, step_id: int) -> None:
        """``check_job_step_time_limit``: the periodic time-limit check (every 30 s, as
        for jobs) that finds the step over its ``srun -t`` minutes times it out
        (measured on 22.05.8: ``srun -t 1`` ended 89 s in, sacct ``TIMEOUT 0:15``)."""
        ctl = self.controller
        info = self._open.get((job_id, step_id), {})
        end, restart = info.get("limit_end"), info.get("restart")
        if end is None:
            return
        at = next_limit_check(ctl, int(end))  # this daemon's checks: its own phase

        def check(_ev: object) -> None:
            try:
                job = ctl.job(job_id)
            except (KeyError, SlurmError):
                return
            if (job.state is JobState.RUNNING and job.restart_count == restart
                    and (job_id, step_id) in self._open):
                self.runner.step_timed_out(job_id, step_id)

        ctl.env.timeout(max(ctl.at(at) - ctl.env.now, 0)).callbacks.append(check)

    def pids(self, req: dict[str, Any]) -> dict[str, Any]:
        """Remember a step's process groups, so that killing the job reaches them."""
        step_id = req.get("step_id")
        gather = self.runner.jobacct
        if gather is not None and step_id is not None:
            gather.watch(int(req["job_id"]), int(step_id))
            gather.start()
        self.runner.register_step_pids(int(req["job_id"]), {int(p) for p in req["pids"]},
                                       None if step_id is None else int(step_id),
                                       int(req.get("port") or 0))
        return {}

    def complete(self, req: dict[str, Any]) -> dict[str, Any]:
        """A step ended: forget its processes, keep its accounting record."""
        job_id, step_id = int(req["job_id"]), int(req["step_id"])
        results = list(req.get("results") or [])
        pids = {int(p) for p in req.get("pids", [])}
        self.runner.unregister_step_pids(job_id, pids, step_id)
        for attempt in [a for a in self._holds if a[0] == job_id]:
            self._holds[attempt].pop(step_id, None)
        self._ended[job_id] = self._ended.get(job_id, 0) + 1
        info = self._open.pop((job_id, step_id), None)
        if info is None:
            return {}
        codes = [int(r["exit_code"]) for r in results]
        sigs = [int(r["signal"]) for r in results]
        failed = any(codes) or any(sigs)
        state = JobState.FAILED if failed else JobState.COMPLETED
        if any(sigs) and req.get("timed_out"):
            state = JobState.TIMEOUT  # its own time limit (measured: TIMEOUT 0:15)
        elif any(sigs) and (req.get("aborted")
                            or self.controller.job(job_id).state is not JobState.RUNNING):
            state = JobState.CANCELLED  # killed by its job's end (measured: CANCELLED 0:15)
        # Start: slurmctld's own (srun's clock read its launch a moment later: a step
        # timed out at its minute showed ElapsedRaw 59); a step opened before that was
        # kept takes srun's
        start = info.get("start", req.get("start", self.controller.now))
        record = self._record(job_id, step_id, state, int(start),
                              int(req.get("end", self.controller.now)),
                              exit_code=max(codes, default=0), signal=max(sigs, default=0),
                              info=info)
        gather = self.runner.jobacct
        if gather is not None:  # the step's last poll: sacct's MaxRSS, AveCPU, ...
            usage = gather.forget(job_id, step_id)
            if usage.ntasks:
                record = dataclasses.replace(record, usage=usage)
        self.controller.add_step(job_id, record)
        return {}

    def _record(self, job_id: int, step_id: int, state: JobState, start: int,
                end: int | None, *, exit_code: int = 0, signal: int = 0,
                info: dict[str, Any] | None = None) -> StepRecord:
        """The accounting record of an srun step (``RUNNING`` while ``end`` is None)."""
        info = info or self._open[(job_id, step_id)]
        return StepRecord(
            step_id=step_id, name=info["name"], state=state,
            nodelist=compress(info["nodes"]), num_nodes=len(info["nodes"]),
            ntasks=info["ntasks"], num_cpus=info["cpus"], start_time=start, end_time=end,
            exit_code=exit_code, signal=signal,
        )

    def waiting_over(self, job_id: int, ended: int) -> bool:
        """Whether a busy srun should try again: a step of the job ended since it was
        answered (``ended`` steps then), or the job no longer runs."""
        if self._ended.get(job_id, 0) != ended:
            return True
        try:
            return self.controller.job(job_id).state is not JobState.RUNNING
        except (KeyError, SlurmError):
            return True

    def allocation_env(self, req: dict[str, Any]) -> dict[str, Any]:
        """The environment salloc gives its command (``env_array_for_job``)."""
        job_id = int(req["job_id"])
        job = self.controller.job(job_id)
        allocation = self.runner.allocations.get(job_id)
        body = self.runner.bodies.get(job_id)
        if allocation is None or body is None:
            raise SlurmError(f"salloc: error: Job allocation {job_id} has been revoked.", 1)
        env = allocation_environment(self.runner.job_context(job, body), allocation,
                                     base_env=dict(req.get("env") or {}))
        return {"env": env}

    def allocation_complete(self, req: dict[str, Any]) -> dict[str, Any]:
        """srun/salloc released the job it created."""
        self.runner.finish(int(req["job_id"]), int(req.get("exit_code", 0)),
                           int(req.get("signal", 0)))
        return {}
