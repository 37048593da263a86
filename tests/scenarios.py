"""One scenario script, two clusters: the command lines a scenario test types run
unchanged on real Slurm (tests/realslurm) and on minislurm's embedded `Cluster`.

A scenario is a function of a :class:`Side`: it submits with ``sbatch``, waits
with :meth:`Side.pause` (wall-clock sleep on real Slurm, simulated seconds on
minislurm) and samples ``squeue``/``scontrol show job``/``sacct``. Everything it
returns is normalised: jobs are named by the scenario's labels (not ids) and
times are seconds relative to the scenario's first job's start, so the two
sides' traces compare directly.
"""

from __future__ import annotations

import calendar
import math
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Protocol

from realslurm import RealSlurm
from realslurm.harness import FINAL_STATES, parse_show_one_liner

from minislurm.sim import Cluster

#: The squeue line a scenario samples: id, compact state, reason, (expected) start, priority.
SQUEUE = 'squeue -h -o "%i %t %r %S %Q"'
#: The sacct line (-D: every attempt of a requeued job, -X: allocations only).
SACCT = "sacct -D -X -P -n -o JobID,State,Start,End"
#: The reference cluster's configuration, shared with the captures.
REFERENCE_FILES = ("slurm.conf", "gres.conf")


class Side(Protocol):
    """A cluster a scenario drives by command lines."""

    name: str

    def run(self, cmd: str) -> tuple[str, str, int]:
        """Run one command line; (stdout, stderr, rc)."""
        ...

    def pause(self, seconds: float) -> None:
        """Let ``seconds`` pass on this cluster's clock."""
        ...

    def wait_until(self, done: Callable[[], bool], limit: float) -> None:
        """Pause until ``done()`` holds; TimeoutError after ``limit`` seconds."""
        ...


@dataclass
class RealSide:
    """Real Slurm 22.05: commands through the harness, the wall clock."""

    cluster: RealSlurm
    name: str = "slurm"

    def run(self, cmd: str) -> tuple[str, str, int]:
        res = self.cluster.run(cmd, timeout=20)
        return res.stdout, res.stderr, res.rc

    def pause(self, seconds: float) -> None:
        time.sleep(seconds)

    def wait_until(self, done: Callable[[], bool], limit: float) -> None:
        deadline = time.monotonic() + limit
        while not done():
            if time.monotonic() > deadline:
                raise TimeoutError(f"real Slurm: still waiting after {limit} s")
            time.sleep(0.3)


@dataclass
class MiniSide:
    """minislurm's embedded cluster on the reference slurm.conf, a simulated clock."""

    cluster: Cluster
    name: str = "minislurm"

    def run(self, cmd: str) -> tuple[str, str, int]:
        res = self.cluster.run(cmd)
        return res.stdout, res.stderr, res.returncode

    def pause(self, seconds: float) -> None:
        self.cluster.advance(math.ceil(seconds))

    def wait_until(self, done: Callable[[], bool], limit: float) -> None:
        waited = 0
        while not done():
            if waited >= limit:
                raise TimeoutError(f"minislurm: still waiting after {limit} simulated s")
            self.cluster.advance(1)
            waited += 1


