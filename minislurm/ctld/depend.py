"""Job dependencies (``test_job_dependency`` in src/slurmctld/job_scheduler.c).

``--dependency=afterok:56,afterany:57`` (all must hold) or ``afterok:56?afterok:57``
(any may hold).  Each condition is *satisfied*, still *waiting*, or can *never* be
satisfied (``afterok`` on a job that failed): the job then waits with reason
``DependencyNeverSatisfied`` for ever, unless ``--kill-on-invalid-dep=yes``.
A dependency on a job id Slurm no longer knows is treated as satisfied (capture
b_sbatch_errors: ``afterok`` on an unknown id runs).  ``singleton`` waits while an
earlier job of the same name and user is pending or running.

scontrol prints the conditions as ``afterok:56(failed)`` / ``afterok:56(unfulfilled)``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from minislurm.states import JobState

from .job_mgr import DepItem, Job

OK, WAIT, NEVER = "ok", "wait", "never"


def _all_terminal(targets: Sequence[Job]) -> bool:
    return all(t.state.is_terminal and not t.array_pending for t in targets)


def item_status(
    item: DepItem, targets: Sequence[Job], now: int, singleton_waits: bool
) -> str:
    """``ok``, ``wait`` or ``never`` for one condition against its target jobs."""
    kind = item.kind
    if kind == "singleton":
        return WAIT if singleton_waits else OK
    if not targets:
        return OK
    if kind == "after":
        started = [t.start_time for t in targets if t.start_time is not None or t.state.is_terminal]
        if len(started) < len(targets) or any(t.array_pending for t in targets):
            return WAIT
        last = max((s for s in started if s is not None), default=now)
        return OK if now >= last + item.delay * 60 else WAIT
    if not _all_terminal(targets):
        if kind == "afterok" and any(
            t.state.is_terminal and t.state is not JobState.COMPLETED for t in targets
        ):
            return NEVER
        return WAIT
    completed = [t.state is JobState.COMPLETED for t in targets]
    if kind in ("afterok", "aftercorr"):
        return OK if all(completed) else NEVER
    if kind == "afternotok":
        return OK if not any(completed) else NEVER
    return OK  # afterany, afterburstbuffer


def evaluate(
    job: Job,
    targets_of: Callable[[int], list[Job]],
    singleton_waits: Callable[[Job], bool],
    now: int,
) -> str:
    """Status of the whole ``--dependency`` of ``job``; updates ``job.dep_text``."""
    if not job.dependency:
        return OK
    statuses: list[str] = []
    texts: list[str] = []
    for item in job.dependency:
        targets = targets_of(item.job_id) if item.job_id is not None else []
        waits = singleton_waits(job) if item.kind == "singleton" else False
        st = item_status(item, targets, now, waits)
        statuses.append(st)
        word = {OK: "", WAIT: "unfulfilled", NEVER: "failed"}[st]
        if item.kind == "singleton":
            texts.append(f"singleton({word or 'unfulfilled'})")
        else:
            delay = f"+{item.delay}" if item.delay else ""
            texts.append(f"{item.kind}:{item.job_id}{delay}({word or 'unfulfilled'})")
    if job.dep_any:
        result = OK if OK in statuses else (NEVER if all(s == NEVER for s in statuses) else WAIT)
    else:
        result = NEVER if NEVER in statuses else (OK if all(s == OK for s in statuses) else WAIT)
    job.dep_text = "" if result == OK else ("?" if job.dep_any else ",").join(texts)
    if result == OK:
        job.dependency = ()
    return result


__all__ = ["NEVER", "OK", "WAIT", "evaluate", "item_status"]
