"""Lesson 7's failure drill with the real DDP job: a node goes down under a gloo training.

On a local minislurm cluster (the embedded default slurm.conf, `ddp_ranks.local_cluster`)
the course's batch script ``course/ddp/job.sh`` (``--requeue``, ``--open-mode=append``,
a checkpoint every 5 steps) trains two real gloo ranks, one per node. After its first
checkpoint the administrator's ``scontrol update nodename=<its second node> state=down
reason=drill`` kills the ranks on every node; slurmctld logs the attempt NODE_FAIL and
puts the job back to PENDING (``Restarts=1``, ``Reason=BeginTime``: the requeue delay);
``state=resume`` repairs the node and ``scontrol update jobid=N starttime=now`` skips the
delay. The second attempt (``SLURM_RESTART_COUNT=1``) resumes from the newest complete
checkpoint and ends with parameters bit-identical (SHA-256) to an uninterrupted run of
the same script, which the drill runs first for comparison.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from course.ddp.logfmt import parse_records
from course.lessons.ddp_ranks import LIMIT, REPO, LocalCluster

__all__ = ["DrillReport", "real_ddp_drill", "show_job"]

JOB_SH = REPO / "course" / "ddp" / "job.sh"


@dataclass(frozen=True, slots=True)
class DrillReport:
    """What the drill saw: the job, the commands' answers and the two runs' digests."""

    job_id: int
    nodelist: str
    down_node: str
    after_failure: dict[str, str]  # scontrol show job fields while requeued
    sacct: str  # sacct -j N -o JobID,State,ExitCode,NodeList (every attempt)
    resumed_at: int  # the step the second attempt resumed from
    steps: int
    digest: str  # final parameters of the interrupted run
    reference: str  # ... of the uninterrupted run
    log: str  # slurm-N.out, both attempts (--open-mode=append)
    seconds: float

    @property
    def bit_identical(self) -> bool:
        """Whether the drill's final parameters equal the uninterrupted run's."""
        return self.digest == self.reference != ""

    @property
    def attempt_states(self) -> list[str]:
        """The State column of `sacct`, one entry per attempt (``NODE_FAIL``, ...)."""
        return [line.split()[1] for line in self.sacct.splitlines()[2:] if line.split()[1:]]

    def summary(self) -> str:
        """What happened, in four lines."""
        f = self.after_failure
        return (f"job {self.job_id} on {self.nodelist}: {self.down_node} set DOWN after the "
                f"first checkpoint\n"
                f"  while requeued: JobState={f.get('JobState')} Reason={f.get('Reason')} "
                f"Restarts={f.get('Restarts')} Requeue={f.get('Requeue')}\n"
                f"  second attempt resumed from step {self.resumed_at} of {self.steps}\n"
                f"  final sha256 {self.digest[:16]}..  uninterrupted {self.reference[:16]}..  "
                f"bit-identical: {self.bit_identical}")


def show_job(cluster: LocalCluster, job_id: int) -> dict[str, str]:
    """``scontrol show job N`` as a dict of its ``Key=Value`` fields."""
    out = cluster.run(["scontrol", "show", "job", str(job_id)], timeout=30).stdout
    return dict(re.findall(r"(\w+)=(\S*)", out))


def _wait(predicate: Callable[[], bool], what: str, timeout: float = LIMIT) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"the drill waited {timeout:.0f} s for {what}")
        time.sleep(0.2)


def _submit(cluster: LocalCluster, folder: str, *train_args: str, wait: bool) -> tuple[int, Path]:
    work = cluster.work_dir / folder
    work.mkdir(parents=True, exist_ok=True)
    cmd = ["sbatch", "--parsable", *(["--wait"] if wait else []), "-N2",
           "--ntasks-per-node=1", str(JOB_SH), *train_args]
    # PYTHON: job.sh runs ``${PYTHON:-python} -m course.ddp.train``; this interpreter
    res = cluster.run(cmd, cwd=work, timeout=LIMIT, extra_env={"PYTHON": sys.executable})
    match = re.match(r"(\d+)", res.stdout)
    if match is None or (wait and res.returncode != 0):
        out = work / f"slurm-{match.group(1)}.out" if match else None
        tail = out.read_text()[-2000:] if out is not None and out.exists() else ""
        raise RuntimeError(f"sbatch failed (rc {res.returncode}): {res.stdout}{res.stderr}"
                           f"{tail}")
    return int(match.group(1)), work


def _final_digest(log: str) -> str:
    finals = [f for kind, f in parse_records(log.splitlines()) if kind == "final"]
    return finals[-1]["sha256"] if finals else ""


def real_ddp_drill(cluster: LocalCluster, *, steps: int = 20, step_time: float = 0.3
                   ) -> DrillReport:
    """Run the reference training, then the drill (see the module docstring)."""
    t0 = time.monotonic()
    train = ["--steps", str(steps)]
    ref_id, ref_dir = _submit(cluster, "reference", *train, wait=True)
    reference = _final_digest((ref_dir / f"slurm-{ref_id}.out").read_text())

    job_id, work = _submit(cluster, "drill", *train, "--step-time", str(step_time), wait=False)
    log = work / f"slurm-{job_id}.out"
    _wait(lambda: log.exists() and "checkpoint step=5 " in log.read_text(),
          "the first checkpoint")
    nodelist = show_job(cluster, job_id).get("NodeList", "")
    hosts = cluster.run(["scontrol", "show", "hostnames", nodelist], timeout=30).stdout.split()
    down_node = hosts[-1]
    cluster.run(["scontrol", "update", f"nodename={down_node}", "state=down", "reason=drill"],
                timeout=30)
    _wait(lambda: show_job(cluster, job_id).get("JobState") == "PENDING", "the requeue", 60)
    after = show_job(cluster, job_id)
    cluster.run(["scontrol", "update", f"nodename={down_node}", "state=resume"], timeout=30)
    cluster.run(["scontrol", "update", f"jobid={job_id}", "starttime=now"], timeout=30)
    _wait(lambda: show_job(cluster, job_id).get("JobState") in ("COMPLETED", "FAILED",
                                                                  "CANCELLED", "NODE_FAIL"),
          "the second attempt to end")
    text = log.read_text()
    resumed = [f for kind, f in parse_records(text.splitlines()) if kind == "resume"]
    sacct = cluster.run(["sacct", "-D", "-j", str(job_id), "-X", "-o",
                         "JobID,State,ExitCode,NodeList"], timeout=30).stdout
    return DrillReport(
        job_id=job_id, nodelist=nodelist, down_node=down_node, after_failure=after,
        sacct=sacct, resumed_at=int(resumed[-1]["step"]) if resumed else 0, steps=steps,
        digest=_final_digest(text), reference=reference, log=text,
        seconds=time.monotonic() - t0,
    )
