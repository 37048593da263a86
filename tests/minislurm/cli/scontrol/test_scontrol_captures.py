"""``scontrol show job|node|partition|reservation`` against captures of Slurm 22.05."""

from __future__ import annotations

import calendar
import dataclasses
from typing import Any

from captures import capture_out as capture
from captures import needs_captures

from minislurm.cli.format.hostinfo import NodeHost
from minislurm.cli.format.scontrol import (
    format_scontrol_job,
    format_scontrol_node,
    format_scontrol_partition,
    format_scontrol_reservation,
)
from minislurm.job import JobRecord
from minislurm.node import NodeRecord, PartitionRecord, ReservationRecord
from minislurm.states import JobState, NodeBase, NodeFlag, NodeState, Reason

CASE = "c2_formats_and_reasons"
WORK = "/srv/slurm-ref/work/c2_formats_and_reasons"




def ts(hms: str) -> int:
    hh, mm, ss = (int(x) for x in hms.split(":"))
    return calendar.timegm((2026, 12, 2, hh, mm, ss, 0, 0, 0))


def pending(job_id: int, name: str, reason: Reason, *, n: int = 1, **kw: Any) -> JobRecord:
    """A job of c2: ``sbatch -J name sleep.sh 10`` in debug, DefMemPerCPU=1000."""
    base: dict[str, Any] = dict(
        job_id=job_id,
        name=name,
        user="root",
        uid=0,
        group="root",
        gid=0,
        account="root",
        partition="debug",
        qos="normal",
        state=JobState.PENDING,
        reason=reason,
        submit_time=ts("13:27:39"),
        eligible_time=ts("13:27:39"),
        accrue_time=ts("13:27:39"),
        last_sched_eval=ts("13:27:39"),
        scheduler="Main",
        time_limit=10,
        priority=4294901762 - job_id,
        num_nodes=n,
        num_tasks=n,
        num_cpus=n,
        mem_per_cpu=1000,
        tres_req={"cpu": n, "mem": 1000 * n, "node": n, "billing": n},
        command=f"{WORK}/sleep.sh 10",
        work_dir=WORK,
        std_out=f"{WORK}/slurm-{job_id}.out",
        std_err=f"{WORK}/slurm-{job_id}.out",
    )
    base.update(kw)
    return JobRecord(**base)


def c2_jobs() -> list[JobRecord]:
    """The ten jobs of capture 15, in the capture's order."""
    backfill: dict[str, Any] = dict(last_sched_eval=ts("13:27:45"), scheduler="Backfill:*")
    unknown: dict[str, Any] = dict(eligible_time=None, accrue_time=None)
    small = pending(
        49,
        "small",
        Reason.NONE,
        state=JobState.RUNNING,
        start_time=ts("13:27:44"),
        end_time=ts("13:37:44"),
        last_sched_eval=ts("13:27:44"),
        scheduler="Backfill",
        nodelist="n1",
        batch_host="n1",
    )
    small = dataclasses.replace(small, tres_alloc=small.tres_req)
    return [
        pending(48, "wantall", Reason.NODES_DOWN_DRAINED, n=4, max_nodes=4, **backfill),
        small,
        pending(50, "depjob", Reason.DEPENDENCY, dependency="afterok:47(unfulfilled)", **unknown),
        pending(
            51,
            "later",
            Reason.BEGIN_TIME,
            eligible_time=ts("14:27:39"),
            accrue_time=ts("14:27:39"),
            start_time=ts("14:27:39"),
            end_time=ts("14:37:39"),
        ),
        pending(52, "helduser", Reason.JOB_HELD_USER, priority=0, **unknown),
        pending(53, "heldadm", Reason.JOB_HELD_ADMIN, priority=0),
        pending(54, "overmax", Reason.PARTITION_TIME_LIMIT, partition="short", priority=4294901709),
        pending(55, "toomany", Reason.PARTITION_NODE_LIMIT, n=5, max_nodes=5, priority=4294901708),
        pending(
            57,
            "depnever",
            Reason.DEPENDENCY_NEVER_SATISFIED,
            submit_time=ts("13:27:43"),
            dependency="afterok:56(failed)",
            last_sched_eval=ts("13:27:43"),
            priority=4294901706,
            **unknown,
        ),
        pending(
            58,
            "wantn4",
            Reason.REQ_NODE_NOT_AVAIL,
            reason_detail="UnavailableNodes:n4",
            submit_time=ts("13:27:43"),
            eligible_time=ts("13:27:43"),
            priority=4294901705,
            accrue_time=ts("13:27:43"),
            req_nodelist="n4",
            **backfill,
        ),
    ]


