"""Waiting until srun has launched a step completely, before a test ends the job.

A task running is not enough. srun counts a step as launched when every node's
slurmstepd has answered with ``RESPONSE_LAUNCH_TASKS`` (src/api/step_launch.c,
``slurm_step_launch_wait_start``); slurmstepd releases the tasks to exec *before* it
sends that answer (src/slurmd/slurmstepd/mgr.c ``job_manager``: ``_fork_all_tasks``,
then ``_send_launch_resp``). If the job ends in between, slurmctld's "step complete"
message makes srun abort the wait and print ``srun: launch/slurm:
launch_p_step_launch: StepId=J.0 aborted before step completely launched.``
(src/plugins/launch/slurm/launch_slurm.c), a line a test of the job's end does not
expect. On a loaded machine a second node's tasks may also not have started yet when
the first node's task says it runs (seen in CI).

The handshake here closes both gaps. Each task traps SIGUSR1 before it says it runs
(``<job>.on.<rank>``); the test then sends ``scancel --signal=USR1 <job>`` (the
job's steps only, not the batch shell) and waits for every task's
``<job>.ready.<rank>``. slurmstepd delivers a step signal only once the step is
``SLURMSTEPD_STEP_RUNNING`` (req.c ``_handle_signal_container`` ->
``_wait_for_job_running``), which it sets after ``_send_launch_resp`` returned, and
that send waits until srun has read the answer and closed the connection
(src/common/slurm_protocol_api.c ``slurm_send_only_node_msg``). So when every rank's
ready file exists, srun has counted every task as started.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Protocol

#: The start of a task's ``bash -c`` script: trap SIGUSR1 (it writes the ready file),
#: then say the task runs.
TASK_READY = (
    'trap "touch $SLURM_JOB_ID.ready.$SLURM_PROCID" USR1; touch $SLURM_JOB_ID.on.$SLURM_PROCID'
)
#: A task's body after :data:`TASK_READY` that runs until the job's end kills it. The
#: step signal reaches every process of the step, ``sleep`` too: a foreground
#: ``sleep`` killed by SIGUSR1 makes bash print ``User defined signal 1``, a
#: background one bash waits for does not; the trap ends ``wait`` and runs.
FOREVER = "while :; do sleep 1 & wait; done"


class _Runs(Protocol):
    def run(self, cmd: str) -> object: ...


def _wait_files(paths: list[Path], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not all(p.exists() for p in paths):
        assert time.monotonic() < deadline, f"{what}: {[p.name for p in paths if not p.exists()]}"
        time.sleep(0.1)


def wait_launched(
    cluster: _Runs, work: Path, job: str, ntasks: int, timeout: float = 60.0
) -> None:
    """Return once srun has launched job ``job``'s step of ``ntasks`` tasks completely
    (see the module docstring); the tasks run :data:`TASK_READY` in ``work``."""
    _wait_files([work / f"{job}.on.{t}" for t in range(ntasks)], timeout,
                "the srun step's tasks did not start")
    cluster.run(f"scancel --signal=USR1 {job}")
    _wait_files([work / f"{job}.ready.{t}" for t in range(ntasks)], timeout,
                "the step's tasks did not get SIGUSR1 (step not launched)")


def with_job_line(lines: list[str], next_line: str, job_line: str) -> list[str]:
    """``lines`` (a batch job's output, the job ended while its ``srun`` step ran) with
    slurmstepd's ``*** JOB J ON nX CANCELLED ... ***`` line put back where real Slurm may
    leave it out, and only there: when srun ended first, the script printed its next
    line (``next_line``) and may have ended before slurmd's signal reached its batch step;
    slurmstepd prints the JOB line only while its step runs (req.c
    ``_handle_signal_container``: ``job->state < SLURMSTEPD_STEP_ENDING``; seen on
    22.05.8 in CI)."""
    if next_line in lines and job_line not in lines:
        return [*lines, job_line]
    return lines


#: slurmstepd's buffered log ring: log.c ``_log_init`` makes it with
#: ``cbuf_create(128, 8192)``, and cbuf.c keeps one byte of it free (``size + 1``).
LOG_RING = 128 + 1


def child_log_writes(line: str, before: int) -> tuple[str, ...]:
    """The ``write()``\\ s that print one log ``line`` (its newline included) from a
    task child forked after slurmstepd had logged ``before`` bytes.

    slurmstepd's log is buffered (mgr.c ``_slurmd_job_log_init`` sets
    ``log_opts.buffered``): log.c ``_log_printf`` copies each message into a ring and
    writes it out with ``cbuf_read_to_fd``, one ``write()`` per piece up to the ring's
    end (cbuf.c ``cbuf_reader``). A forked child inherits the ring where its parent
    left it, so a message the child logs before exec (mgr.c
    ``_pre_task_child_privileged``: ``couldn't chdir to ...``) is cut at the ring's end
    into two writes."""
    if len(line) >= LOG_RING:
        raise ValueError("a line longer than the ring makes cbuf_write grow it; not modelled")
    first = LOG_RING - before % LOG_RING
    return (line,) if len(line) <= first else (line[:first], line[first:])


def two_children_streams(parent_line: str, child_line: str) -> set[str]:
    """Every byte stream the task-0 stderr pipe of a two-task step may carry when
    slurmstepd logged ``parent_line`` before it forked the tasks and each task child
    then logs ``child_line`` before exec.

    slurmstepd dups task 0's stderr onto its own (mgr.c ``_slurmd_job_log_init``) and
    the children still have it until ``exec_task`` sets up their stdio, so all three
    messages share one pipe. Writes of a pipe are atomic, but a child's message may be
    two writes (:func:`child_log_writes`), and the two children run at once: their
    pieces interleave in any order that keeps each child's own order."""
    pieces = child_log_writes(child_line, len(parent_line))
    streams = set()
    for order in _interleavings(len(pieces)):
        streams.add(parent_line + "".join(pieces[i] for i in order))
    return streams


def _interleavings(n: int) -> list[list[int]]:
    """The orders of two children's ``n`` pieces each (as piece indexes) that keep
    each child's own order."""
    out: list[list[int]] = []

    def walk(a: int, b: int, seq: list[int]) -> None:
        if a == n and b == n:
            out.append(seq)
        if a < n:
            walk(a + 1, b, [*seq, a])
        if b < n:
            walk(a, b + 1, [*seq, b])

    walk(0, 0, [])
    return out
