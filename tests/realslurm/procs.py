"""Finding and ending exactly the processes one harness run started.

Every daemon the harness starts carries ``MINISLURM_REALSLURM_ROOT=<scratch
dir>`` in its environment, and every job task gets ``SLURM_CONF=<scratch
conf>`` from slurmd (see CAPTURES.md: "SLURM_CONF is set by slurmd itself").
Both strings are unique to one run, so scanning ``/proc/<pid>/environ`` finds
the run's daemons, slurmstepd processes and job tasks without ever matching a
process by its name. They are then ended one by one, by pid.

`processes` is the one scan of ``/proc`` the tests share (by command line, state,
session, start time); `environ` reads a process's initial environment.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

#: Environment variable placed in every daemon's environment.
MARKER = "MINISLURM_REALSLURM_ROOT"


def _environ(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return b""


def environ(pid: int) -> str:
    """Process ``pid``'s initial environment, ``NAME=value`` entries NUL-separated
    ("" when it is gone or not ours to read)."""
    return _environ(pid).decode(errors="replace")


@dataclass(frozen=True)
class Proc:
    """One process as ``/proc/<pid>/stat`` and ``cmdline`` show it."""

    pid: int
    cmdline: str  #: arguments joined by spaces
    state: str  #: ``R``, ``S``, ... ``Z`` for a zombie
    session: int  #: field 6, the session id
    started: str  #: field 22, start time in clock ticks: (pid, started) names one process

    @property
    def live(self) -> bool:
        return self.state not in ("Z", "X")


def proc(pid: int) -> Proc | None:
    """Process ``pid``, or None when there is none."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (OSError, IndexError):
        return None
    return Proc(pid, cmdline.replace(b"\0", b" ").decode(errors="replace").strip(),
                fields[0], int(fields[3]), fields[19])


def pids() -> Iterator[int]:
    """The pid of every process now on the machine."""
    return (int(name) for name in os.listdir("/proc") if name.isdigit())


def processes() -> Iterator[Proc]:
    """Every process now on the machine (one that ends during the scan is left out)."""
    for pid in pids():
        if (found := proc(pid)) is not None:
            yield found


def pids_with_env(entries: Iterable[str], *, every: bool = False) -> list[int]:
    """Pids (other than ours) whose initial environment holds one of ``entries``
    (each ``NAME=value``, matched as a whole entry), or all of them with ``every``
    (e.g. a job id AND its cluster's SLURM_CONF: clusters running side by side
    under pytest-xdist reuse the same job ids)."""
    wanted = [e.encode() for e in entries]
    match = all if every else any
    me = os.getpid()
    return sorted(pid for pid in pids() if pid != me
                  and match(w in _environ(pid).split(b"\0") for w in wanted))


def alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    found = proc(pid)
    return found is not None and found.live


def read_pid_file(path: Path) -> int | None:
    """The pid written in a daemon's pid file (SlurmctldPidFile, ...), if any."""
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def end_processes(pids: Iterable[int], *, grace: float = 5.0) -> list[int]:
    """SIGTERM each pid, wait up to ``grace`` s, SIGKILL the survivors.

    Returns the pids still alive afterwards (normally none).
    """
    targets = [p for p in pids if alive(p)]
    for pid in targets:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(alive(p) for p in targets):
        time.sleep(0.1)
    for pid in targets:
        if alive(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    time.sleep(0.2)
    return [p for p in targets if alive(p)]
