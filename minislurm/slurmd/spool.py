"""slurmd's spool directory (``SlurmdSpoolDir``): what outlives the controller.

Per batch job slurmd keeps ``job%05u/`` (the spooled ``slurm_script``) and one
socket per step daemon, ``<node>_<jobid>.<stepid>`` (the batch step's id is
``SLURM_BATCH_SCRIPT`` = 4294967291), through which slurmd and slurmctld reach a
running slurmstepd. minislurm adds three small records in ``job%05u/``, each written
atomically (temp file + rename):

* ``launch.json`` -- what the step daemon is to run (written before it starts);
* ``slurmstepd.json`` -- the step daemon's pid and process start time, so that a
  restarted controller can tell *that* process from a later one with the same pid;
* ``status.json`` -- how the batch script ended (exit code, signal, end time), written
  by the step daemon itself, so that a job that ended while no controller ran is
  still accounted for with its real end time.

Every record carries the attempt (``restart_count``) it belongs to: a requeued job
reuses its spool directory and its id.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

__all__ = [
    "BATCH_STEP_ID",
    "JobSpool",
    "process_start_ticks",
    "read_json",
    "write_json",
]

#: ``SLURM_BATCH_SCRIPT``: the step id of a batch script (slurm.h, 0xfffffffb).
BATCH_STEP_ID = 4294967291
def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` to ``path`` atomically (``path.tmp``, fsync, rename)."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as out:
        json.dump(data, out)
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, path)


def read_json(path: Path) -> dict[str, Any] | None:
    """The record at ``path``; None when it is missing or unreadable (an interrupted write
    never leaves a partial file, see `write_json`)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def process_start_ticks(pid: int) -> int | None:
    """Field 22 of ``/proc/<pid>/stat`` (start time in clock ticks after boot); None when
    the process does not exist or is a zombie (it has ended, only its parent has not
    collected it)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    fields = text[text.rindex(")") + 2:].split()
    if fields[0] in ("Z", "X"):
        return None
    return int(fields[19])


class JobSpool:
    """The spool records of one batch job (one attempt: ``restart_count``)."""

    def __init__(self, spool_dir: str | os.PathLike[str], job_id: int, node: str,
                 restart_count: int) -> None:
        self.root = Path(spool_dir)
        self.dir = self.root / f"job{job_id:05d}"
        self.job_id = job_id
        self.node = node
        self.restart_count = restart_count

    @property
    def socket(self) -> Path:
        """The step daemon's socket, ``<node>_<jobid>.<stepid>`` as slurmstepd names it."""
        return self.root / f"{self.node}_{self.job_id}.{BATCH_STEP_ID}"

    @property
    def launch(self) -> Path:
        return self.dir / "launch.json"

    @property
    def stepd(self) -> Path:
        return self.dir / "slurmstepd.json"

    @property
    def srun_ports(self) -> Path:
        """The ports of the job's sruns whose steps run (the batch step ends them)."""
        return self.dir / "srun_ports.json"

    @property
    def status(self) -> Path:
        return self.dir / "status.json"

    def mine(self, record: dict[str, Any] | None) -> dict[str, Any] | None:
        """``record`` if it belongs to this attempt."""
        if record is None or record.get("restart_count") != self.restart_count:
            return None
        return record

    def clear(self) -> None:
        """Forget the records of an earlier attempt (before this one is launched)."""
        for path in (self.launch, self.stepd, self.status, self.socket):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()

    def stepd_alive(self) -> int | None:
        """The pid of this attempt's step daemon if that very process still runs."""
        rec = self.mine(read_json(self.stepd))
        if rec is None:
            return None
        pid, ticks = int(rec["pid"]), rec.get("start_ticks")
        now_ticks = process_start_ticks(pid)
        if now_ticks is None or (ticks is not None and now_ticks != int(ticks)):
            return None  # gone, or the pid was reused by another process
        return pid

    def superseded(self) -> bool:
        """A later attempt of the job (a requeue) has been launched in this directory:
        this attempt must not write its records over that one's."""
        rec = read_json(self.launch)
        return rec is not None and int(rec.get("restart_count", -1)) > self.restart_count

    def result(self) -> dict[str, Any] | None:
        """How this attempt's batch script ended (None: not recorded)."""
        return self.mine(read_json(self.status))