@needs_captures
def test_show_job_of_pending_and_running_jobs_matches_capture() -> None:
    expected = capture(CASE, "15_scontrol_show_job_pending")
    out = "".join(
        format_scontrol_job(j, now=ts("13:27:47"), alloc_node_sid="localhost:2253")
        for j in c2_jobs()
    )
    assert out == expected


@needs_captures
def test_show_job_of_an_array_task_starts_with_the_array_ids() -> None:
    expected = capture("f3_array", "05_scontrol_show_job_task")
    task = dataclasses.replace(
        pending(108, "arr", Reason.NONE, priority=4294901678),
        array_job_id=108,
        array_task_id=7,
        array_max_tasks=2,
    )
    head = format_scontrol_job(task, now=0).splitlines(keepends=True)[:3]
    assert "".join(head) == expected


def test_oneliner_puts_the_record_on_one_line() -> None:
    out = format_scontrol_job(c2_jobs()[1], oneliner=True, now=ts("13:27:47"))
    assert out.count("\n") == 1 and out.endswith(" Power= \n")
    assert out.startswith("JobId=49 JobName=small UserId=root(0) GroupId=root(0) MCS_label=N/A ")
    assert " RunTime=00:00:03 TimeLimit=00:10:00 TimeMin=N/A " in out


def test_unlimited_and_invalid_time_limits() -> None:
    job = c2_jobs()[5]
    assert "TimeLimit=UNLIMITED" in format_scontrol_job(
        dataclasses.replace(job, time_limit=None), now=0
    )
    assert "TimeLimit=INVALID" in format_scontrol_job(
        dataclasses.replace(job, time_limit=-1), now=0
    )


def test_a_finished_job_shows_exit_code_and_frozen_run_time() -> None:
    done = dataclasses.replace(
        c2_jobs()[1],
        state=JobState.TIMEOUT,
        reason=Reason.TIME_LIMIT,
        start_time=ts("13:27:38"),
        end_time=ts("13:29:03"),
        exit_code=0,
        signal=15,
        time_limit=1,
    )
    out = format_scontrol_job(done, now=ts("14:00:00"))
    assert "   JobState=TIMEOUT Reason=TimeLimit Dependency=(null)\n" in out
    assert "ExitCode=0:15\n" in out
    assert "   RunTime=00:01:25 TimeLimit=00:01:00 TimeMin=N/A\n" in out


def test_gpu_jobs_list_tres_per_node_after_power() -> None:
    gpu = dataclasses.replace(c2_jobs()[1], tres_per_node="gres:gpu:2")
    assert format_scontrol_job(gpu, now=0).endswith("   Power=\n   TresPerNode=gres:gpu:2\n   \n\n")


HOST = NodeHost(
    cpu_load=2.17, free_mem=23204, os="Linux 6.18.44-fc-v1045 #1 SMP PREEMPT_DYNAMIC @0"
)


def c2_node(
    i: int, state: NodeState, alloc: int, gpus: int, last_busy: str, **kw: Any
) -> NodeRecord:
    return NodeRecord(
        name=f"n{i}",
        state=state,
        cpus=4,
        alloc_cpus=alloc,
        real_memory=4000,
        alloc_mem=alloc * 1000,
        cores_per_socket=4,
        gres="gpu:a100:4",
        gpus_total=4,
        gpus_used=gpus,
        partitions=("debug", "gpu", "short") if i <= 2 else ("debug", "gpu"),
        node_addr="127.0.0.1",
        node_hostname="localhost",
        port=17000 + i,
        boot_time=ts("10:44:42"),
        slurmd_start_time=ts("13:27:03"),
        last_busy_time=ts(last_busy),
        **kw,
    )


