"""The real simulator behind predict-the-scheduler items: minislurm's slurmctld.

A scenario (:class:`Scenario`: jobs with their sbatch options, submit times and run
times) is played by a :class:`ScenarioRunner`, which reports a
:class:`ScenarioResult`. :class:`ControllerRunner` is the runner: it plays the
scenario on :class:`minislurm.ctld.controller.Controller` under a SimPy clock with
the course's default cluster (``minislurm/etc/slurm.conf``, or a given config):
each job is parsed by the real sbatch front end
(:func:`minislurm.options.parse_sbatch`) and submitted at its time with a
simulated body that runs for its run time.  Results are cached per scenario, so
grading a class recomputes each variant's key once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class ScenarioJob:
    """One job of a scenario: submitted at ``submit`` s, runs ``runtime`` s once started."""

    name: str
    argv: tuple[str, ...]
    submit: int
    runtime: int


@dataclass(frozen=True, slots=True)
class Scenario:
    """Jobs plus the instants at which pending reasons are observed (seconds)."""

    jobs: tuple[ScenarioJob, ...]
    observe_at: tuple[int, ...] = ()
    horizon: int = 86400


@dataclass(frozen=True, slots=True)
class ScenarioResult:
    """What the controller did: start time per job and pending reasons at instants."""

    start_times: tuple[tuple[str, int | None], ...]
    reasons: tuple[tuple[int, str, str], ...]  # (at, job name, reason) for pending jobs

    def start_of(self, name: str) -> int | None:
        return dict(self.start_times).get(name)

    def reason_of(self, name: str, at: int) -> str | None:
        for when, job, reason in self.reasons:
            if when == at and job == name:
                return reason
        return None

    def next_starts(self, at: int) -> tuple[str, ...]:
        """Names of the jobs with the earliest start strictly after ``at``."""
        later = [(t, n) for n, t in self.start_times if t is not None and t > at]
        if not later:
            return ()
        first = min(t for t, _ in later)
        return tuple(sorted(n for t, n in later if t == first))


class ScenarioRunner(Protocol):
    """Plays a scenario and reports what happened (the simulator interface)."""

    def run(self, scenario: Scenario) -> ScenarioResult: ...


_SCRIPT = "#!/bin/bash\nsrun python train.py\n"


@dataclass
class ControllerRunner:
    """Plays scenarios on minislurm's controller (``config=None``: the default cluster)."""

    config: Any = None
    cache: dict[Scenario, ScenarioResult] = field(default_factory=dict)

    def run(self, scenario: Scenario) -> ScenarioResult:
        if scenario not in self.cache:
            self.cache[scenario] = self._play(scenario)
        return self.cache[scenario]

    def _play(self, scenario: Scenario) -> ScenarioResult:
        import simpy

        from minislurm.conf import default_config
        from minislurm.ctld.controller import Controller
        from minislurm.ctld.runner import JobBody
        from minislurm.options import parse_sbatch
        from minislurm.states import JobState

        env = simpy.Environment()
        ctl = Controller(self.config if self.config is not None else default_config(), env)
        t0 = ctl.now
        ids: dict[int, str] = {}
        reasons: list[tuple[int, str, str]] = []
        events: list[tuple[int, int, Any]] = []
        for job in scenario.jobs:
            events.append((job.submit, 0, job))
        for at in scenario.observe_at:
            events.append((at + 1, 1, at))
        for when, kind, what in sorted(events, key=lambda e: (e[0], e[1])):
            if t0 + when > ctl.now:
                ctl.run(until=t0 + when)
            if kind == 0:
                inv = parse_sbatch([*what.argv, "-J", what.name], env={}, stdin=_SCRIPT,
                                   cwd="/home/learner", now=ctl.now)
                jid = ctl.submit(inv.options, inv.script_text, name=what.name,
                                 body=JobBody(run_time=what.runtime, exit_code=0))
                ids[jid] = what.name
            else:
                for rec in ctl.jobs():
                    if rec.job_id in ids and rec.state == JobState.PENDING:
                        reasons.append((what, ids[rec.job_id], rec.reason.value))
        ctl.run(until=t0 + scenario.horizon)
        starts: dict[str, int | None] = {name: None for name in ids.values()}
        for rec in ctl.jobs():
            if rec.job_id in ids and rec.state != JobState.PENDING and rec.start_time:
                starts[ids[rec.job_id]] = rec.start_time - t0
        return ScenarioResult(tuple(sorted(starts.items())), tuple(reasons))
