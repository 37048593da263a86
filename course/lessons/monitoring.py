"""Lesson 2: watch a running step with ``sstat``, read it back with ``sacct``, judge efficiency.

A real job runs on minislurm's local cluster (real processes on this machine): its srun
step holds ``MIB`` MiB of memory and sleeps. While it runs, ``sstat -j J -P -o ...``
(``sstat(1)``) reports the step's live usage; after it ends, ``sacct -j J -P -o ...``
(``sacct(1)``) has the step's record. The usage numbers vary from run to run, so the lesson
prints what they show: the memory the step held, live and recorded, and that the
usage belongs to the step, not to the job's own line.
"""

from __future__ import annotations

import re
import sys
import time
from contextlib import AbstractContextManager
from dataclasses import dataclass

from course.lessons.ddp_ranks import LocalCluster, local_cluster

__all__ = ["GATHER", "JOB_SH", "MIB", "Usage", "format_usage", "monitored_cluster",
           "parse_size", "watch_job"]

#: slurm.conf lines that make slurmstepd gather each task's usage (what sstat and
#: sacct's MaxRSS/AveCPU/TRESUsageIn* report); without them there is nothing to report,
#: as on a real cluster with jobacct_gather/none (the embedded default).
GATHER = "JobAcctGatherType=jobacct_gather/linux\nJobAcctGatherFrequency=1\n"

#: Memory the step's task holds (MiB).
MIB = 256
#: The batch script: one srun step that holds MIB MiB and sleeps (little CPU).
JOB_SH = f"""#!/bin/bash
#SBATCH -J mem -n1 -t 5 -o mem-%j.out
srun "${{PYTHON:-python}}" -c 'import time; x = b"1" * ({MIB} << 20); time.sleep(12)'
"""
STAT_FIELDS = "JobID,NTasks,MaxRSS,AveCPU"
ACCT_FIELDS = "JobID,State,Elapsed,MaxRSS"
_SIZE = re.compile(r"^(\d+(?:\.\d+)?)([KMGT]?)$")
_UNITS = {"": 1 / 1024, "K": 1 / 1024, "M": 1.0, "G": 1024.0, "T": 1024.0 ** 2}


def parse_size(text: str) -> float:
    """``212928K`` / ``208M`` / ``1.5G`` (sstat and sacct's MaxRSS) -> MiB; '' -> 0."""
    m = _SIZE.match(text.strip())
    if not m:
        return 0.0
    return float(m.group(1)) * _UNITS[m.group(2)]


@dataclass(frozen=True, slots=True)
class Usage:
    """What sstat said while the step ran and what sacct recorded after."""

    job_id: int
    live_step: str  # sstat's JobID (J.0)
    live_tasks: int
    live_max_rss_mib: float
    step_state: str  # sacct State of J.0
    step_max_rss_mib: float
    job_line_max_rss: str  # sacct MaxRSS on the job's own line ('' : per step only)


def monitored_cluster() -> AbstractContextManager[LocalCluster]:
    """`course.lessons.ddp_ranks.local_cluster` with `GATHER` added to its slurm.conf:
    ``python -m minislurm cluster up`` in a fresh folder, ``cluster down`` on exit."""
    return local_cluster(conf_lines=GATHER)


def _rows(text: str) -> list[list[str]]:
    return [line.split("|") for line in text.splitlines() if "|" in line]


def watch_job(cluster: LocalCluster, folder: str = "monitor", timeout: float = 60) -> Usage:
    """Submit `JOB_SH`, poll ``sstat`` until it reports the running step, wait for the end,
    then read ``sacct``."""
    work = cluster.work_dir / folder
    work.mkdir(parents=True, exist_ok=True)
    (work / "job.sh").write_text(JOB_SH)
    env = {"PYTHON": sys.executable}
    sub = cluster.run(["sbatch", "--parsable", "job.sh"], cwd=work, extra_env=env)
    m = re.match(r"(\d+)", sub.stdout)
    if m is None:
        raise RuntimeError(f"sbatch printed no job id: {sub.stdout}{sub.stderr}")
    job = m.group(1)
    live: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:  # the step starts, then its memory grows
        rows = _rows(cluster.run(["sstat", "-j", job, "-n", "-P", "-o", STAT_FIELDS],
                                 cwd=work).stdout)
        if rows and parse_size(rows[0][2]) >= MIB:
            live = rows[0]
            break
        time.sleep(0.5)
    if not live:
        raise RuntimeError(f"sstat never saw job {job}'s step hold {MIB} MiB")
    # The end gets a deadline of its own: on a loaded machine the first phase may have used
    # most of ``timeout``, and reading sacct before the step's record is final would show
    # RUNNING (or no MaxRSS yet) instead of what the lesson is about.
    deadline = time.monotonic() + timeout
    acct: dict[str, list[str]] = {}
    while time.monotonic() < deadline:
        state = cluster.run(["squeue", "-h", "-j", job, "-o", "%T"], cwd=work).stdout.strip()
        if not state:
            acct = {r[0]: r for r in _rows(cluster.run(
                ["sacct", "-j", job, "-n", "-P", "-o", ACCT_FIELDS], cwd=work).stdout)}
            if acct.get(f"{job}.0", ["", "RUNNING"])[1] not in ("RUNNING", "PENDING", ""):
                break
        time.sleep(0.5)
    else:
        raise RuntimeError(f"job {job} did not end with a final step record in {timeout} s")
    step = acct[f"{job}.0"]
    return Usage(
        job_id=int(job), live_step=live[0], live_tasks=int(live[1] or 0),
        live_max_rss_mib=parse_size(live[2]), step_state=step[1],
        step_max_rss_mib=parse_size(step[3]), job_line_max_rss=acct.get(job, ["", "", "", ""])[3])


def format_usage(u: Usage) -> str:
    """What the numbers show, in words that do not change from run to run."""
    return "\n".join([
        f"while running: sstat reports step .{u.live_step.split('.', 1)[1]} with {u.live_tasks}"
        f" task; MaxRSS at least {MIB} MiB: {u.live_max_rss_mib >= MIB}",
        f"after the end: sacct step .0 {u.step_state}; MaxRSS recorded: "
        f"{u.step_max_rss_mib >= MIB}; job line's MaxRSS empty: {u.job_line_max_rss == ''}",
    ])
