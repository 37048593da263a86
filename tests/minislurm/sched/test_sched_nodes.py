"""``squeue --start`` and ``SchedNodeList=``: the nodes sched/backfill planned a job on.

Measured on 22.05.8 (reference cluster, 4 nodes x 4 CPUs): with every CPU taken by a
10-minute job, jobs of 1 task, 4 tasks and ``-N2`` get reservations at its limit on
whole nodes n1, n2 and n[3-4] (``_add_reservation`` clears the nodes from the map), a
held job none::

                 JOBID PARTITION     NAME     USER ST          START_TIME  NODES SCHEDNODES           NODELIST(REASON)
                     2     debug     pend     root PD 2026-12-03T23:41:08      1 n1                   (Resources)
                     3     debug   behind     root PD 2026-12-03T23:41:08      1 n2                   (Priority)
                     4     debug      two     root PD 2026-12-03T23:41:08      2 n[3-4]               (Priority)
                     5     debug     held     root PD                 N/A      1 (null)               (JobHeldUser)

``scontrol show job`` prints ``NodeList= SchedNodeList=n[3-4]`` for a planned pending
job; a running job shows its ``NodeList`` only, and ``%Y`` is ``(null)`` for it.  A job
held then shows ``StartTime=Unknown EndTime=Unknown`` and, once a backfill pass with
jobs to test has run, no ``SchedNodeList`` (the pass clears every pending job's).
The replay runs the same commands on minislurm's embedded cluster and on real Slurm.
"""  # noqa: E501

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from captures import checked_stdout, reference_cluster
from ctld_helpers import ref_controller, sub
from realslurm import RealSlurm

START = """\
             JOBID PARTITION     NAME     USER ST          START_TIME  NODES SCHEDNODES           NODELIST(REASON)
{pend}     debug     pend     root PD <limit>      1 n1                   (Resources)
{behind}     debug   behind     root PD <limit>      1 n2                   (Priority)
{two}     debug      two     root PD <limit>      2 n[3-4]               (Priority)
{held}     debug     held     root PD                 N/A      1 (null)               (JobHeldUser)
"""  # noqa: E501


def _scene(run: Callable[[str], str], pause: Callable[[float], None]) -> dict[str, object]:
    ids: dict[str, str] = {}
    try:
        ids["full"] = run("sbatch --parsable -J full -n16 -t10 --wrap 'sleep 600'").strip()
        pause(1)
        for name, opts in (("pend", "-n1"), ("behind", "-n4"), ("two", "-N2 -n2"),
                           ("held", "-H -n1")):
            ids[name] = run(f"sbatch --parsable -J {name} {opts} -t5 --wrap 'sleep 60'").strip()
        pause(3)
        fields = run(f"squeue -h -j {ids['full']} -o '%S %e'").split()
        start = run("squeue --start")
        return {
            "start": start.replace(fields[1], "<limit>"),  # expected start = full's end
            "ids": ids,
            "two": re.findall(r"^ +(NodeList=.*)$", run(f"scontrol show job {ids['two']}"), re.M),
            "full": re.findall(r"^ +(NodeList=.*)$", run(f"scontrol show job {ids['full']}"),
                               re.M),
            "Y": run(f"squeue -h -j {ids['full']},{ids['two']} -o '%i %Y' --sort=i").split(),
            "held": _held(run, pause, ids["pend"]),
        }
    finally:
        run("scancel " + " ".join(ids.values()) if ids else "true")


def _held(run: Callable[[str], str], pause: Callable[[float], None], job: str) -> list[str]:
    """After ``scontrol hold``: StartTime=Unknown; the next backfill pass (other jobs
    pend) clears every pending job's estimates (``_clear_job_estimates``) and the held
    job gets none back."""
    run(f"scontrol hold {job}")
    pause(2)
    shown = run(f"scontrol show job {job}")
    return [*re.findall(r"^ +(StartTime=\S+ EndTime=\S+)|^ +(NodeList=.*)$", shown, re.M),
            run(f"squeue -h --start -j {job} -o '%S %Y %r'").strip()]


def _check(got: dict[str, object]) -> None:
    ids = got["ids"]
    assert isinstance(ids, dict)
    assert got["start"] == START.format(**{k: f"{v:>18}" for k, v in ids.items()})
    assert got["two"] == ["NodeList= SchedNodeList=n[3-4]"]
    assert got["full"] == ["NodeList=n[1-4]"]
    assert got["Y"] == [ids["full"], "(null)", ids["two"], "n[3-4]"]
    assert got["held"] == [("StartTime=Unknown EndTime=Unknown", ""), ("", "NodeList="),
                           "N/A (null) JobHeldAdmin"]


def test_a_held_job_alone_keeps_its_planned_nodes() -> None:
    """Measured on 22.05.8: ``pend`` (the only other job) held shows StartTime=Unknown
    but still ``SchedNodeList=n1``: a pass with no job to test clears nothing."""
    ctl = ref_controller()
    sub(ctl, None, name="full", ntasks=16, time_limit=10)
    ctl.run_for(1)
    pend = sub(ctl, 60, name="pend", ntasks=1, time_limit=5)
    ctl.run_for(3)
    assert (ctl.job(pend).start_time is not None, ctl.job(pend).sched_nodes) == (True, "n1")
    ctl.hold(pend)
    ctl.run_for(40)
    assert (ctl.job(pend).start_time, ctl.job(pend).sched_nodes) == (None, "n1")


def test_sched_nodes_on_minislurm(tmp_path: Path) -> None:
    cluster = reference_cluster(tmp_path)
    _check(_scene(checked_stdout(cluster.run), cluster.advance))


@pytest.mark.realslurm
def test_sched_nodes_on_real_slurm(real_slurm: RealSlurm, tmp_path: Path) -> None:
    _check(_scene(checked_stdout(real_slurm.run, cwd=tmp_path), time.sleep))
