"""How a simulated node "runs" a batch script: it reads the script's sleeps.

On the simulated clock no process runs, so a job's duration must come from
somewhere. A learner's script usually says it: ``sleep 600`` (or
``srun sleep 600``) lines add up to the run time, and an ``exit N`` line sets
the exit code. ``#MINISLURM runtime=<Slurm time>`` and ``#MINISLURM exit=<N>``
comment lines state them explicitly (real Slurm ignores those comments), e.g.
for a training script whose length a simulation should assume. A script that
says nothing runs for `DEFAULT_RUNTIME` seconds.
"""

from __future__ import annotations

import re
import shlex

from minislurm.common.timespec import time_str2secs
from minislurm.ctld.runner import JobBody, SimStep

#: Run time of a simulated script that states none (seconds).
DEFAULT_RUNTIME = 60

_SLEEP_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
_SLEEP = re.compile(r"^(\d+(?:\.\d+)?)([smhd]?)$")
_MARK = re.compile(r"^#\s*MINISLURM\s+(runtime|exit)\s*=\s*(\S+)", re.IGNORECASE)


def _sleep_seconds(words: list[str]) -> float | None:
    """Seconds of ``sleep N`` / ``srun [opts] sleep N`` (GNU sleep units), else None."""
    if "sleep" not in words:
        return None
    args = words[words.index("sleep") + 1:]
    total = 0.0
    for arg in args:
        match = _SLEEP.match(arg)
        if match is None:
            return None
        total += float(match.group(1)) * _SLEEP_UNITS[match.group(2)]
    return total if args else None


def script_body(script: str) -> JobBody:
    """The simulated run time, exit code and srun steps a batch script implies.

    Each ``srun ...`` line is a step (``JobBody.steps``) starting when the sleeps
    before it are over and lasting its own ``sleep``.  Another program (``srun python
    train.py``) takes no time when later lines do; as the script's last work, or in
    the background, it runs until the job ends (its length is the script's: the sleeps,
    ``#MINISLURM runtime=`` or the default).  A line ending in ``&`` runs in the
    background (the script goes on at once) until a ``wait`` line waits for it.
    """
    runtime: float | None = None
    slept = 0.0
    background = 0.0  # when the last background line ends
    steps: list[SimStep] = []
    exit_code = 0
    for raw in script.splitlines():
        line = raw.strip()
        mark = _MARK.match(line)
        if mark is not None:
            key, value = mark.group(1).lower(), mark.group(2)
            if key == "runtime":
                seconds = _runtime_seconds(value)
                if seconds is not None:
                    runtime = seconds
            elif value.lstrip("-").isdigit():
                exit_code = int(value) & 0xFF
            continue
        if not line or line.startswith("#"):
            continue
        try:
            words = shlex.split(line, comments=True)
        except ValueError:
            continue
        detached = bool(words) and words[-1] == "&"
        if detached:
            words = words[:-1]
        if words == ["wait"]:
            slept = max(slept, background)
        seconds = _sleep_seconds(words)
        if words[:1] == ["srun"]:
            length = None if seconds is None and detached else round(seconds or 0)
            steps.append(SimStep(round(slept), length, tuple(words[1:])))
        if seconds is not None:
            if detached:
                background = max(background, slept + seconds)
            else:
                slept += seconds
        if words[:1] == ["exit"] and len(words) > 1 and words[1].lstrip("-").isdigit():
            exit_code = int(words[1]) & 0xFF
            break
    if runtime is None:
        runtime = slept if slept > 0 else DEFAULT_RUNTIME
    for k, step in enumerate(steps):  # a program that is the script's last work
        if step.duration == 0 and step.offset == round(slept) and _program(step.argv):
            steps[k] = SimStep(step.offset, None, step.argv)
    return JobBody(run_time=round(runtime), exit_code=exit_code, steps=tuple(steps))


def _program(argv: tuple[str, ...]) -> bool:
    """True if the srun line runs something other than ``sleep``."""
    return "sleep" not in argv


def _runtime_seconds(value: str) -> float | None:
    """``#MINISLURM runtime=`` in Slurm's time formats (``90`` = 90 minutes, ``2:00:00``)."""
    try:
        seconds = time_str2secs(value)
    except ValueError:  # an unreadable mark is ignored, as Slurm ignores comments
        return None
    return None if seconds is None or seconds < 0 else float(seconds)
