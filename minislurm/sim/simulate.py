"""The engine of an experiment: play a workload through the controller on a SimPy clock.

``simulate(workload, config, scheduler='easy')`` submits each job of a workload
(``WorkloadJob`` records from ``minislurm.sim.workload.generate`` or an SWF trace) at its
submit time, with its body (run time and exit code, ``JobBody``), runs the clock until
every job has ended and returns the accounting records (``sacct``'s view: one
``JobRecord`` per attempt), the metrics of ``minislurm.sim.metrics`` and how long it took.

Submissions come from **one** SimPy process that sleeps until the next submit time,
so a 100,000-job trace is not 100,000 processes waiting in the event queue.

``--procs N`` mode (``procs=N``): the machine is N single-processor units, as in the
SWF simulators of the Parallel Workloads Archive (a job of p processors takes any p
free processors).  It is built as **N one-CPU nodes** ``p[0001-N]`` in one partition
``batch``: a job of p processors asks ``--nodes=p --ntasks-per-node=1`` so the Gantt
shows each processor as a row, and SWF's requested time (field 9, the run time when
-1) rounded up to whole minutes is ``--time`` (Slurm keeps limits in minutes).  The
backfill scheduler reacts within a second (``bf_interval=1,bf_resolution=1``) and looks
30 days ahead (``bf_window=43200``, Slurm's maximum); priority is ``priority/basic``
(first come, first served), as in those simulators.

``--scheduler easy`` of ``--procs`` mode is **textbook EASY** (``TEXTBOOK``; Mu'alem
and Feitelson 2001, the yardstick of tests/easy_reference.py) where Slurm's semantics
differ from it: each job's limit is its requested time *to the second*
(``Job.exact_limit``: the reservations are planned from it and the job is killed at
that second, not at slurmctld's 30-s periodic check; sacct still shows the minutes),
and the backfill pass runs at the event (the job end or submission), right after the
main scheduler, not ``bf_interval`` later (``bf_at_event``).  Every other scheduler of
``--procs`` mode (``slurm``, ``conservative``, ``fifo``), and every scheduler on a
``slurm.conf`` cluster, keeps Slurm's: whole-minute limits and ``bf_interval``.  On
10,000-job Lublin traces EASY's schedule is then the textbook's second for second
(tests/minislurm/sim/test_simulate_easy_textbook.py).
"""

from __future__ import annotations

import time
from collections.abc import Generator, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

import simpy

from minislurm.common.accounts import AssociationSet
from minislurm.conf import SlurmConfig, parse_config
from minislurm.ctld import Controller, JobBody
from minislurm.errors import SubmitError
from minislurm.job import JobRecord
from minislurm.options import JobOptions
from minislurm.sched.backfill import POLICIES
from minislurm.sim.collector import collector_widened
from minislurm.sim.metrics import Summary, summarize
from minislurm.sim.workload.generator import DEFAULT_START, WorkloadJob
from minislurm.sim.workload.swf import SWFWorkload, to_workload

#: The scheduler variants ``simulate`` accepts (the controller's teaching switch).
SCHEDULERS = POLICIES

PROCS_CONF = """ClusterName=swf
SlurmctldHost=localhost
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=1,bf_resolution=1,bf_window=43200,bf_max_job_test={test}
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
PriorityType=priority/basic
KillWait=0
NodeName=p[{first}-{last}] CPUs=1 RealMemory=1 State=UNKNOWN
PartitionName=batch Nodes=p[{first}-{last}] Default=YES MaxTime=UNLIMITED State=UP
"""


#: The schedulers of ``--procs`` mode that follow the textbook, not Slurm, where the two
#: differ: limits to the second and backfill at the event (module docstring).
TEXTBOOK = frozenset({"easy"})


def procs_config(procs: int) -> SlurmConfig:
    """The ``--procs N`` machine: N one-CPU nodes ``p[0001-N]`` in partition ``batch``."""
    if procs <= 0:
        raise ValueError(f"--procs must be a positive number, not {procs}")
    width = max(4, len(str(procs)))
    text = PROCS_CONF.format(first="1".zfill(width), last=str(procs).zfill(width), test=10000)
    return parse_config(text, f"<procs={procs}>")


class CountingEnvironment(simpy.Environment):
    """A ``simpy.Environment`` that counts the events it processes (for events/s)."""

    def __init__(self, initial_time: float = 0) -> None:
        super().__init__(initial_time)
        self.steps = 0

    def step(self) -> None:
        """Process the next event and count it."""
        self.steps += 1
        super().step()


