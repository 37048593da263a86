"""What slurmd is told about a job and a step: the inputs of the environment.

Slurm passes these in its launch messages (``batch_job_launch_msg_t``,
``launch_tasks_request_msg_t``); minislurm keeps them as frozen dataclasses so
that the environment (``slurmd/env.py``) and the launcher (``slurmd/launch.py``)
are pure, testable functions of them.  The controller builds a `JobContext`
from its job record (`job_context` does it from the parsed options); the
allocation is `minislurm.job.Allocation` (node names in order, CPUs and GPU
indices per node), exactly what select/cons_tres produces.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from minislurm.common.layout import TaskLayout

if TYPE_CHECKING:  # only the attributes are read: no import-time coupling to the parser
    from minislurm.options.model import JobOptions

__all__ = [
    "PROTOCOL_VERSION",
    "SELECT_PLUGIN_ID",
    "ArrayContext",
    "JobContext",
    "StepContext",
    "array_step",
    "job_context",
    "working_cluster",
]

#: SLURM_PROTOCOL_VERSION of 22.05 (``(38 << 8) | 0``), the 4th field of
#: ``SLURM_WORKING_CLUSTER`` (capture: ``mini:localhost:16817:9728:109``).
PROTOCOL_VERSION = 9728
#: Plugin id of select/cons_tres (``SELECT_PLUGIN_CONS_TRES``), the 5th field.
SELECT_PLUGIN_ID = 109


def working_cluster(cluster_name: str, controller_host: str, controller_port: int) -> str:
    """``SLURM_WORKING_CLUSTER`` as sbatch/srun set it: ``name:host:port:proto:select``.

    >>> working_cluster("mini", "localhost", 16817)
    'mini:localhost:16817:9728:109'
    """
    return ":".join(
        (
            cluster_name,
            controller_host,
            str(controller_port),
            str(PROTOCOL_VERSION),
            str(SELECT_PLUGIN_ID),
        )
    )


def array_step(spec: str | None) -> int:
    """``SLURM_ARRAY_TASK_STEP``: the ``:step`` written in ``--array``, else 1.

    slurmctld does not derive it from the indices: real Slurm 22.05 exports 3
    for ``0-6:3`` but 1 for ``1,3,5`` and for ``0-7%2`` (capture f3;
    tests/minislurm/slurmd/env/test_env_realslurm.py checks the others against the real cluster).

    >>> [array_step(s) for s in ("0-7%2", "0-6:3", "1,3,5", "0-10:3%2", None)]
    [1, 3, 1, 3, 1]
    """
    if spec is None or ":" not in spec:
        return 1
    digits = ""
    for ch in spec.split(":", 1)[1]:
        if not ch.isdigit():
            break
        digits += ch
    return int(digits) if digits and int(digits) > 0 else 1


@dataclass(frozen=True, slots=True)
class ArrayContext:
    """One task of a job array (``SLURM_ARRAY_*``; capture f3: ``--array=0-7%2``
    gives ``TASK_COUNT=8``, ``TASK_MIN=0``, ``TASK_MAX=7``, ``TASK_STEP=1``)."""

    array_job_id: int
    task_id: int
    task_count: int
    task_min: int
    task_max: int
    task_step: int = 1

    @classmethod
    def from_indices(
        cls, array_job_id: int, task_id: int, indices: Sequence[int], text: str | None = None
    ) -> ArrayContext:
        """The context of task ``task_id`` of an array with ``indices``.

        ``text`` is the ``--array`` value as given, which decides ``task_step``
        (`array_step`); without it the step is 1.
        """
        return cls(
            array_job_id=array_job_id,
            task_id=task_id,
            task_count=len(set(indices)),
            task_min=min(indices),
            task_max=max(indices),
            task_step=array_step(text),
        )


@dataclass(frozen=True, slots=True)
class JobContext:
    """What the controller knows about a job, as far as its environment goes.

    Option fields hold what the user *gave* (``None`` = not given), because
    Slurm exports some variables only then (``SLURM_CPUS_PER_TASK`` only with
    ``-c``, ``SLURM_NTASKS_PER_NODE`` only with ``--ntasks-per-node``,
    ``SLURM_GPUS_PER_NODE`` only with ``--gpus-per-node``).  ``mem_per_cpu`` is
    the effective value (``--mem-per-cpu`` or ``DefMemPerCPU``) that the batch
    step exports as ``SLURM_MEM_PER_CPU``; ``mem_per_node`` is ``--mem``;
    ``mem_per_cpu_given`` tells whether ``--mem-per-cpu`` was given, because
    salloc exports ``SLURM_MEM_PER_CPU`` only then.
    ``account``/``qos`` ``None``: a cluster without accounting storage, where
    Slurm sets neither ``SLURM_JOB_ACCOUNT`` nor ``SLURM_JOB_QOS``.
    """

    job_id: int
    name: str
    partition: str
    cluster_name: str
    user: str = "root"
    uid: int = 0
    gid: int = 0
    account: str | None = "root"
    qos: str | None = "normal"
    submit_dir: str = "/"
    submit_host: str = "localhost"
    work_dir: str | None = None
    working_cluster: str = ""
    conf_path: str = ""
    array: ArrayContext | None = None
    restart_count: int = 0
    prio_process: int = 0
    ntasks: int | None = None
    ntasks_per_node: int | None = None
    cpus_per_task: int | None = None
    mem_per_cpu: int | None = None
    mem_per_node: int | None = None
    mem_per_cpu_given: bool = False
    gpus: str | None = None
    gpus_per_node: str | None = None
    gpus_per_task: str | None = None
    cpus_per_gpu: int | None = None
    mem_per_gpu: int | None = None
    ntasks_per_gpu: int | None = None
    #: ``--gpu-bind`` as given (sbatch exports it as ``SLURM_GPU_BIND``, which srun
    #: inside the job reads back as its own ``--gpu-bind``).
    gpu_bind: str | None = None
    distribution: str | None = None
    reservation: str | None = None
    licenses: str | None = None
    export: str | None = None
    open_mode: str | None = None
    #: ``ConstrainDevices=yes`` under task/cgroup (``gres_use_local_device_index``):
    #: the GPU visibility variables count the job's/step's GPUs from 0.
    local_device_index: bool = False

    @property
    def cwd(self) -> str:
        """Where the job runs: ``-D/--chdir`` or the submit directory."""
        return self.work_dir or self.submit_dir


def job_context(
    options: JobOptions,
    *,
    job_id: int,
    name: str,
    partition: str,
    cluster_name: str,
    mem_per_cpu: int | None = None,
    **fields: Any,
) -> JobContext:
    """A `JobContext` from the parsed options (`minislurm.options.JobOptions`).

    ``mem_per_cpu`` is the effective value (``--mem-per-cpu`` or DefMemPerCPU,
    ``None`` when ``--mem`` was given); ``fields`` are the other `JobContext`
    fields the controller knows (``user``, ``account``, ``submit_dir``, ...).
    """
    ctx = JobContext(
        job_id=job_id,
        name=name,
        partition=partition,
        cluster_name=cluster_name,
        work_dir=options.chdir,
        ntasks=options.ntasks,
        ntasks_per_node=options.ntasks_per_node,
        cpus_per_task=options.cpus_per_task,
        mem_per_cpu=mem_per_cpu if mem_per_cpu is not None else options.mem_per_cpu_mb,
        mem_per_node=options.mem_mb,
        mem_per_cpu_given=options.mem_per_cpu_mb is not None,
        gpus=options.gpus,
        gpus_per_node=options.gpus_per_node,
        gpus_per_task=options.gpus_per_task,
        cpus_per_gpu=options.cpus_per_gpu,
        mem_per_gpu=options.mem_per_gpu_mb,
        ntasks_per_gpu=options.ntasks_per_gpu,
        gpu_bind=dict(options.other).get("gpu-bind"),
        distribution=options.distribution,
        reservation=options.reservation,
        licenses=options.licenses,
        export=options.export,
        open_mode=options.open_mode,
        account=options.account or "root",
        qos=options.qos or "normal",
    )
    return replace(ctx, **fields) if fields else ctx


@dataclass(frozen=True, slots=True)
class StepContext:
    """An srun step as slurmstepd sees it (``launch_tasks_request_msg_t``).

    ``layout`` is the step's task layout over its nodes (a subset of the job's);
    ``cpus_on_node`` and ``gpus`` are per step node (``None`` = what the job
    holds on that node, which is what 22.05 gives a step that asks for no
    GPUs: capture a2's step sees ``SLURM_STEP_GPUS=0,1``).
    ``inside_allocation`` is ``True`` for srun inside sbatch/salloc, ``False``
    for an srun that created its own job (capture a1).  ``launcher_port`` is
    srun's listening port (``SLURM_SRUN_COMM_PORT``/``SLURM_STEP_LAUNCHER_PORT``).
    ``export``: srun's ``--export``, which filters what the tasks get from srun's
    environment (``--export=NONE``, ``--export=FOO=bar``), inside an allocation too.
    """

    step_id: int
    layout: TaskLayout
    launcher_port: int
    inside_allocation: bool = True
    cpus_on_node: tuple[int, ...] | None = None
    gpus: tuple[tuple[int, ...], ...] | None = None
    cpus_per_task: int | None = None
    ntasks_per_node: int | None = None
    distribution: str | None = None
    label: bool = False
    launch_node_ipaddr: str = "127.0.0.1"
    umask: int = 0o022
    srun_debug: int = 3
    gpus_per_task: str | None = None
    gpu_bind: str | None = None
    export: str | None = None
    """srun's own ``--export`` (None: not given; see ``env._srun_export``)."""
