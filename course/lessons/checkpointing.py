"""A training program that checkpoints, as seen by slurmctld: the lesson 8 job runner.

`CheckpointRunner` is a `minislurm.ctld.runner.JobRunner` (what slurmd does when it
launches a batch script) for one training job on a simulated clock. Each attempt
(the first start, then every start after Slurm requeued the job) runs:

    [restart: reload the last checkpoint] [work tau][save C] [work tau][save C] ...

The first attempt starts fresh (no reload). When the job is killed (a node failed:
NODE_FAIL, then requeued), the work and the checkpoint write since the last saved
checkpoint are lost; the next attempt resumes from that checkpoint. The runner keeps
the accounts: useful work, checkpoint writes, lost work, restarts and the time the job
waited between attempts (Slurm's requeue BeginTime delay and waiting for free nodes).
Times inside are seconds of the SimPy clock.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import numpy as np
import simpy

from minislurm.ctld.runner import Launch
from minislurm.job import Allocation

SIGKILL = 9
SIGTERM = 15


@dataclass(frozen=True, slots=True)
class RunBreakdown:
    """Where the wall time of a run went (hours); ``failures`` counts interruptions."""

    useful: float
    checkpoint: float
    lost: float
    restart: float
    requeue: float
    failures: float

    @property
    def wall(self) -> float:
        """Total wall time from the first start to the last checkpoint."""
        return self.useful + self.checkpoint + self.lost + self.restart + self.requeue

    @property
    def goodput(self) -> float:
        """Share of the wall time spent on work that was kept."""
        return self.useful / self.wall if self.wall > 0 else 0.0

    @property
    def lost_to_failures(self) -> float:
        """Share of the wall time lost to failures (recomputation, restarts, requeue)."""
        return (self.lost + self.restart + self.requeue) / self.wall if self.wall > 0 else 0.0


class CheckpointRunner:
    """Runs one checkpointing training job; other jobs get no body (they end at once)."""

    def __init__(self, env: simpy.Environment) -> None:
        self.env = env
        self.finished = env.event()
        self._segments: list[float] = []
        #: `_length`'s phases: a slot for the restart, then work, save, work, save, ...
        self._phases = np.zeros(1)
        self._sums = np.zeros(1)  # where `_length` adds them up
        self._ckpt = self._restart = 0.0
        self._done = 0  # segments saved
        self._job: int | None = None
        self._attempt_start: float | None = None
        self._attempt_event: simpy.Event | None = None
        self._last_end: float | None = None
        self.attempts = 0
        self._acc = {"useful": 0.0, "checkpoint": 0.0, "lost": 0.0, "restart": 0.0,
                     "requeue": 0.0, "failures": 0.0}

    def plan(self, segments: list[float], *, checkpoint: float, restart: float) -> None:
        """The work (hours per segment), checkpoint cost and restart cost (seconds)."""
        if self._job is not None:
            raise RuntimeError("this runner already runs a job")
        self._segments = [s * 3600 for s in segments]
        self._ckpt, self._restart = checkpoint, restart
        self._phases = np.empty(2 * len(self._segments) + 1)  # [restart] work, save, ...
        self._phases[1::2] = self._segments
        self._phases[2::2] = checkpoint
        self._sums = np.empty_like(self._phases)

    def _timeline(self) -> Iterator[tuple[str, float]]:
        """The attempt's phases in order (a generator: `_account` stops at ``now``)."""
        if self.attempts > 1:
            yield "restart", self._restart
        for seg in itertools.islice(self._segments, self._done, None):
            yield "work", seg
            yield "save", self._ckpt

    def _length(self) -> float:
        """Seconds of the whole attempt: the phases summed in `_timeline`'s order.

        One addition after another, as a loop over `_timeline` adds them (so the same
        float to the last bit), but in numpy's ``add.accumulate`` (a sequential C loop):
        a job saving every few minutes for hundreds of hours has thousands of phases, and
        each attempt sums those left (lesson 7's sweep starts ~900 attempts per move)."""
        phases, first = self._phases, 2 * self._done + 1  # the first phase left
        if self.attempts > 1:  # the restart goes in the slot before it (put back after:
            first -= 1  # the save of the last segment saved, or the restart's own slot)
            if first >= len(phases):
                return float(self._restart)  # nothing left to do but the restart
            kept = phases[first]
            phases[first] = self._restart
            np.add.accumulate(phases[first:], out=self._sums[first:])
            phases[first] = kept
        elif first >= len(phases):
            return 0.0
        else:
            np.add.accumulate(phases[first:], out=self._sums[first:])
        return float(self._sums[-1])

    def start(self, job: Launch, allocation: Allocation, body: object) -> simpy.Event:
        """slurmd launches the batch script: resume from the last checkpoint."""
        done = self.env.event()
        if self._job is None:
            self._job = job.job_id
        if job.job_id != self._job:
            done.succeed((0, 0))
            return done
        self.attempts += 1
        now = float(self.env.now)
        if self._last_end is not None:
            self._acc["requeue"] += now - self._last_end
        self._attempt_start, self._attempt_event = now, done
        total = self._length()
        timer = self.env.timeout(total)
        timer.callbacks.append(lambda _ev: self._complete(done))
        return done

    def _complete(self, done: simpy.Event) -> None:
        if done.triggered or done is not self._attempt_event:
            return
        self._account(float(self.env.now))
        done.succeed((0, 0))
        self.finished.succeed(self.breakdown())

    def _account(self, now: float) -> None:
        """Book the current attempt up to ``now``: what was saved is kept, the rest is lost.

        The phases of `_timeline`, walked in its order with the same arithmetic, from
        the list of segments itself by index (a job killed after ten segments walks twenty
        phases: a generator resumed for each cost about as much as the booking, and
        ``islice`` steps over every segment saved before), the kept work and saves summed
        in locals and stored once (the same additions in the same order)."""
        assert self._attempt_start is not None
        acc = self._acc
        left = now - self._attempt_start
        pending = 0.0  # work done since the last saved checkpoint
        if self.attempts > 1 and left > 0:  # "restart"
            used = min(left, self._restart)
            left -= used
            acc["restart"] += used
        ckpt, segs, done = self._ckpt, self._segments, self._done
        useful, saved = acc["useful"], acc["checkpoint"]
        for k in range(done, len(segs)):
            if left <= 0:
                break
            seg = segs[k]
            used = seg if seg < left else left  # "work": min(left, seg)
            left -= used
            pending = used
            if left <= 0:
                break
            used = ckpt if ckpt < left else left  # "save"
            left -= used
            if used >= ckpt - 1e-6:  # the checkpoint reached storage: keep the segment
                useful += pending
                saved += ckpt
                done += 1
                pending = 0.0
            else:
                pending += used
        acc["useful"], acc["checkpoint"] = useful, saved
        self._done = done
        acc["lost"] += pending
        self._attempt_start, self._attempt_event = None, None
        self._last_end = now

    def kill(self, job_id: int, signal: int) -> None:
        """A node of the job failed (or scancel): the attempt ends, unsaved work is lost."""
        done = self._attempt_event
        if job_id != self._job or done is None or signal not in (SIGKILL, SIGTERM):
            return
        self._account(float(self.env.now))
        self._acc["failures"] += 1
        if not done.triggered:
            done.succeed((0, signal))

    def node_failed(self, job_id: int, failed: Mapping[int, str]) -> None:
        """A node of the job went DOWN: the attempt ends at once (SIGKILL)."""
        self.kill(job_id, SIGKILL)

    def breakdown(self) -> RunBreakdown:
        """The accounts so far, in hours."""
        a = {k: v / 3600 if k != "failures" else v for k, v in self._acc.items()}
        return RunBreakdown(**a)


__all__ = ["CheckpointRunner", "RunBreakdown"]
