"""tests/minicluster.py: the commands a test runs import this checkout's minislurm.

A worktree (``git worktree``) shares the venv, whose installed ``minislurm`` may be
another checkout's: without ``PYTHONPATH`` in ``MiniCluster.env`` a job's ``srun``
would run that other code.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from minicluster import REPO, MiniCluster, python


def test_env_puts_this_checkout_first(tmp_path: Path) -> None:
    env = MiniCluster(tmp_path).env
    assert env["PYTHONPATH"] == str(REPO)
    out = subprocess.run(
        [python(), "-c", "import minislurm; print(minislurm.__file__)"],
        env=env, capture_output=True, text=True, check=True, cwd=tmp_path,
    ).stdout.strip()
    assert Path(out).resolve() == (REPO / "minislurm" / "__init__.py").resolve()
