"""Replaying a captured command on the harness the way the captures were made.

The capture runner (CAPTURES.md) ran each command with bash in the case folder
and wrote, per command NAME: NAME.cmd before running it, NAME.out / NAME.err
while it ran (stdout/stderr go straight into them), NAME.rc afterwards, and
appended it to transcript.txt. Outputs that list the folder (``ls``) show
exactly these files, so :func:`replay` writes them the same way.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path

from captures import Case

from .harness import RealSlurm, Result


def case_dir(
    cluster: RealSlurm,
    folder: str,
    inputs: Iterable[Path] = (),
    files: Mapping[str, str] | None = None,
) -> Path:
    """A fresh ``<root>/work/<folder>`` (like /srv/slurm-ref/work/<folder>) holding
    copies of ``inputs`` and the given ``files`` (name -> text)."""
    path = cluster.work_dir / folder
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    for src in inputs:
        shutil.copy(src, path / src.name)
    for name, text in (files or {}).items():
        (path / name).write_text(text)
    return path


def replay(
    cluster: RealSlurm,
    cmd: str,
    name: str,
    cwd: Path,
    *,
    timeout: float = 60.0,
    env: Mapping[str, str] | None = None,
) -> Result:
    """Run ``cmd`` with bash in ``cwd`` as command NAME (writing NAME.cmd/.out/.err/.rc
    and appending to transcript.txt); return what it printed."""
    (cwd / f"{name}.cmd").write_text(cmd + "\n")
    out_path, err_path = cwd / f"{name}.out", cwd / f"{name}.err"
    with out_path.open("wb") as out, err_path.open("wb") as err:
        proc = subprocess.Popen(
            ["bash", "-c", cmd],
            cwd=cwd,
            env={**cluster.env, **(env or {})},
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
        )
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()
            rc = 124
    (cwd / f"{name}.rc").write_text(f"{rc}\n")
    result = Result(out_path.read_text(errors="replace"), err_path.read_text(errors="replace"), rc)
    with (cwd / "transcript.txt").open("a") as transcript:
        transcript.write(
            f"### [{name}] $ {cmd}\n--- stdout:\n{result.stdout}--- stderr:\n"
            f"{result.stderr}--- exit code: {rc}\n\n"
        )
    return result


def replay_case(cluster: RealSlurm, case: Case, cwd: Path, *, timeout: float = 60.0) -> Result:
    """:func:`replay` of a captured :class:`captures.Case` under its own name."""
    return replay(cluster, case.cmd, case.name, cwd, timeout=timeout)
