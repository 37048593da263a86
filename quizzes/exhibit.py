"""Exhibits: real command output from minislurm, shown in an item's prompt.

An item may carry an ``exhibit``: a small scenario played on minislurm's
embedded cluster (:class:`minislurm.sim.cluster.Cluster`, the same slurmctld and the
same ``squeue``/``sprio``/``sacct`` code a learner runs in a terminal) and the
commands whose output the learner is asked to read::

    exhibit:
      slurm_conf: default          # or the full text of a slurm.conf (gres.conf: gres_conf)
      steps:
        - sbatch -p gpu -N3 --gres=gpu:8 -t 60 -J wide --wrap="sleep 3600"
        - {advance: 1}             # let simulated time pass (minutes, or a Slurm time "1:30:00")
        - {user: alice, run: 'sbatch -p gpu -N1 --gres=gpu:8 -t {{r}} -J small --wrap="sleep 60"'}
      show: [squeue, squeue --start, sprio]

``{{param}}`` placeholders are filled from the item's variant before the
scenario is played, so each variant shows its own output.  A step is a command
line run by the default user (``student``), ``{user: U, run: CMD}`` to run it
as another user (fair-share scenarios), or ``{advance: T}``.  The rendered text
is ``$ <command>`` followed by what the command printed, for every ``show``
command; the working directory prints as ``/home/<user>``.  Rendering is
deterministic (a fixed epoch, a simulated clock) and cached per filled exhibit,
i.e. per (item, variant).  :func:`check` plays every variant of an item and
raises :class:`~quizzes.errors.BankError` when a step or a shown command fails,
so ``quizzes author build`` refuses a broken exhibit.
"""

from __future__ import annotations

import shlex
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from quizzes.errors import QuizError
from quizzes.template import fill
from quizzes.where import Where

DEFAULT_USER = "student"
MAX_STEPS = 200
MAX_ADVANCE = 30 * 86400


class ExhibitError(QuizError):
    """An exhibit's scenario could not be played (a step or a shown command failed)."""


@dataclass(frozen=True, slots=True)
class Step:
    """One scenario step: run ``command`` as ``user``, or let ``advance`` (text) pass."""

    command: str = ""
    user: str = ""
    advance: str = ""


@dataclass(frozen=True, slots=True)
class Exhibit:
    """A scenario and the commands whose output is shown (placeholders not yet filled)."""

    steps: tuple[Step, ...]
    show: tuple[str, ...]
    slurm_conf: str = ""  # "" = the embedded default cluster
    gres_conf: str = ""

    def filled(self, params: Mapping[str, Any]) -> Exhibit:
        """The exhibit of one variant (every ``{{param}}`` filled)."""
        return Exhibit(
            tuple(Step(fill(s.command, params), fill(s.user, params), fill(s.advance, params))
                  for s in self.steps),
            tuple(fill(c, params) for c in self.show),
            fill(self.slurm_conf, params), fill(self.gres_conf, params))


def parse_exhibit(where: Where, raw: Mapping[str, Any]) -> Exhibit | None:
    """The ``exhibit`` field of a bank item, validated (None when the item has none)."""
    if raw.get("exhibit") is None:
        return None
    spec = raw["exhibit"]
    if not isinstance(spec, dict):
        raise where.error("exhibit", "must be a mapping with 'steps' and 'show'")
    unknown = sorted(set(spec) - {"steps", "show", "slurm_conf", "gres_conf"})
    if unknown:
        raise where.error(f"exhibit.{unknown[0]}", "unknown field (steps, show, slurm_conf, "
                                                   "gres_conf)")
    steps_raw = spec.get("steps") or []
    if not isinstance(steps_raw, list) or len(steps_raw) > MAX_STEPS:
        raise where.error("exhibit.steps", f"must be a list of at most {MAX_STEPS} steps")
    steps = tuple(_step(where, i, s) for i, s in enumerate(steps_raw))
    show_raw = spec.get("show")
    if isinstance(show_raw, str):
        show_raw = [show_raw]
    if not isinstance(show_raw, list) or not show_raw \
            or not all(isinstance(c, str) and c.strip() for c in show_raw):
        raise where.error("exhibit.show", "must be a non-empty list of commands "
                                          "(squeue, sprio, sacct, ...)")
    for c in show_raw:
        _command_name(where, "exhibit.show", c)
    conf = spec.get("slurm_conf", "default")
    gres = spec.get("gres_conf", "")
    if not isinstance(conf, str) or not isinstance(gres, str):
        raise where.error("exhibit.slurm_conf", "must be 'default' or the text of a slurm.conf")
    return Exhibit(steps, tuple(show_raw), "" if conf.strip() == "default" else conf, gres)


