"""When a job deep in the queue becomes eligible, as 22.05.8 decides it.

``SchedulerParameters=default_queue_depth=2,bf_max_job_test=1``: the schedulers test
only the first jobs of the queue, behind a running ``-N4 --exclusive`` job.  Measured
on the reference cluster (replayed there by the ``realslurm`` test below):

* a job that may run gets its eligible time as it is accepted (``job_allocate`` runs
  ``job_independent``): EligibleTime and AccrueTime equal its SubmitTime, however deep
  it waits, so its age factor counts from there;
* a job held, or waiting on a dependency, has none (``Unknown``);
* an array gets it at the first pass after its submission (``build_job_queue`` runs
  ``job_independent`` for every pending job);
* a ``--begin`` job shows its begin time as EligibleTime, and keeps the reason
  BeginTime until a pass after that time, which sets None.

What the deep jobs that may run show as their reason is not compared: on 22.05.8 it
is the one ``job_allocate`` gave them, and that depends on timing.  A job accepted
while the nodes are busy gets Resources (``select_nodes`` in test-only mode finds no
idle node: ``_pick_best_nodes: idle_nodes 0`` in slurmctld's debug3 log); one accepted
in the same burst as the ``-N4`` job, before that job started, gets Priority
(``_top_priority``: a pending job ranks above it).  minislurm does not model that
(they show None).
"""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

import pytest
from captures import REF, checked_stdout
from realslurm import RealSlurm
from realslurm.fixtures import running

from minislurm.sim import Cluster

#: The reference cluster's schedulers, testing two jobs per pass.
SHALLOW = ("SchedulerParameters=bf_interval=1,bf_resolution=1,sched_min_interval=0,"
           "default_queue_depth=2,bf_max_job_test=1")

#: (name, sbatch options) of the jobs behind the running ``-N4 --exclusive`` one.
JOBS = [
    ("deep1", "-N1"), ("deep2", "-N1"), ("deep3", "-N1"), ("deep4", "-N1"),
    ("held", "-N1 -H"), ("array", "-N1 --array=0-1"), ("begin", "-N1 --begin=now+4"),
    ("dep", "-N1 -d afterany:{first}"),
]

#: name -> (EligibleTime, AccrueTime, Reason) after 2 s: "submit" (within 2 s of the
#: job's SubmitTime), "later" or "Unknown"; the deep jobs' reasons are not compared.
AT_FIRST = {
    "deep1": ("submit", "submit", None), "deep2": ("submit", "submit", None),
    "deep3": ("submit", "submit", None), "deep4": ("submit", "submit", None),
    "held": ("Unknown", "Unknown", "JobHeldUser"), "array": ("submit", "submit", "None"),
    "begin": ("later", "later", "BeginTime"), "dep": ("Unknown", "Unknown", "Dependency"),
}

#: The begin job after a pass past its begin time: eligible then, reason None.
AFTER_BEGIN = ("later", "later", "None")


def _times(shown: str) -> tuple[str, str, str]:
    """(EligibleTime, AccrueTime, Reason) of ``scontrol show job``, times relative to
    SubmitTime (see AT_FIRST)."""
    fields = dict(re.findall(r"(\w+)=(\S+)", shown))
    submit = datetime.fromisoformat(fields["SubmitTime"])

    def rel(text: str) -> str:
        if text == "Unknown":
            return text
        return "submit" if (datetime.fromisoformat(text) - submit).total_seconds() <= 2 \
            else "later"

    return rel(fields["EligibleTime"]), rel(fields["AccrueTime"]), fields["Reason"]


def _scenario(run: Callable[[str], str], wait: Callable[[float], None]
              ) -> tuple[dict[str, tuple[str, str, str | None]], tuple[str, str, str]]:
    first = run("sbatch -J wide -N4 --exclusive -o /dev/null --wrap 'sleep 120'").split()[-1]
    for name, opts in JOBS:
        run(f"sbatch -J {name} {opts.format(first=first)} -o /dev/null --wrap 'sleep 10'")
    wait(2)
    ids = dict(line.split() for line in run("squeue -h -o '%j %F'").splitlines())
    seen: dict[str, tuple[str, str, str | None]] = {}
    for name, _ in JOBS:
        eligible, accrue, reason = _times(run(f"scontrol show job {ids[name]}"))
        seen[name] = (eligible, accrue, None if name.startswith("deep") else reason)
    wait(5)  # past the begin job's time; a submission runs a pass
    run("sbatch -J late -N1 -o /dev/null --wrap 'sleep 10'")
    wait(2)
    return seen, _times(run(f"scontrol show job {ids['begin']}"))


def _cleanup(run: Callable[[str], str]) -> None:
    for name in ("wide", "late", *(n for n, _ in JOBS)):
        run(f"scancel -n {name}")


def test_deep_jobs_become_eligible_as_slurm_decides(tmp_path: Path) -> None:
    if not (REF / "slurm.conf").exists():
        pytest.skip("the reference captures are not here")
    shutil.copy(REF / "gres.conf", tmp_path / "gres.conf")
    (tmp_path / "slurm.conf").write_text((REF / "slurm.conf").read_text() + SHALLOW + "\n")
    c = Cluster(tmp_path / "slurm.conf", user="root", uid=0, workdir=tmp_path)
    assert _scenario(checked_stdout(c.run), c.advance) == (AT_FIRST, AFTER_BEGIN)


@pytest.fixture(scope="module")
def shallow_slurm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealSlurm]:
    """The reference cluster (without accounting) whose schedulers test two jobs."""
    with running(RealSlurm(tmp_path_factory.mktemp("shallow"), accounting=False,
                           extra_conf=(SHALLOW,))) as cluster:
        yield cluster


@pytest.mark.realslurm
def test_deep_jobs_become_eligible_on_real_slurm(shallow_slurm: RealSlurm) -> None:
    run = checked_stdout(shallow_slurm.run, cwd=str(shallow_slurm.work_dir))
    try:
        assert _scenario(run, time.sleep) == (AT_FIRST, AFTER_BEGIN)
    finally:
        _cleanup(run)
