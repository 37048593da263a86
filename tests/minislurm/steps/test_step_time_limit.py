"""A step's own time limit: ``srun -t 1`` inside a batch job.

Measured on real Slurm 22.05.8 on 2026-12-04 (reference cluster, ``KillWait=5``): the
step ran until a periodic time-limit check (every 30 s) found it over its minute (89 s
in), and the job's output then read::

    in step
    slurmstepd-n1: error: *** STEP 1.0 ON n1 CANCELLED AT ... DUE TO TIME LIMIT ***
    srun: error: n1: task 0: Terminated
    srun: Force Terminated StepId=1.0
    after srun 143

(no ``Job step aborted`` line: the job goes on), and sacct logged the step ``TIMEOUT
0:15`` while the batch step and the job ended ``COMPLETED``.  minislurm used to let the
step run to its end.
"""

from __future__ import annotations

import re

import pytest
from minicluster import MiniCluster
from realslurm import RealSlurm
from realslurm.normalize import mask_volatile

#: Independent cases, each on its own cluster state: xdist may run them on any worker.
pytestmark = pytest.mark.spread

SCRIPT = """#!/bin/bash
srun -t 1 bash -c 'echo in step; sleep 200'
echo after srun $?
"""


def _step_timeout(cluster: MiniCluster | RealSlurm) -> tuple[list[str], list[str], int]:
    work = cluster.work_dir / "step-limit"
    work.mkdir(exist_ok=True)
    (work / "limit.sh").write_text(SCRIPT)
    job = cluster.run("sbatch --parsable -t 5 -o limit.out limit.sh", cwd=work).stdout.strip()
    assert cluster.wait_job(job, timeout=180) == "COMPLETED"
    cluster.wait_accounted(job)
    text = (work / "limit.out").read_text().replace(job, "J")
    lines = mask_volatile(text).splitlines()
    rows = cluster.run(f"sacct -n -P -j {job} -o JobID,State,ExitCode,ElapsedRaw").stdout
    steps = [r.rsplit("|", 1)[0] for r in rows.replace(job, "J").split()]
    step0 = [r for r in rows.replace(job, "J").split() if r.startswith("J.0|")]
    return lines, steps, int(step0[0].rsplit("|", 1)[1]) if step0 else -1


def _check(seen: tuple[list[str], list[str], int]) -> None:
    lines, steps, elapsed = seen
    lines = [re.sub(r"\bn\d\b", "nX", line) for line in lines]
    step = "slurmstepd-nX: error: *** STEP J.0 ON nX CANCELLED AT <time> DUE TO TIME LIMIT ***"
    assert lines == ["in step", step,
                     "srun: error: nX: task 0: Terminated",
                     "srun: Force Terminated StepId=J.0",
                     "after srun 143"]
    assert steps == ["J|COMPLETED|0:0", "J.batch|COMPLETED|0:0", "J.0|TIMEOUT|0:15"]
    assert 60 <= elapsed <= 95  # the first periodic check at or after its minute


def test_a_step_times_out_like_slurm(mini_slurm: MiniCluster) -> None:
    _check(_step_timeout(mini_slurm))


def test_a_step_times_out_on_real_slurm(real_slurm: RealSlurm) -> None:
    _check(_step_timeout(real_slurm))
