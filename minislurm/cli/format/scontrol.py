"""``scontrol show job|node|partition|reservation``: Slurm's ``Key=Value`` records.

Mirrors the 22.05 printers of ``src/api``: ``slurm_sprint_job_info``
(job_info.c), ``slurm_sprint_node_table`` (node_info.c),
``slurm_sprint_partition_info`` (partition_info.c) and
``slurm_sprint_reservation_info`` (reservation_info.c).  Each record is a
sequence of lines joined by ``"\\n   "`` (``-o/--oneliner``: by a blank) and
ends with a blank line; the layout below is line for line the one the
captures show (``c2_formats_and_reasons`` 00, 15, 17, 19; ``f3_array`` 05).
"""

from __future__ import annotations

import re

from minislurm.cli.format.fields import eligible_time, mem_unit, tres_string
from minislurm.cli.format.hostinfo import NodeHost
from minislurm.common import hostlist
from minislurm.common.jobarray import format_indices
from minislurm.common.timespec import (
    format_elapsed,
    format_time_limit_hms,
    format_timestamp,
)
from minislurm.job import JobRecord
from minislurm.node import NodeRecord, PartitionRecord, ReservationRecord
from minislurm.states import JobState

_LINE_END = "\n   "



def _preempt_line(job: JobRecord) -> tuple[str, ...]:
    """``PreemptEligibleTime= PreemptTime=``: only for a job that started while
    preemption is enabled (``job->preemptable_time``, see pack_job)."""
    if not job.preemptable_time:
        return ()
    when = format_timestamp(job.preempt_time) if job.preempt_time else "None"
    return (f"PreemptEligibleTime={format_timestamp(job.preemptable_time)} PreemptTime={when}",)

def _null(text: str) -> str:
    """A C string that may be NULL: ``(null)``."""
    return text if text else "(null)"


def _finish(lines: list[str], oneliner: bool) -> str:
    """Join the lines the way the sprint functions do and end the record."""
    if oneliner:
        return " ".join(lines) + "\n"
    return _LINE_END.join(lines) + "\n\n"


def _job_line1(job: JobRecord) -> str:
    out = f"JobId={job.job_id} "
    if job.array_job_id is not None:
        task = job.array_task_str if job.array_task_str is not None else job.array_task_id
        out += f"ArrayJobId={job.array_job_id} ArrayTaskId={task} "
        if job.array_max_tasks:
            out += f"ArrayTaskThrottle={job.array_max_tasks} "
    return out + f"JobName={job.name}"


def _num_nodes(job: JobRecord) -> str:
    """``NumNodes=``: ``min-max`` while pending when a maximum was requested."""
    lo = job.num_nodes
    hi = (job.max_nodes or 0) if job.state is JobState.PENDING else 0
    if hi and hi < lo:
        lo = hi
    return f"{lo}-{hi}" if hi else str(lo)


def _time_limit(minutes: int | None) -> str:
    """``TimeLimit=``: job_info.c prints the ``uint32_t`` minutes with ``mins2time_str``.

    A negative limit that sbatch accepted (``--time=-5`` is stored as
    ``(-5 days + 59 s) / 60 = -7199`` minutes, i.e. ``2**32 - 7199``) prints
    ``TimeLimit=2982611-04:17:00`` (squeue's ``%l`` says ``INVALID``).  The bare
    ``INVALID_TIME`` marker, which carries no magnitude, still prints ``INVALID``.
    """
    return format_time_limit_hms(minutes)


def _last_sched_eval(job: JobRecord) -> str:
    """``LastSchedEval=``: slurmctld stamps a job when it is created and again each time
    a scheduler considers it, so a job that never was (held, over a partition limit)
    shows its submission time, never ``Unknown`` (22.05.8, measured)."""
    return format_timestamp(job.last_sched_eval or job.submit_time)


