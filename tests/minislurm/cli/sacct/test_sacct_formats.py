"""sacct's ``--format`` widths and ``-s`` errors, measured on real Slurm 22.05.8.

sacct reads the text after ``%`` with ``atoi``: ``jobid%8`` is right-justified (though
JobID is left-justified by default), ``jobname%-4`` is left-justified in
4 columns, ``partition%-3`` prints ``de+``; ``%0``, a bare ``%``, ``%x`` or ``%.3``
give a column of width 0 (only its separating blank).  ``-s bogus``: ``sacct: fatal:
unrecognized job state value 'bogus'``, exit 1.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from captures import reference_cluster
from realslurm import RealSlurm

WIDTHS = 'sacct -X -o "jobid%0,jobname%,state%x,partition%-3,nnodes%-2"'
WIDTHS_OUT = "   Par NN \n   --- -- \n   de+ 2  \n"


def test_widths_read_with_atoi(tmp_path: Path) -> None:
    cluster = reference_cluster(tmp_path)
    assert cluster.run("sbatch -J run1 -N2 --ntasks-per-node=2 -t 30 --wrap 'sleep 300'"
                       ).returncode == 0
    cluster.advance(2)
    res = cluster.run(WIDTHS)
    assert (res.stdout, res.stderr, res.returncode) == (WIDTHS_OUT, "", 0)
    res = cluster.run("sacct -X -o jobid%5,jobname%-4,state%.3")
    assert res.stdout == "JobID JobN  \n----- ----  \n    1 run1  \n"
    res = cluster.run("sacct -X -o jobid%8,jobname%8,partition%3")
    assert res.stdout == "   JobID  JobName Par \n-------- -------- --- \n       1     run1 de+ \n"


def test_unknown_state(tmp_path: Path) -> None:
    res = reference_cluster(tmp_path).run("sacct -s bogus")
    assert (res.stdout, res.stderr, res.returncode) == (
        "", "sacct: fatal: unrecognized job state value 'bogus'\n", 1)


@pytest.mark.realslurm
def test_replayed_on_real_slurm(real_slurm: RealSlurm, tmp_path: Path) -> None:
    real_slurm.cancel_all()
    res = real_slurm.run("sbatch --parsable -J run1 -N2 --ntasks-per-node=2 -t 30 "
                         "--wrap 'sleep 300'", cwd=tmp_path)
    assert res.rc == 0, res
    jid = res.stdout.strip()
    try:
        for _ in range(40):  # until slurmdbd has the start
            if "RUNNING" in real_slurm.run(f"sacct -X -n -j {jid} -o state",
                                           cwd=tmp_path).stdout:
                break
            time.sleep(0.25)
        out = real_slurm.run(f"{WIDTHS} -j {jid}", cwd=tmp_path)
        bad = real_slurm.run("sacct -s bogus", cwd=tmp_path)
    finally:
        real_slurm.cancel_all()
    if "Slurm accounting storage is disabled" in out.stderr:
        pytest.skip("the real cluster runs without accounting")
    assert (out.stdout, out.rc) == (WIDTHS_OUT, 0)
    assert (bad.stdout, bad.stderr, bad.rc) == (
        "", "sacct: fatal: unrecognized job state value 'bogus'\n", 1)
