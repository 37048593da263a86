"""minislurm's local cluster (``python -m minislurm cluster up``) for tests, with the
same API as the real-Slurm harness (tests/realslurm/harness.py), so that one test
body can run a case on both and diff the results.

``MiniCluster(root).start()`` lays out ``root`` like the real harness does
(etc/ state/ work/), copies the reference slurm.conf and gres.conf from
``../shared/slurm-reference`` into etc/ with the folder ``/srv/slurm-ref``
rewritten to ``root`` and ``FirstJobId`` added (exactly the two changes the real
harness makes, see tests/realslurm/conf.py; minislurm ignores the keys it does
not model), and starts the controller daemon with ``$MINISLURM_STATE_DIR`` =
``root/state``. :meth:`MiniCluster.run` runs a command line with the captures'
fixed environment (tests/realslurm/harness.py ``fixed_environment``) plus two
things only minislurm needs: the repository's ``bin/`` first on PATH (so that
``sbatch``, ``srun``, ``squeue`` ... inside command lines *and* inside batch
scripts are minislurm's) and ``MINISLURM_STATE_DIR``. ``stop()`` runs
``cluster down`` and then ends, by pid, every process that still carries this
run's ``MINISLURM_STATE_DIR`` or ``SLURM_CONF`` (jobs inherit both). ``reset()``
puts a started cluster back as it was at start (tests/conftest.py runs it after each
test file that used the session's ``mini_slurm``); :func:`wait_idle` waits, cancelling
nothing, until a cluster (either kind) has no job, no reservation and every node idle,
and :class:`ClusterNotIdle` names what is left when it times out.

Usage::

    with MiniCluster(tmp_path) as mini:
        res = mini.run("sbatch --wait --wrap 'echo hi'")
        res.stdout, res.stderr, res.rc
"""

from __future__ import annotations

import difflib
import functools
import importlib.util
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Protocol

import pytest
from captures import capture_root
from realslurm import Result, fixed_environment
from realslurm.conf import REFERENCE_ROOT
from realslurm.harness import CommandLineCluster
from realslurm.normalize import (
    JOB_ID_BASE,
    first_job_id,
    mask_volatile,
    shift_job_ids,
    to_reference,
)
from realslurm.procs import end_processes, pids_with_env

from minislurm.cli.cluster import DOWN_TIMEOUT

REPO = Path(__file__).resolve().parent.parent
#: Wrapper scripts named like Slurm's commands (``bin/sbatch`` = ``python -m minislurm sbatch``).
BIN_DIR = REPO / "bin"
PYTHON = REPO / ".venv" / "bin" / "python"
STATE_VAR = "MINISLURM_STATE_DIR"


class MiniClusterUnavailable(RuntimeError):
    """minislurm's cluster cannot start here; the message is the skip reason."""


def python() -> str:
    """The project's interpreter (the venv's, else the one running the tests)."""
    return str(PYTHON) if PYTHON.exists() else sys.executable


def has_command(name: str) -> bool:
    """True when ``minislurm/cli/<name>.py`` exists (squeue, scontrol ... are being written)."""
    return importlib.util.find_spec(f"minislurm.cli.{name}") is not None


