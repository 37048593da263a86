"""sched/backfill's start-now attempt offers select every node one task fits on.

Slurm 22.05's backfill (``_try_sched``) calls select on the nodes that no higher-priority
reservation holds during the job's window, and cons_tres's ``_eval_nodes`` then shares
the tasks out unevenly.  Measured on real Slurm 22.05.8 (reference cluster n[1-4], 4
CPUs each, bf_interval=1), with n1 holding 2 busy CPUs and n2 holding 3 for 5 minutes,
and a 16-CPU job waiting for both (so the main scheduler starts nothing behind it):

* ``-N2 -n5 -t 1`` is backfilled on n[1,3] with 2 + 3 CPUs (not n[3-4]: an even 3 + 3
  share would skip n1);
* then ``-n6 -t 1`` is backfilled on n[2-4] with 1 + 1 + 4 CPUs (it used to wait).

The same holds for GPUs (``GPU_SUBMITS``): with 3 of n1's and n2's 4 GPUs busy and a
``-N4 --gpus-per-node=4`` job waiting, ``-N2 --gpus=3`` is backfilled on n[3-4] with GPUs
0-1 + 0 (a ``--gpus`` total skips partly used nodes and leaves each node one), then
``-n2 --gpus-per-task=1`` on n3 with GPUs 2-3.

The scenarios run on minislurm's embedded cluster and, with root, on real Slurm.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from captures import checked_stdout, reference_cluster
from realslurm import RealSlurm

SUBMITS = [
    ("hold1", "-w n1 -n2 -t 5 --wrap 'sleep 120'"),
    ("hold2", "-w n2 -n3 -t 5 --wrap 'sleep 120'"),
    ("big", "-N4 -n16 -t 1 --wrap 'sleep 5'"),
    ("uneven", "-N2 -n5 -t 1 --wrap 'sleep 60'"),
    ("spread", "-n6 -t 1 --wrap 'sleep 60'"),
]

#: label -> (JobState, Reason, NodeList, NumCPUs, Scheduler), measured on 22.05.8.  The
#: holders' Scheduler= is a race on real Slurm (Main or Backfill: whichever cycle comes
#: first after the submission), so it is compared for the backfilled jobs only.
EXPECTED = {
    "hold1": ("RUNNING", "None", "n1", "2", None),
    "hold2": ("RUNNING", "None", "n2", "3", None),
    "big": ("PENDING", "Resources", "", "16", None),
    "uneven": ("RUNNING", "None", "n[1,3]", "5", "Backfill"),
    "spread": ("RUNNING", "None", "n[2-4]", "6", "Backfill"),
}


def _fields(text: str) -> dict[str, str]:
    return dict(re.findall(r"(\w[\w/:]*)=(\S*)", text))


GPU_SUBMITS = [
    ("hold1", "-w n1 -n1 --gpus=3 -t 5 --wrap 'sleep 120'"),
    ("hold2", "-w n2 -n1 --gpus=3 -t 5 --wrap 'sleep 120'"),
    ("big", "-N4 --gpus-per-node=4 -t 1 --wrap 'sleep 5'"),
    ("uneven", "-N2 --gpus=3 -t 1 --wrap 'sleep 60'"),
    ("spread", "-n2 --gpus-per-task=1 -t 1 --wrap 'sleep 60'"),
]

GPU_EXPECTED = {
    "hold1": ("RUNNING", "None", "n1", "1", None),
    "hold2": ("RUNNING", "None", "n2", "1", None),
    "big": ("PENDING", "Resources", "", "4", None),
    "uneven": ("RUNNING", "None", "n[3-4]", "2", "Backfill"),
    "spread": ("RUNNING", "None", "n3", "2", "Backfill"),
}
#: ``scontrol show -d``'s ``GRES=gpu:a100:N(IDX:...)`` per node on 22.05.8
GPU_INDICES = {"uneven": [("n3", (0, 1)), ("n4", (0,))], "spread": [("n3", (2, 3))]}


def _scenario(
    run: Callable[[str], str], pause: Callable[[float], None],
    submits: list[tuple[str, str]] = SUBMITS,
) -> dict[str, tuple]:
    ids = {}
    for i, (label, options) in enumerate(submits):
        ids[label] = run(f"sbatch --parsable {options}").strip().split(";")[0]
        if i == 1:
            pause(1)  # the holders run before the rest is submitted
    pause(3)  # a backfill cycle or two (bf_interval=1)
    out = {}
    for label, jid in ids.items():
        f = _fields(run(f"scontrol show job -o {jid}"))
        scheduler = f.get("Scheduler") if label in ("uneven", "spread") else None
        out[label] = (f["JobState"], f["Reason"], f["NodeList"], f["NumCPUs"], scheduler)
    return out


def test_backfill_places_gpu_totals_and_per_task_gpus_like_slurm(tmp_path: Path) -> None:
    cluster = reference_cluster(tmp_path)

    run = checked_stdout(cluster.run)
    assert _scenario(run, cluster.advance, GPU_SUBMITS) == GPU_EXPECTED
    by_nodes = {j.nodelist: j for j in cluster.controller.jobs() if j.allocation is not None}
    for label, want in GPU_INDICES.items():
        job = by_nodes[GPU_EXPECTED[label][2]]
        assert job.allocation is not None
        assert [(n.node, n.gpu_indices) for n in job.allocation.nodes] == want, label


def test_backfill_offers_select_every_node_one_task_fits_on(tmp_path: Path) -> None:
    cluster = reference_cluster(tmp_path)

    run = checked_stdout(cluster.run)
    assert _scenario(run, cluster.advance) == EXPECTED
    jobs = {j.job_id: j for j in cluster.controller.jobs()}
    uneven = next(j for j in jobs.values() if j.nodelist == "n[1,3]")
    assert uneven.allocation is not None
    assert [(n.node, n.cpus) for n in uneven.allocation.nodes] == [("n1", 2), ("n3", 3)]


@pytest.mark.realslurm
def test_backfill_scenario_on_real_slurm(real_slurm: RealSlurm, tmp_path: Path) -> None:
    real_slurm.reset()  # no job, every node idle (not still completing a job)

    run = checked_stdout(real_slurm.run, cwd=tmp_path)
    try:
        got = _scenario(run, time.sleep)
        real_slurm.reset()  # a node still completing would start the holders late
        got_gpus = _scenario(run, time.sleep, GPU_SUBMITS)
    finally:
        real_slurm.run("scancel -u root", cwd=tmp_path)
    assert got == EXPECTED
    assert got_gpus == GPU_EXPECTED
