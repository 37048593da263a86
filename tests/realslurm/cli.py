"""``scripts/realslurm {start|stop|status|env}``: the test suite's real cluster, by hand.

Starts the same 4-node Slurm 22.05 cluster as the ``real_slurm`` fixture, in a
fixed folder (default /tmp/minislurm-realslurm, or ``--dir``), so that a
learner can try a lesson's commands on real Slurm::

    $ sudo scripts/realslurm start
    export SLURM_CONF=/tmp/minislurm-realslurm/etc/slurm.conf
    $ eval "$(sudo scripts/realslurm env)"; sbatch --wrap hostname; squeue
    $ sudo scripts/realslurm stop

Exit codes: 0 ok, 1 the cluster could not start / is not running, 2 usage.
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from .harness import STATE_FILE, HarnessUnavailable, RealSlurm

DEFAULT_DIR = Path("/tmp/minislurm-realslurm")


def _export_line(cluster: RealSlurm) -> str:
    return f"export SLURM_CONF={shlex.quote(str(cluster.conf_path))}"


def _attach(root: Path) -> RealSlurm | None:
    if not (root / STATE_FILE).is_file():
        return None
    return RealSlurm.attach(root)


def start(root: Path, accounting: bool) -> int:
    """Start a fresh cluster in ``root`` unless one is running there already."""
    running = _attach(root)
    if running is not None and running.pids():
        print(f"realslurm: already running in {root}", file=sys.stderr)
        print(_export_line(running))
        return 0
    if root.exists():
        if running is None and any(root.iterdir()):
            print(
                f"realslurm: {root} exists and is not a realslurm folder; not touching it",
                file=sys.stderr,
            )
            return 1
        shutil.rmtree(root)
    root.mkdir(parents=True)
    cluster = RealSlurm(root, accounting=accounting)
    try:
        cluster.start()
    except HarnessUnavailable as exc:
        print(f"realslurm: {exc}", file=sys.stderr)
        return 1
    parts = ", ".join(f"{k} {v:.2f} s" for k, v in cluster.timings.items())
    print(f"realslurm: started in {root} ({parts})", file=sys.stderr)
    print(_export_line(cluster))
    return 0


def stop(root: Path) -> int:
    """End every process of the cluster in ``root``."""
    cluster = _attach(root)
    if cluster is None:
        print(f"realslurm: no cluster in {root}", file=sys.stderr)
        return 1
    left = cluster.stop()
    if left:
        print(f"realslurm: processes still alive: {left}", file=sys.stderr)
        return 1
    print(f"realslurm: stopped ({root})", file=sys.stderr)
    return 0


def status(root: Path) -> int:
    """``sinfo -N`` of the cluster, or 'not running' (rc 1)."""
    cluster = _attach(root)
    if cluster is None or not cluster.pids():
        print("not running")
        return 1
    print(cluster.status(), end="")
    return 0


def env(root: Path) -> int:
    """The ``export SLURM_CONF=...`` line for the shell."""
    cluster = _attach(root)
    if cluster is None:
        print(f"realslurm: no cluster in {root}", file=sys.stderr)
        return 1
    print(_export_line(cluster))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="realslurm", description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=["start", "stop", "status", "env"])
    parser.add_argument(
        "--dir", type=Path, default=DEFAULT_DIR, help=f"cluster folder (default {DEFAULT_DIR})"
    )
    parser.add_argument(
        "--no-accounting",
        action="store_true",
        help="no MariaDB/slurmdbd (sacct unavailable; starts ~1 s faster)",
    )
    args = parser.parse_args(argv)
    root = args.dir.resolve()
    if args.command == "start":
        return start(root, accounting=not args.no_accounting)
    if args.command == "stop":
        return stop(root)
    if args.command == "status":
        return status(root)
    return env(root)