@functools.cache
def srun_works(timeout: float = 20.0) -> bool:
    """True when ``python -m minislurm srun --version`` succeeds (srun has landed)."""
    if not has_command("srun"):
        return False
    try:
        res = subprocess.run(
            [python(), "-m", "minislurm", "srun", "--version"],
            capture_output=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return res.returncode == 0


def reference_conf_texts(first_job_id: int | None, root: Path) -> tuple[str, str]:
    """slurm.conf and gres.conf of the reference cluster, ``/srv/slurm-ref`` -> ``root``,
    ``FirstJobId`` added before the NodeName line (as tests/realslurm/conf.py does)."""
    ref = capture_root()
    if ref is None:
        raise MiniClusterUnavailable(
            "slurm-reference captures not found (../shared/slurm-reference)"
        )
    conf = (ref / "slurm.conf").read_text().replace(str(REFERENCE_ROOT), str(root))
    gres = (ref / "gres.conf").read_text().replace(str(REFERENCE_ROOT), str(root))
    if first_job_id is not None:
        conf = re.sub(r"(?m)^(NodeName=)", f"FirstJobId={first_job_id}\n\\1", conf, count=1)
    return conf, gres


@dataclass
class MiniCluster(CommandLineCluster):
    """minislurm's local cluster living in ``root``; see the module docstring."""

    poll_seconds: ClassVar[float] = 0.2

    root: Path
    first_job_id: int | None = JOB_ID_BASE
    timings: dict[str, float] = field(default_factory=dict)
    #: Mirrors RealSlurm.ports (None: minislurm opens no TCP port; its socket is in state/).
    ports: None = None
    #: (old, new) replacements applied to the reference slurm.conf before start.
    conf_edits: tuple[tuple[str, str], ...] = ()
    #: More files for etc/ beside slurm.conf (e.g. ``{"cgroup.conf": "..."}``).
    etc_files: dict[str, str] = field(default_factory=dict)
    #: ``scontrol show partition -o`` right after start (:meth:`reset` restores it).
    partitions_at_start: dict[str, dict[str, str]] = field(default_factory=dict, repr=False)

    # ----- layout (conf_path: the reference slurm.conf, paths rewritten; work_dir:
    # like the real harness's root/work; both from CommandLineCluster) ----------
    @property
    def state_dir(self) -> Path:
        """``$MINISLURM_STATE_DIR``: the controller's socket, log, spool."""
        return self.root / "state"

    @property
    def env(self) -> dict[str, str]:
        """The real harness's fixed environment + bin/ first on PATH + MINISLURM_STATE_DIR
        + PYTHONPATH (this checkout's code)."""
        env = fixed_environment(self.conf_path)
        env["PATH"] = f"{BIN_DIR}{os.pathsep}{env['PATH']}"
        env[STATE_VAR] = str(self.state_dir)
        # a worktree's commands (bin/ wrappers, srun inside jobs) import this checkout
        env["PYTHONPATH"] = str(REPO)
        return env

    # ----- life cycle ---------------------------------------------------------
    def start_or_skip(self, why: str = "") -> None:
        """`start`, or skip the calling test with the reason (``why`` first)."""
        try:
            self.start()
        except MiniClusterUnavailable as exc:
            pytest.skip(f"{why}{exc}")

    def start(self, *, timeout: float = 45.0) -> None:
        """Write the configuration and run ``cluster up``; raise MiniClusterUnavailable."""
        t0 = time.monotonic()
        for sub in ("etc", "state", "work", "logs", "run", "dev"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        conf, gres = reference_conf_texts(self.first_job_id, self.root)
        for old, new in self.conf_edits:
            if old not in conf:
                raise MiniClusterUnavailable(f"{old!r} is not in the reference slurm.conf")
            conf = conf.replace(old, new)
        self.conf_path.write_text(conf)
        (self.root / "etc" / "gres.conf").write_text(gres)
        for name, text in self.etc_files.items():
            (self.root / "etc" / name).write_text(text)
        # the daemon is this checkout's minislurm (bin/ wrappers find it by their path;
        # ``python -m`` would import whatever the venv has installed)
        res = self.run(
            [python(), "-m", "minislurm", "cluster", "up", "--conf", str(self.conf_path)],
            env={"PYTHONPATH": str(REPO)},
            timeout=timeout,
        )
        if res.rc != 0:
            tail = self.log_tail()
            self.stop()
            raise MiniClusterUnavailable(
                f"minislurm cluster up failed (rc {res.rc}): {res.stdout}{res.stderr}\n{tail}"
            )
        self.partitions_at_start = partitions(self)
        self.timings["total"] = time.monotonic() - t0

    def pids(self) -> list[int]:
        """Every live process of this run: the controller and every job/step process."""
        return pids_with_env([f"{STATE_VAR}={self.state_dir}", f"SLURM_CONF={self.conf_path}"])

    def stop(self) -> list[int]:
        """``cluster down``, then end what is left by pid; return survivors (normally [])."""
        if (self.state_dir / "slurmctld.sock").exists():
            self.run([python(), "-m", "minislurm", "cluster", "down"], timeout=DOWN_TIMEOUT + 30)
        deadline = time.monotonic() + 5
        while self.pids() and time.monotonic() < deadline:
            time.sleep(0.1)
        return end_processes(self.pids(), grace=3.0)

    def log_tail(self, lines: int = 8) -> str:
        """The last lines of the controller's log (for skip/failure messages)."""
        log = self.state_dir / "slurmctld.log"
        if not log.exists():
            return ""
        text = log.read_text(errors="replace").splitlines()[-lines:]
        return "--- slurmctld.log:\n" + "\n".join(text)

    # ----- using it (run, wait_job, cancel_all: CommandLineCluster) -------------
    def job_records(self, job_id: int | str) -> list[dict[str, str]]:
        """``scontrol show job -o <id>`` as one dict per record ([] without scontrol)."""
        if not has_command("scontrol"):
            return []
        return super().job_records(job_id)

    def reset(self, timeout: float = 60.0) -> None:
        """Leave the cluster as started, for the next test file of a session (what
        ``RealSlurm.reset`` does on real Slurm): every job cancelled and gone from squeue
        (COMPLETING ones too), no reservation, every down/drained node resumed, every
        partition's State as at start, and the controller reporting every node plainly
        ``idle``. Polls until then (on a loaded machine a cancelled job's processes take
        a while to end); raises :class:`ClusterNotIdle` naming what is left after
        ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        self.run(_CANCEL_ALL, timeout=15)
        while True:
            left = leftovers(self, self.partitions_at_start)
            if left.idle:
                return
            if time.monotonic() > deadline:
                raise ClusterNotIdle(
                    f"minislurm cluster not back to its start {timeout:g} s into reset: "
                    f"{left.describe()}")
            self._undo(left)
            time.sleep(self.poll_seconds)

    def _undo(self, left: Leftovers) -> None:
        """One round of :meth:`reset`: cancel the jobs not already ending (a job a test
        submitted in the background may arrive after the first scancel), delete the
        reservations, resume the down/drained nodes, set the partitions' State back."""
        if any(j.state != "COMPLETING" for j in left.jobs):
            self.run(_CANCEL_ALL, timeout=15)
        for name in left.reservations:
            self.run(["scontrol", "delete", f"reservation={name}"], timeout=15)
        stuck = sorted(n for n, st in left.nodes if node_base_state(st) in STUCK_NODE_STATES)
        if stuck:
            self.run(["scontrol", "update", f"NodeName={','.join(stuck)}", "State=RESUME"],
                     timeout=15)
        for name, key, (start, _) in left.partitions:
            if key == "State":
                self.run(["scontrol", "update", f"PartitionName={name}", f"State={start}"],
                         timeout=15)


# ----- is a cluster as started? (between test files, before a differential case) ------
#: scancel of every job squeue shows (array jobs by their %A).
_CANCEL_ALL = "scancel $(squeue -h -o %A | sort -u) 2>/dev/null"


class ClusterNotIdle(TimeoutError):
    """A cluster still has jobs, reservations, busy/down nodes or changed partitions
    after the time allowed; the message names them."""


#: sinfo ``%t`` base states of a node that only ``scontrol update State=RESUME`` ends.
STUCK_NODE_STATES = frozenset({"down", "drain", "drng", "fail", "failg"})
#: Fields of ``scontrol show partition -o`` that follow from the others or from time.
_DERIVED_PARTITION_FIELDS = frozenset({"TotalCPUs", "TotalNodes", "TRES"})


def node_base_state(sinfo_state: str) -> str:
    """sinfo ``%t`` without its flag suffix (``*`` not responding, ``~`` powered off,
    ``#`` powering up, ``!`` pending power down, ``%`` powering down, ``$`` maintenance
    reservation, ``@`` reboot pending, ``^`` reboot issued, ``-`` planned by backfill)."""
    return sinfo_state.rstrip("*~#!%$@^-")


@dataclass(frozen=True, slots=True)
class QueuedJob:
    """One squeue row: ``%i|%T|%N|%C|%R`` (id, state, nodes, CPUs, reason or nodes)."""

    job_id: str
    state: str
    nodes: str
    cpus: str
    reason: str


@dataclass(frozen=True, slots=True)
class Leftovers:
    """What keeps a cluster from being as started: jobs squeue still shows, reservations,
    nodes whose sinfo ``%t`` is not ``idle``, partition fields that differ from the start
    (``(name, field, (at start, now))``)."""

    jobs: tuple[QueuedJob, ...] = ()
    reservations: tuple[str, ...] = ()
    nodes: tuple[tuple[str, str], ...] = ()
    partitions: tuple[tuple[str, str, tuple[str, str]], ...] = ()

    @property
    def idle(self) -> bool:
        """Nothing left: no job, no reservation, every node idle, partitions as at start."""
        return not (self.jobs or self.reservations or self.nodes or self.partitions)

    def describe(self) -> str:
        """One line per kind of leftover, e.g. ``jobs: 100130 RUNNING on n1 (1 CPUs)``."""
        parts = []
        if self.jobs:
            parts.append("jobs: " + ", ".join(
                f"{j.job_id} {j.state} on {j.nodes or '-'} ({j.cpus} CPUs, {j.reason})"
                for j in self.jobs))
        if self.reservations:
            parts.append("reservations: " + ", ".join(self.reservations))
        if self.nodes:
            parts.append("nodes not idle: " + ", ".join(f"{n} {st}" for n, st in self.nodes))
        if self.partitions:
            parts.append("partitions changed: " + ", ".join(
                f"{n} {k}={now} (was {start})" for n, k, (start, now) in self.partitions))
        return "; ".join(parts) or "nothing"


def partitions(cluster: Cluster) -> dict[str, dict[str, str]]:
    """``scontrol show partition -o``: partition name -> its fields."""
    shown = cluster.run(["scontrol", "show", "partition", "-o"], timeout=15).stdout
    table: dict[str, dict[str, str]] = {}
    for line in shown.splitlines():
        fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
        if "PartitionName" in fields:
            table[fields["PartitionName"]] = fields
    return table


def leftovers(
    cluster: Cluster, partitions_at_start: Mapping[str, Mapping[str, str]] | None = None
) -> Leftovers:
    """What squeue, ``scontrol show reservation``, ``sinfo -N`` (and, given the table at
    start, ``scontrol show partition``) show that a cluster as started would not."""
    queue = cluster.run(["squeue", "-h", "-o", "%i|%T|%N|%C|%R"], timeout=15).stdout
    jobs = tuple(QueuedJob(*(row.split("|", 4) + [""] * 4)[:5])
                 for row in queue.splitlines() if row.strip())
    shown = cluster.run(["scontrol", "show", "reservation", "-o"], timeout=15).stdout
    reservations = tuple(re.findall(r"^ReservationName=(\S+)", shown, re.MULTILINE))
    rows = cluster.run(["sinfo", "-h", "-N", "-o", "%N %t"], timeout=15).stdout
    states = dict(row.split(None, 1) for row in rows.splitlines() if row.strip())
    if not states:
        states = {"(sinfo)": f"showed no node: {rows!r}"}
    nodes = tuple(sorted((n, st) for n, st in states.items() if st != "idle"))
    changed: list[tuple[str, str, tuple[str, str]]] = []
    if partitions_at_start:
        now = partitions(cluster)
        for name, start in partitions_at_start.items():
            current = now.get(name, {})
            changed += [(name, key, (value, current.get(key, "<absent>")))
                        for key, value in start.items()
                        if key not in _DERIVED_PARTITION_FIELDS
                        and current.get(key) != value]
    return Leftovers(jobs, reservations, nodes, tuple(changed))


def wait_idle(cluster: Cluster, timeout: float = 30.0, *, what: str = "cluster") -> None:
    """Poll until the cluster has no job, no reservation and every node ``idle`` (jobs a
    previous case ran may still be COMPLETING); nothing is cancelled. Raises
    :class:`ClusterNotIdle` naming what is left: a test that needs the whole cluster free
    (which nodes a job gets) fails with the cause instead of a puzzling diff."""
    deadline = time.monotonic() + timeout
    while True:
        left = leftovers(cluster)
        if left.idle:
            return
        if time.monotonic() > deadline:
            raise ClusterNotIdle(f"{what} not idle after {timeout:g} s: {left.describe()}")
        time.sleep(0.2)


# ----- one case on both clusters ------------------------------------------------------
class Cluster(Protocol):
    """What a differential case needs from either cluster (RealSlurm or MiniCluster)."""

    root: Path

    @property
    def work_dir(self) -> Path: ...

    def run(
        self,
        cmd: str | Sequence[str],
        cwd: Path | str | None = None,
        env: Mapping[str, str] | None = None,
        input: str | None = None,
        timeout: float = 60.0,
    ) -> Result: ...

    def wait_job(self, job_id: int | str, timeout: float = 60.0) -> str: ...


@dataclass(frozen=True, slots=True)
class CaseRun:
    """One command line run in a fresh folder: what it printed (normalised), the
    files it left there and below (relative path -> text, both normalised), the raw
    first job id."""

    result: Result
    files: dict[str, str]
    job_id: int | None
    folder: Path


_SUBMITTED = re.compile(r"^(?:Submitted batch job )?(\d+)(?:;\S+)?$", re.MULTILINE)


def normalizer(cluster: Cluster, job_id: int | None) -> Callable[[str], str]:
    """The rewriting applied to every text of a run, on both sides:

    - the cluster folder -> ``/srv/slurm-ref`` (tmp paths differ per run);
    - real Slurm's random ports -> the reference ports (``SLURM_WORKING_CLUSTER``);
    - this host's name -> ``vm`` (the reference host; a no-op on the reference VM);
    - job ids (>= FirstJobId=100000) shifted so that the case's first job is 1,
      as on the fresh reference cluster (ids depend on what ran before);
    - ISO times, ``SLURM_TASK_PID``, srun's ports, priorities masked
      (`realslurm.normalize.mask_volatile`: pids and clocks);
    - minislurm only: ``<repo>/bin:`` removed from PATH values and ``<repo>/bin/``
      -> ``/usr/bin/`` (bash's ``_=`` names the command's path): that is how
      minislurm's commands get their Slurm names; real Slurm's are in /usr/bin.
    """
    offset = None if job_id is None or job_id < JOB_ID_BASE else job_id - 1
    ports = getattr(cluster, "ports", None)

    def norm(text: str) -> str:
        text = text.replace(f"{BIN_DIR}{os.pathsep}", "").replace(f"{BIN_DIR}/", "/usr/bin/")
        if ports is not None:
            return to_reference(text, root=cluster.root, ports=ports, offset=offset)
        text = text.replace(str(cluster.root), str(REFERENCE_ROOT))
        host = socket.gethostname()
        if host != "vm":
            text = re.sub(rf"(?<![A-Za-z0-9]){re.escape(host)}(?![A-Za-z0-9])", "vm", text)
        if offset is not None:
            text = shift_job_ids(text, offset)
        return mask_volatile(text)

    return norm


def run_case(
    cluster: Cluster,
    cmd: str,
    *,
    folder: str,
    files: Mapping[str, str] | None = None,
    input: str | None = None,
    wait_for_job: bool = False,
    timeout: float = 60.0,
) -> CaseRun:
    """Run ``cmd`` with bash in a fresh ``<work>/<folder>`` holding ``files``; the
    first job id sbatch prints (``Submitted batch job N`` or ``--parsable``'s ``N``),
    else the first the output shows (``SLURM_JOB_ID=N``, `realslurm.normalize.first_job_id`),
    anchors the job-id normalisation. ``wait_for_job`` polls until that job ended
    before the folder is read (for submissions without ``--wait``)."""
    work = cluster.work_dir / folder
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    for name, text in (files or {}).items():
        (work / name).write_text(text)
    res = cluster.run(cmd, cwd=work, input=input, timeout=timeout)
    match = _SUBMITTED.search(res.stdout)
    job_id = int(match.group(1)) if match else first_job_id(res.stdout + res.stderr)
    if wait_for_job and job_id is not None:
        cluster.wait_job(job_id, timeout=timeout)
    found = {
        str(p.relative_to(work)): p.read_text(errors="replace")
        for p in sorted(work.rglob("*"))
        if p.is_file() and str(p.relative_to(work)) not in (files or {})
    }
    norm = normalizer(cluster, job_id)
    return CaseRun(
        result=Result(norm(res.stdout), norm(res.stderr), res.rc),
        files={norm(k): norm(v) for k, v in found.items()},
        job_id=job_id,
        folder=work,
    )


#: Variables only one side has for reasons outside Slurm's behaviour.
HARNESS_ONLY_VARS = (STATE_VAR, "PYTHONPATH")
#: Variables where minislurm is known to differ (each has a strict xfail test of its
#: own, in tests/minislurm/slurmd/env/test_env_differential.py and
#: tests/minislurm/cli/test_srun_differential.py, which flips when fixed).
KNOWN_ENV_GAPS = ("SLURM_WORKING_CLUSTER",)


def env_of(text: str) -> dict[str, str]:
    """An ``env | sort`` dump as a dict, minus :data:`HARNESS_ONLY_VARS`
    (``MINISLURM_STATE_DIR`` tells minislurm's commands where its controller is;
    ``PYTHONPATH`` makes them import this checkout)."""
    pairs = (line.split("=", 1) for line in text.splitlines() if "=" in line)
    return {k: v for k, v in pairs if k not in HARNESS_ONLY_VARS}


def env_diff(real: Mapping[str, str], mini: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    """``{NAME: (real value, minislurm value)}`` for every variable that differs
    (``<absent>`` where one side lacks it); ``{}`` when they agree."""
    names = sorted(set(real) | set(mini))
    absent = "<absent>"
    return {
        n: (real.get(n, absent), mini.get(n, absent))
        for n in names
        if real.get(n, absent) != mini.get(n, absent)
    }


def text_diff(real: str, mini: str) -> str:
    """A unified diff real Slurm -> minislurm ('' when the texts are equal)."""
    if real == mini:
        return ""
    lines = difflib.unified_diff(
        real.splitlines(keepends=True), mini.splitlines(keepends=True), "real", "minislurm"
    )
    return "".join(lines)
