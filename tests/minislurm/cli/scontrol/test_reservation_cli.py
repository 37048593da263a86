"""``scontrol create|update reservation`` as scontrol 22.05.8 parses them, measured on the
reference cluster (``scripts/realslurm start``: n[1-4], partitions debug*/gpu/short) and
replayed there by the ``realslurm`` tests below.

Measured (stdout, stderr, exit code):

* without ``ReservationName=`` slurmctld names it ``<account or user>_<id>``;
  ``NodeCnt=1 PartitionName=gpu`` takes the first free node of gpu;
* the arguments are parsed in order and the first bad one stops: ``Flags=bogus`` is
  ``scontrol: error: Error parsing flags bogus.  No reservation created.``, a bad start
  ``Invalid time specification (pos=0): bogus`` then ``scontrol: error: Invalid start
  time starttime=bogus.  No reservation created.``, ``duration=bogus`` ``... Invalid
  duration duration=bogus. ...``, ``NodeCnt=bogus`` ``scontrol: error: Invalid node count
  bogus``, ``foo=bar`` ``... Unknown parameter foo=bar. ...``; then, in this order: ``A
  start time must be given.``, ``An end time or duration must be given.``, ``Start time
  cannot be after end time.``, ``CoreCnt, Nodes, NodeCnt, BurstBuffer, Licenses or
  Watts must be specified.`` (``NodeCnt=0`` too), ``Either Users/Groups and/or Accounts
  must be specified.``; all rc 1;
* ``Requested nodes are busy`` comes with two lines on stdout: ``Note, unless nodes are
  directly requested a reservation must exist in a single partition.`` / ``If no
  partition is requested the default partition is assumed.`` (with ``Nodes=`` too);
* ``update``: ``Reservation updated.``; the controller's refusal is ``Error updating the
  reservation: X`` + ``slurm_update error: X``; a parse error ``... No reservation
  update.`` + ``slurm_update error: No error`` (``Invalid time specified`` after a bad
  time, as parse_time set errno); rc 1;
* ``scontrol update nodename=n3 reason=x`` on a node in service: rc 0, nothing printed.

Only reservation ids and job ids are normalised.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from captures import reference_cluster
from realslurm import RealSlurm

Run = Callable[[str], tuple[str, str, int]]

C = "scontrol create reservation "
U = "scontrol update "
NO = "  No reservation created.\n"
NOU = "  No reservation update.\n"
E = "scontrol: error: "
NOTE = ("Note, unless nodes are directly requested a reservation must exist in a single "
        "partition.\nIf no partition is requested the default partition is assumed.\n")
BUSY = "Error creating the reservation: Requested nodes are busy\n"


def _norm(text: str) -> str:
    text = re.sub(r"Submitted batch job \d+", "Submitted batch job N", text)
    return re.sub(r"\broot_\d+\b", "root_N", text)


STEPS: list[tuple[str, tuple[str, str, int]]] = [
    (C + "starttime=now duration=60 nodes=n1 users=root",
     ("Reservation created: root_N\n", "", 0)),
    (C + "starttime=now duration=60 nodecnt=1 users=root partitionname=gpu",
     ("Reservation created: root_N\n", "", 0)),
    ("@show", ("   Nodes=n2 NodeCnt=1 CoreCnt=4 Features=(null) PartitionName=gpu Flags=\n",
               "", 0)),
    (C + "starttime=now duration=60 nodecnt=1 users=root flags=bogus",
     ("", E + "Error parsing flags bogus." + NO, 1)),
    (C + "flags=maint,bogus starttime=bogus nodes=n3 users=root",
     ("", E + "Error parsing flags maint,bogus." + NO, 1)),
    (C + "duration=60 nodes=n3 users=root", ("", E + "A start time must be given." + NO, 1)),
    (C + "starttime=now nodes=n3 users=root",
     ("", E + "An end time or duration must be given." + NO, 1)),
    (C + "starttime=now duration=60 users=root",
     ("", E + "CoreCnt, Nodes, NodeCnt, BurstBuffer, Licenses or Watts must be specified."
      + NO, 1)),
    (C + "starttime=now duration=60 users=root nodecnt=0",
     ("", E + "CoreCnt, Nodes, NodeCnt, BurstBuffer, Licenses or Watts must be specified."
      + NO, 1)),
    (C + "starttime=bogus duration=bogus nodes=n3 users=root",
     ("", "Invalid time specification (pos=0): bogus\n"
      + E + "Invalid start time starttime=bogus." + NO, 1)),
    (C + "starttime=now+2hours endtime=bogus nodes=n3 users=root",
     ("", "Invalid time specification (pos=0): bogus\n"
      + E + "Invalid end time endtime=bogus." + NO, 1)),
    (C + "starttime=now duration=bogus nodes=n3 users=root",
     ("", E + "Invalid duration duration=bogus." + NO, 1)),
    (C + "starttime=now duration=-5 nodes=n3 users=root",
     ("", E + "Invalid duration duration=-5." + NO, 1)),
    (C + "starttime=now+2hours endtime=now+1hour users=root",
     ("", E + "Start time cannot be after end time." + NO, 1)),
    (C + "starttime=now duration=60 users=root nodecnt=bogus",
     ("", E + "Invalid node count bogus\n", 1)),
    (C + "foo=bar starttime=bogus nodes=n3 users=root",
     ("", E + "Unknown parameter foo=bar." + NO, 1)),
    (C + "starttime=now duration=60 nodes=n3",
     ("", E + "Either Users/Groups and/or Accounts must be specified." + NO, 1)),
    ("sbatch -J fidcbusy -w n4 -n1 -t 10 --wrap 'sleep 300'", ("Submitted batch job N\n", "", 0)),
    ("@wait", ("", "", 0)),
    (C + "starttime=now duration=60 nodes=n4 users=root", (NOTE, BUSY, 1)),
    (C + "starttime=now duration=60 nodecnt=4 users=root", (NOTE, BUSY, 1)),
    (C + "reservationname=fcu1 starttime=now+1hour duration=60 nodes=n3 users=root "
     "flags=maint,ignore_jobs", ("Reservation created: fcu1\n", "", 0)),
    (U + "reservationname=fcu1 duration=120", ("Reservation updated.\n", "", 0)),
    (U + "reservation=fcu1 users=+nobody", ("Reservation updated.\n", "", 0)),
    (U + "reservationname=fcnosuch duration=120",
     ("", "Error updating the reservation: Requested reservation is invalid\n"
      "slurm_update error: Requested reservation is invalid\n", 1)),
    (U + "reservationname=fcu1 foo=bar",
     ("", E + "Unknown parameter foo=bar." + NOU + "slurm_update error: No error\n", 1)),
    (U + "reservationname=fcu1 starttime=now-1hour",
     ("", "Error updating the reservation: Invalid time specified\n"
      "slurm_update error: Invalid time specified\n", 1)),
    (U + "reservationname=fcu1 starttime=bogus",
     ("", "Invalid time specification (pos=0): bogus\n" + E
      + "Invalid start time starttime=bogus." + NOU
      + "slurm_update error: Invalid time specified\n", 1)),
    (U + "reservationname=fcu1 duration=bogus",
     ("", E + "Invalid duration duration=bogus." + NOU + "slurm_update error: No error\n", 1)),
    (U + "reservationname=fcu1 flags=bogus",
     ("", E + "Error parsing flags bogus." + NOU + "slurm_update error: No error\n", 1)),
    (U + "reservationname=fcu1 nodes=n9",
     ("", "Error updating the reservation: Invalid node name specified\n"
      "slurm_update error: Invalid node name specified\n", 1)),
    (U + "reservationname=fcu1 flags=-maint partitionname=gpu",
     ("Reservation updated.\n", "", 0)),
    ("@show fcu1", ("   Nodes=n3 NodeCnt=1 CoreCnt=4 Features=(null) PartitionName=gpu "
                    "Flags=IGNORE_JOBS,SPEC_NODES\n", "", 0)),
    ("scontrol update nodename=n3 reason=x", ("", "", 0)),
]


def _scenario(run: Run, wait_running: Callable[[], None]) -> tuple[list[object], list[str]]:
    """Each step's normalised (stdout, stderr, rc); the reservations made (for cleanup)."""
    made: list[str] = []
    got: list[object] = []
    for cmd, _ in STEPS:
        if cmd == "@wait":
            wait_running()
            got.append(("", "", 0))
            continue
        if cmd.startswith("@show"):
            name = cmd.split()[1] if " " in cmd else made[-1]
            o, e, rc = run(f"scontrol show res {name}")
            got.append(("".join(ln + "\n" for ln in o.splitlines() if "Nodes=" in ln), e, rc))
            continue
        o, e, rc = run(cmd)
        made += re.findall(r"Reservation created: (\S+)", o)
        got.append((_norm(o), e, rc))
    return got, made


