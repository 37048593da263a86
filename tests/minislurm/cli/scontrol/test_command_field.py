"""``Command=`` (scontrol show job) and squeue's ``%o``: the script path and its arguments.

Measured on 22.05.8: ``sbatch /path/s.sh a b`` shows ``Command=/path/s.sh a b``; a job
from ``--wrap`` or from a script on standard input has no command file: ``(null)`` in
both (their job names are ``wrap`` and ``sbatch``).  Replayed on minislurm's embedded
cluster and on real Slurm.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from captures import checked_stdout, reference_cluster
from realslurm import RealSlurm

SCRIPT = "#!/bin/sh\nsleep 100\n"


def _scene(run: Callable[[str], str], piped: Callable[[str, str], str],
           folder: Path) -> list[str]:
    """``piped(cmd, text)`` runs ``cmd`` with ``text`` on its standard input."""
    (folder / "s.sh").write_text(SCRIPT)
    ids = [run(f"sbatch --parsable -H {folder}/s.sh a b").strip(),
           run("sbatch --parsable -H --wrap 'sleep 5'").strip(),
           piped("sbatch --parsable -H", SCRIPT).strip()]
    try:
        out = []
        for job in ids:
            shown = run(f"scontrol show job {job}")
            command = next(ln.strip() for ln in shown.splitlines() if "Command=" in ln)
            out.append(command + " | " + run(f"squeue -h -j {job} -o '%j|%o'").strip())
        return [line.replace(str(folder), "<dir>") for line in out]
    finally:
        run("scancel " + " ".join(ids))


WANT = ["Command=<dir>/s.sh a b | s.sh|<dir>/s.sh a b",
        "Command=(null) | wrap|(null)",
        "Command=(null) | sbatch|(null)"]


def test_command_on_minislurm(tmp_path: Path) -> None:
    cluster = reference_cluster(tmp_path)

    def piped(cmd: str, text: str) -> str:
        return checked_stdout(cluster.run, stdin=text)(cmd)

    assert _scene(checked_stdout(cluster.run), piped, tmp_path) == WANT


@pytest.mark.realslurm
def test_command_on_real_slurm(real_slurm: RealSlurm, tmp_path: Path) -> None:
    def piped(cmd: str, text: str) -> str:
        return checked_stdout(real_slurm.run, cwd=tmp_path, input=text)(cmd)

    assert _scene(checked_stdout(real_slurm.run, cwd=tmp_path), piped, tmp_path) == WANT
