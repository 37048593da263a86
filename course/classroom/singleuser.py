"""A learner's server: their minislurm cluster up, JupyterLab under the hub, cluster down.

The hub's spawner runs ``python -m course.classroom.singleuser [server args]``
instead of ``jupyterhub-singleuser``.  It

1. copies the course's notebooks to ``~/course`` the first time (the server's root;
   the learner's edits are kept afterwards);
2. points ``MINISLURM_STATE_DIR`` at ``~/.local/state/minislurm/class`` (unless the
   spawner set it) and puts the commands (``sbatch``, ``squeue``, ...) first on
   ``PATH``, for the server, its kernels and its terminals;
3. starts the learner's own cluster (``minislurm cluster up``: slurmctld and its
   node daemons, which pick up the saved state), then ``jupyterhub-singleuser``;
4. when the server stops (the hub's SIGTERM, which it forwards), stops the
   cluster (``minislurm cluster down``: running jobs cancelled, pending ones and
   the accounting kept for the next start).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from types import FrameType


def learner_env(env: dict[str, str], image: Path, home: Path) -> dict[str, str]:
    """The environment of the server, its kernels and terminals."""
    out = dict(env)
    out.setdefault("MINISLURM_STATE_DIR", str(home / ".local" / "state" / "minislurm" / "class"))
    path = out.get("PATH", "/usr/bin:/bin")
    first = str(image / "bin")
    if path.split(os.pathsep)[0] != first:
        out["PATH"] = first + os.pathsep + path
    out["PYTHONPATH"] = str(image)
    return out


def cluster(action: str, env: dict[str, str], *extra: str) -> int:
    """``python -m minislurm cluster <action>`` in the learner's environment."""
    return subprocess.run([sys.executable, "-m", "minislurm", "cluster", action, *extra],
                          env=env, stdin=subprocess.DEVNULL, timeout=180).returncode


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    image = Path(os.environ.get("COURSE_IMAGE") or Path(__file__).resolve().parents[2])
    home = Path.home()
    course = home / "course"
    if not course.exists():
        shutil.copytree(image / "notebooks", course)
    env = learner_env(dict(os.environ), image, home)
    Path(env["MINISLURM_STATE_DIR"]).mkdir(parents=True, exist_ok=True)
    if cluster("up", env) != 0:
        print("course: the learner's minislurm cluster did not start", file=sys.stderr)
        return 1
    server = subprocess.Popen([sys.executable, "-m", "jupyterhub.singleuser", *args], env=env)

    def forward(signum: int, frame: FrameType | None) -> None:
        server.send_signal(signum)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, forward)
    try:
        rc = server.wait()
    finally:
        cluster("down", env)
    return rc


if __name__ == "__main__":
    sys.exit(main())