@dataclass(frozen=True, slots=True)
class SimulationResult:
    """What a simulation produced.

    ``jobs``: every attempt as ``sacct`` sees it (``Controller.accounting()``), in job id
    order; ``workload_ids`` maps a Slurm job id (array tasks: their array job id) to the
    workload's own id (SWF job number); ``events``: SimPy events processed; ``rejected``:
    submissions slurmctld refused (they are in ``jobs`` as FAILED, never started);
    ``epoch``: time zero of the trace (an SWF file's ``UnixStartTime``, else the first
    submission); the CSV of ``minislurm simulate`` counts seconds from it, like SWF.
    """

    jobs: list[JobRecord]
    metrics: Summary
    wall_seconds: float
    events: int
    rejected: int = 0
    epoch: int = DEFAULT_START
    scheduler: str = "slurm"
    total_gpus: int = 0
    total_nodes: int = 0
    workload_ids: dict[int, int] = field(default_factory=dict)

    @property
    def jobs_per_second(self) -> float:
        """Jobs simulated per wall-clock second."""
        return len(self.jobs) / self.wall_seconds if self.wall_seconds > 0 else 0.0

    @property
    def events_per_second(self) -> float:
        """SimPy events processed per wall-clock second."""
        return self.events / self.wall_seconds if self.wall_seconds > 0 else 0.0

    def workload_id(self, job: JobRecord) -> int:
        """The workload id of a record (its Slurm id when unknown)."""
        key = job.array_job_id if job.array_job_id is not None else job.job_id
        return self.workload_ids.get(key, job.job_id)


#: What of a workload job its sbatch request is made of (`request_key`).
RequestKey = tuple[int, int, int, int, str, str, int | None]


def request_key(job: WorkloadJob) -> RequestKey:
    """The fields of ``job`` its request is made of: `job_options` reads the job only
    through this key, so jobs of equal keys ask the same (simulate makes each distinct
    request once)."""
    return (job.nodes, job.cpus, job.gpus_per_node, job.time_limit, job.partition,
            job.account, job.array_size)


def job_options(job: WorkloadJob, config: SlurmConfig, *, procs: bool = False) -> JobOptions:
    """The sbatch request of one workload job (`options_of` its `request_key`)."""
    return options_of(request_key(job), config, procs=procs)


def options_of(key: RequestKey, config: SlurmConfig, *, procs: bool = False) -> JobOptions:
    """The sbatch request of a workload job of `request_key` ``key``.

    ``--nodes=N --ntasks-per-node=1 --cpus-per-task=cpus/N --gres=gpu:G --time=L
    --partition=P [--array=0-(n-1)]``; in ``procs`` mode ``--nodes=p --ntasks-per-node=1``
    only.  A partition the configuration lacks falls back to the default partition
    (so a generated mix runs on any slurm.conf).
    """
    job_nodes, cpus, gpus_per_node, time_limit, job_partition, account, array_size = key
    nodes = max(1, job_nodes)
    if procs:
        return JobOptions(nodes_min=nodes, nodes_max=nodes, ntasks_per_node=1,
                          time_limit=time_limit, time_limit_set=True)  # fmt: skip
    partition = job_partition if any(p.name == job_partition for p in config.partitions) else None
    return JobOptions(
        nodes_min=nodes, nodes_max=nodes, ntasks_per_node=1,
        cpus_per_task=max(1, cpus // nodes),
        gres=f"gpu:{gpus_per_node}" if gpus_per_node > 0 else None,
        time_limit=time_limit, time_limit_set=True, partition=partition,
        account=account, array=f"0-{array_size - 1}" if array_size else None,
    )  # fmt: skip


def _sorted_jobs(
    workload: Iterable[WorkloadJob] | SWFWorkload,
) -> tuple[list[WorkloadJob], int]:
    """The jobs in submission order and the epoch (an SWF trace: its ``UnixStartTime``)."""
    if isinstance(workload, SWFWorkload):
        epoch = workload.unix_start_time or DEFAULT_START
        jobs = to_workload(workload)
        if not workload.unix_start_time:
            jobs = [replace(j, submit_time=j.submit_time + epoch) for j in jobs]
    else:
        jobs = list(workload)
        epoch = min((j.submit_time for j in jobs), default=DEFAULT_START)
    return sorted(jobs, key=lambda j: (j.submit_time, j.job_id)), epoch


def _progress(total: int, enabled: bool) -> Any:
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit="job", desc="submitted", mininterval=0.5)


#: Simulated seconds between two looks of the watcher for the end of a simulation.
WATCH_SECONDS = 600


