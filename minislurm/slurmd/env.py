"""The environment of the batch step and of every srun task, as Slurm 22.05 builds it.

Slurm assembles a task's environment in layers, and so does this module:

1. the user's environment as exported by ``--export`` (`exported_environment`);
2. what the *client* adds (sbatch or srun: ``SLURM_SUBMIT_DIR``,
   ``SLURM_SUBMIT_HOST``, ``SLURM_PRIO_PROCESS``, ``SLURM_WORKING_CLUSTER``,
   one variable per resource option that was given, src/sbatch/sbatch.c and
   src/srun/libsrun/opt.c);
3. the job's allocation (``env_array_for_batch_job`` in src/common/env.c for the
   batch step, ``env_array_for_job`` for an srun that creates its own job) and,
   for srun steps, the step (``env_array_for_step``);
4. what slurmstepd adds per node and task (``setup_env``: ``SLURM_PROCID``,
   ``SLURM_LOCALID``, ``SLURM_NODEID``, ``SLURM_GTIDS``, ``SLURM_TASK_PID``,
   ``SLURM_CPUS_ON_NODE``, ``SLURM_CONF``, ``SLURMD_NODENAME``, topology, the
   gres/gpu variables from `minislurm.slurmd.gpu`).

The expected values are those of the captures in ``slurm-reference/``: a1 (srun
creating its own job), a2 and a3 (batch step vs. srun steps inside it, whose
differences ``a2/batch_vs_step.txt`` lists).  ``SLURM_TASK_PID`` is the real pid
and is filled in by the launcher (pass ``task_pid`` to get it here).
"""

from __future__ import annotations

from collections.abc import Mapping

from minislurm.common.hostlist import compress
from minislurm.common.layout import (
    default_batch_ntasks,
    default_step_distribution,
    distribute,
    distribution_base,
    tasks_per_node_string,
)
from minislurm.job import Allocation
from minislurm.slurmd.context import JobContext, StepContext
from minislurm.slurmd.gpu import bind_task_gpus, gpu_environment, task_gpu_environment

__all__ = [
    "allocation_environment",
    "batch_environment",
    "exported_environment",
    "step_environments",
    "step_task_environment",
]


#: Prefixes every ``--export`` passes (``env_array_merge_slurm``; MINISLURM_: see below).
_ALWAYS_EXPORTED = ("SLURM_", "MINISLURM_")


def exported_environment(submit_env: Mapping[str, str], export: str | None) -> dict[str, str]:
    """The part of the submitting environment a job gets (``--export``).

    ``None``/``ALL``: everything; ``NONE``/``NIL``: only ``SLURM_*`` variables;
    ``[ALL,]VAR[=value],...``: the named variables (with their given or current
    value) plus everything (``ALL``) or only ``SLURM_*`` variables.  (sbatch then
    adds the user's login environment underneath, `minislurm.slurmd.userenv`.)
    ``MINISLURM_*`` variables (how minislurm's commands find their cluster, which
    real Slurm reads from slurm.conf) always pass.
    """
    if export is None:
        return dict(submit_env)
    items = [item for item in export.split(",") if item]
    keep_all = any(item.upper() == "ALL" for item in items)
    if keep_all:
        env = dict(submit_env)
    else:
        env = {k: v for k, v in submit_env.items() if k.startswith(_ALWAYS_EXPORTED)}
    for item in items:
        if item.upper() in ("ALL", "NONE", "NIL"):
            continue
        name, sep, value = item.partition("=")
        if sep:
            env[name] = value
        elif name in submit_env:
            env[name] = submit_env[name]
    return env


def distribution_variables(distribution: str) -> dict[str, str]:
    """``SLURM_DISTRIBUTION`` (and ``SLURM_DIST_PLANESIZE``) for a ``-m`` value.

    ``set_distribution`` prints a plane distribution as bare ``plane`` and the
    size goes to ``SLURM_DIST_PLANESIZE`` (measured on 22.05.8: ``sbatch -m plane=2``
    and ``srun -m plane=3`` give ``SLURM_DISTRIBUTION=plane``,
    ``SLURM_DIST_PLANESIZE=2``/``3``); every other value is exported as written.

    >>> distribution_variables("plane=4")
    {'SLURM_DISTRIBUTION': 'plane', 'SLURM_DIST_PLANESIZE': '4'}
    >>> distribution_variables("block:cyclic")
    {'SLURM_DISTRIBUTION': 'block:cyclic'}
    """
    try:
        base, size = distribution_base(distribution)
    except Exception:  # an invalid value never reaches a job; keep it as written
        return {"SLURM_DISTRIBUTION": distribution}
    if base == "plane" and size is not None:
        return {"SLURM_DISTRIBUTION": "plane", "SLURM_DIST_PLANESIZE": str(size)}
    return {"SLURM_DISTRIBUTION": distribution}


