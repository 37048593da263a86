"""jobacct_gather/linux: what each task of a step uses, read from /proc.

slurmstepd's jobacct_gather/linux plugin (src/plugins/jobacct_gather/common/
common_jag.c) polls every ``JobAcctGatherFrequency`` seconds, for each task, the
processes proctrack holds for it (the task and everything it started) and adds up
their RSS, virtual size, major page faults, CPU time (utime + stime) and bytes read
and written (``/proc/PID/io`` rchar/wchar). It keeps each task's largest RSS, VM size
and page count; ``sstat`` (``REQUEST_JOB_STEP_STAT``) and the step's accounting
record aggregate the tasks (``jobacctinfo_aggregate``): the *Max* of the tasks with
the node and task that had it, the *Ave*rage (total / tasks) and, for CPU, the *Min*.

minislurm's tasks run on this host; a process belongs to step ``J.S`` task ``T`` on
node ``N`` when its environment says ``SLURM_JOB_ID=J``, ``SLURM_STEP_ID=S``,
``SLURM_PROCID=T`` and ``SLURMD_NODENAME=N`` (what proctrack/linuxproc follows by
parentage: children inherit the environment). The batch step (``J.batch``, task 0)
is every process of the job without ``SLURM_STEP_ID`` -- the script and its sruns,
as on a real node. A host may run several minislurm clusters, each numbering its jobs
from the same ``FirstJobId``: a process belongs to this cluster's job only if its
``SLURM_CONF`` (which slurmd sets for every job) is this cluster's, where a real node's
proctrack sees only its own processes. `JobAcctGather` keeps the maxima between polls.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from minislurm.common.hostlist import compress

__all__ = [
    "EXIT_POLL",
    "Extremes",
    "JobAcctGather",
    "StepStat",
    "TaskUsage",
    "aggregate",
    "gather_frequency",
    "read_task_usage",
]


_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

TaskKey = tuple[int, str]  # (task id, node)
#: Seconds between minislurm's polls of a running step at most: slurmstepd also polls
#: each task once more as it exits, which gives short steps their numbers; polling
#: every second stands in for that last poll.
EXIT_POLL = 1.0


def gather_frequency(value: str | None) -> float:
    """``JobAcctGatherFrequency`` (``30``, ``task=30,energy=0``): the task sampling
    interval in seconds (default 30; 0 = only when asked, e.g. by sstat)."""
    if not value:
        return 30.0
    for item in str(value).split(","):
        key, sep, number = item.partition("=")
        text = number if sep else key
        if (not sep or key.strip().lower() == "task") and text.strip().isdigit():
            return float(text.strip())
    return 30.0


@dataclass(frozen=True, slots=True)
class TaskUsage:
    """One task: current and largest RSS / VM size (KB), largest page-fault count,
    CPU seconds and bytes read/written so far."""

    rss_kb: int = 0
    max_rss_kb: int = 0
    vsize_kb: int = 0
    max_vsize_kb: int = 0
    pages: int = 0
    max_pages: int = 0
    cpu_seconds: float = 0.0
    read_bytes: int = 0
    write_bytes: int = 0

    def merged(self, newer: TaskUsage) -> TaskUsage:
        """A later poll of the same task: maxima kept, counters never go back."""
        return TaskUsage(
            rss_kb=newer.rss_kb, max_rss_kb=max(self.max_rss_kb, newer.max_rss_kb),
            vsize_kb=newer.vsize_kb, max_vsize_kb=max(self.max_vsize_kb, newer.max_vsize_kb),
            pages=newer.pages, max_pages=max(self.max_pages, newer.max_pages),
            cpu_seconds=max(self.cpu_seconds, newer.cpu_seconds),
            read_bytes=max(self.read_bytes, newer.read_bytes),
            write_bytes=max(self.write_bytes, newer.write_bytes),
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class Extremes:
    """One quantity over a step's tasks: the largest (and the node and task that had
    it: the first task on ties), the smallest, and the total."""

    max: float = 0
    max_node: str = ""
    max_task: int = 0
    min: float = 0
    min_node: str = ""
    min_task: int = 0
    total: float = 0


@dataclass(frozen=True, slots=True)
class StepStat:
    """A step's tasks aggregated as ``jobacctinfo_aggregate`` does (``sstat``, sacct).

    Memory in KB, CPU in seconds, disk in bytes, pages counted. The largest RSS,
    VM size and page count are each task's largest so far; minima and totals (hence
    the averages, total / ``ntasks``) use the latest poll. ``ntasks == 0``: no data
    (nothing polled yet, jobacct_gather/none, or the simulated clock)."""

    ntasks: int = 0
    nodelist: str = ""
    pids: tuple[int, ...] = ()
    cpu: Extremes = Extremes()
    rss: Extremes = Extremes()
    vsize: Extremes = Extremes()
    pages: Extremes = Extremes()
    read: Extremes = Extremes()
    write: Extremes = Extremes()

    def ave(self, quantity: Extremes) -> float:
        """``quantity``'s total over the tasks divided by their number."""
        return quantity.total / self.ntasks if self.ntasks else 0.0


