"""Submission checks against real Slurm 22.05 (captures b_sbatch_errors and b2_*).

Each captured ``sbatch ...`` that reached slurmctld is parsed by minislurm's front
end, submitted to a Controller built from the captured slurm.conf, and the
outcome compared: the exact stderr and exit code of a rejection, or the pending
reason of a job Slurm accepted but cannot run (EnforcePartLimits=NO).
"""

from __future__ import annotations

import shlex
from dataclasses import replace
from pathlib import Path

import pytest
from captures import capture_root, load_case

from minislurm.conf import load_config
from minislurm.ctld import Controller
from minislurm.errors import SlurmError, SubmitError
from minislurm.options.sbatch import parse_sbatch
from minislurm.states import Reason

ROOT = capture_root()
pytestmark = pytest.mark.skipif(ROOT is None, reason="../shared/slurm-reference is absent")


def _controller(enforce: str = "NO") -> Controller:
    assert ROOT is not None
    cfg = load_config(ROOT / "slurm.conf")
    if enforce != "NO":
        cfg = replace(cfg, enforce_part_limits=enforce)
    return Controller(cfg)


def _submit(ctl: Controller, folder: str, name: str) -> tuple[str, int, int | None]:
    """(stderr, rc, job id) of the captured sbatch command run through minislurm."""
    case = load_case(folder, name)
    argv = shlex.split(case.cmd.split(";")[0])[1:]
    env = {"HOME": "/root", "USER": "root", "PATH": "/usr/bin"}
    try:
        inv = parse_sbatch(argv, env=env, cwd=str(case.folder_path), now=ctl.now)
        return "", 0, ctl.submit_invocation(inv, cwd=str(case.folder_path))
    except SlurmError as exc:
        return exc.message, exc.exit_code, None


REJECTED = [
    "01_too_many_gpus_per_node",
    "03_unknown_gpu_type",
    "05_gpus_per_node_too_many",
    "19_cpus_per_task_too_many",
    "34_bad_dependency_syntax",
    "38_bad_array",
    "44_exclude_all",
]


@pytest.mark.parametrize("name", REJECTED)
def test_rejections_print_slurms_text(name: str) -> None:
    ctl = _controller()
    case = load_case("b_sbatch_errors", name)
    err, rc, _ = _submit(ctl, "b_sbatch_errors", name)
    assert (err, rc) == (case.err.rstrip("\n"), case.rc)


def test_unknown_partition_two_lines() -> None:
    ctl = _controller()
    case = load_case("b_sbatch_errors", "46_srun_unknown_partition")
    with pytest.raises(SubmitError) as info:
        ctl.submit(parse_sbatch(["-p", "nosuch", "--wrap", "true"], env={}, cwd="/tmp").options,
                   prog="srun")
    assert info.value.message == case.err.rstrip("\n")
    assert info.value.exit_code == 1


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("15_nodes_more_than_cluster", Reason.PARTITION_NODE_LIMIT),
        ("17_ntasks_more_than_cpus", Reason.PARTITION_CONFIG),
        ("09_bad_time_negative", Reason.PARTITION_TIME_LIMIT),
    ],
)
def test_accepted_but_pending_with_partition_reason(name: str, reason: Reason) -> None:
    ctl = _controller()
    err, rc, jid = _submit(ctl, "b_sbatch_errors", name)
    assert (err, rc) == ("", 0)
    assert jid is not None
    ctl.run_for(5)
    job = ctl.job(jid)
    assert job.state.value == "PENDING"
    assert job.reason is reason


def test_time_zero_is_unlimited() -> None:
    ctl = _controller()
    _err, _rc, jid = _submit(ctl, "b_sbatch_errors", "56_time_zero")
    assert jid is not None
    assert ctl.job(jid).time_limit is None
    assert ctl.job(jid).reason is Reason.JOB_HELD_USER or ctl.job(jid).hold


@pytest.mark.parametrize(
    "name", ["02_nodes_more_than_cluster", "04_ntasks_more_than_cpus"]
)
def test_enforce_part_limits_all_rejects(name: str) -> None:
    ctl = _controller("ALL")
    folder = "b2_sbatch_errors_EnforcePartLimits_ALL"
    case = load_case(folder, name)
    err, rc, _ = _submit(ctl, folder, name)
    assert (err, rc) == (case.err.rstrip("\n"), case.rc)


def test_rejected_submissions_consume_job_ids_and_show_failed() -> None:
    ctl = _controller()
    first = ctl.submit(parse_sbatch(["--wrap", "true"], env={}, cwd="/tmp").options)
    with pytest.raises(SubmitError):
        ctl.submit(parse_sbatch(["--gres=gpu:5", "--wrap", "true"], env={}, cwd="/tmp").options)
    third = ctl.submit(parse_sbatch(["--wrap", "true"], env={}, cwd="/tmp").options)
    assert third == first + 2
    failed = [r for r in ctl.accounting() if r.job_id == first + 1]
    assert [(r.state.value, r.exit_code) for r in failed] == [("FAILED", 1)]


def test_capture_folder_has_the_config() -> None:
    assert ROOT is not None and Path(ROOT / "slurm.conf").is_file()
