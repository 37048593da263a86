"""The DDP example's batch script, course/ddp/job.sh, as sbatch reads it."""

from __future__ import annotations

import subprocess
from pathlib import Path

from minislurm.options import parse_sbatch, sbatch_directives

JOB_SH = Path(__file__).resolve().parents[3] / "course" / "ddp" / "job.sh"


def test_the_directives_ask_for_two_nodes_of_two_tasks_with_gpus_and_requeue() -> None:
    directives = sbatch_directives(JOB_SH.read_text())
    assert directives[2:7] == ["-N", "2", "--ntasks-per-node=2", "--gres=gpu:2", "--requeue"]
    invocation = parse_sbatch([str(JOB_SH), "--steps", "50"], env={}, cwd=str(JOB_SH.parent))
    options = invocation.options
    assert (options.nodes_min, options.nodes_max, options.ntasks_per_node) == (2, 2, 2)
    assert (options.gres, options.requeue, options.time_limit) == ("gpu:2", True, 10)
    assert options.open_mode == "append"  # a requeued job's runs share one log
    assert invocation.script_args == ("--steps", "50")


def test_the_script_is_valid_bash_and_executable() -> None:
    assert JOB_SH.read_text().startswith("#!/bin/bash\n")
    assert subprocess.run(["bash", "-n", str(JOB_SH)], check=False).returncode == 0
    assert JOB_SH.stat().st_mode & 0o111


def test_every_task_runs_the_module_under_srun() -> None:
    text = JOB_SH.read_text()
    assert 'srun --kill-on-bad-exit=1 "${PYTHON:-python}" -m course.ddp.train' in text
