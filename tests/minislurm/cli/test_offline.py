"""The commands started as programs (``python -m minislurm NAME``) with no controller."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def _run(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "SQUEUE_"))}
    env["MINISLURM_STATE_DIR"] = str(tmp_path / "state")  # nothing listens there
    return subprocess.run([sys.executable, "-m", "minislurm", *argv], env=env, text=True,
                          capture_output=True, timeout=60, cwd=tmp_path)


def test_squeue_without_controller_prints_slurms_error_and_exits_1(tmp_path: Path) -> None:
    done = _run(tmp_path, "squeue")
    assert (done.returncode, done.stdout) == (1, "")
    lines = done.stderr.splitlines()
    assert lines[0] == "slurm_load_jobs error: Unable to contact slurm controller (connect failure)"
    assert "python -m minislurm cluster up" in lines[1]


def test_option_errors_need_no_controller(tmp_path: Path) -> None:
    done = _run(tmp_path, "squeue", "--bogus")
    assert (done.returncode, done.stdout, done.stderr) == (
        1, "", "squeue: unrecognized option '--bogus'\n"
               'Try "squeue --help" for more information\n')


@pytest.mark.parametrize(("argv", "out"), [
    (("scontrol", "show", "hostnames", "n[1-3,7]"), "n1\nn2\nn3\nn7\n"),
    (("sinfo", "--version"), "slurm 22.05.8\n"),
])
def test_what_works_offline(tmp_path: Path, argv: tuple[str, ...], out: str) -> None:
    done = _run(tmp_path, *argv)
    assert (done.returncode, done.stdout, done.stderr) == (0, out, "")