def _watch(
    ctl: Controller, feeder: simpy.Process, stop: simpy.Event
) -> Generator[simpy.Event, object, None]:
    """End the simulation once everything was submitted and nothing runs any more.

    Jobs that can never start (``PartitionTimeLimit`` with ``EnforcePartLimits=NO``, a
    partition that is DOWN) stay PENDING as in Slurm, whose clock would tick forever;
    the simulation stops when no job has been running at two looks in a row
    (``WATCH_SECONDS`` apart, ample for the scheduler passes to react).
    """
    yield feeder
    idle = 0
    while idle < 2:
        yield ctl.env.timeout(WATCH_SECONDS)
        idle = 0 if ctl.running_jobs() else idle + 1
    stop.succeed()


def simulate(
    workload_jobs: Iterable[WorkloadJob] | SWFWorkload,
    config: SlurmConfig | None = None,
    *,
    scheduler: str = "slurm",
    procs: int | None = None,
    progress: bool = False,
    associations: AssociationSet | None = None,
) -> SimulationResult:
    """Run a workload through the controller until every job has ended.

    ``config``: the cluster (``load_config()``); ``procs=N`` instead builds the SWF
    machine of N single-processor units (``procs_config``).  ``scheduler``: ``fifo``,
    ``easy``, ``conservative`` or ``slurm`` (Slurm's sched/backfill); ``easy`` with
    ``procs`` is textbook EASY (limits to the second, backfill at the event: module
    docstring).
    """
    if scheduler not in SCHEDULERS:
        raise ValueError(f"unknown scheduler {scheduler!r}: use one of {', '.join(SCHEDULERS)}")
    if procs is not None:
        config = procs_config(procs)
    elif config is None:
        raise ValueError("simulate needs a config or procs=N")
    jobs, epoch = _sorted_jobs(workload_jobs)
    env = CountingEnvironment()
    ctl = Controller(config, env, policy=scheduler, associations=associations, epoch=epoch)
    ctl.bf_estimates = False  # nobody reads squeue --start here: same decisions, less work
    ctl.unobserved = True  # nor sprio between events: unread priority passes are skipped
    textbook = procs is not None and scheduler in TEXTBOOK
    ctl.bf_at_event = textbook  # backfill at the event, not bf_interval later
    ids: dict[int, int] = {}
    rejected = [0]
    bar = _progress(len(jobs), progress)
    # each distinct request (`request_key`) is made once: a frozen JobOptions, shared
    # by the submissions that ask the same
    requests: dict[RequestKey, JobOptions] = {}

    def feeder() -> Generator[simpy.Event, object, None]:
        for n, wj in enumerate(jobs):
            delay = wj.submit_time - ctl.now
            if delay > 0:
                yield env.timeout(delay)
            body = JobBody(wj.run_time, wj.exit_code)
            key = request_key(wj)
            opts = requests.get(key)
            if opts is None:
                opts = requests[key] = options_of(key, config, procs=procs is not None)
            try:
                jid = ctl.submit(opts,
                                 name=wj.name, user=wj.user, body=body,
                                 exact_limit=wj.limit_secs if textbook else None)  # fmt: skip
                ids[jid] = wj.job_id
            except SubmitError:
                rejected[0] += 1
            if bar is not None and (n % 256 == 255 or n == len(jobs) - 1):
                bar.n = n + 1
                bar.refresh()

    start = time.perf_counter()
    stop = env.event()
    env.process(_watch(ctl, env.process(feeder()), stop))
    try:
        with collector_widened():  # see minislurm.sim.collector
            env.run(until=stop)
    finally:
        if bar is not None:
            bar.close()
    wall = time.perf_counter() - start
    records = ctl.accounting()
    total_gpus = sum(g.count for n in config.nodes for g in n.gres if g.name == "gpu")
    total_nodes = len(config.nodes)
    return SimulationResult(
        jobs=records,
        metrics=summarize(records, total_gpus=total_gpus, total_nodes=total_nodes),
        wall_seconds=wall, events=env.steps, rejected=rejected[0], epoch=epoch,
        scheduler=scheduler, total_gpus=total_gpus, total_nodes=total_nodes, workload_ids=ids,
    )  # fmt: skip


__all__ = [
    "PROCS_CONF",
    "SCHEDULERS",
    "TEXTBOOK",
    "CountingEnvironment",
    "RequestKey",
    "SimulationResult",
    "job_options",
    "options_of",
    "procs_config",
    "request_key",
    "simulate",
]
