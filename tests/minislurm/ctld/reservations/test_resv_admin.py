"""Advance reservations as Slurm 22.05.8 handles them, measured on the reference cluster
(``scripts/realslurm start``: n[1-4], partitions debug*/gpu/short) and replayed there by
the ``realslurm`` tests below.

Measured (stdout, stderr, exit code of ``scontrol``):

* a second reservation on a node another one holds in an overlapping window:
  ``Error creating the reservation: Requested reservation overlaps with another
  reservation`` (rc 1), unless either has ``Flags=MAINT`` or ``OVERLAP``;
* a name in use: ``... Duplicate reservation name``; ``nodes=n9``: ``... Invalid node
  name specified``; ``starttime=now-1hour``: ``... Invalid time specified`` while
  ``now-5minutes`` is accepted (slurmctld's MAX_RESV_DELAY of 600 s);
* a node running a job that ends after the start: ``... Requested nodes are busy``
  (``starttime=now+10minutes`` past the job's 10-minute limit is fine; ``IGNORE_JOBS``
  is fine too);
* ``delete reservation=X`` of no such reservation: ``delete_reservation reservation=X:
  Requested reservation is invalid``; of one a pending job asks for: ``...: Requested
  reservation is in use`` (the job keeps waiting with reason ``Reservation``);
* reservation ids (``top_suffix``) are drawn after the node checks: a name clash uses
  one up, an overlap does not; unnamed reservations are ``<account or user>_<id>``;
* ``NodeCnt=1`` with n1, n2 reserved took n3, printed ``PartitionName=debug Flags=``;
  ``NodeCnt=5`` took all four nodes; ``Flags=MAINT,IGNORE_JOBS`` printed
  ``MAINT,IGNORE_JOBS,SPEC_NODES``;
* the nodes of an active reservation turn ``resv`` (``IDLE+RESERVED``; ``maint`` and
  ``IDLE+MAINTENANCE+RESERVED`` for MAINT) within 5 s, not at once: slurmctld's
  background loop sets the flags every 5 s.

Job ids, times and the working directory are the only things normalised.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from captures import reference_cluster
from realslurm import RealSlurm

from minislurm.errors import SlurmError
from minislurm.sim import Cluster

Run = Callable[[str], tuple[str, str, int]]

CREATE = "scontrol create reservation reservationname={name} starttime={start} duration=60 " \
         "nodes={nodes} users=root"
ERR = "Error creating the reservation: "


def _norm(text: str) -> str:
    """Job ids are not compared."""
    return re.sub(r"Submitted batch job \d+", "Submitted batch job N", text)


def _resv_errors(run: Run, settle: Callable[[], None]) -> list[tuple[str, str, str, int]]:
    """The error scenario; each step's (command, stdout, stderr, rc).  ``settle`` runs
    before squeue (real Slurm shows the ``Reservation`` reason at once, set when the job
    is accepted; minislurm too: the embedded side does not settle)."""
    steps = [
        CREATE.format(name="fidA", start="now+1hour", nodes="n1"),
        CREATE.format(name="fidB", start="now+90minutes", nodes="n1"),
        CREATE.format(name="fidA", start="now+5hours", nodes="n2"),
        CREATE.format(name="fidC", start="now+1hour", nodes="n9"),
        CREATE.format(name="fidD", start="now-1hour", nodes="n3"),
        CREATE.format(name="fidE", start="now-5minutes", nodes="n3"),
        "scontrol delete reservation=fidNone",
        "sbatch -J fidinres --reservation=fidA -n1 --wrap 'sleep 100'",
        "squeue -h -n fidinres -o %r",
        "scontrol delete reservation=fidA",
        "scancel -n fidinres",
        "scontrol delete reservation=fidA",
        "scontrol delete reservation=fidE",
    ]
    out = []
    for cmd in steps:
        if cmd.startswith("squeue"):
            settle()
        o, e, rc = run(cmd)
        out.append((cmd, _norm(o), e, rc))
    return out


RESV_ERRORS = [
    ("Reservation created: fidA\n", "", 0),
    ("", ERR + "Requested reservation overlaps with another reservation\n", 1),
    ("", ERR + "Duplicate reservation name\n", 1),
    ("", ERR + "Invalid node name specified\n", 1),
    ("", ERR + "Invalid time specified\n", 1),
    ("Reservation created: fidE\n", "", 0),
    ("", "delete_reservation reservation=fidNone: Requested reservation is invalid\n", 1),
    ("Submitted batch job N\n", "", 0),
    ("Reservation\n", "", 0),
    ("", "delete_reservation reservation=fidA: Requested reservation is in use\n", 1),
    ("", "", 0),
    ("", "", 0),
    ("", "", 0),
]


def _mini_run(tmp_path: Path) -> tuple[Cluster, Run]:
    c = reference_cluster(tmp_path)

    def run(cmd: str) -> tuple[str, str, int]:
        r = c.run(cmd)
        return r.stdout, r.stderr, r.returncode
    return c, run


def test_reservation_errors_as_22_05(tmp_path: Path) -> None:
    """Errors and exit codes of create/delete reservation (expected values measured on
    real 22.05.8: overlap, duplicate name, bad node, start > 600 s ago, delete of an
    unknown reservation and of one in use)."""
    _, run = _mini_run(tmp_path)
    got = _resv_errors(run, lambda: None)
    assert [g[1:] for g in got] == RESV_ERRORS, got


def test_busy_nodes_refuse_reservation(tmp_path: Path) -> None:
    """A job with a 10-minute limit on n4: a reservation of n4 starting now or in one
    minute is ``Requested nodes are busy``; at now+10minutes, or with IGNORE_JOBS, it is
    created (measured on 22.05.8; scontrol's two-line 'Note, unless nodes are directly
    requested...' on stdout is checked in tests/minislurm/cli/scontrol/test_reservation_cli.py)."""
    c, run = _mini_run(tmp_path)
    assert run("sbatch -J fidbusy -w n4 -n1 -t 10 --wrap 'sleep 300'")[2] == 0
    c.advance(2)
    for start in ("now", "now+1minute"):
        _, err, rc = run(CREATE.format(name="b1", start=start, nodes="n4"))
        assert (err, rc) == (ERR + "Requested nodes are busy\n", 1)
    assert run(CREATE.format(name="b3", start="now+10minutes", nodes="n4"))[::2] == (
        "Reservation created: b3\n", 0)
    ctl = c.controller
    ctl.delete_reservation("b3")
    assert ctl.create_reservation("b4", ctl.now, 60, "n4", users=["root"],
                                  flags=["IGNORE_JOBS"]) == "Reservation created: b4"
    shown = run("scontrol show res b4")[0]
    assert "Flags=IGNORE_JOBS,SPEC_NODES" in shown


def test_reservation_flags_node_states(tmp_path: Path) -> None:
    """``starttime=now``: sinfo still says idle right away and ``resv`` once the 5-s
    background check has run (measured: idle at +0.0 s, resv from +1..+5 s on);
    ``scontrol show node`` then says IDLE+RESERVED; a MAINT reservation may overlap
    another and its node says IDLE+MAINTENANCE+RESERVED (real sinfo: ``maint``)."""
    c, run = _mini_run(tmp_path)
    assert run(CREATE.format(name="plain", start="now", nodes="n2"))[2] == 0
    assert run("sinfo -h -n n2 -p debug -o %t")[0] == "idle\n"
    c.advance(6)
    assert run("sinfo -h -n n2 -p debug -o %t")[0] == "resv\n"
    assert "State=IDLE+RESERVED " in run("scontrol show node n2")[0]
    ctl = c.controller
    assert ctl.create_reservation("mnt", ctl.now, 60, "n2", users=["root"],
                                  flags=["MAINT"]) == "Reservation created: mnt"
    c.advance(6)
    assert "State=IDLE+MAINTENANCE+RESERVED " in run("scontrol show node n2")[0]
    assert "Flags=MAINT,SPEC_NODES" in run("scontrol show res mnt")[0]
    run("scontrol delete reservation=mnt")
    run("scontrol delete reservation=plain")
    assert run("sinfo -h -n n2 -p debug -o %t")[0] == "idle\n"


def test_reservation_ids_names_and_node_count(tmp_path: Path) -> None:
    """Measured sequence on a fresh 22.05.8 slurmctld: r1 (id 1), r2 (id 2), r1 again
    (Duplicate reservation name, id 3 used up), an unnamed one -> ``root_4``; an
    overlapping request uses no id; NodeCnt=1 with n1, n2 reserved takes n3 and shows
    ``PartitionName=debug Flags=``; NodeCnt=5 takes what is left."""
    c, run = _mini_run(tmp_path)
    ctl = c.controller
    now = ctl.now

    def create(name: str, nodes: str = "", *, flags: Sequence[str] = (),
               node_cnt: int | None = None) -> str:
        return ctl.create_reservation(name, now, 60, nodes, users=["root"], flags=flags,
                                      node_cnt=node_cnt)

    assert create("r1", "n1") == "Reservation created: r1"
    assert create("r2", "n1", flags=["OVERLAP"]) == "Reservation created: r2"
    with pytest.raises(SlurmError, match="Duplicate reservation name"):
        create("r1", "n2")
    with pytest.raises(SlurmError, match="overlaps with another"):
        create("", "n1")
    assert create("", "n2") == "Reservation created: root_4"
    assert create("", node_cnt=1) == "Reservation created: root_5"
    shown = run("scontrol show res root_5")[0]
    assert "Nodes=n3 NodeCnt=1 CoreCnt=4 Features=(null) PartitionName=debug Flags=\n" in shown
    assert create("big", node_cnt=5) == "Reservation created: big"
    assert "Nodes=n4 NodeCnt=1" in run("scontrol show res big")[0]
    with pytest.raises(SlurmError, match="Requested nodes are busy"):
        create("none", node_cnt=1)
    assert create("m", "n1", flags=["IGNORE_JOBS", "MAINT"]) == "Reservation created: m"
    assert "Flags=MAINT,IGNORE_JOBS,SPEC_NODES\n" in run("scontrol show res m")[0]


def test_update_reservation(tmp_path: Path) -> None:
    """``scontrol update reservationname=u1 duration=120`` / ``nodes=n1,n2`` /
    ``users=+nobody`` print ``Reservation updated.``; an unknown one is ``Error updating
    the reservation: Requested reservation is invalid``; a start an hour ago ``...
    Invalid time specified`` (measured on 22.05.8)."""
    c, run = _mini_run(tmp_path)
    ctl = c.controller
    start = ctl.now + 3600
    ctl.create_reservation("u1", start, 60, "n1", users=["root"])
    assert ctl.update_reservation("u1", duration=120) == "Reservation updated."
    assert ctl.update_reservation("u1", nodes="n1,n2") == "Reservation updated."
    assert ctl.update_reservation("u1", users=["+nobody"]) == "Reservation updated."
    shown = run("scontrol show res u1")[0]
    assert "Duration=02:00:00" in shown and "Nodes=n[1-2] NodeCnt=2 CoreCnt=8" in shown
    assert "Users=root,nobody " in shown
    with pytest.raises(SlurmError, match=r"^Error updating the reservation: Requested "
                       r"reservation is invalid$"):
        ctl.update_reservation("nosuch", duration=10)
    with pytest.raises(SlurmError, match="Invalid time specified"):
        ctl.update_reservation("u1", start=ctl.now - 3600)


# ----- the same on real Slurm ---------------------------------------------------------------
def _real_run(real_slurm: RealSlurm, cwd: Path) -> Run:
    def run(cmd: str) -> tuple[str, str, int]:
        r = real_slurm.run(cmd, cwd=cwd)
        return r.stdout, r.stderr, r.rc
    return run


def _real_cleanup(run: Run) -> None:
    run("scancel -u root")
    for name in ("fidA", "fidB", "fidC", "fidD", "fidE", "b1", "b3", "b4", "plain"):
        run(f"scontrol delete reservation={name}")


@pytest.mark.realslurm
def test_reservation_errors_on_real_slurm(real_slurm: RealSlurm, tmp_path: Path) -> None:
    run = _real_run(real_slurm, tmp_path)
    _real_cleanup(run)
    try:
        got = _resv_errors(run, lambda: time.sleep(1))
    finally:
        _real_cleanup(run)
    assert [g[1:] for g in got] == RESV_ERRORS, got


@pytest.mark.realslurm
def test_busy_and_resv_state_on_real_slurm(real_slurm: RealSlurm, tmp_path: Path) -> None:
    run = _real_run(real_slurm, tmp_path)
    _real_cleanup(run)
    try:
        assert run("sbatch -J fidbusy -w n4 -n1 -t 10 --wrap 'sleep 300'")[2] == 0
        for _ in range(50):
            if run("squeue -h -n fidbusy -o %t")[0].strip() == "R":
                break
            time.sleep(0.2)
        _, err, rc = run(CREATE.format(name="b1", start="now", nodes="n4"))
        assert (err, rc) == (ERR + "Requested nodes are busy\n", 1)
        assert run(CREATE.format(name="b3", start="now+10minutes", nodes="n4"))[::2] == (
            "Reservation created: b3\n", 0)
        assert run(CREATE.format(name="plain", start="now", nodes="n2"))[2] == 0
        seen = ""
        for _ in range(35):
            seen = run("sinfo -h -n n2 -p debug -o %t")[0]
            if seen == "resv\n":
                break
            time.sleep(0.2)
        assert seen == "resv\n"
        assert "State=IDLE+RESERVED " in run("scontrol show node n2")[0]
    finally:
        _real_cleanup(run)