EXPECTED = [want for _, want in STEPS]


def test_scontrol_reservation_cli_as_22_05(tmp_path: Path) -> None:
    c = reference_cluster(tmp_path)

    def run(cmd: str) -> tuple[str, str, int]:
        r = c.run(cmd)
        return r.stdout, r.stderr, r.returncode

    got, _ = _scenario(run, lambda: c.advance(2))
    for (cmd, want), have in zip(STEPS, got, strict=True):
        assert have == want, cmd


@pytest.mark.realslurm
def test_scontrol_reservation_cli_on_real_slurm(real_slurm: RealSlurm, tmp_path: Path) -> None:
    def run(cmd: str) -> tuple[str, str, int]:
        r = real_slurm.run(cmd, cwd=tmp_path)
        return r.stdout, r.stderr, r.rc

    def wait_running() -> None:
        for _ in range(50):
            if run("squeue -h -n fidcbusy -o %t")[0].strip() == "R":
                return
            time.sleep(0.2)

    made: list[str] = []
    try:
        got, made = _scenario(run, wait_running)
    finally:
        run("scancel -n fidcbusy")
        for name in (*made, "fcu1"):
            run(f"scontrol delete reservation={name}")
    for (cmd, want), have in zip(STEPS, got, strict=True):
        assert have == want, cmd