def _option_variables(job: JobContext) -> dict[str, str]:
    """Variables sbatch/srun set for resource options that were given."""
    env: dict[str, str] = {}
    given: list[tuple[str, object]] = [
        ("SLURM_CPUS_PER_TASK", job.cpus_per_task),
        ("SLURM_NTASKS_PER_NODE", job.ntasks_per_node),
        ("SLURM_GPUS", job.gpus),
        ("SLURM_GPUS_PER_NODE", job.gpus_per_node),
        ("SLURM_GPUS_PER_TASK", job.gpus_per_task),
        ("SLURM_CPUS_PER_GPU", job.cpus_per_gpu),
        ("SLURM_MEM_PER_GPU", job.mem_per_gpu),
        ("SLURM_NTASKS_PER_GPU", job.ntasks_per_gpu),
        ("SLURM_GPU_BIND", job.gpu_bind),  # opt.c: setenv when --gpu-bind is given
        ("SLURM_EXPORT_ENV", job.export),
    ]
    for name, value in given:
        if value is not None:
            env[name] = str(value)
    if job.distribution is not None:
        env.update(distribution_variables(job.distribution))
    if job.open_mode is not None:  # sbatch --open-mode: 'a' (append) or 't' (truncate)
        env["SLURM_OPEN_MODE"] = "a" if job.open_mode.startswith("a") else "t"
    return env


def _client_variables(job: JobContext) -> dict[str, str]:
    """What sbatch / srun put into every job they submit (sbatch.c ``_set_*_env``)."""
    env = {
        "SLURM_SUBMIT_DIR": job.submit_dir,
        "SLURM_SUBMIT_HOST": job.submit_host,
        "SLURM_PRIO_PROCESS": str(job.prio_process),
        "SLURM_CLUSTER_NAME": job.cluster_name,
        "SLURM_JOB_NAME": job.name,
    }
    if job.working_cluster:
        env["SLURM_WORKING_CLUSTER"] = job.working_cluster
    env.update(_option_variables(job))
    return env


def _identity_variables(job: JobContext) -> dict[str, str]:
    """The job's identity as ``setup_env`` sets it on every node."""
    env = {
        "SLURM_JOB_ID": str(job.job_id),
        "SLURM_JOBID": str(job.job_id),
        "SLURM_JOB_PARTITION": job.partition,
        "SLURM_JOB_UID": str(job.uid),
        "SLURM_JOB_USER": job.user,
        "SLURM_JOB_GID": str(job.gid),
        "SLURM_CLUSTER_NAME": job.cluster_name,
    }
    if job.account is not None:  # only set by the controller with accounting storage
        env["SLURM_JOB_ACCOUNT"] = job.account
    if job.qos is not None:
        env["SLURM_JOB_QOS"] = job.qos
    if job.conf_path:
        env["SLURM_CONF"] = job.conf_path
    if job.reservation:
        env["SLURM_JOB_RESERVATION"] = job.reservation
    if job.restart_count > 0:  # setup_env: only when restart_cnt != 0
        env["SLURM_RESTART_COUNT"] = str(job.restart_count)
    return env


def _array_variables(job: JobContext) -> dict[str, str]:
    """``SLURM_ARRAY_*`` of an array task (capture f3)."""
    a = job.array
    if a is None:
        return {}
    return {
        "SLURM_ARRAY_JOB_ID": str(a.array_job_id),
        "SLURM_ARRAY_TASK_ID": str(a.task_id),
        "SLURM_ARRAY_TASK_COUNT": str(a.task_count),
        "SLURM_ARRAY_TASK_MIN": str(a.task_min),
        "SLURM_ARRAY_TASK_MAX": str(a.task_max),
        "SLURM_ARRAY_TASK_STEP": str(a.task_step),
    }


def _node_variables(node: str) -> dict[str, str]:
    """slurmd's per-node variables (``SLURMD_NODENAME``, topology/default)."""
    return {
        "SLURMD_NODENAME": node,
        "SLURM_TOPOLOGY_ADDR": node,
        "SLURM_TOPOLOGY_ADDR_PATTERN": "node",
    }


