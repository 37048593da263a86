"""Lesson 4: two DDP trainings side by side in one allocation, each its own ``srun --exact`` step.

The sweep pattern of the lesson (``sbatch -N1 -n4`` with two ``srun --exact -n2 ... &``
steps) runs on minislurm's local cluster: real processes, real gloo. Both steps start on
the same node, so their rank 0s share ``MASTER_ADDR``; they only work because
``course/ddp/wiring.py`` puts the step id into ``MASTER_PORT``
(``20000 + (job id + 1009 x step id) % 10000``). Each rank 0's log says which address and
port it used; ``sacct -P -o JobID,State,NodeList`` says how each step ended.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from course.ddp.logfmt import parse_records
from course.ddp.wiring import master_port
from course.lessons.ddp_ranks import LIMIT, LocalCluster

__all__ = ["SWEEP_SH", "StepRow", "SweepRun", "format_steps", "run_sweep"]

#: The batch script: two 2-rank trainings at once, each an ``srun --exact`` step.
SWEEP_SH = """#!/bin/bash
#SBATCH -N1 -n4 -o sweep-%j.out
for run in a b; do
    srun --exact -n2 -o "$run-%s-%t.out" "${PYTHON:-python}" -m course.ddp.train \\
        --checkpoint-dir "ckpt-$run" "$@" &
done
wait
"""
#: Training arguments: short, slow enough per step that both steps overlap in time.
TRAIN_ARGS = ("--steps", "20", "--checkpoint-every", "100", "--timeout", "60",
              "--step-time", "0.1")
_TASK_LOG = re.compile(r"^(?P<run>[ab])-(?P<step>\d+)-(?P<task>\d+)\.out$")


@dataclass(frozen=True, slots=True)
class StepRow:
    """One step of the sweep, as its rank 0's log and sacct tell it."""

    run: str  # "a" or "b": which loop iteration started it
    step_id: int
    world_size: int
    master: str  # MASTER_ADDR:MASTER_PORT rank 0 listened on
    port_is_the_steps: bool  # master's port == master_port(job id, step id)
    addr_in_use: bool  # EADDRINUSE anywhere in its ranks' logs
    state: str  # sacct State of the step
    digest: str  # sha256 of the final parameters (rank 0)


@dataclass(frozen=True, slots=True)
class SweepRun:
    """What ``sbatch --wait sweep.sh`` did: its exit code, job id and steps."""

    returncode: int
    job_id: int
    steps: tuple[StepRow, ...]
    stderr: str


def _final_digest(text: str) -> str:
    finals = [f for kind, f in parse_records(text.splitlines()) if kind == "final"]
    return finals[-1].get("sha256", "") if finals else ""


def run_sweep(cluster: LocalCluster, folder: str = "sweep",
              train_args: Sequence[str] = TRAIN_ARGS) -> SweepRun:
    """Write `SWEEP_SH` into ``<work>/<folder>``, run ``sbatch --parsable --wait`` on it and
    read back each step's rank logs and ``sacct`` line."""
    work = cluster.work_dir / folder
    work.mkdir(parents=True, exist_ok=True)
    (work / "sweep.sh").write_text(SWEEP_SH)
    res = cluster.run(["sbatch", "--parsable", "--wait", "sweep.sh", *train_args], cwd=work,
                      extra_env={"PYTHON": sys.executable}, timeout=LIMIT)
    match = re.match(r"(\d+)", res.stdout)
    if match is None:
        raise RuntimeError(f"sbatch printed no job id: {res.stdout}{res.stderr}")
    job_id = int(match.group(1))
    sacct = cluster.run(["sacct", "-j", str(job_id), "-P", "-n", "-o", "JobID,State"],
                        timeout=30)
    states = dict(line.split("|", 1) for line in sacct.stdout.splitlines() if "|" in line)
    logs: dict[tuple[str, int], dict[int, str]] = {}
    for path in sorted(work.glob("*.out")):
        m = _TASK_LOG.match(path.name)
        if m:
            key = (m["run"], int(m["step"]))
            logs.setdefault(key, {})[int(m["task"])] = path.read_text()
    rows = []
    for (run, step_id), tasks in sorted(logs.items()):
        rank0 = tasks.get(0, "")
        start = next((f for kind, f in parse_records(rank0.splitlines()) if kind == "start"), {})
        master = start.get("master", "")
        rows.append(StepRow(
            run=run, step_id=step_id, world_size=int(start.get("world", "0")), master=master,
            port_is_the_steps=master.endswith(f":{master_port(job_id, step_id)}"),
            addr_in_use=any("EADDRINUSE" in text for text in tasks.values()),
            state=states.get(f"{job_id}.{step_id}", "?"), digest=_final_digest(rank0)))
    return SweepRun(res.returncode, job_id, tuple(rows), res.stderr)


def format_steps(run: SweepRun) -> str:
    """A table of the steps (ports as offsets from step 0's, so the table does not depend
    on the job id) and whether both steps trained to the same parameters."""
    head = ("step", "ranks", "MASTER_PORT", "= port of (job, step)", "EADDRINUSE", "sacct State")
    base = next((r for r in run.steps if r.step_id == 0), None)
    base_port = int(base.master.rsplit(":", 1)[1]) if base and base.master else 0
    rows = []
    for r in sorted(run.steps, key=lambda s: s.step_id):
        port = int(r.master.rsplit(":", 1)[1]) if r.master else 0
        offset = "step 0's" if r.step_id == 0 else f"step 0's {port - base_port:+d}"
        rows.append((f"{r.step_id}", f"{r.world_size}", offset, str(r.port_is_the_steps),
                     str(r.addr_in_use), r.state))
    widths = [max(len(x[c]) for x in (head, *rows)) for c in range(len(head))]
    lines = ["  ".join(f"{cell:<{w}}" for cell, w in zip(x, widths, strict=True)).rstrip()
             for x in (head, *rows)]
    digests = {r.digest for r in run.steps}
    same = len(digests) == 1 and "" not in digests
    lines.append(f"both steps trained to the same parameters: {same}")
    return "\n".join(lines)
