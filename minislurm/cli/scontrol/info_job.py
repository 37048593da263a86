"""``scontrol show job`` and the host list tools (src/scontrol/info_job.c:
``scontrol_print_job``, ``scontrol_print_hosts``, ``scontrol_encode_hostlist``)."""

from __future__ import annotations

import dataclasses

from minislurm.cli.format.scontrol import format_scontrol_job
from minislurm.cli.scontrol.session import (
    INVALID_JOB_ID,
    PROG,
    Session,
    split_job_id,
)
from minislurm.cli.squeue import known_jobs, pending_tasks
from minislurm.common import hostlist
from minislurm.errors import HostlistError
from minislurm.job import JobRecord


def _hostlist_error(exc: HostlistError) -> str:
    return "\n".join(f"{PROG}: {ln}" if ln.startswith("error:") else ln
                     for ln in exc.message.splitlines())


def print_hosts(s: Session, expr: str | None) -> None:
    """``scontrol_print_hosts``: one host per line; problems do not change the exit code."""
    if not expr:
        s.ctx.err(f"{PROG}: error: host list is empty")
        return
    try:
        hosts = hostlist.expand(expr)
    except HostlistError as exc:
        s.ctx.err(_hostlist_error(exc))
        return
    for host in hosts:
        s.ctx.out(host)


def encode_hostlist(s: Session, expr: str, sorted_: bool) -> None:
    """``scontrol_encode_hostlist``: a list, ``-`` (stdin) or a file -> one expression."""
    text = expr
    if expr == "-" or expr.startswith("/"):
        if expr == "-":
            text = s.ctx.stdin or ""
        else:
            try:
                with open(expr, encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
            except OSError:
                s.error(f"Can not open {expr}")
                return
        text = ",".join(t for t in text.replace("\n", ",").split(",") if t)
    try:
        s.ctx.out(hostlist.ranged(text, sort=sorted_))
    except HostlistError as exc:
        s.error(_hostlist_error(exc))


def show_job(s: Session, val: str | None) -> None:
    """``scontrol_print_job``: all jobs, one job, an array or one task of it."""
    ctl = s.controller("slurm_load_jobs error")
    jobs = known_jobs(ctl)
    now = int(ctl.now)
    if val is None:
        if not jobs:
            if not s.quiet:
                s.ctx.out("No jobs in the system")
            return
        s.ctx.stdout.write("".join(format_scontrol_job(j, now=now, oneliner=s.oneliner,
                                                       details=s.details)
                                   for j in jobs))
        return
    parsed = split_job_id(val)
    if parsed is None or not any(parsed[0] in (j.job_id, j.array_job_id) for j in jobs):
        s.error(f"slurm_load_jobs error: {INVALID_JOB_ID}")
        return
    job_id, task = parsed
    picked: list[JobRecord] = []
    for j in jobs:
        if job_id not in (j.job_id, j.array_job_id):
            continue
        if task is None or (j.array_task_id == task and j.array_job_id == job_id):
            picked.append(j)
        elif j.array_task_str is not None and task in pending_tasks(j):
            picked.append(dataclasses.replace(j, array_task_id=task, array_task_str=None))
    if not picked:
        s.exit_code = 1
        if not s.quiet:
            s.ctx.out(f"Job {val} not found")
        return
    s.ctx.stdout.write("".join(format_scontrol_job(j, now=now, oneliner=s.oneliner,
                                                       details=s.details)
                               for j in picked))