def _scheduler(job: JobRecord) -> str:
    """``Scheduler=``: ``Backfill`` when the ``BACKFILL_SCHED`` flag is set, ``:*`` with
    ``BACKFILL_LAST`` (job_info.c).

    sched/backfill sets the flag on every job it tests and the job keeps it when
    backfill starts it; every queue build clears it on the pending jobs (the main
    scheduler's pass, ``sched/builtin.py``).  Measured on 22.05.8 (bf_interval=1): a
    pending job shows ``Backfill:*`` after a backfill pass tested it and ``Main`` after a
    main pass (Reason=Resources, LastSchedEval moving each time), also on a full
    cluster; held, dependent, partition-limited jobs and jobs just requeued ``Main``; a
    job backfill started ``Backfill`` (never ``:*``), one the main scheduler started
    ``Main``, even if backfill had tested it while it pended.
    """
    name = job.scheduler or "Main"
    if name == "Backfill" and job.state is JobState.PENDING:
        return "Backfill:*"
    return name


def _end_time(job: JobRecord, now: int) -> str:
    if job.time_limit is None and job.end_time and job.end_time > now:
        return "Unknown"
    return format_timestamp(job.end_time)


def _min_memory(job: JobRecord) -> str:
    if job.mem_per_cpu:
        return f"MinMemoryCPU={mem_unit(job.mem_per_cpu)}"
    if job.min_memory_mb:
        return f"MinMemoryNode={mem_unit(job.min_memory_mb)}"
    return "MinMemoryNode=0"


def _job_details(job: JobRecord) -> list[str]:
    """``scontrol -d show job``: ``JOB_GRES`` and what the job holds on its nodes.

    One line per run of nodes alike (``Nodes=n[2-3] CPU_IDs=3 Mem=1000 GRES=``): the
    CPU ids, memory and GPU indices, the GPUs only while the job holds them (a
    COMPLETED job shows ``GRES=``); nothing for a pending job (measured on 22.05.8).
    """
    alloc = job.allocation
    if alloc is None or job.state is JobState.PENDING:
        return []
    total: dict[str | None, int] = {}
    for na in alloc.nodes:
        for gtype, _ in na.gpus:
            total[gtype] = total.get(gtype, 0) + 1
    job_gres = ",".join(f"gpu:{t}:{c}" if t else f"gpu:{c}" for t, c in total.items())
    holds = not job.state.is_terminal
    rows: list[tuple[list[str], str]] = []
    for na in alloc.nodes:
        gres = ",".join(
            f"gpu:{t}:{len(idx)}(IDX:{format_indices(idx)})" if t else
            f"gpu:{len(idx)}(IDX:{format_indices(idx)})"
            for t in dict.fromkeys(t for t, _ in na.gpus)
            if (idx := [k for tt, k in na.gpus if tt == t])
        ) if holds else ""
        cpu_ids = format_indices(na.cpu_ids or range(na.cpus))
        text = f"CPU_IDs={cpu_ids} Mem={na.mem_mb} GRES={gres}"
        if rows and rows[-1][1] == text:
            rows[-1][0].append(na.node)
        else:
            rows.append(([na.node], text))
    return [f"JOB_GRES={job_gres or '(null)'}"] + [
        f"  Nodes={hostlist.compress(names)} {text}" for names, text in rows]