def _extremes(items: list[tuple[TaskKey, TaskUsage]], peak: str, now: str) -> Extremes:
    def value(usage: TaskUsage, name: str) -> float:
        return float(getattr(usage, name))

    (hi_task, hi_node), hi = max(items, key=lambda kv: (value(kv[1], peak), -kv[0][0]))
    (lo_task, lo_node), lo = min(items, key=lambda kv: (value(kv[1], now), kv[0][0]))
    return Extremes(max=value(hi, peak), max_node=hi_node, max_task=hi_task,
                    min=value(lo, now), min_node=lo_node, min_task=lo_task,
                    total=sum(value(u, now) for _, u in items))


def aggregate(tasks: Mapping[TaskKey, TaskUsage], *, nodelist: str = "",
              pids: tuple[int, ...] = ()) -> StepStat:
    """``jobacctinfo_aggregate`` over the step's tasks."""
    if not tasks:
        return StepStat(nodelist=nodelist, pids=pids)
    items = sorted(tasks.items())
    return StepStat(
        ntasks=len(items), nodelist=nodelist, pids=pids,
        cpu=_extremes(items, "cpu_seconds", "cpu_seconds"),
        rss=_extremes(items, "max_rss_kb", "rss_kb"),
        vsize=_extremes(items, "max_vsize_kb", "vsize_kb"),
        pages=_extremes(items, "max_pages", "pages"),
        read=_extremes(items, "read_bytes", "read_bytes"),
        write=_extremes(items, "write_bytes", "write_bytes"),
    )  # fmt: skip


def _environ(pid_dir: Path) -> dict[str, str] | None:
    try:
        raw = (pid_dir / "environ").read_bytes()
    except OSError:
        return None
    out: dict[str, str] = {}
    for item in raw.split(b"\0"):
        key, sep, value = item.partition(b"=")
        if sep and key.startswith((b"SLURM", b"SLURMD")):
            out[key.decode(errors="replace")] = value.decode(errors="replace")
    return out


def _process_usage(pid_dir: Path) -> TaskUsage | None:
    """One process: VmRSS/VmSize (status), majflt + utime + stime (stat), rchar/wchar."""
    try:
        stat = (pid_dir / "stat").read_text()
        status = (pid_dir / "status").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()
    # after "pid (comm)": state=0 ... majflt=9, utime=11, stime=12
    majflt, utime, stime = int(fields[9]), int(fields[11]), int(fields[12])
    rss = vsize = 0
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1])
        elif line.startswith("VmSize:"):
            vsize = int(line.split()[1])
    rchar = wchar = 0
    try:
        for line in (pid_dir / "io").read_text().splitlines():
            key, _, value = line.partition(":")
            if key == "rchar":
                rchar = int(value)
            elif key == "wchar":
                wchar = int(value)
    except OSError:
        pass
    return TaskUsage(rss_kb=rss, max_rss_kb=rss, vsize_kb=vsize, max_vsize_kb=vsize,
                     pages=majflt, max_pages=majflt, cpu_seconds=(utime + stime) / _TICKS,
                     read_bytes=rchar, write_bytes=wchar)