def _memory_variables(job: JobContext, *, given_only: bool) -> dict[str, str]:
    """``SLURM_MEM_PER_CPU`` / ``SLURM_MEM_PER_NODE``: the batch step shows the
    effective value (DefMemPerCPU included, capture a2), salloc only a value
    the user gave (tests/minislurm/slurmd/env/test_env_realslurm.py)."""
    if job.mem_per_cpu is not None and (job.mem_per_cpu_given or not given_only):
        return {"SLURM_MEM_PER_CPU": str(job.mem_per_cpu)}
    if job.mem_per_node is not None:
        return {"SLURM_MEM_PER_NODE": str(job.mem_per_node)}
    return {}


def _task_counts(job: JobContext, allocation: Allocation) -> dict[str, str]:
    """``SLURM_NTASKS``/``NPROCS`` (only when a task count was asked for) and
    ``SLURM_TASKS_PER_NODE`` of the job's notional block layout."""
    cpus = allocation.cpus_per_node
    ntasks, explicit = default_batch_ntasks(
        job.ntasks, job.ntasks_per_node, cpus, job.cpus_per_task
    )
    layout = distribute(ntasks, allocation.node_names, cpus, cpus_per_task=job.cpus_per_task)
    env = {"SLURM_TASKS_PER_NODE": layout.tasks_per_node_string()}
    if explicit:
        env["SLURM_NTASKS"] = env["SLURM_NPROCS"] = str(ntasks)
    return env


def _allocation_variables(job: JobContext, allocation: Allocation) -> dict[str, str]:
    """The job-wide allocation variables shared by the batch step and srun's own job."""
    nodelist = compress(allocation.node_names)
    nnodes = str(len(allocation.nodes))
    return {
        "SLURM_JOB_NODELIST": nodelist,
        "SLURM_NODELIST": nodelist,
        "SLURM_JOB_NUM_NODES": nnodes,
        "SLURM_NNODES": nnodes,
        "SLURM_JOB_CPUS_PER_NODE": tasks_per_node_string(allocation.cpus_per_node),
    }


def batch_environment(
    job: JobContext,
    allocation: Allocation,
    *,
    base_env: Mapping[str, str],
    task_pid: int | None = None,
) -> dict[str, str]:
    """The environment of the batch script, run on the job's first node.

    ``base_env`` is the exported submit environment (`exported_environment`).
    Capture a2 (``-N2 --ntasks-per-node=2 --gres=gpu:2``) and a3 show every
    variable: ``ENVIRONMENT=BATCH``, ``HOSTNAME`` = node name,
    ``SLURM_NODE_ALIASES=(null)``, ``SLURM_PROCID/LOCALID/NODEID=0``,
    ``SLURM_GTIDS=0``, ``SLURM_TASKS_PER_NODE=2(x2)``, ``SLURM_MEM_PER_CPU``,
    ``SLURM_JOB_GPUS``; no ``SLURM_STEP_ID``.
    """
    env = dict(base_env)
    env.update(_client_variables(job))
    env.update(_array_variables(job))
    env.update(_allocation_variables(job, allocation))
    batch_node = allocation.nodes[0]
    env["ENVIRONMENT"] = "BATCH"
    env["HOSTNAME"] = batch_node.node
    env.update(_task_counts(job, allocation))
    env.update(_memory_variables(job, given_only=False))
    env.update(_identity_variables(job))
    env.update(
        {
            "SLURM_CPUS_ON_NODE": str(batch_node.cpus),
            "SLURM_NODEID": "0",
            "SLURM_PROCID": "0",
            "SLURM_LOCALID": "0",
            "SLURM_GTIDS": "0",
            "SLURM_NODE_ALIASES": "(null)",
        }
    )
    env.update(_node_variables(batch_node.node))
    env.update(gpu_environment(batch_node.gpu_indices, scope="job",
                               local=job.local_device_index))
    env.setdefault("TMPDIR", "/tmp")  # slurmstepd _make_tmpdir: "task may want it set"
    if task_pid is not None:
        env["SLURM_TASK_PID"] = str(task_pid)
    return env


