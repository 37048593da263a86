"""The README's failure drill, run line by line as a learner in a JupyterLab terminal would.

The ``sh`` block after "so does the failure drill" is taken from README.md as it is
and run with bash, one line at a time, against a local cluster on the embedded default
configuration (what ``scripts/course`` starts), with the commands on PATH as in
JupyterLab's terminals. Only what a learner fills in changes: ``<id>`` becomes the job
id sbatch printed, and ``--steps 200`` becomes 30 to keep the test short. Between the
lines the test waits as a learner watching ``squeue`` would (the first checkpoint before
the node goes down, the requeue before looking at the job) and checks what each line's
comment promises; the final parameters must equal an uninterrupted run's, bit for bit.
The submit folder stands in for the repository (``course`` links to it), so that the
job's log and checkpoints stay out of the checkout. Every command has a timeout; the
cluster is always brought down and its processes ended.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from realslurm.procs import end_processes, pids_with_env

pytest.importorskip("torch")
pytestmark = [pytest.mark.slow, pytest.mark.ddp_ports]

REPO = Path(__file__).resolve().parents[2]
STEPS = "30"
LIMIT = 180.0


def drill_lines() -> list[str]:
    """The command lines of the README's drill block (comments dropped)."""
    readme = (REPO / "README.md").read_text()
    after = readme.split("so does the failure drill", 1)[1]
    block = after.split("```sh\n", 1)[1].split("```", 1)[0]
    lines = [line.split("  #", 1)[0].rstrip() for line in block.splitlines()]
    return [line for line in lines if line]


def digest(text: str) -> str:
    found = re.findall(r"^final step=\d+ sha256=([0-9a-f]+)$", text, re.M)
    return found[-1] if found else ""


class Learner:
    """A JupyterLab terminal: bash with bin/ and the venv first on PATH, one cluster."""

    def __init__(self, root: Path) -> None:
        self.work = root / "work"
        self.work.mkdir(parents=True)
        (self.work / "course").symlink_to(REPO / "course")
        self.state = root / "state"
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("SLURM_", "SBATCH_", "SRUN_", "SQUEUE_", "COURSE_DDP_"))}
        env.update(MINISLURM_STATE_DIR=str(self.state), OMP_NUM_THREADS="1",
                   PATH=f"{REPO / 'bin'}:{REPO / '.venv' / 'bin'}:{env.get('PATH', '')}")
        self.env = env

    def sh(self, line: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", "-c", line], cwd=self.work, env=self.env, text=True,
                              capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)

    def wait(self, what: str, predicate: Callable[[], bool], timeout: float = LIMIT) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                pytest.fail(f"timed out after {timeout} s waiting for {what}")
            time.sleep(0.3)

    def field(self, job: int, name: str) -> str:
        text = self.sh(f"scontrol show job {job}").stdout
        match = re.search(rf"\b{name}=(\S*)", text)
        return match.group(1) if match else ""


@pytest.fixture
def learner(tmp_path: Path) -> Iterator[Learner]:
    who = Learner(tmp_path)
    up = who.sh(f"{sys.executable} -m minislurm cluster up", timeout=60)
    assert up.returncode == 0, up.stdout + up.stderr
    try:
        yield who
    finally:
        who.sh(f"{sys.executable} -m minislurm cluster down", timeout=120)
        assert end_processes(pids_with_env([f"MINISLURM_STATE_DIR={who.state}"]),
                             grace=3.0) == []


def test_the_readme_drill_runs_as_written_and_ends_bit_identical(learner: Learner) -> None:
    lines = drill_lines()
    assert lines[0].startswith("sbatch ") and " --steps 200 " in lines[0] + " ", lines
    submit = learner.sh(lines[0].replace("--steps 200", f"--steps {STEPS}"))
    assert submit.returncode == 0, submit.stderr
    match = re.fullmatch(r"Submitted batch job (\d+)\n", submit.stdout)
    assert match, submit.stdout
    job = int(match.group(1))
    log = learner.work / f"slurm-{job}.out"

    def job_pids() -> list[int]:  # this learner's job, not another cluster's job of that id
        return pids_with_env([f"SLURM_JOB_ID={job}", f"MINISLURM_STATE_DIR={learner.state}"],
                             every=True)

    learner.wait("the first checkpoint",
                 lambda: log.exists() and "checkpoint step=" in log.read_text())
    outputs: dict[str, str] = {}
    for line in lines[1:]:
        line = line.replace("<id>", str(job))
        if "state=down" in line:
            ranks = job_pids()
            assert len(ranks) >= 4, ranks  # batch shell, srun and a rank on each node
        if "starttime=now" in line:
            learner.wait("the requeue", lambda: learner.field(job, "JobState") == "PENDING", 60)
        if line.startswith(("sacct", "grep")):
            learner.wait("the job's end", lambda: learner.field(job, "JobState") == "COMPLETED")
        done = learner.sh(line)
        assert done.returncode == 0, f"{line}\n{done.stdout}{done.stderr}"
        outputs["scontrol show" if line.startswith("scontrol show") else line.split()[0]] = \
            done.stdout
        if "state=down" in line:
            learner.wait("every process of the job to end",
                         lambda: not job_pids(), 30)
            learner.wait("the requeue", lambda: learner.field(job, "JobState") == "PENDING", 60)
            said = log.read_text()  # what the README says the log holds before the restart
            assert "srun: error: Node failure on gpu02\n" in said, said
            for what in ("STEP", "JOB"):
                assert re.search(rf"^slurmstepd-gpu01: error: \*\*\* {what} {job}(\.0)? ON "
                                 r"gpu01 CANCELLED AT \S+ DUE TO NODE FAILURE, SEE SLURMCTLD "
                                 r"LOG FOR DETAILS \*\*\*$", said, re.M), said
    assert re.search(rf"^\s+{job}\s.* R .* gpu\[01-02\]$", outputs["squeue"], re.M), outputs
    shown = outputs["scontrol show"]
    assert "JobState=PENDING" in shown and "Reason=BeginTime" in shown
    assert "Restarts=1" in shown
    states = [row.split()[:2] for row in outputs["sacct"].splitlines()[2:]]
    assert states[0] == [str(job), "NODE_FAIL"] and [str(job), "COMPLETED"] in states, states
    grep = outputs["grep"]
    assert f"job {job} on gpu[01-02] restart_count=1" in grep
    assert re.search(r"^resume step=\d+ .*restart_count=1$", grep, re.M), grep

    reference = learner.sh(
        f"python -m course.ddp.launch_bare -n 2 --job-id {job + 50} -K -- python -m "
        f"course.ddp.train --steps {STEPS} --checkpoint-dir {learner.work / 'ref'}",
        timeout=LIMIT)
    assert reference.returncode == 0, reference.stderr
    assert digest(log.read_text()) == digest(reference.stdout) != ""
