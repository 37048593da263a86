"""Mapping a run's outputs back to the captures' numbering, paths and ports.

A replay on the harness differs from the capture only in values that depend on
the run: job ids, the cluster folder, ports, pids, timestamps, priorities
(priority/basic counts down per submitted job), load and free memory. :func:`to_reference` rewrites
the deterministic ones to the reference values (our folder -> /srv/slurm-ref,
our SlurmctldPort -> 16817, our hostname -> ``vm``, our job ids -> the
capture's via an offset) and :func:`mask_volatile` replaces the random ones by
placeholders on both sides. :func:`drop_step_waits` removes srun's load-dependent
wait for a step from job outputs where that wait is not the subject. Everything
else must match exactly.

Job ids: the harness starts the tests' cluster at ``FirstJobId`` =
:data:`JOB_ID_BASE`, so any integer in [JOB_ID_BASE, JOB_ID_BASE + 10**5) in
an output is a job id and nothing else; ``offset`` = our id - the capture's id
of the same job (both are consecutive within a case).
"""

from __future__ import annotations

import re
import socket
from pathlib import Path

from .conf import REFERENCE_ROOT
from .ports import REFERENCE_PORTS, PortPlan

JOB_ID_BASE = 100000
_JOB_ID_SPAN = 100000
#: Where a job id shows up first in an output (sbatch, srun env, scontrol, squeue/sacct rows).
_FIRST_ID = re.compile(
    r"Submitted batch job (\d+)|SLURM_JOB_ID=(\d+)|JobId=(\d+)|^(\d+)(?:_|\s)", re.MULTILINE
)
_NUMBER = re.compile(r"(?<![\d.])\d+(?![\d])")
_ISO_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")
#: KEY=value pairs whose value is random per run (pids, ephemeral srun ports, priorities).
VOLATILE_KEYS = (
    "SLURM_TASK_PID",
    "SLURM_SRUN_COMM_PORT",
    "SLURM_STEP_LAUNCHER_PORT",
    "Priority",
    "CPULoad",
    "FreeMem",
)


def first_job_id(text: str) -> int | None:
    """The first job id mentioned in an output (see ``_FIRST_ID``), if any."""
    match = _FIRST_ID.search(text)
    if match is None:
        return None
    return int(next(g for g in match.groups() if g is not None))


def job_id_offset(ours: str, capture: str) -> int | None:
    """Our first job id minus the capture's first job id (None if either has none)."""
    mine, theirs = first_job_id(ours), first_job_id(capture)
    if mine is None or theirs is None:
        return None
    return mine - theirs


def shift_job_ids(text: str, offset: int) -> str:
    """Rewrite our job ids (integers >= JOB_ID_BASE) to the capture's: id - offset."""

    def repl(m: re.Match[str]) -> str:
        value = int(m.group(0))
        if JOB_ID_BASE <= value < JOB_ID_BASE + _JOB_ID_SPAN:
            return str(value - offset)
        return m.group(0)

    return _NUMBER.sub(repl, text)


def mask_volatile(text: str) -> str:
    """Placeholders for values that differ by run on both sides: ISO timestamps
    and the values of :data:`VOLATILE_KEYS`."""
    text = _ISO_TIME.sub("<time>", text)
    for key in VOLATILE_KEYS:
        text = re.sub(rf"\b{key}=[^\s]+", f"{key}=<{key}>", text)
    return re.sub(r"(?m)^(\s*)OS=.*$", r"\1OS=<os>", text)


def to_reference(
    text: str,
    *,
    root: Path,
    ports: PortPlan,
    offset: int | None = None,
    hostname: str | None = None,
) -> str:
    """Our output rewritten to the reference's folder, ports, hostname and job ids,
    then masked with :func:`mask_volatile`."""
    text = text.replace(str(root), str(REFERENCE_ROOT))
    text = text.replace(f":localhost:{ports.ctld}:", f":localhost:{REFERENCE_PORTS.ctld}:")
    for mine, theirs in zip(ports.nodes, REFERENCE_PORTS.nodes, strict=True):
        text = text.replace(f"Port={mine} ", f"Port={theirs} ")
    host = hostname or socket.gethostname()
    if host != "vm":
        text = re.sub(rf"(?<![A-Za-z0-9]){re.escape(host)}(?![A-Za-z0-9])", "vm", text)
    if offset is not None:
        text = shift_job_ids(text, offset)
    return mask_volatile(text)


#: One srun's wait for its step (src/srun/libsrun/launch.c,
#: ``launch_common_create_job_step``): a step-create refused with a retryable error
#: (``Requested nodes are busy``: the previous step's CPUs/memory not yet released)
#: prints ``Job N step creation temporarily disabled, retrying (<why>)`` on the first
#: failed try, ``... still disabled, retrying (<why>)`` on each later one, and
#: ``Step created for job N`` once a try succeeds (only when ``i > 0``).
_STEP_WAIT = re.compile(
    r"^srun: Job (\d+) step creation temporarily disabled, retrying \([^)\n]*\)\n"
    r"(?:srun: Job \1 step creation still disabled, retrying \([^)\n]*\)\n)*"
    r"srun: Step created for job \1\n",
    re.MULTILINE,
)


def drop_step_waits(text: str) -> str:
    """Remove every complete wait-for-a-step block (:data:`_STEP_WAIT`) from a job's output.

    Whether srun has to wait at all depends on timing, not on the job: a step that
    follows another one needs that step's resources released by slurmctld, which
    under load can come after the next ``srun`` asks (seen in CI: ``srun: Job 6 step
    creation temporarily disabled, retrying (Requested nodes are busy)`` + ``srun:
    Step created for job 6`` in a3's slurm-6.out, whose capture has neither), and the
    number of ``still disabled`` lines is the number of failed tries. Only for
    comparisons where waiting for a step is not the subject (the capture replays);
    tests of step waits (tests/minislurm/steps/test_step_sharing.py) keep the lines.
    Only whole blocks go: a lone retry line, one without its final ``Step created``
    (a step that never came) or one naming another job stays and fails the comparison.
    """
    return _STEP_WAIT.sub("", text)


def squeeze_columns(text: str) -> str:
    """Collapse runs of spaces (tables whose column widths follow the ids' digit counts)."""
    return "\n".join(re.sub(r" +", " ", line).strip() for line in text.splitlines())