@needs_captures
def test_show_node_of_a_mixed_and_a_draining_node_matches_capture() -> None:
    expected = capture(CASE, "17_scontrol_show_node")
    n1 = c2_node(1, NodeState(NodeBase.MIXED), 2, 0, "13:27:27")
    n4 = c2_node(
        4,
        NodeState(NodeBase.ALLOCATED, NodeFlag.DRAIN),
        4,
        4,
        "13:27:03",
        reason="maintenance",
        reason_user="root",
        reason_time=ts("13:27:43"),
    )
    out = format_scontrol_node(n1, now=0, host=HOST) + format_scontrol_node(n4, now=0, host=HOST)
    assert out == expected


PARTS = [
    PartitionRecord(
        "debug",
        ("n1", "n2", "n3", "n4"),
        default=True,
        max_time=60,
        default_time=10,
        total_cpus=16,
        total_nodes=4,
        total_mem=16000,
        total_gpus=16,
    ),
    PartitionRecord(
        "gpu",
        ("n1", "n2", "n3", "n4"),
        max_time=120,
        total_cpus=16,
        total_nodes=4,
        total_mem=16000,
        total_gpus=16,
    ),
    PartitionRecord(
        "short",
        ("n1", "n2"),
        max_time=5,
        default_time=1,
        total_cpus=8,
        total_nodes=2,
        total_mem=8000,
        total_gpus=8,
    ),
]


@needs_captures
def test_show_partition_and_idle_node_match_capture() -> None:
    blocks = capture(CASE, "00_idle_views").split("\n\n")
    expected = "\n\n".join(blocks[3:]).rstrip("\n") + "\n\n"
    idle = c2_node(1, NodeState(NodeBase.IDLE), 0, 0, "13:27:27")
    out = "".join(format_scontrol_partition(p) for p in PARTS)
    out += format_scontrol_node(idle, now=0, host=HOST)
    assert out == expected


@needs_captures
def test_show_reservation_matches_capture() -> None:
    expected = capture(CASE, "19_scontrol_show_reservation")
    resv = ReservationRecord(
        "resv1",
        ts("15:27:43"),
        ts("16:27:43"),
        ("n1",),
        users=("root",),
        flags=("SPEC_NODES",),
        core_count=4,
    )
    assert format_scontrol_reservation(resv) == expected


def test_partition_without_limits_prints_unlimited_and_none() -> None:
    out = format_scontrol_partition(PartitionRecord("open", ("a1", "a2")))
    assert "   DefaultTime=NONE " in out
    assert "   MaxNodes=UNLIMITED MaxTime=UNLIMITED MinNodes=0 " in out
    assert "   Nodes=a[1-2]\n" in out


def test_optional_reservation_and_comment_lines() -> None:
    job = dataclasses.replace(c2_jobs()[1], reservation="resv1", comment="hello")
    lines = format_scontrol_job(job, now=0).splitlines()
    features = lines.index("   Features=(null) DelayBoot=00:00:00")
    assert lines[features + 1] == "   Reservation=resv1"
    workdir = lines.index(f"   WorkDir={WORK}")
    assert lines[workdir + 1] == "   Comment=hello "


def test_a_simulated_host_reports_load_zero_and_unallocated_memory_free() -> None:
    n1 = c2_node(1, NodeState(NodeBase.MIXED), 2, 0, "13:27:27")
    out = format_scontrol_node(n1, now=0)
    assert "   CPUAlloc=2 CPUEfctv=4 CPUTot=4 CPULoad=0.00\n" in out
    assert "   RealMemory=4000 AllocMem=2000 FreeMem=2000 Sockets=1 Boards=1\n" in out
    assert "   OS=Linux \n" in out and "Version=22.05.8\n" in out


def test_oneliner_node_and_partition() -> None:
    n1 = c2_node(
        1,
        NodeState(NodeBase.IDLE, NodeFlag.DRAIN),
        0,
        0,
        "13:27:27",
        reason="bad disk",
        reason_user="root",
        reason_time=ts("13:00:00"),
    )
    out = format_scontrol_node(n1, now=0, oneliner=True)
    assert out.count("\n") == 1
    assert " State=IDLE+DRAIN " in out
    assert out.endswith(" Reason=bad disk [root@2026-12-02T13:00:00]\n")
    assert format_scontrol_partition(PARTS[2], oneliner=True).startswith(
        "PartitionName=short AllowGroups=ALL "
    )