#: sbatch exports these options, an srun that creates its own job does not
#: (measured on 22.05.8: ``srun -n2 --gpus=2``, ``srun -N2 --gpus-per-node=1``,
#: ``srun -n4 --gpus-per-task=1``, ``srun --gpus=1 --cpus-per-gpu=3``,
#: ``srun --gpus=2 --mem-per-gpu=800``, ``srun --export=ALL,FOO=bar`` tasks have
#: none of them; ``srun -n2 --gres=gpu:2 --gpu-bind=single:1`` tasks have no
#: ``SLURM_GPU_BIND``, while sbatch's batch step and salloc's shell do).
_SBATCH_ONLY_GPU_VARIABLES = (
    "SLURM_GPUS", "SLURM_GPUS_PER_NODE", "SLURM_GPUS_PER_TASK", "SLURM_CPUS_PER_GPU",
    "SLURM_MEM_PER_GPU", "SLURM_EXPORT_ENV", "SLURM_GPU_BIND",
)


def _srun_job_variables(job: JobContext, allocation: Allocation) -> dict[str, str]:
    """What an srun that created its own job sets (``env_array_for_job``, capture a1).

    No ``SLURM_MEM_PER_CPU``, even with ``--mem-per-cpu`` (real Slurm, see
    tests/minislurm/slurmd/env/test_env_realslurm.py), no ``SLURM_DISTRIBUTION`` unless ``-m``
    was given, and no ``SLURM_GPUS``/``SLURM_GPUS_PER_NODE``/``SLURM_GPUS_PER_TASK``.
    """
    env = _client_variables(job)
    for name in _SBATCH_ONLY_GPU_VARIABLES:
        env.pop(name, None)
    env.update(_array_variables(job))
    env.update(_allocation_variables(job, allocation))
    return env


def allocation_environment(
    job: JobContext, allocation: Allocation, *, base_env: Mapping[str, str]
) -> dict[str, str]:
    """The environment of the command salloc runs on the submit host.

    ``env_array_for_job`` plus salloc's own: the job's ids, nodes, CPUs and
    task counts, ``SLURM_SUBMIT_DIR/HOST``, ``SLURM_NODE_ALIASES=(null)``, the
    option variables; *no* per-task, per-node or GPU variables (the shell is
    not a task), no ``SLURM_JOB_UID``, no ``SLURM_PRIO_PROCESS``; the default
    job name is ``interactive``.  srun steps inside get it as their base
    environment.  Checked against real ``salloc`` in
    tests/minislurm/slurmd/env/test_env_realslurm.py.
    """
    env = dict(base_env)
    env.update(_option_variables(job))
    env.update(
        {
            "SLURM_SUBMIT_DIR": job.submit_dir,
            "SLURM_SUBMIT_HOST": job.submit_host,
            "SLURM_CLUSTER_NAME": job.cluster_name,
            "SLURM_JOB_ID": str(job.job_id),
            "SLURM_JOBID": str(job.job_id),
            "SLURM_JOB_NAME": job.name,
            "SLURM_JOB_PARTITION": job.partition,
            "SLURM_NODE_ALIASES": "(null)",
        }
    )
    env.update(_allocation_variables(job, allocation))
    env.update(_task_counts(job, allocation))
    env.update(_memory_variables(job, given_only=True))
    if job.account is not None:
        env["SLURM_JOB_ACCOUNT"] = job.account
    if job.qos is not None:
        env["SLURM_JOB_QOS"] = job.qos
    return env


