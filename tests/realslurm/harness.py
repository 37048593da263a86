"""A real Slurm 22.05 cluster (Debian's slurm-wlm) on this host, for tests.

``RealSlurm(root).start()`` lays out a scratch folder like the reference
cluster's ``/srv/slurm-ref`` (etc/ run/ state/ logs/ dev/ work/), writes
slurm.conf and gres.conf equal to the reference ones with paths and ports
rewritten, makes 4 fake GPUs per node (``mknod dev/nvidiaN c 195 N``), a munge
key, and starts munged, optionally MariaDB + slurmdbd (for sacct), slurmctld and
one ``slurmd -N nK`` per node n1..n4; it returns when ``sinfo`` shows all nodes
idle. ``stop()`` ends every process of the run (see procs.py) and checks none is
left. Commands run through :meth:`RealSlurm.run` get the captures' fixed small
environment (CAPTURES.md: "Every command ran with a fixed small environment")
plus ``SLURM_CONF``.

Needs root (SlurmUser=root, SlurmdUser=root, mknod). When it cannot start,
:class:`HarnessUnavailable` says why, with the last lines of the daemon logs.
"""

from __future__ import annotations

import json
import os
import pwd
import re
import shutil
import subprocess
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import ClassVar, Self

from . import daemons, procs
from .conf import GPUS_PER_NODE, NODE_NAMES, ClusterConfig, gres_conf, slurm_conf, slurmdbd_conf
from .ports import PortPlan, choose_ports

SLURM_BINARIES = (
    "munged",
    "mungekey",
    "slurmctld",
    "slurmd",
    "sbatch",
    "srun",
    "squeue",
    "sinfo",
    "scontrol",
    "scancel",
)
ACCOUNTING_BINARIES = ("mariadbd", "slurmdbd", "sacct")
#: JobState values after which a job will not change any more.
FINAL_STATES = frozenset(
    {
        "COMPLETED",
        "FAILED",
        "CANCELLED",
        "TIMEOUT",
        "NODE_FAIL",
        "PREEMPTED",
        "BOOT_FAIL",
        "DEADLINE",
        "OUT_OF_MEMORY",
    }
)
STATE_FILE = "cluster.json"


class HarnessUnavailable(RuntimeError):
    """The real cluster cannot run here (not root, binaries missing, a daemon
    did not start); the message is meant to be shown as the skip reason."""


@dataclass(frozen=True, slots=True)
class Result:
    """What a command printed and its exit code."""

    stdout: str
    stderr: str
    rc: int


def fixed_environment(conf_path: Path) -> dict[str, str]:
    """The captures' command environment (see a2_sbatch_env/batch.fullenv) plus SLURM_CONF."""
    return {
        "HOME": pwd.getpwuid(0).pw_dir,
        "LANG": "C.UTF-8",
        "LOGNAME": "root",
        "PATH": "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
        "SHELL": "/bin/bash",
        "TMPDIR": "/tmp",
        "USER": "root",
        "SLURM_CONF": str(conf_path),
    }


def missing_prerequisites(accounting: bool) -> list[str]:
    """Why this host cannot run the cluster (empty list = it can)."""
    problems = []
    if os.geteuid() != 0:
        problems.append(f"needs root (SlurmUser=root, mknod); running as uid {os.geteuid()}")
    wanted = SLURM_BINARIES + (ACCOUNTING_BINARIES if accounting else ())
    path = fixed_environment(Path("/"))["PATH"]
    absent = [b for b in wanted if shutil.which(b, path=path) is None]
    if absent:
        problems.append(
            "missing binaries: "
            + ", ".join(absent)
            + " (scripts/install-system-packages installs them as root)"
        )
    return problems


