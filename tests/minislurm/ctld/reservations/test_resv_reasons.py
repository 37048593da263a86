"""Why a job waits when nodes are reserved (or down), as 22.05.8's select_nodes says it,
measured on the reference cluster (n[1-4], 4 CPUs each; debug MaxTime=1:00:00) and
replayed there by the ``realslurm`` test below.

* n1 in a reservation: ``-w n1`` waits with ``ReqNodeNotAvail, May be reserved for other
  job``, ``-N4`` with ``Nodes required for job are DOWN, DRAINED or reserved for jobs in
  higher priority partitions``, ``-n13`` (more CPUs than n[2-4] have) with
  ``ReqNodeNotAvail, May be reserved for other job``; ``-N3 -t 5`` runs.  The same for a
  reservation starting in 30 minutes and jobs of ``-t 1:00:00``;
* n3 drained: ``-n13`` ``ReqNodeNotAvail, UnavailableNodes:n3``, ``-N4`` the long text;
* n1 reserved and n2 drained: ``-w n1`` still ``May be reserved for other job``,
  ``-n13`` and ``-n9`` ``ReqNodeNotAvail, UnavailableNodes:n[1-2]``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
from captures import reference_cluster
from realslurm import RealSlurm

Run = Callable[[str], tuple[str, str, int]]

RESV = ("scontrol create reservation reservationname=fwr starttime={start} duration=60 "
        "nodes=n1 users=root")
MAY = "ReqNodeNotAvail, May be reserved for other job"
DOWN = ("Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority "
        "partitions")

CASES: list[tuple[list[str], list[tuple[str, str]], list[str]]] = [
    ([RESV.format(start="now")],
     [("fwa", "-w n1 -n1"), ("fwb", "-N4"), ("fwc", "-n13"), ("fwd", "-N3 -t 5")],
     [MAY, DOWN, MAY, "None"]),
    ([RESV.format(start="now+30minutes")],
     [("fwa", "-w n1 -n1 -t 1:00:00"), ("fwb", "-N4 -t 1:00:00")], [MAY, DOWN]),
    # alone: behind those two, real Slurm's -n13 may keep the Priority of its submission
    # until a backfill cycle (measured once in three runs; minislurm: its own reason)
    ([RESV.format(start="now+30minutes")], [("fwc", "-n13 -t 1:00:00")], [MAY]),
    (["scontrol update nodename=n3 state=drain reason=fwr"],
     [("fwa", "-n13"), ("fwb", "-N4")],
     ["ReqNodeNotAvail, UnavailableNodes:n3", DOWN]),
    ([RESV.format(start="now"), "scontrol update nodename=n2 state=drain reason=fwr"],
     [("fwa", "-w n1 -n1"), ("fwb", "-n13"), ("fwc", "-n9")],
     [MAY, "ReqNodeNotAvail, UnavailableNodes:n[1-2]",
      "ReqNodeNotAvail, UnavailableNodes:n[1-2]"]),
]


def _case(run: Run, settle: Callable[[list[str]], bool], setup: list[str],
          jobs: list[tuple[str, str]]) -> list[str]:
    for cmd in setup:
        assert run(cmd)[2] == 0, cmd
    for name, opts in jobs:
        assert run(f"sbatch -J {name} {opts} --wrap 'sleep 100'")[2] == 0
    while True:
        got = [run(f"squeue -h -n {name} -o %r")[0].strip() for name, _ in jobs]
        if settle(got):
            return got


@pytest.mark.parametrize("case", range(len(CASES)))
def test_reasons_with_reserved_nodes(tmp_path: Path, case: int) -> None:
    c = reference_cluster(tmp_path)

    def run(cmd: str) -> tuple[str, str, int]:
        r = c.run(cmd)
        return r.stdout, r.stderr, r.returncode

    setup, jobs, want = CASES[case]
    polls: list[list[str]] = []

    def settle(got: list[str]) -> bool:  # look once more, 3 s after the submissions
        polls.append(got)
        c.advance(3)
        return len(polls) == 2

    assert _case(run, settle, setup, jobs) == want


@pytest.mark.realslurm
def test_reasons_with_reserved_nodes_on_real_slurm(real_slurm: RealSlurm, tmp_path: Path) -> None:
    def run(cmd: str) -> tuple[str, str, int]:
        r = real_slurm.run(cmd, cwd=tmp_path)
        return r.stdout, r.stderr, r.rc

    # each case starts on the cluster as started (reset: no job, no reservation, every
    # node idle and responding): resuming a drained node sets NOT_RESPONDING until its
    # slurmd answers the ping that follows (node_mgr.c _require_node_reg), and a node not
    # responding is unavailable: a loaded run's next case read UnavailableNodes:n[1-3]
    got, want = [], []
    real_slurm.reset()
    try:
        for setup, jobs, expected in CASES:
            # which scheduler pass set a reason last varies on the wall clock (a job
            # behind one that failed may say Priority for a moment): poll up to 10 s
            deadline = time.monotonic() + 10

            def settle(got: list[str], want: list[str] = expected,
                       until: float = deadline) -> bool:
                time.sleep(0.3)
                return got == want or time.monotonic() > until

            got.append(_case(run, settle, setup, jobs))
            want.append(expected)
            real_slurm.reset()
    finally:
        real_slurm.reset()
    assert got == want