def _step_variables(job: JobContext, allocation: Allocation, step: StepContext) -> dict[str, str]:
    """srun's step variables (``env_array_for_step`` + srun's own), same for all tasks."""
    layout = step.layout
    step_nodelist = compress(layout.nodes)
    tpn = layout.tasks_per_node_string()
    port = str(step.launcher_port)
    env: dict[str, str] = {}
    if step.distribution is not None:
        env.update(distribution_variables(step.distribution))
    elif step.inside_allocation or job.mem_per_cpu_given or job.mem_per_node is not None:
        # launch_common_create_job_step: without -m srun leaves the distribution
        # unknown unless it has memory options; inside an allocation it always
        # has them (NO_VAL counts), an srun creating its own job only with
        # --mem/--mem-per-cpu (measured on 22.05.8: ``srun --mem=1500`` -> cyclic,
        # ``srun -n2 --mem-per-cpu=700`` -> block, plain ``srun -n2`` -> none)
        env["SLURM_DISTRIBUTION"] = default_step_distribution(layout.ntasks, len(layout.nodes))
    if step.inside_allocation:
        env["SLURM_JOB_CPUS_PER_NODE_PACK_GROUP_0"] = tasks_per_node_string(
            allocation.cpus_per_node
        )
    if step.cpus_per_task is not None:
        env["SLURM_CPUS_PER_TASK"] = str(step.cpus_per_task)
    if step.ntasks_per_node is not None:
        env["SLURM_NTASKS_PER_NODE"] = str(step.ntasks_per_node)
    env.update(
        {
            "SLURM_STEP_ID": str(step.step_id),
            "SLURM_STEPID": str(step.step_id),
            "SLURM_STEP_NODELIST": step_nodelist,
            "SLURM_STEP_NUM_NODES": str(len(layout.nodes)),
            "SLURM_STEP_NUM_TASKS": str(layout.ntasks),
            "SLURM_STEP_TASKS_PER_NODE": tpn,
            "SLURM_TASKS_PER_NODE": tpn,
            "SLURM_NNODES": str(len(layout.nodes)),
            "SLURM_NTASKS": str(layout.ntasks),
            "SLURM_NPROCS": str(layout.ntasks),
            "SLURM_STEP_LAUNCHER_PORT": port,
            "SLURM_SRUN_COMM_PORT": port,
            "SLURM_SRUN_COMM_HOST": step.launch_node_ipaddr,
            "SLURM_LAUNCH_NODE_IPADDR": step.launch_node_ipaddr,
            "SLURM_UMASK": f"{step.umask:04o}",
            "SRUN_DEBUG": str(step.srun_debug),
        }
    )
    if step.label:
        env["SLURM_LABELIO"] = "1"
    return env


def _tres_bind(job: JobContext, step: StepContext) -> str | None:
    """``SLURMD_TRES_BIND``: srun's ``tres_bind`` of the step.

    ``--gpu-bind=X`` gives ``gpu:X``; without it ``--gpus-per-task=N`` (srun's own,
    or the job's that srun inherits) implies ``gpu:per_task:N`` (srun's
    launch.c).  Measured on 22.05.8: ``srun -n2 --gpus-per-task=2`` ->
    ``gpu:per_task:2``, ``--gpu-bind=closest`` -> ``gpu:closest``, ``--gpu-bind=single:1``
    -> ``gpu:single:1``; the batch step has none.
    """
    gpu_bind = step.gpu_bind
    if gpu_bind:
        return f"gpu:{gpu_bind}"
    per_task = step.gpus_per_task or job.gpus_per_task
    if per_task:
        return f"gpu:per_task:{per_task}"
    return None


def _step_node_resources(
    allocation: Allocation, step: StepContext, node_index: int
) -> tuple[int, tuple[int, ...]]:
    """CPUs and GPU indices the step holds on its ``node_index``-th node."""
    name = step.layout.nodes[node_index]
    held = next((n for n in allocation.nodes if n.node == name), None)
    cpus = step.cpus_on_node[node_index] if step.cpus_on_node is not None else None
    gpus = step.gpus[node_index] if step.gpus is not None else None
    if held is None and (cpus is None or gpus is None):
        raise ValueError(f"step node {name} is not part of the allocation")
    if cpus is None:
        assert held is not None
        cpus = held.cpus
    if gpus is None:
        assert held is not None
        gpus = held.gpu_indices
    return cpus, gpus


def _bound_gpus(
    job: JobContext, step: StepContext, gpus: tuple[int, ...], local_id: int
) -> tuple[int, ...] | None:
    """The GPUs of ``gpus`` (the step's on the task's node) the task is bound to.

    ``--gpus-per-task=N`` implies ``--gpu-bind=per_task:N`` (srun's own option, or
    the job's, which srun inherits as ``SLURM_GPUS_PER_TASK`` inside sbatch); measured
    on 22.05.8: task *k* of ``srun -n4 --gpus-per-task=1`` sees only GPU *k*.  The
    step's own ``--gpus-per-task``/``--gpu-bind`` are read from the StepContext when
    it carries them (``gpus_per_task``, ``gpu_bind``).
    """
    per_task = step.gpus_per_task or job.gpus_per_task
    gpu_bind = step.gpu_bind
    return bind_task_gpus(gpus, local_id, gpus_per_task=per_task, gpu_bind=gpu_bind)


