"""Starting the daemons of one single-host cluster, one function per daemon.

Each function starts one daemon exactly as /work/shared/NOTES.md ("Real Slurm
22.05 on one host") describes, waits until it answers, and raises
:class:`StartFailure` if it does not. The caller (harness.RealSlurm) decides the
order: munged, then MariaDB + slurmdbd (optional), slurmctld, one ``slurmd -N nK``
per node.
"""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Callable, Mapping
from pathlib import Path


class StartFailure(RuntimeError):
    """A daemon did not come up; the message says which and why."""


def wait_until(
    check: Callable[[], bool], *, timeout: float, what: str, interval: float = 0.1
) -> float:
    """Poll ``check`` until true; return the seconds waited or raise StartFailure."""
    start = time.monotonic()
    while True:
        if check():
            return time.monotonic() - start
        if time.monotonic() - start > timeout:
            raise StartFailure(f"{what}: not ready after {timeout:.0f} s")
        time.sleep(interval)


def tcp_open(port: int, host: str = "127.0.0.1") -> bool:
    """True when something accepts TCP connections on host:port."""
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def _launch(argv: list[str], env: Mapping[str, str], log: Path) -> None:
    """Run a self-daemonising program (munged, slurmctld, slurmd, slurmdbd): the
    parent exits after forking; a non-zero exit means it refused to start."""
    with log.open("ab") as out:
        proc = subprocess.run(
            argv,
            env=dict(env),
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            timeout=30,
            check=False,
        )
    if proc.returncode != 0:
        raise StartFailure(f"{' '.join(argv)} exited with {proc.returncode}")


def make_munge_key(key: Path, env: Mapping[str, str], log: Path) -> None:
    """``mungekey -c -k <key>`` (a fresh key per cluster)."""
    _launch(["mungekey", "-c", "-k", str(key)], env, log)
    key.chmod(0o600)


def start_munged(root: Path, env: Mapping[str, str], timeout: float) -> None:
    """``munged --key-file --socket --pid-file --seed-file --log-file`` under ``root``;
    slurm.conf points at the socket with ``AuthInfo=socket=<root>/run/munge.socket``."""
    sock = root / "run" / "munge.socket"
    _launch(
        [
            "munged",
            f"--key-file={root / 'etc' / 'munge.key'}",
            f"--socket={sock}",
            f"--pid-file={root / 'run' / 'munged.pid'}",
            f"--seed-file={root / 'state' / 'munged.seed'}",
            f"--log-file={root / 'logs' / 'munged.log'}",
            "--force",
        ],
        env,
        root / "logs" / "munged.stdout",
    )
    wait_until(sock.exists, timeout=timeout, what="munged (socket)")


def start_mariadb(
    root: Path, port: int, env: Mapping[str, str], timeout: float
) -> subprocess.Popen[bytes]:
    """A throw-away MariaDB for slurmdbd: empty datadir, 127.0.0.1:port only,
    ``--skip-grant-tables`` (no users to create; nothing else can reach it)."""
    data = root / "db"
    data.mkdir(exist_ok=True)
    log = root / "logs" / "mariadb.log"
    argv = [
        "mariadbd",
        "--no-defaults",
        f"--datadir={data}",
        f"--socket={root / 'run' / 'mariadb.sock'}",
        f"--port={port}",
        "--bind-address=127.0.0.1",
        f"--pid-file={root / 'run' / 'mariadb.pid'}",
        f"--log-error={log}",
        "--user=root",
        "--skip-grant-tables",
        "--skip-name-resolve",
        "--performance-schema=OFF",
        "--innodb-buffer-pool-size=16M",
        "--innodb-log-file-size=4M",
    ]
    with (root / "logs" / "mariadb.stdout").open("ab") as out:
        proc = subprocess.Popen(
            argv,
            env=dict(env),
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )

    def ready() -> bool:
        if proc.poll() is not None:
            raise StartFailure(f"mariadbd exited with {proc.returncode}")
        return tcp_open(port)

    wait_until(ready, timeout=timeout, what="mariadbd")
    return proc


def start_slurmdbd(root: Path, port: int, env: Mapping[str, str], timeout: float) -> None:
    """``slurmdbd`` (reads slurmdbd.conf beside $SLURM_CONF); ready when DbdPort answers."""
    _launch(["slurmdbd"], env, root / "logs" / "slurmdbd.stdout")
    wait_until(lambda: tcp_open(port), timeout=timeout, what="slurmdbd")


def fatal_in_log(log: Path) -> str | None:
    """The first ``fatal:`` line of a Slurm daemon log (the daemon has exited)."""
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return None
    return next((line for line in text.splitlines() if "fatal:" in line), None)


def start_slurmctld(root: Path, conf: Path, env: Mapping[str, str], timeout: float) -> None:
    """``slurmctld -f <conf>`` (daemonised, SlurmctldPidFile); ready when
    ``scontrol ping`` reports it UP; fails at once on a ``fatal:`` log line."""
    _launch(["slurmctld", "-f", str(conf)], env, root / "logs" / "slurmctld.stdout")

    def up() -> bool:
        fatal = fatal_in_log(root / "logs" / "slurmctld.log")
        if fatal:
            raise StartFailure(f"slurmctld: {fatal}")
        ping = subprocess.run(
            ["scontrol", "ping"],
            env=dict(env),
            capture_output=True,
            text=True,
            timeout=15,
            check=False,
        )
        return " is UP" in ping.stdout

    wait_until(up, timeout=timeout, what="slurmctld (scontrol ping)", interval=0.3)


def start_slurmd(root: Path, conf: Path, node: str, env: Mapping[str, str]) -> None:
    """``slurmd -f <conf> -N <node>``: one logical node per daemon, all on 127.0.0.1."""
    _launch(["slurmd", "-f", str(conf), "-N", node], env, root / "logs" / f"slurmd.{node}.stdout")


def nodes_idle(env: Mapping[str, str], nodes: tuple[str, ...], logs: Path) -> bool:
    """True when ``sinfo -N`` shows every node of ``nodes`` idle; raises StartFailure
    when a slurmd log (SlurmdLogFile=logs/slurmd.%n.log) has a ``fatal:`` line."""
    for node in nodes:
        fatal = fatal_in_log(logs / f"slurmd.{node}.log")
        if fatal:
            raise StartFailure(f"slurmd -N {node}: {fatal}")
    out = subprocess.run(
        ["sinfo", "-h", "-N", "-o", "%N %T"],
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=15,
        check=False,
    ).stdout
    states = dict(line.split() for line in out.splitlines() if len(line.split()) == 2)
    return all(states.get(n) == "idle" for n in nodes)
