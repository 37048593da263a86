"""Predict-the-scheduler items: the key is computed by simulating the scenario.

The bank holds a small scenario (jobs with their sbatch options, submit times
and run times) and a question; nobody types the answer.  At grading time a
:class:`quizzes.simulate.ScenarioRunner` (by default its :class:`ControllerRunner`,
minislurm's slurmctld under a SimPy clock) plays the scenario and the learner's
answer is compared with what the controller did.  Questions:

* ``next_start``: which pending job starts next after ``at`` (a job name);
* ``start_time``: when does ``job`` start, in minutes after the first submission;
* ``pending_reason``: the reason ``job`` is pending at ``at`` as squeue prints it
  (``Resources``, ``Priority``, ``Dependency``...).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from quizzes.i18n import M, Msg
from quizzes.items.base import Common, Outcome, Presented, as_text, fill, with_extras
from quizzes.items.units import parse_quantity
from quizzes.simulate import ControllerRunner, Scenario, ScenarioJob, ScenarioRunner
from quizzes.where import Where

ASKS = ("next_start", "start_time", "pending_reason")


@dataclass(frozen=True, slots=True)
class SchedulerItem:
    """``type: scheduler``: ``scenario`` + ``ask`` (+ ``job``/``at``, optional ``options``)."""

    common: Common
    jobs: tuple[Mapping[str, Any], ...]
    ask: str
    job: str
    at: int
    options: tuple[tuple[str, str], ...]
    runner: ScenarioRunner | None = None

    @classmethod
    def from_bank(
        cls, common: Common, raw: Mapping[str, Any], where: Where, variants: Sequence[str]
    ) -> SchedulerItem:
        common = with_extras(common, raw, where)
        scenario = where.require(raw, "scenario", dict)
        jobs = where.require(scenario, "jobs", list)
        names = set()
        for i, job in enumerate(jobs):
            if not isinstance(job, dict) or not isinstance(job.get("name"), str) \
                    or not isinstance(job.get("args", ""), str):
                raise where.error(f"scenario.jobs[{i}]", "needs a string 'name' and 'args'")
            for key in ("submit", "runtime"):
                if not isinstance(job.get(key, 0), int | str):
                    raise where.error(f"scenario.jobs[{i}].{key}", "must be minutes (integer)")
            names.add(job["name"])
        ask = where.require(raw, "ask", str)
        if ask not in ASKS:
            raise where.error("ask", f"must be one of {', '.join(ASKS)}")
        job = where.optional(raw, "job", str, "")
        if ask != "next_start" and job not in names:
            raise where.error("job", "must name a job of the scenario")
        at = where.optional(raw, "at", int, 0)
        options: tuple[tuple[str, str], ...] = ()
        if "options" in raw:
            from quizzes.items.choice import parse_options
            options = parse_options(where, raw)
        return cls(common, tuple(jobs), ask, job, at, options)

    def scenario(self, params: Mapping[str, Any]) -> Scenario:
        """The scenario of one variant (``{{param}}`` filled in; minutes -> seconds)."""
        jobs = tuple(
            ScenarioJob(str(j["name"]), tuple(fill(str(j.get("args", "")), params).split()),
                        int(fill(str(j.get("submit", 0)), params)) * 60,
                        int(fill(str(j.get("runtime", 60)), params)) * 60)
            for j in self.jobs)
        return Scenario(jobs, (self.at * 60,))

    def present(self, params: Mapping[str, Any], seed: int = 0) -> Presented:
        from quizzes.items.choice import shuffled

        lines = [fill(self.common.prompt, params), ""]
        for j in self.scenario(params).jobs:  # indented: shown as code (quizzes.prose)
            lines.append(f"    t={j.submit // 60:>3} min  sbatch {' '.join(j.argv)}  "
                         f"# job '{j.name}', runs {j.runtime // 60} min")
        unit = "minutes" if self.ask == "start_time" else ""
        return Presented(self.common.id, "scheduler", "\n".join(lines),
                         shuffled(self.options, seed),
                         unit=unit, points=self.common.points)

    def grade(self, response: Any, params: Mapping[str, Any], salt: str, variant: str,
              runner: ScenarioRunner | None = None) -> Outcome:
        text = as_text(response)
        if text is None or not text.strip():
            return Outcome.said(0.0, M("Answer with a job name, a time or a reason."),
                                readable=False)
        active = runner or self.runner or default_runner()
        result = active.run(self.scenario(params))
        at = self.at * 60
        if self.ask == "next_start":
            expected: tuple[str, ...] = result.next_starts(at)
            ok = text.strip() in expected
            shown: str | Msg = " / ".join(expected) if expected else M("no job")
        elif self.ask == "start_time":
            start = result.start_of(self.job)
            value = parse_quantity(text, "minutes")
            ok = start is not None and value is not None and abs(value * 60 - start) < 30
            shown = M("never") if start is None else M("{n} min", n=format(start / 60, "g"))
        else:
            reason = result.reason_of(self.job, at)
            ok = reason is not None and text.strip() == reason
            shown = reason or M("not pending")
        verdict = M("Correct") if ok else M("Incorrect")
        return Outcome.said(1.0 if ok else 0.0, M("{verdict}: the controller says {shown}.",
                                                  verdict=verdict, shown=shown))


@lru_cache(maxsize=1)
def default_runner() -> ScenarioRunner:
    """The minislurm controller runner (one per process, so its cache is shared)."""
    return ControllerRunner()
