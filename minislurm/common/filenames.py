"""``-o/-e/-i`` filename patterns (src/slurmd/common/fname.c ``fname_create``).

Replacement symbols (sbatch(1) "filename pattern"), each may carry a zero
padding width (``%4j`` -> ``0128``)::

    %%  a literal %           %A  array master job id   %a  array task id
    %J  jobid.stepid          %j  job id                %N  node (short name)
    %n  node index in the job %s  step id               %t  task id (rank)
    %u  user name             %x  job name

Outside an array ``%A`` is the job id and ``%a`` is 4294967294 (capture
f4_output_patterns/03); the batch step's ``%s`` is ``batch`` (capture
f4 01: ``o-122-pat-root-vm-0-0-batch-%.out``) and its ``%J`` the bare job id.
A padding width above 10 is 10 (``MAX_WIDTH``: ``%12345j`` -> ``0000104545``); any
other letter stays as written (22.05.8 has no ``%b``).  A pattern containing a
backslash is not expanded at all; the backslashes are dropped.
"""

from __future__ import annotations

import re

from minislurm.common.jobarray import NO_ARRAY_TASK

DEFAULT_BATCH_OUTPUT = "slurm-%j.out"
"""sbatch's default ``--output`` (and ``--error``) in the submit directory."""

DEFAULT_ARRAY_OUTPUT = "slurm-%A_%a.out"
"""sbatch's default for job arrays."""

_SYMBOL = re.compile(r"%(\d*)([%AaJjNnstux])")
MAX_WIDTH = 10
"""fname.c: the largest zero padding."""


def default_output_pattern(is_array: bool) -> str:
    """`DEFAULT_ARRAY_OUTPUT` for an array job, else `DEFAULT_BATCH_OUTPUT`."""
    return DEFAULT_ARRAY_OUTPUT if is_array else DEFAULT_BATCH_OUTPUT


def expand_pattern(
    pattern: str,
    *,
    job_id: int,
    array_job_id: int | None = None,
    array_task_id: int | None = None,
    job_name: str = "",
    user: str = "",
    node: str = "",
    node_index: int = 0,
    task_id: int = 0,
    step_id: int | str = "batch",
) -> str:
    """Expand ``pattern`` for one job (step, task) like slurmd/slurmstepd."""
    if "\\" in pattern:
        return pattern.replace("\\", "")
    master = array_job_id if array_job_id is not None else job_id
    task = array_task_id if array_task_id is not None else NO_ARRAY_TASK

    def number(width: str, value: int) -> str:
        return f"{value:0{min(int(width), MAX_WIDTH)}d}" if width else str(value)

    def replace(m: re.Match[str]) -> str:
        width, sym = m.group(1), m.group(2)
        if sym == "%":
            return "%" if not width else m.group(0)
        numbers = {"A": master, "a": task, "j": job_id, "n": node_index, "t": task_id}
        if sym in numbers:
            return number(width, numbers[sym])
        if sym == "s":
            return number(width, step_id) if isinstance(step_id, int) else str(step_id)
        if sym == "J":  # the batch step adds nothing (22.05.8: o-%J -> o-<jobid>)
            suffix = f".{step_id}" if isinstance(step_id, int) else ""
            return f"{number(width, job_id)}{suffix}"
        return {"N": node, "u": user, "x": job_name}[sym]

    return _SYMBOL.sub(replace, pattern)