class CommandLineCluster(ABC):
    """What both test clusters (:class:`RealSlurm` and tests/minicluster.py's
    ``MiniCluster``) do the same way once up: run command lines with their fixed
    environment, read ``scontrol show job``, wait for jobs, clean up between tests.

    A subclass says with what environment commands run (:attr:`env`), how it
    starts and stops, and how often it polls.
    """

    #: The folder the cluster lives in (a dataclass field of the subclass).
    root: Path
    #: Seconds between two polls of scontrol/squeue in :meth:`wait_job` and :meth:`cancel_all`.
    poll_seconds: ClassVar[float]

    # ----- layout (the same on both: etc/ and work/ below root) ---------------
    @property
    def conf_path(self) -> Path:
        """slurm.conf of this cluster (export it as SLURM_CONF)."""
        return self.root / "etc" / "slurm.conf"

    @property
    def work_dir(self) -> Path:
        """Where tests run their commands (the captures ran in /srv/slurm-ref/work/<case>)."""
        return self.root / "work"

    @property
    @abstractmethod
    def env(self) -> dict[str, str]:
        """The environment commands run with (a fresh copy)."""

    @abstractmethod
    def start(self) -> None:
        """Bring the cluster up."""

    @abstractmethod
    def stop(self) -> list[int]:
        """Bring it down; the pids that had to be ended."""

    # ----- using it -------------------------------------------------------------
    def run(
        self,
        cmd: str | Sequence[str],
        cwd: Path | str | None = None,
        env: Mapping[str, str] | None = None,
        input: str | None = None,
        timeout: float = 60.0,
    ) -> Result:
        """Run a command like the captures did: a string goes through ``bash -c``,
        a list is executed as is; ``env`` adds to (or overrides) :attr:`env`.
        On timeout the whole process group is killed and rc is 124 (like timeout(1))."""
        argv = ["bash", "-c", cmd] if isinstance(cmd, str) else list(cmd)
        full_env = {**self.env, **(env or {})}
        proc = subprocess.Popen(
            argv,
            cwd=cwd or self.work_dir,
            env=full_env,
            stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        try:
            out, err = proc.communicate(
                input.encode() if input is not None else None, timeout=timeout
            )
            rc = proc.returncode
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            out, err = proc.communicate()
            rc = 124
        return Result(out.decode(errors="replace"), err.decode(errors="replace"), rc)

    def job_records(self, job_id: int | str) -> list[dict[str, str]]:
        """``scontrol show job -o <id>`` as one dict per record (array tasks: several)."""
        res = self.run(["scontrol", "show", "job", "-o", str(job_id)], timeout=15)
        return [parse_show_one_liner(line) for line in res.stdout.splitlines() if line.strip()]

    def wait_job(self, job_id: int | str, timeout: float = 60.0) -> str:
        """Poll until every record of the job is in a final state; return its JobState
        (for an array: COMPLETED if all tasks completed, else the first other state).
        Raises TimeoutError with the job's last states."""
        deadline = time.monotonic() + timeout
        while True:
            states = [r.get("JobState", "") for r in self.job_records(job_id)]
            if states and all(s in FINAL_STATES for s in states):
                others = [s for s in states if s != "COMPLETED"]
                return others[0] if others else "COMPLETED"
            if time.monotonic() > deadline:
                raise TimeoutError(f"job {job_id} not finished after {timeout} s: {states}")
            time.sleep(self.poll_seconds)

    def wait_accounted(self, job_id: int | str, timeout: float = 30.0) -> None:
        """Poll sacct until every row of the job (its allocation and its steps) is in a
        final state. slurmctld hands a job's end to slurmdbd through its agent queue, so
        sacct may still say RUNNING a moment after scontrol says COMPLETED (seen on
        22.05.8 in CI: ``J|RUNNING`` beside ``J.batch|COMPLETED``). Raises TimeoutError
        with the last rows."""
        deadline = time.monotonic() + timeout
        while True:
            rows = self.run(["sacct", "-n", "-P", "-j", str(job_id), "-o", "JobID,State"],
                            timeout=15).stdout.splitlines()
            states = [row.split("|")[1].split()[0] for row in rows if "|" in row]
            if states and all(s in FINAL_STATES for s in states):
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"job {job_id} not accounted after {timeout} s: {rows}")
            time.sleep(self.poll_seconds)

    def cancel_all(self, timeout: float = 20.0) -> None:
        """``scancel`` every job and wait until squeue is empty (between tests)."""
        self.run("scancel $(squeue -h -o %A | sort -u) 2>/dev/null", timeout=15)
        deadline = time.monotonic() + timeout
        while self.run(["squeue", "-h", "-o", "%i"], timeout=15).stdout.strip():
            if time.monotonic() > deadline:
                raise TimeoutError("jobs still in squeue after scancel")
            time.sleep(self.poll_seconds)

    def reset(self, timeout: float = 60.0) -> None:
        """Leave the cluster as started, for the next test file of a session: no job, no
        reservation, every node resumed and plainly ``idle`` (responding, nothing
        completing). Raises TimeoutError with the nodes' states when it cannot."""
        self.cancel_all(timeout=timeout)
        shown = self.run(["scontrol", "show", "reservation", "-o"], timeout=15).stdout
        for name in re.findall(r"^ReservationName=(\S+)", shown, re.MULTILINE):
            self.run(["scontrol", "delete", f"reservation={name}"], timeout=15)
        deadline = time.monotonic() + timeout
        while True:
            rows = self.run(["sinfo", "-h", "-N", "-o", "%N %t"], timeout=15).stdout.split("\n")
            states = dict(row.split() for row in rows if row.strip())
            if states and set(states.values()) == {"idle"}:
                return
            stuck = sorted(n for n, st in states.items()
                           if st.rstrip("*~#!%$@^-") in ("down", "drain", "drng", "fail", "failg"))
            if stuck:
                self.run(["scontrol", "update", f"nodename={','.join(stuck)}", "state=resume"],
                         timeout=15)
            if time.monotonic() > deadline:
                raise TimeoutError(f"nodes not idle after reset: {states}")
            time.sleep(self.poll_seconds)

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