def read_task_usage(job_id: int, step_id: int | str, proc: str | Path = "/proc",
                    conf: str = "") -> tuple[dict[TaskKey, TaskUsage], tuple[int, ...]]:
    """Poll /proc once: every task of step ``job_id.step_id`` (``"batch"``: the batch
    step) of the cluster whose jobs get ``SLURM_CONF=conf`` (any cluster's for ``""``)
    with its processes' usage added up, and the pids found."""
    want_job = str(job_id)
    tasks: dict[TaskKey, TaskUsage] = {}
    pids: list[int] = []
    for entry in Path(proc).iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        env = _environ(entry)
        if (env is None or env.get("SLURM_JOB_ID") != want_job
                or (conf and env.get("SLURM_CONF") != conf)):  # another cluster's job
            continue
        step = env.get("SLURM_STEP_ID")
        if step_id == "batch":
            if step is not None:
                continue
            key: TaskKey = (0, env.get("SLURMD_NODENAME", ""))
        else:
            # a task's processes carry its SLURM_PROCID and SLURMD_NODENAME (slurmstepd
            # sets both for every task); a process of the step without them is not a task
            # (seen under load: one sampled between fork and exec counted as a 2nd task)
            procid, node = env.get("SLURM_PROCID"), env.get("SLURMD_NODENAME")
            if step != str(step_id) or procid is None or not node or not procid.isdigit():
                continue
            key = (int(procid), node)
        usage = _process_usage(entry)
        if usage is None:
            continue
        pids.append(int(entry.name))
        old = tasks.get(key)
        tasks[key] = usage if old is None else _added(old, usage)
    return tasks, tuple(sorted(pids))


def _added(a: TaskUsage, b: TaskUsage) -> TaskUsage:
    """Two processes of one task in the same poll: their usage adds up."""
    return TaskUsage(
        rss_kb=a.rss_kb + b.rss_kb, max_rss_kb=a.max_rss_kb + b.max_rss_kb,
        vsize_kb=a.vsize_kb + b.vsize_kb, max_vsize_kb=a.max_vsize_kb + b.max_vsize_kb,
        pages=a.pages + b.pages, max_pages=a.max_pages + b.max_pages,
        cpu_seconds=a.cpu_seconds + b.cpu_seconds, read_bytes=a.read_bytes + b.read_bytes,
        write_bytes=a.write_bytes + b.write_bytes,
    )  # fmt: skip


class JobAcctGather:
    """The running steps' task usage, polled from /proc, maxima kept between polls.

    ``poll(job, step)`` reads /proc now (as slurmstepd does for ``sstat``);
    `start` polls every running step every ``frequency`` seconds in a thread (a
    step's last poll before it ends gives sacct its numbers, as the poll slurmstepd
    makes when a task exits does). Thread-safe."""

    def __init__(self, frequency: float = 30.0, proc: str | Path = "/proc",
                 conf: str = "") -> None:
        self.frequency = frequency
        self.proc = proc
        #: the cluster's slurm.conf, as its jobs' SLURM_CONF says (`read_task_usage`)
        self.conf = conf
        self._lock = threading.Lock()
        self._tasks: dict[tuple[int, int | str], dict[TaskKey, TaskUsage]] = {}
        self._pids: dict[tuple[int, int | str], tuple[int, ...]] = {}
        self._watched: set[tuple[int, int | str]] = set()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def poll(self, job_id: int, step_id: int | str) -> StepStat:
        """Read the step's tasks now and merge them with what earlier polls saw."""
        found, pids = read_task_usage(job_id, step_id, self.proc, self.conf)
        key = (job_id, step_id)
        with self._lock:
            kept = self._tasks.setdefault(key, {})
            for task, usage in found.items():
                old = kept.get(task)
                kept[task] = usage if old is None else old.merged(usage)
            if pids:
                self._pids[key] = pids
            return self._stat(key)

    def stat(self, job_id: int, step_id: int | str) -> StepStat:
        """What the polls so far saw (no new poll)."""
        with self._lock:
            return self._stat((job_id, step_id))

    def _stat(self, key: tuple[int, int | str]) -> StepStat:
        tasks = self._tasks.get(key, {})
        nodes = sorted({node for _, node in tasks})
        return aggregate(tasks, nodelist=compress(nodes) if nodes else "",
                         pids=self._pids.get(key, ()))

    def watch(self, job_id: int, step_id: int | str) -> None:
        """Poll this step until `forget`."""
        with self._lock:
            self._watched.add((job_id, step_id))

    def forget(self, job_id: int, step_id: int | str) -> StepStat:
        """The step ended: stop polling it; its last numbers (for sacct)."""
        with self._lock:
            self._watched.discard((job_id, step_id))
            stat = self._stat((job_id, step_id))
            self._tasks.pop((job_id, step_id), None)
            self._pids.pop((job_id, step_id), None)
            return stat

    def start(self) -> None:
        """Poll the watched steps every ``frequency`` seconds (a daemon thread)."""
        if self._thread is None and self.frequency > 0:
            self._thread = threading.Thread(target=self._loop, daemon=True,
                                            name="jobacct_gather")
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _loop(self) -> None:
        while not self._stop.wait(self.frequency):
            with self._lock:
                watched = list(self._watched)
            for job_id, step_id in watched:
                self.poll(job_id, step_id)