def format_scontrol_job(
    job: JobRecord,
    *,
    oneliner: bool = False,
    now: int,
    alloc_node_sid: str = "localhost:0",
    details: bool = False,
) -> str:
    """``scontrol show job`` (``-o``: ``oneliner``; ``-d``: ``details``) for one job.

    ``alloc_node_sid`` is ``AllocNode:Sid=`` (the submitting host and session),
    which job records do not carry.
    """
    reason = re.sub(r"\s", "_", job.reason_text)
    run_time = job.run_time(now)
    time_min = "N/A" if not job.time_min else format_time_limit_hms(job.time_min)
    tres = job.tres_req if job.state is JobState.PENDING or not job.tres_alloc else job.tres_alloc
    lines = [
        _job_line1(job),
        f"UserId={job.user}({job.uid}) GroupId={job.group}({job.gid}) MCS_label=N/A",
        f"Priority={job.priority} Nice={job.nice} Account={job.account} QOS={job.qos}",
        f"JobState={job.state.value} Reason={reason} Dependency={_null(job.dependency)}",
        f"Requeue={int(job.requeue)} Restarts={job.restart_count} "
        f"BatchFlag={int(job.batch_flag)} Reboot=0 ExitCode={job.exit_code}:{job.signal}",
        f"RunTime={format_elapsed(run_time)} TimeLimit={_time_limit(job.time_limit)} "
        f"TimeMin={time_min}",
        f"SubmitTime={format_timestamp(job.submit_time)} "
        f"EligibleTime={format_timestamp(eligible_time(job))}",
        f"AccrueTime={format_timestamp(job.accrue_time)}",
        f"StartTime={format_timestamp(job.start_time)} EndTime={_end_time(job, now)} "
        "Deadline=N/A",
        *_preempt_line(job),
        "SuspendTime="
        + (format_timestamp(job.suspend_time) if job.suspend_time else "None")
        + f" SecsPreSuspend=0 LastSchedEval={_last_sched_eval(job)} "
        f"Scheduler={_scheduler(job)}",
        f"Partition={job.partition} AllocNode:Sid={alloc_node_sid}",
        f"ReqNodeList={_null(job.req_nodelist)} ExcNodeList={_null(job.exc_nodelist)}",
        f"NodeList={job.nodelist}"
        + (f" SchedNodeList={job.sched_nodes}" if job.sched_nodes and not job.nodelist else ""),
    ]
    if job.batch_host:
        lines.append(f"BatchHost={job.batch_host}")
    lines += [
        f"NumNodes={_num_nodes(job)} NumCPUs={job.num_cpus} NumTasks={job.num_tasks} "
        f"CPUs/Task={job.cpus_per_task} ReqB:S:C:T=0:0:*:*",
        f"TRES={tres_string(tres)}",
        f"Socks/Node=* NtasksPerN:B:S:C={job.ntasks_per_node or 0}:0:*:* CoreSpec=*",
        *(_job_details(job) if details else ()),
        f"MinCPUsNode={job.cpus_per_task * (job.ntasks_per_node or 1)} {_min_memory(job)} "
        "MinTmpDiskNode=0",
        f"Features={_null(job.features)} DelayBoot=00:00:00",
    ]
    if job.reservation:
        lines.append(f"Reservation={job.reservation}")
    lines += [
        f"OverSubscribe={'NO' if job.exclusive else 'OK'} Contiguous=0 Licenses=(null) "
        "Network=(null)",
        f"Command={_null(job.command)}",
        f"WorkDir={job.work_dir}",
    ]
    if job.comment:
        lines.append(f"Comment={job.comment} ")
    if job.batch_flag:
        lines += [f"StdErr={job.std_err}", f"StdIn={job.std_in}", f"StdOut={job.std_out}"]
    lines.append("Power=")
    for key, value in (("TresPerJob", job.tres_per_job), ("TresPerNode", job.tres_per_node),
                       ("TresPerTask", job.tres_per_task)):
        if value:
            lines.append(f"{key}={value}")
    lines.append("")  # the sprint ends every line, the last one included, with line_end
    return _finish(lines, oneliner)