@dataclass
class RealSlurm(CommandLineCluster):
    """One cluster living in ``root``; see the module docstring."""

    poll_seconds: ClassVar[float] = 0.3

    root: Path
    accounting: bool = True
    first_job_id: int | None = None
    ports: PortPlan | None = None
    extra_conf: tuple[str, ...] = ()
    timings: dict[str, float] = field(default_factory=dict)
    _mariadb: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    # ----- layout (conf_path, work_dir: CommandLineCluster) -------------------
    @property
    def env(self) -> dict[str, str]:
        """The environment commands run with (a fresh copy)."""
        return fixed_environment(self.conf_path)

    def _daemon_env(self) -> dict[str, str]:
        return {**self.env, procs.MARKER: str(self.root)}

    def config(self) -> ClusterConfig:
        if self.ports is None:
            raise HarnessUnavailable("cluster has no ports yet (not started)")
        return ClusterConfig(
            root=self.root,
            ports=self.ports,
            accounting=self.accounting,
            first_job_id=self.first_job_id,
            extra_lines=self.extra_conf,
        )

    def _write_files(self) -> None:
        for sub in (
            "etc",
            "run",
            "state/ctld",
            "logs",
            "dev",
            "work",
            *(f"state/d/{n}" for n in NODE_NAMES),
        ):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        self.root.chmod(0o755)
        cfg = self.config()
        self.conf_path.write_text(slurm_conf(cfg))
        (self.root / "etc" / "gres.conf").write_text(gres_conf(cfg))
        dbd = self.root / "etc" / "slurmdbd.conf"
        dbd.write_text(slurmdbd_conf(cfg))
        dbd.chmod(0o600)
        for i in range(GPUS_PER_NODE):
            dev = self.root / "dev" / f"nvidia{i}"
            if not dev.exists():
                subprocess.run(
                    ["mknod", str(dev), "c", "195", str(i)], check=True, capture_output=True
                )
        (self.root / STATE_FILE).write_text(
            json.dumps(
                {
                    "ports": asdict(self.ports) if self.ports else None,
                    "accounting": self.accounting,
                    "first_job_id": self.first_job_id,
                    "extra_conf": list(self.extra_conf),
                }
            )
        )

    @classmethod
    def attach(cls, root: Path) -> RealSlurm:
        """The cluster a previous ``start()`` left in ``root`` (for scripts/realslurm)."""
        data = json.loads((root / STATE_FILE).read_text())
        p = data["ports"]
        ports = PortPlan(
            ctld=p["ctld"],
            slurmd=p["slurmd"],
            dbd=p["dbd"],
            mysql=p["mysql"],
            nodes=tuple(p["nodes"]),
        )
        return cls(
            root=root,
            accounting=data["accounting"],
            first_job_id=data["first_job_id"],
            ports=ports,
            extra_conf=tuple(data.get("extra_conf", ())),
        )

    # ----- life cycle ---------------------------------------------------------
    def start(self, *, timeout: float = 60.0) -> None:
        """Start everything; raise HarnessUnavailable (after cleaning up) on failure."""
        problems = missing_prerequisites(self.accounting)
        if problems:
            raise HarnessUnavailable("; ".join(problems))
        t0 = time.monotonic()
        try:
            self.ports = self.ports or choose_ports()
            self._write_files()
            env = self._daemon_env()
            daemons.make_munge_key(
                self.root / "etc" / "munge.key", env, self.root / "logs" / "mungekey.log"
            )
            daemons.start_munged(self.root, env, timeout)
            self.timings["munged"] = time.monotonic() - t0
            if self.accounting:
                t1 = time.monotonic()
                self._mariadb = daemons.start_mariadb(self.root, self.ports.mysql, env, timeout)
                daemons.start_slurmdbd(self.root, self.ports.dbd, env, timeout)
                self.timings["accounting"] = time.monotonic() - t1
            t2 = time.monotonic()
            daemons.start_slurmctld(self.root, self.conf_path, env, timeout)
            self.timings["slurmctld"] = time.monotonic() - t2
            t3 = time.monotonic()
            for node in NODE_NAMES:
                daemons.start_slurmd(self.root, self.conf_path, node, env)
            logs = self.root / "logs"
            daemons.wait_until(
                lambda: daemons.nodes_idle(self.env, NODE_NAMES, logs),
                timeout=timeout,
                what="slurmd (nodes idle in sinfo)",
                interval=0.3,
            )
            self.timings["slurmd"] = time.monotonic() - t3
        except (daemons.StartFailure, OSError, subprocess.SubprocessError) as exc:
            tail = self.log_tail()
            self.stop()
            raise HarnessUnavailable(f"real Slurm did not start: {exc}\n{tail}") from exc
        except BaseException:  # e.g. Ctrl-C while starting: leave nothing running
            self.stop()
            raise
        self.timings["total"] = time.monotonic() - t0

    def pids(self) -> list[int]:
        """Every live process of this run: daemons, slurmstepd, job tasks."""
        return procs.pids_with_env([f"{procs.MARKER}={self.root}", f"SLURM_CONF={self.conf_path}"])

    def stop(self) -> list[int]:
        """End every process of this run; return the pids that survived (normally []).

        Order: jobs, slurmd and slurmctld first, then slurmdbd, MariaDB and munged
        (so the controller can still talk to them while it shuts down), then a
        last sweep for anything else carrying the run's marker."""
        run = self.root / "run"
        ours = self.pids()
        # Pid files are only trusted for processes that carry this run's marker.
        services = [
            pid
            for name in ("slurmdbd.pid", "mariadb.pid", "munged.pid")
            if (pid := procs.read_pid_file(run / name)) in ours
        ]
        left = procs.end_processes(p for p in ours if p not in services)
        for pid in services:
            left += procs.end_processes([pid], grace=10.0)
        if self._mariadb is not None:
            try:
                self._mariadb.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._mariadb.kill()
                self._mariadb.wait()
            self._mariadb = None
        left += procs.end_processes(self.pids(), grace=2.0)
        shutil.rmtree(self.root / "db", ignore_errors=True)
        return sorted(set(left))

    def status(self) -> str:
        """``sinfo -N`` of the cluster, or why it is down."""
        if not self.pids():
            return "not running"
        res = self.run(["sinfo", "-N"], timeout=15)
        return res.stdout + res.stderr

    def log_tail(self, lines: int = 8) -> str:
        """The last ``lines`` lines of every daemon log (for skip/failure messages)."""
        parts = []
        for log in sorted((self.root / "logs").glob("*")):
            text = log.read_text(errors="replace").splitlines()[-lines:]
            if text:
                parts.append(f"--- {log.name}:\n" + "\n".join(text))
        return "\n".join(parts)


_FIELD = re.compile(r"(?:^| )([A-Za-z][A-Za-z0-9_:/]*)=")


def parse_show_one_liner(line: str) -> dict[str, str]:
    """Split one ``scontrol show -o`` line into its ``Key=value`` fields (values may
    contain spaces, e.g. ``JobName=quoted name``)."""
    matches = list(_FIELD.finditer(line))
    fields: dict[str, str] = {}
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(line)
        fields.setdefault(m.group(1), line[m.end() : end].strip())
    return fields