def _srun_export(job: JobContext, step: StepContext, base_env: Mapping[str, str]) -> str | None:
    """srun's ``--export``: its own option (``SLURM_EXPORT_ENV`` inside an allocation
    made with ``--export``, which srun reads as the option), the job's for an srun
    that created its own job."""
    own = step.export
    if own is not None:
        return str(own)
    if not step.inside_allocation:
        return job.export
    return base_env.get("SLURM_EXPORT_ENV")


def step_task_environment(
    job: JobContext,
    allocation: Allocation,
    step: StepContext,
    task_id: int,
    *,
    base_env: Mapping[str, str],
    task_pid: int | None = None,
) -> dict[str, str]:
    """The environment of task ``task_id`` of an srun step.

    ``base_env`` is srun's own environment: the batch script's environment for
    an srun inside sbatch (it inherits ``SLURM_JOB_GPUS``, ``SLURM_MEM_PER_CPU``,
    ``SLURM_NODE_ALIASES``, ``HOSTNAME``, ...), the user's for an srun that
    creates its own job.  Captures a1/a2/a3 show the result.  With
    ``--gpus-per-task``/``--gpu-bind`` the task sees only its own GPUs
    (`minislurm.slurmd.gpu.bind_task_gpus`).  srun's ``--export`` filters
    what srun passes (its environment and its own variables; measured on 22.05.8:
    ``srun --export=NONE env`` shows no ``HOME``, ``PATH``, ``SRUN_DEBUG``,
    ``--export=FOO=bar`` adds ``FOO=bar``); slurmstepd's per-node and per-task
    variables come after it.
    """
    layout = step.layout
    node_index = layout.node_index(task_id)
    node = layout.nodes[node_index]
    cpus, gpus = _step_node_resources(allocation, step, node_index)
    env = dict(base_env)
    if not step.inside_allocation:
        env.update(_srun_job_variables(job, allocation))
    else:  # srun's own client variables, unless the batch step already set them
        env.setdefault("SLURM_JOB_NODELIST", compress(allocation.node_names))
        for name, value in _client_variables(job).items():
            env.setdefault(name, value)
    env.update(_step_variables(job, allocation, step))
    env.update(_identity_variables(job))
    export = _srun_export(job, step, base_env)
    if export is not None and export.upper() != "ALL":
        env = exported_environment(env, export)
    local_id = layout.local_id(task_id)
    env.update(
        {
            "SLURM_CPUS_ON_NODE": str(cpus),
            "SLURM_NODEID": str(node_index),
            "SLURM_PROCID": str(task_id),
            "SLURM_LOCALID": str(local_id),
            "SLURM_GTIDS": layout.gtids(node_index),
        }
    )
    env.update(_node_variables(node))
    # slurmstepd's tres_bind (after srun's --export filter) and the GPU binding it
    # implies apply only on a node that runs more than one task of the step:
    # measured on 22.05.8, ``srun -N2 -n3 --gpus-per-task=1`` shows
    # SLURMD_TRES_BIND=gpu:per_task:1 and one GPU per task on n1 (2 tasks), neither
    # on n2 (1 task); ``--gpu-bind=none`` hides the GPUs of n1's tasks only.
    shared_node = len(layout.task_ids[node_index]) > 1
    tres_bind = _tres_bind(job, step) if shared_node else None
    if tres_bind is not None:
        env["SLURMD_TRES_BIND"] = tres_bind
    bound = _bound_gpus(job, step, gpus, local_id) if shared_node else tuple(sorted(gpus))
    gpu_env, unset = task_gpu_environment(gpus, bound, local=job.local_device_index)
    for name in unset:
        env.pop(name, None)
    env.update(gpu_env)
    if local_id == 0:
        # slurmstepd's exec_task calls _make_tmpdir only for its first task, so
        # only local task 0 gets TMPDIR=/tmp when it is unset (capture a1:
        # fulltask0/2 have it, fulltask1/3 do not).
        env.setdefault("TMPDIR", "/tmp")
    if task_pid is not None:
        env["SLURM_TASK_PID"] = str(task_pid)
    return env


def step_environments(
    job: JobContext,
    allocation: Allocation,
    step: StepContext,
    *,
    base_env: Mapping[str, str],
) -> list[dict[str, str]]:
    """The environments of all tasks of a step, indexed by task id (``SLURM_PROCID``)."""
    return [
        step_task_environment(job, allocation, step, t, base_env=base_env)
        for t in range(step.layout.ntasks)
    ]