def _command_name(where: Where, name: str, command: str) -> str:
    from minislurm.sim.cluster import COMMANDS

    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise where.error(name, f"'{command}': {exc}") from None
    if not argv or argv[0] not in COMMANDS:
        raise where.error(name, f"'{command}': not a command an exhibit can run "
                                f"({', '.join(COMMANDS)})")
    return argv[0]


def _step(where: Where, index: int, raw: Any) -> Step:
    name = f"exhibit.steps[{index}]"
    if isinstance(raw, str):
        _command_name(where, name, raw)
        return Step(command=raw)
    if isinstance(raw, dict) and set(raw) == {"advance"}:
        value = raw["advance"]
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise where.error(name, "advance: minutes (an integer) or a Slurm time (1:30:00)")
        return Step(advance=str(value))
    if isinstance(raw, dict) and set(raw) <= {"run", "user"} and isinstance(raw.get("run"), str) \
            and isinstance(raw.get("user", ""), str):
        _command_name(where, name, raw["run"])
        return Step(command=raw["run"], user=str(raw.get("user", "")))
    raise where.error(name, "must be a command line, {advance: minutes} or "
                            "{user: name, run: command}")


def advance_seconds(text: str) -> int:
    """Seconds of an ``advance`` step: Slurm's time format (a bare number is minutes)."""
    from minislurm.common.timespec import time_str2secs

    try:
        seconds = time_str2secs(text.strip())
    except ValueError:
        seconds = -1
    if seconds is None or not 0 <= seconds <= MAX_ADVANCE:
        raise ExhibitError(f"advance: '{text}' is not a time from 0 to 30 days (minutes, "
                           "or [days-]hours:minutes:seconds)")
    return seconds


@lru_cache(maxsize=512)
def play(exhibit: Exhibit) -> str:
    """Play a filled exhibit and return what its ``show`` commands print (cached)."""
    from minislurm.conf import parse_config
    from minislurm.sim import Cluster

    conf = None
    if exhibit.slurm_conf.strip():
        try:
            conf = parse_config(exhibit.slurm_conf, "slurm.conf",
                                exhibit.gres_conf or None, "gres.conf")
        except QuizError:
            raise
        except Exception as exc:
            message = getattr(exc, "message", str(exc))
            raise ExhibitError(f"slurm_conf: {message}") from None
    with tempfile.TemporaryDirectory(prefix="quiz-exhibit-") as tmp:
        cluster = Cluster(conf, user=DEFAULT_USER, workdir=tmp)
        try:
            for step in exhibit.steps:
                if step.advance:
                    cluster.advance(advance_seconds(step.advance))
                    continue
                result = cluster.run(step.command, user=step.user or None)
                if result.returncode != 0:
                    raise ExhibitError(f"step '{step.command}' failed (exit "
                                       f"{result.returncode}): {result.stderr.strip()}")
            blocks = []
            for command in exhibit.show:
                result = cluster.run(command)
                if result.returncode != 0:
                    raise ExhibitError(f"'{command}' failed (exit {result.returncode}): "
                                       f"{result.stderr.strip()}")
                blocks.append(f"$ {command}\n{result.stdout.rstrip()}")
        finally:
            cluster.close()
    return "\n\n".join(blocks).replace(tmp, f"/home/{DEFAULT_USER}")


def render(exhibit: Exhibit | None, params: Mapping[str, Any]) -> str:
    """The exhibit text of one variant ('' when the item has no exhibit)."""
    if exhibit is None:
        return ""
    return play(exhibit.filled(params))


def check(exhibit: Exhibit | None, where: Where, variants: Sequence[Mapping[str, Any]]) -> None:
    """Play every variant of an exhibit; a failing one is a BankError naming the item."""
    if exhibit is None:
        return
    for params in variants:
        try:
            text = render(exhibit, params)
        except ExhibitError as exc:
            label = f" (variant {dict(params)})" if params else ""
            raise where.error("exhibit", exc.message.removeprefix("quizzes: error: ") + label) \
                from None
        if "{{" in text:
            raise where.error("exhibit", "a {{placeholder}} is not a parameter of the item")
