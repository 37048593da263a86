"""A job's requested TRES (``scontrol show job``'s ``TRES=`` while pending, sacct's
``ReqTRES``), measured on real Slurm 22.05.8 (reference cluster: n[1-4], 4 CPUs,
4000 MB each, DefMemPerCPU=1000).

``node=`` is the node count the job asked for (``details->min_nodes``: ``-N``, the
``-w`` nodes, else 1), not the ``NumNodes`` slurmctld estimates, and ``--mem`` (per
node) counts once per asked node:

==========================  ===========  =====================================
sbatch -H ...               NumNodes     TRES=
==========================  ===========  =====================================
``-n16``                    4            ``cpu=16,mem=16000M,node=1,billing=16``
``-n16 --mem=1000``         4            ``cpu=16,mem=1000M,node=1,billing=16``
``-n16 --mem-per-cpu=100``  4            ``cpu=16,mem=1600M,node=1,billing=16``
``-n6 --mem=700``           2            ``cpu=6,mem=700M,node=1,billing=6``
``-N2 -n3 --mem=500``       2-2          ``cpu=3,mem=1000M,node=2,billing=3``
``-w n[1-2] -n3``           2            ``cpu=3,mem=3000M,node=2,billing=3``
==========================  ===========  =====================================

Once running, ``TRES=`` (and sacct's AllocTRES) is the allocation's
(``-n16 --mem=1000``: ``cpu=16,mem=4000M,node=4,billing=16``) while sacct's ReqTRES
keeps the request (``billing=16,cpu=16,mem=1000M,node=1``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from captures import reference_cluster
from realslurm import RealSlurm

SLEEP = "#!/bin/bash\nsleep 300\n"
HELD = {
    "-n16": "cpu=16,mem=16000M,node=1,billing=16",
    "-n16 --mem=1000": "cpu=16,mem=1000M,node=1,billing=16",
    "-n16 --mem-per-cpu=100": "cpu=16,mem=1600M,node=1,billing=16",
    "-n6 --mem=700": "cpu=6,mem=700M,node=1,billing=6",
    "-N2 -n3 --mem=500": "cpu=3,mem=1000M,node=2,billing=3",
    "-w n[1-2] -n3": "cpu=3,mem=3000M,node=2,billing=3",
}


def tres_line(show: str) -> str:
    return next(line.strip() for line in show.splitlines() if line.strip().startswith("TRES="))


def test_pending_tres_counts_the_nodes_asked(tmp_path: Path) -> None:
    cluster = reference_cluster(tmp_path)
    cluster.write("sleep.sh", SLEEP)
    for args, tres in HELD.items():
        jid = cluster.run(f"sbatch --parsable -H {args} sleep.sh").stdout.strip()
        assert tres_line(cluster.run(f"scontrol show job {jid}").stdout) == f"TRES={tres}", args


def test_running_tres_is_the_allocation_req_tres_the_request(tmp_path: Path) -> None:
    cluster = reference_cluster(tmp_path)
    cluster.write("sleep.sh", SLEEP)
    jid = cluster.run("sbatch --parsable -n16 --mem=1000 sleep.sh").stdout.strip()
    cluster.advance(2)
    show = cluster.run(f"scontrol show job {jid}").stdout
    assert "JobState=RUNNING" in show
    assert tres_line(show) == "TRES=cpu=16,mem=4000M,node=4,billing=16"
    assert cluster.run(f"sacct -j {jid} -X -n -P -o reqtres,alloctres").stdout == (
        "billing=16,cpu=16,mem=1000M,node=1|billing=16,cpu=16,mem=4000M,node=4\n")
    squeue = cluster.run(f"squeue -h -j {jid} -O tres-alloc:40").stdout
    assert squeue.strip() == "cpu=16,mem=4000M,node=4,billing=16"


@pytest.mark.realslurm
def test_replayed_on_real_slurm(real_slurm: RealSlurm, tmp_path: Path) -> None:
    real_slurm.cancel_all()
    work = tmp_path / "real"
    work.mkdir()
    (work / "sleep.sh").write_text(SLEEP)
    try:
        for args, tres in HELD.items():
            res = real_slurm.run(f"sbatch --parsable -H {args} sleep.sh", cwd=work)
            assert res.rc == 0, res
            jid = res.stdout.strip()
            show = real_slurm.run(f"scontrol show job {jid}", cwd=work).stdout
            assert tres_line(show) == f"TRES={tres}", args
    finally:
        real_slurm.cancel_all()
