"""The real simulator behind predict-the-scheduler items: minislurm's slurmctld.

:class:`ControllerRunner` implements :class:`quizzes.items.scheduler.ScenarioRunner`
by playing a scenario on :class:`minislurm.ctld.controller.Controller` under a
SimPy clock with the course's default cluster (``minislurm/etc/slurm.conf``, or
a given config): each job is parsed by the real sbatch front end
(:func:`minislurm.options.parse_sbatch`) and submitted at its time with a
simulated body that runs for its run time.  Results are cached per scenario, so
grading a class recomputes each variant's key once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from quizzes.items.scheduler import Scenario, ScenarioResult

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
