"""slurmctld's answers to srun: allocations, steps and their end (proc_req.c's step RPCs).

``allocate`` is ``REQUEST_RESOURCE_ALLOCATION`` (srun/salloc without a job),
``create`` is ``REQUEST_JOB_STEP_CREATE``: slurmctld plans the step
(`minislurm.ctld.step_mgr.plan_step`) and, standing in for the slurmd of each
node, builds every task's environment (`minislurm.slurmd.stepd.step_tasks`);
srun starts the tasks itself, tells which process groups they are in
(``pids``) so that a cancel, a time limit or a node failure reaches them,
and reports how they ended (``complete``), which sacct shows as the step.
"""

from __future__ import annotations

from typing import Any

from minislurm.config import SlurmConfig
from minislurm.ctld.controller import Controller
from minislurm.ctld.step_mgr import plan_step
from minislurm.errors import SlurmError
from minislurm.hostlist import compress
from minislurm.job import StepRecord
from minislurm.options.srun import parse_salloc, parse_srun
from minislurm.slurmd.context import StepContext
from minislurm.slurmd.env import allocation_environment
from minislurm.slurmd.process_runner import ProcessBody, ProcessRunner
from minislurm.slurmd.stepd import step_identity, step_tasks
from minislurm.states import JobState


class StepService:
    """The step bookkeeping of one controller (called under the clock's lock)."""

    def __init__(self, controller: Controller, runner: ProcessRunner, config: SlurmConfig) -> None:
        self.controller = controller
        self.runner = runner
        self.config = config
        self._next_step: dict[int, int] = {}
        self._open: dict[tuple[int, int], dict[str, Any]] = {}

    def allocate(self, req: dict[str, Any]) -> dict[str, Any]:
        """srun/salloc without a job: submit one that holds its nodes until released."""
        env = dict(req.get("env") or {})
        cwd = str(req.get("cwd") or "/")
        prog = str(req.get("prog", "srun"))
        parse = parse_salloc if prog == "salloc" else parse_srun
        inv = parse(list(req["argv"]), env=env, cwd=cwd)
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
                             "Invalid job id specified\n"
                             "srun: Check SLURM_JOB_ID environment variable. "
                             f"Expired or invalid job {job_id}", 1) from None
        allocation = self.runner.allocations.get(job_id)
        body = self.runner.bodies.get(job_id)
        if job.state is not JobState.RUNNING or allocation is None or body is None:
            raise SlurmError(f"srun: error: Unable to create step for job {job_id}: "
                             "Job/step already completing or completed", 1)
        env = dict(req.get("env") or {})
        cwd = str(req.get("cwd") or job.work_dir or "/")
        inv = parse_srun(list(req["argv"]), env=env, cwd=cwd)
        step_id = self._next_step.get(job_id, 0)
        plan = plan_step(job_id, allocation, inv.options, step_id, job=body.options)
        self._next_step[job_id] = step_id + 1
        opts = inv.options
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
        self._open[(job_id, step_id)] = {"name": inv.command[0].rsplit("/", 1)[-1],
                                        "nodes": plan.layout.nodes, "ntasks": len(tasks),
                                        "cpus": sum(plan.cpus_on_node)}
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

    def pids(self, req: dict[str, Any]) -> dict[str, Any]:
        """Remember a step's process groups, so that killing the job reaches them."""
        self.runner.register_step_pids(int(req["job_id"]), {int(p) for p in req["pids"]})
        return {}

    def complete(self, req: dict[str, Any]) -> dict[str, Any]:
        """A step ended: forget its processes, keep its accounting record."""
        job_id, step_id = int(req["job_id"]), int(req["step_id"])
        results = list(req.get("results") or [])
        pids = {int(p) for p in req.get("pids", [])}
        self.runner.unregister_step_pids(job_id, pids)
        info = self._open.pop((job_id, step_id), None)
        if info is None:
            return {}
        codes = [int(r["exit_code"]) for r in results]
        sigs = [int(r["signal"]) for r in results]
        failed = any(codes) or any(sigs)
        record = StepRecord(
            step_id=step_id, name=info["name"],
            state=JobState.FAILED if failed else JobState.COMPLETED,
            nodelist=compress(info["nodes"]), num_nodes=len(info["nodes"]),
            ntasks=info["ntasks"], num_cpus=info["cpus"],
            start_time=int(req.get("start", self.controller.now)),
            end_time=int(req.get("end", self.controller.now)),
            exit_code=max(codes, default=0), signal=max(sigs, default=0),
        )
        add_step = getattr(self.controller, "add_step", None)
        if add_step is not None:
            add_step(job_id, record)
        else:  # until the controller has a public step API
            self.controller._jobs[job_id].steps.append(record)
        return {}

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