def test_node_count_with_busy_nodes(tmp_path: Path) -> None:
    """``NodeCnt=`` counts the nodes no other reservation holds; fewer than asked: all of
    them, but (without IGNORE_JOBS) every one taken must be free of jobs (measured on
    22.05.8: n1 reserved and a job on n4, NodeCnt=5 and NodeCnt=3 are busy, NodeCnt=2
    takes n[2-3]; then NodeCnt=3 IGNORE_JOBS takes n4)."""
    c = reference_cluster(tmp_path)
    assert c.run("sbatch -J b -w n4 -n1 -t 10 --wrap 'sleep 300'").returncode == 0
    c.advance(2)
    assert c.run(C + "starttime=now duration=60 nodes=n1 users=root").returncode == 0
    for cnt in (5, 3):
        r = c.run(C + f"starttime=now duration=60 nodecnt={cnt} users=root")
        assert (r.stdout, r.stderr, r.returncode) == (NOTE, BUSY, 1), cnt
    r = c.run(C + "reservationname=two starttime=now duration=60 nodecnt=2 users=root")
    assert r.returncode == 0
    assert "Nodes=n[2-3] NodeCnt=2 " in c.run("scontrol show res two").stdout
    r = c.run(C + "reservationname=ign starttime=now duration=60 nodecnt=3 users=root "
              "flags=ignore_jobs")
    assert r.returncode == 0
    assert "Nodes=n4 NodeCnt=1 CoreCnt=4 Features=(null) PartitionName=debug " \
        "Flags=IGNORE_JOBS\n" in c.run("scontrol show res ign").stdout
