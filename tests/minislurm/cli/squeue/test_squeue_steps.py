"""``squeue -s``: the steps that run now, replayed on minislurm's local cluster and on
real Slurm 22.05.8 (the same jobs, the same commands, the outputs compared).

Measured first on 22.05.8 (2026-12-04): the default step format ``%.15i %.8j %.9P %.8u
%.9M %N``; every running batch job lists ``JOBID.batch`` (its first node, 1 task);
srun steps by number, named by ``-J`` or their command; step letters ``i j P u M N b A
l S`` (``%b`` prints ``(null)``, ``%l`` ``UNLIMITED``), any other letter is printed as
written after ``squeue: error: Invalid job step format specification: z``; ``-O``
names of steps (``Nodes`` is the node list, ``NodeList``/``State``/``Name`` are
invalid for steps); an unknown job or step lists nothing, exit 0; ``-s=1.batch`` is
``squeue: error: Invalid job_step id: =1.batch``, exit 1.
"""

from __future__ import annotations

import re
import time
from typing import Any

from minicluster import MiniCluster
from realslurm import RealSlurm

from minislurm.cli.format.squeue_steps import StepRow, format_steps, running_steps
from minislurm.job import Allocation, JobRecord, NodeAlloc, StepRecord
from minislurm.states import JobState, Reason

SCRIPT = """#!/bin/bash
srun -n1 --exact -J named bash -c 'touch $SLURM_JOB_ID.a; sleep 60' &
while [ ! -e $SLURM_JOB_ID.a ]; do sleep 0.1; done
srun -n2 --exact bash -c 'touch $SLURM_JOB_ID.b; sleep 60' &
wait
"""
COMMANDS = (
    "squeue -s -j {A},{B}",
    "squeue -s -h -j {A},{B} -o %i",
    "squeue -s -j {A},{B} -o '%i|%j|%P|%u|%N|%b|%A|%l'",
    "squeue -s -j {A} -o '%.10i %z %.6j'",
    "squeue -s -j {A},{B} -O StepId,StepName,NumTasks,TimeLimit,Partition,UserName,UserId,"
    "Nodes,StepState,JobId,Cluster,Network",
    # widths that cut (not the ids: real ids depend on the jobs real Slurm ran before)
    "squeue -s -j {A} -O StepId:14,StepName:.12,Nodes:3,Partition:3,NodeList,State",
    "squeue --steps={A}.1",
    "squeue -s {A}.0,{B}.7",
    "squeue -s -j 99999",
    "squeue -s -u nobody -j {A}",
    "squeue -s=1.batch",
)


def _replay(cluster: MiniCluster | RealSlurm) -> list[tuple[str, str, int]]:
    work = cluster.work_dir / "squeue-steps"
    work.mkdir(exist_ok=True)
    (work / "steps.sh").write_text(SCRIPT)
    (work / "plain.sh").write_text("#!/bin/bash\ntouch $SLURM_JOB_ID.started\nsleep 60\n")
    a = cluster.run("sbatch --parsable -N1 -n3 -o /dev/null steps.sh", cwd=work).stdout.strip()
    b = cluster.run("sbatch --parsable -N2 -o /dev/null plain.sh", cwd=work).stdout.strip()
    try:
        deadline = time.monotonic() + 30
        # both jobs' scripts run (a loaded real slurmd may launch B's batch step seconds
        # after the job is RUNNING; squeue -s lists B.batch only then)
        while not (all((work / f"{a}.{m}").exists() for m in "ab")
                   and (work / f"{b}.started").exists()):
            assert time.monotonic() < deadline, "the steps did not start"
            time.sleep(0.2)
        out = []
        for cmd in COMMANDS:
            res = cluster.run(cmd.format(A=a, B=b), cwd=work)
            text = res.stdout + res.stderr
            text = re.sub(r"\b\d+:\d\d\b", "M:SS", text.replace(a, "A").replace(b, "B"))
            out.append((cmd, text, res.rc))
        return out
    finally:
        cluster.run(f"scancel {a} {b}")
        for job in (a, b):
            cluster.wait_job(job, timeout=60)


def test_squeue_steps_match_real_slurm(mini_slurm: MiniCluster, real_slurm: RealSlurm) -> None:
    mini, real = _replay(mini_slurm), _replay(real_slurm)
    for (cmd, want, want_rc), (_, got, got_rc) in zip(real, mini, strict=True):
        assert (got, got_rc) == (want, want_rc), cmd


def test_running_steps_batch_last_and_only_running_ones() -> None:
    alloc = Allocation((NodeAlloc("n1", 4, 4000), NodeAlloc("n2", 4, 4000)))

    def step(sid: int, state: JobState) -> StepRecord:
        return StepRecord(step_id=sid, name=f"s{sid}", state=state, nodelist="n[1-2]",
                          num_nodes=2, ntasks=2, num_cpus=8, start_time=100,
                          end_time=None if state is JobState.RUNNING else 110)

    def record(job_id: int, state: JobState, **more: Any) -> JobRecord:
        return JobRecord(job_id=job_id, name="job", user="ann", uid=1000, group="ann",
                         gid=1000, account="ml", partition="gpu", qos="normal", state=state,
                         reason=Reason.NONE, submit_time=80, **more)

    job = record(7, JobState.RUNNING, allocation=alloc, start_time=90, nodelist="n[1-2]",
                 steps=(step(1, JobState.RUNNING), step(0, JobState.COMPLETED),
                        step(2, JobState.RUNNING)))
    pending = record(8, JobState.PENDING)
    rows = running_steps([pending, job])
    assert [str(r.step.step_id) for r in rows] == ["1", "2", "batch"]
    text = format_steps(rows, now=125)
    assert text.splitlines() == [
        "         STEPID     NAME PARTITION     USER      TIME NODELIST",
        "            7.1       s1       gpu      ann      0:25 n[1-2]",
        "            7.2       s2       gpu      ann      0:25 n[1-2]",
        "        7.batch    batch       gpu      ann      0:35 n1",
    ]
    assert format_steps([StepRow(job, rows[0].step)], fmt="%i %q", noheader=True) == "7.1 %q\n"