def format_scontrol_node(
    node: NodeRecord, *, now: int, oneliner: bool = False, host: NodeHost | None = None
) -> str:
    """``scontrol show node`` for one node; ``host`` gives load, free memory, OS."""
    h = host or NodeHost.simulated(node)
    features = ",".join(node.features) or "(null)"
    lines = [
        f"NodeName={node.name} Arch={h.arch} CoresPerSocket={node.cores_per_socket} ",
        f"CPUAlloc={node.alloc_cpus} CPUEfctv={node.cpus} CPUTot={node.cpus} "
        f"CPULoad={h.cpu_load:.2f}",
        f"AvailableFeatures={features}",
        f"ActiveFeatures={features}",
        f"Gres={_null(node.gres)}",
        f"NodeAddr={node.node_addr or node.name} NodeHostName={node.node_hostname or node.name}"
        + (f" Port={node.port}" if node.port else "")
        + f" Version={h.version}",
        f"OS={h.os} ",
        f"RealMemory={node.real_memory} AllocMem={node.alloc_mem} FreeMem={h.free_mem_of(node)} "
        f"Sockets={node.sockets} Boards={node.boards}",
        f"State={node.state.scontrol} ThreadsPerCore={node.threads_per_core} "
        f"TmpDisk={node.tmp_disk} Weight={node.weight} Owner=N/A MCS_label=N/A",
    ]
    if node.partitions:
        lines.append(f"Partitions={','.join(node.partitions)} ")
    lines += [
        f"BootTime={format_timestamp(node.boot_time)} "
        f"SlurmdStartTime={format_timestamp(node.slurmd_start_time)}",
        f"LastBusyTime={format_timestamp(node.last_busy_time)}",
        f"CfgTRES={tres_string(node.cfg_tres)}",
        f"AllocTRES={tres_string(node.alloc_tres)}",
        "CapWatts=n/a",
        "CurrentWatts=0 AveWatts=0",
        "ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s",
    ]
    if node.reason:
        lines.append(
            f"Reason={node.reason} [{node.reason_user or 'root'}@"
            f"{format_timestamp(node.reason_time)}]"
        )
    return _finish(lines, oneliner)


def format_scontrol_partition(part: PartitionRecord, *, oneliner: bool = False) -> str:
    """``scontrol show partition`` for one partition."""
    default_time = "NONE" if part.default_time is None else format_time_limit_hms(part.default_time)
    max_nodes = "UNLIMITED" if part.max_nodes is None else str(part.max_nodes)
    lines = [
        f"PartitionName={part.name}",
        "AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL",
        f"AllocNodes=ALL Default={'YES' if part.default else 'NO'} QoS={part.qos or 'N/A'}",
        f"DefaultTime={default_time} DisableRootJobs=NO ExclusiveUser=NO GraceTime=0 Hidden=NO",
        f"MaxNodes={max_nodes} MaxTime={format_time_limit_hms(part.max_time)} "
        f"MinNodes={part.min_nodes} LLN=NO MaxCPUsPerNode=UNLIMITED",
        f"Nodes={hostlist.compress(part.nodes) or '(null)'}",
        f"PriorityJobFactor={part.priority_job_factor} PriorityTier={part.priority_tier} "
        f"RootOnly=NO ReqResv=NO OverSubscribe={part.over_subscribe}",
        f"OverTimeLimit=NONE PreemptMode={part.preempt_mode}",
        f"State={part.state} TotalCPUs={part.total_cpus} TotalNodes={part.total_nodes} "
        "SelectTypeParameters=NONE",
        "JobDefaults=(null)",
        "DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED",
        f"TRES={tres_string(part.tres)}",
    ]
    if part.billing_weights:  # slurm_sprint_partition_info, "Line 10"
        lines.append(f"TRESBillingWeights={part.billing_weights}")
    return _finish(lines, oneliner)


def format_scontrol_reservation(resv: ReservationRecord, *, oneliner: bool = False) -> str:
    """``scontrol show reservation`` for one reservation."""
    def joined(names: tuple[str, ...]) -> str:
        return ",".join(names) or "(null)"

    lines = [
        f"ReservationName={resv.name} StartTime={format_timestamp(resv.start_time)} "
        f"EndTime={format_timestamp(resv.end_time)} Duration={format_elapsed(resv.duration)}",
        f"Nodes={hostlist.compress(resv.nodes) or '(null)'} NodeCnt={len(resv.nodes)} "
        f"CoreCnt={resv.core_count} Features=(null) PartitionName={_null(resv.partition)} "
        f"Flags={','.join(resv.flags)}",
        f"TRES=cpu={resv.core_count}",
        f"Users={joined(resv.users)} Groups=(null) Accounts={joined(resv.accounts)} "
        f"Licenses=(null) State={resv.state} BurstBuffer=(null) Watts=n/a",
        "MaxStartDelay=(null)",
    ]
    return _finish(lines, oneliner)


__all__ = [
    "format_scontrol_job",
    "format_scontrol_node",
    "format_scontrol_partition",
    "format_scontrol_reservation",
]
