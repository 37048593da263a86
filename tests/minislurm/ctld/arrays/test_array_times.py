"""Eligible and accrue times of array tasks, measured on real Slurm 22.05.8.

``sbatch --array=0-7%2 -n1`` on the empty reference cluster: tasks 0 and 1 start at
once; the remainder ``2-7%2`` (``JobArrayTaskLimit``) shows ``EligibleTime=Unknown``
(squeue ``N/A``, sacct ``Unknown``): slurmctld tests the throttle before it sets
``begin_time``.  ``scancel <id>_0`` 4 s later: task 2 starts then and shows that time
as ``EligibleTime`` (and ``AccrueTime``), not the submit time.  An array held only by
resources (``--array=0-7%6 -n4``: four tasks fill the cluster, the throttle never
bites) keeps the submit time for a task started later.  (When the first scheduling
pass comes 1 s after the submission, real Slurm shows that second for the first tasks'
EligibleTime/AccrueTime; minislurm's first pass runs at the submission.)
"""

from __future__ import annotations

import re
import time
from datetime import datetime
from pathlib import Path

import pytest
from captures import reference_cluster
from polling import poll
from realslurm import RealSlurm

SLEEP = "#!/bin/bash\nsleep 300\n"
FIELDS = re.compile(r"(ArrayTaskId|JobState|SubmitTime|EligibleTime|AccrueTime|StartTime)=(\S+)")


def times(show_all: str, name: str) -> dict[str, dict[str, str]]:
    """``scontrol -o show job`` lines of job ``name``, by ArrayTaskId."""
    out = {}
    for line in show_all.splitlines():
        if f" JobName={name} " not in line:
            continue
        fields = dict(FIELDS.findall(line))
        out[fields["ArrayTaskId"]] = fields
    return out


def started_when_eligible(task: dict[str, str]) -> bool:
    """A task's StartTime is its EligibleTime, on real Slurm within a second: one pass
    sets ``begin_time`` (job_independent) and then ``start_time`` (select_nodes), each
    from its own ``time(NULL)``, so a pass that crosses a second boundary between the
    two shows StartTime one second later."""
    eligible, start = (datetime.fromisoformat(task[k]) for k in ("EligibleTime", "StartTime"))
    return 0 <= (start - eligible).total_seconds() <= 1


def test_throttled_tasks_are_eligible_when_the_throttle_lets_them_go(tmp_path: Path) -> None:
    cluster = reference_cluster(tmp_path)
    cluster.write("sleep.sh", SLEEP)
    jid = cluster.run("sbatch --parsable -J t --array=0-7%2 sleep.sh").stdout.strip()
    cluster.advance(4)
    t = times(cluster.run("scontrol -o show job").stdout, "t")
    submit = t["0"]["SubmitTime"]
    assert t["2-7%2"]["EligibleTime"] == "Unknown"
    assert t["0"]["EligibleTime"] == t["0"]["AccrueTime"] == t["0"]["StartTime"] == submit
    cluster.run(f"scancel {jid}_0")
    cluster.advance(3)
    t = times(cluster.run("scontrol -o show job").stdout, "t")
    assert t["3-7%2"]["EligibleTime"] == "Unknown"
    two = t["2"]
    assert two["JobState"] == "RUNNING"
    assert two["EligibleTime"] == two["AccrueTime"] == two["StartTime"] != submit
    assert cluster.run(f"squeue -h -j {jid} -t PD -O EligibleTime").stdout.strip() == "N/A"
    sacct = cluster.run(f"sacct -X -n -P -j {jid} -o jobid,eligible,start").stdout.splitlines()
    assert f"{jid}_[3-7%2]|Unknown|Unknown" in sacct  # Start of a pending job: Unknown
    assert f"{jid}_2|{two['StartTime']}|{two['StartTime']}" in sacct


def test_tasks_held_by_resources_keep_the_submit_time(tmp_path: Path) -> None:
    cluster = reference_cluster(tmp_path)
    cluster.write("sleep.sh", SLEEP)
    jid = cluster.run("sbatch --parsable -J v --array=0-7%6 -n4 sleep.sh").stdout.strip()
    cluster.advance(4)
    cluster.run(f"scancel {jid}_0")
    cluster.advance(4)
    t = times(cluster.run("scontrol -o show job").stdout, "v")
    four = t["4"]
    assert four["EligibleTime"] == four["SubmitTime"] != four["StartTime"]
    assert t["5-7%6"]["EligibleTime"] == four["SubmitTime"]


@pytest.mark.realslurm
def test_replayed_on_real_slurm(real_slurm: RealSlurm, tmp_path: Path) -> None:
    real_slurm.cancel_all()
    work = tmp_path / "real"
    work.mkdir()
    (work / "sleep.sh").write_text(SLEEP)
    try:
        res = real_slurm.run("sbatch --parsable -J t --array=0-7%2 sleep.sh", cwd=work)
        assert res.rc == 0, res
        jid = res.stdout.strip()
        def shown() -> dict[str, dict[str, str]]:
            return times(real_slurm.run("scontrol -o show job", cwd=work).stdout, "t")

        t = poll(shown, lambda t: "0" in t and "1" in t,
                 what="the first scheduling pass starting tasks 0 and 1", tries=40)
        assert t["2-7%2"]["EligibleTime"] == "Unknown"
        assert started_when_eligible(t["0"]), t["0"]
        time.sleep(1)  # task 2 must start at a later second than the submission
        real_slurm.run(f"scancel {jid}_0", cwd=work)
        t = poll(shown, lambda t: "2" in t and "3-7%2" in t,
                 what="the next scheduling pass starting task 2", tries=20)
        assert t["3-7%2"]["EligibleTime"] == "Unknown"
        two = t["2"]
        assert started_when_eligible(two) and two["EligibleTime"] > two["SubmitTime"], two
        if real_slurm.accounting:
            want = f"{jid}_[3-7%2]|Unknown|Unknown"
            poll(lambda: real_slurm.run(f"sacct -X -n -P -j {jid} -o jobid,eligible,start",
                                        cwd=work).stdout.splitlines(),
                 lambda rows: want in rows, what=f"slurmdbd recording the split ({want})",
                 tries=20)
    finally:
        real_slurm.cancel_all()