def mini_side(reference: Path, folder: Path) -> MiniSide:
    """A fresh minislurm `Cluster` on a copy (in ``folder``) of the reference
    slurm.conf + gres.conf, running commands as root like the harness does."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in REFERENCE_FILES:
        shutil.copy(reference / name, folder / name)
    return MiniSide(Cluster(folder / "slurm.conf", user="root", uid=0, workdir=folder / "work"))


def epoch(stamp: str) -> int | None:
    """A Slurm timestamp (``2026-01-05T08:00:00``) as seconds (read as UTC: only
    differences between two stamps of one side are compared); None for
    ``N/A``/``Unknown``/``None``."""
    try:
        parsed = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S")
    except ValueError:
        return None
    return calendar.timegm(parsed.timetuple())


@dataclass(frozen=True, slots=True)
class QueueRow:
    """One squeue line with the job named by its label."""

    label: str
    state: str
    reason: str
    start: int | None
    priority: int


@dataclass(frozen=True, slots=True)
class Attempt:
    """One sacct row (one attempt of a job)."""

    label: str
    state: str
    start: int | None
    end: int | None


class Scenario:
    """Submits labelled jobs on one side and reads the side's answers back by label."""

    def __init__(self, side: Side) -> None:
        self.side = side
        self.ids: dict[str, str] = {}

    @property
    def labels(self) -> dict[str, str]:
        """Job id -> label."""
        return {v: k for k, v in self.ids.items()}

    def sbatch(self, label: str, options: str, sleep: int) -> str:
        """``sbatch --parsable OPTIONS --wrap 'sleep N'``; remembers the id under ``label``."""
        out, err, rc = self.side.run(f"sbatch --parsable {options} --wrap 'sleep {sleep}'")
        if rc != 0:
            raise AssertionError(f"{self.side.name}: sbatch {options} failed: {err}")
        self.ids[label] = out.strip().split(";")[0]
        return self.ids[label]

    def run(self, cmd: str) -> str:
        """A command line with ``{label}`` placeholders replaced by job ids."""
        out, err, rc = self.side.run(cmd.format(**self.ids))
        if rc != 0:
            raise AssertionError(f"{self.side.name}: {cmd} failed (rc {rc}): {err}")
        return out

    def squeue(self) -> dict[str, QueueRow]:
        """The scenario's jobs in squeue, by label."""
        rows: dict[str, QueueRow] = {}
        for line in self.run(SQUEUE).splitlines():
            # %r may hold a space ("ReqNodeNotAvail, UnavailableNodes:n2")
            job, state, *words, start, prio = line.split()
            reason = " ".join(words)
            if job in self.labels:
                label = self.labels[job]
                rows[label] = QueueRow(label, state, reason, epoch(start), int(prio))
        return rows

    def show_job(self, label: str) -> dict[str, str]:
        """``scontrol show job -o`` of one job as its Key=value fields."""
        return parse_show_one_liner(self.run(f"scontrol show job -o {self.ids[label]}").strip())

    def attempts(self) -> list[Attempt]:
        """sacct's rows of the scenario's jobs, in sacct's order."""
        rows = []
        for line in self.run(SACCT).splitlines():
            job, state, start, end = line.split("|")
            if job in self.labels:
                rows.append(Attempt(self.labels[job], state.split()[0], epoch(start), epoch(end)))
        return rows

    def wait_all_done(self, limit: float) -> list[Attempt]:
        """Pause until no job of the scenario is left in squeue and sacct shows every
        attempt ended (sacct lags behind squeue on real Slurm); sacct's rows."""

        def done() -> bool:
            if self.squeue():
                return False
            rows = self.attempts()
            ended = {r.label for r in rows if r.state in FINAL_STATES}
            return ended == set(self.ids) and all(
                r.state in FINAL_STATES or r.state == "REQUEUED" for r in rows
            )

        self.side.wait_until(done, limit)
        return self.attempts()


def start_order(attempts: list[Attempt]) -> list[set[str]]:
    """Labels grouped by start time (same second), earliest first."""
    started = sorted((a.start, a.label) for a in attempts if a.start is not None)
    groups: list[tuple[int, set[str]]] = []
    for start, label in started:
        if groups and start == groups[-1][0]:
            groups[-1][1].add(label)
        else:
            groups.append((start, {label}))
    return [labels for _, labels in groups]


@dataclass(frozen=True, slots=True)
class Trace:
    """What one side showed during a scenario."""

    samples: dict[str, dict[str, QueueRow]]
    shows: dict[str, dict[str, str]]
    attempts: list[Attempt]
    extra: dict[str, str]

    @property
    def t0(self) -> int:
        """The scenario's first start (the origin of relative times)."""
        starts = [a.start for a in self.attempts if a.start is not None]
        assert starts, "no job started"
        return min(starts)

    def first(self, label: str) -> Attempt:
        """The first sacct row of a job."""
        return next(a for a in self.attempts if a.label == label)

    def rel(self, stamp: int | None) -> int | None:
        """A timestamp relative to the scenario's first start."""
        return None if stamp is None else stamp - self.t0


ScenarioFn = Callable[[Scenario], Trace]


def replay(side: Side, scenario: ScenarioFn) -> Trace:
    """Run one scenario on one side."""
    return scenario(Scenario(side))


def running(sc: Scenario, *labels: str) -> Callable[[], bool]:
    """squeue shows every one of ``labels`` RUNNING."""
    return lambda: all(
        (row := sc.squeue().get(label)) is not None and row.state == "R" for label in labels
    )
