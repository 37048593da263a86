"""``scontrol -d show job``: ``JOB_GRES`` and, per node, the CPU ids, memory and GPUs held.

Measured on real Slurm 22.05.8 (reference cluster n[1-4], 4 CPUs, 4000 MB and 4 a100
GPUs each): a job holds the lowest free CPU ids of each node; nodes alike share one
line (``Nodes=n[2-3] CPU_IDs=3 Mem=1000 GRES=``); a COMPLETED job keeps its lines and
``JOB_GRES`` but no GPU indices any more; a pending job has none of them.  The same
sequence runs on minislurm's embedded cluster and, with root, on real Slurm.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
from captures import checked_stdout, reference_cluster
from polling import poll
from realslurm import RealSlurm

SUBMITS = [
    ("gpus", "-N2 -n3 --gpus=3 -t 1 --wrap 'sleep 4'"),
    ("cpus", "-n2 -t 1 --wrap 'sleep 60'"),
    ("held", "-H -N1 --gres=gpu:1 -t 1 --wrap 'sleep 1'"),
]

EXPECTED = {
    "gpus": ["JOB_GRES=gpu:a100:3",
             "  Nodes=n1 CPU_IDs=0-1 Mem=2000 GRES=gpu:a100:2(IDX:0-1)",
             "  Nodes=n2 CPU_IDs=0 Mem=1000 GRES=gpu:a100:1(IDX:0)"],
    "cpus": ["JOB_GRES=(null)", "  Nodes=n1 CPU_IDs=2-3 Mem=2000 GRES="],
    "held": [],
    "gpus done": ["JOB_GRES=gpu:a100:3",
                  "  Nodes=n1 CPU_IDs=0-1 Mem=2000 GRES=",
                  "  Nodes=n2 CPU_IDs=0 Mem=1000 GRES="],
}


def _details(text: str) -> list[str]:
    """The lines between ``Socks/Node=`` and ``MinCPUsNode=`` (without the 3-space indent)."""
    lines = [line[3:] for line in text.splitlines()]
    first = next(i for i, line in enumerate(lines) if line.startswith("Socks/Node="))
    last = next(i for i, line in enumerate(lines) if line.startswith("MinCPUsNode="))
    return lines[first + 1:last]


def _scenario(run: Callable[[str], str], pause: Callable[[float], None]) -> dict[str, list[str]]:
    ids = {label: run(f"sbatch --parsable {options}").strip() for label, options in SUBMITS}
    pause(1)
    out = {label: _details(run(f"scontrol -d show job {jid}")) for label, jid in ids.items()}
    # its `sleep 4` ends and slurmd has reported it (a fixed 5 s was not always enough for
    # a batch launch on a loaded host)
    poll(lambda: run(f"scontrol show job {ids['gpus']}"), lambda s: "JobState=COMPLETED" in s,
         what="the gpus job COMPLETED", tries=60, every=1, pause=pause)
    out["gpus done"] = _details(run(f"scontrol -d show job {ids['gpus']}"))
    return out


def test_scontrol_details_on_minislurm_like_slurm(tmp_path: Path) -> None:
    cluster = reference_cluster(tmp_path)

    run = checked_stdout(cluster.run)
    assert _scenario(run, cluster.advance) == EXPECTED
    one = cluster.run("scontrol -d -o show job 2").stdout
    assert " CoreSpec=* JOB_GRES=(null)   Nodes=n1 CPU_IDs=2-3 Mem=2000 GRES= MinCPUsNode=" in one
    plain = cluster.run("scontrol show job 2").stdout
    assert "JOB_GRES" not in plain and "CPU_IDs" not in plain


@pytest.mark.realslurm
def test_scontrol_details_on_real_slurm(real_slurm: RealSlurm, tmp_path: Path) -> None:
    real_slurm.run("scancel -u root", cwd=tmp_path)
    time.sleep(1)

    run = checked_stdout(real_slurm.run, cwd=tmp_path)
    try:
        got = _scenario(run, time.sleep)
    finally:
        real_slurm.run("scancel -u root", cwd=tmp_path)
    assert got == EXPECTED
