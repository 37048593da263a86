"""sinfo's output to the character, measured on real Slurm 22.05.8.

Reference cluster, idle, ``n4`` drained (``scontrol update nodename=n4 state=drain
reason=maint``):

* Lines gather the nodes of partitions that print the same partition fields: only
  ``%P``/``%R`` make lines per partition (``-o "%a %D %N"`` is one line, ``up 4
  n[1-4]``); then a partition left without nodes by ``-n``/``-t`` still gets a line
  (``short up 5:00 0 n/a``, ``-s``: ``0/0/0/0``).
* ``-s`` has one blank before NODELIST; ``-o ""`` prints empty lines (one per line).
* ``%P`` of the default partition in a narrow column: ``debu*``; right-justified
  headers of ``%N %n %o`` are not cut; ``%n``/``%o`` list a host once; ``%S`` is
  ALLOCNODES ``all``, ``%V`` CLUSTER ``N/A``, ``%U`` ``root(0)``; a NULL feature list
  in fewer than 6 columns prints blank.
* Unknown ``-o`` types: ``Invalid node format specification: i`` (no prefix; ``%5``
  names a NUL byte) and the token printed verbatim; unknown ``-O`` names: ``sinfo:
  error: Invalid job format specification: nosuch`` (sic) and only the suffix.
* ``-t bogus`` lists 22.05's own state names, ``?`` and ``unknown`` twice included.
* ``-t`` with ``-R`` replaces -R's ``down,drain,fail``: ``sinfo -t idle -R`` lists the
  idle nodes too (``none  Unknown  Unknown  n[1-3]``), ``-t alloc -R`` only the header.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from captures import reference_cluster
from realslurm import RealSlurm

CASES: list[tuple[str, str, str, int]] = [
    ("sinfo -s", """\
PARTITION AVAIL  TIMELIMIT   NODES(A/I/O/T) NODELIST
debug*       up    1:00:00          0/3/1/4 n[1-4]
gpu          up    2:00:00          0/3/1/4 n[1-4]
short        up       5:00          0/2/0/2 n[1-2]
""", "", 0),
    ("sinfo -n n3 -p short", """\
PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST
short        up       5:00      0    n/a 
""", "", 0),  # noqa: W291
    ("sinfo -t idle -o \"%a %D %N\"", "AVAIL NODES NODELIST\nup 4 n[1-4]\n", "", 0),
    ("sinfo -o \"%a %l %D\"", "AVAIL TIMELIMIT NODES\nup 1:00:00 4\nup 2:00:00 4\nup 5:00 2\n",
     "", 0),
    ("sinfo -o \"%5P|%6P|%.7P|%P %a\"", """\
PARTI|PARTIT|PARTITI|PARTITION AVAIL
debu*|debug*| debug*|debug* up
gpu  |gpu   |    gpu|gpu up
short|short |  short|short up
""", "", 0),
    ("sinfo -o \"%i|%P|%.3x\"", """\
%i|PARTITION|%.3x
%i|debug*|%.3x
%i|gpu|%.3x
%i|short|%.3x
""", "Invalid node format specification: i\nInvalid node format specification: x\n", 0),
    ("sinfo -o \"\"", "\n\n", "", 0),
    ("sinfo -o \"%5\"", "%5\n%5\n", "Invalid node format specification: \0\n", 0),
    ("sinfo -O \"Partition:5,nosuch:3|,NodeList,AllocNodes:4,Cluster:4,Comment:3|\"", """\
PARTI|NODELIST            ALLOCLUSCOM|
debu*|n[1-4]              all N/A    |
gpu  |n[1-4]              all N/A    |
short|n[1-2]              all N/A    |
""", "sinfo: error: Invalid job format specification: nosuch\n", 0),
    ("sinfo -o \"%.2N|%.2n|%.2o|%n|%o|%2b|%S|%V\"", """\
NODELIST|HOSTNAMES|NODE_ADDR|HOSTNAMES|NODE_ADDR|AC|ALLOCNODES|CLUSTER
n[|lo|12|localhost|127.0.0.1|  |all|N/A
""", "", 0),
    ("sinfo -R -o \"%12U|%N\"", "USER        |NODELIST\nroot(0)     |n4\n", "", 0),
    # -t replaces -R's own down/drain/fail filter: the idle nodes are listed too
    ("sinfo -t idle -R -o \"%E|%N\"", "REASON|NODELIST\nmaint|n4\nnone|n[1-3]\n", "", 0),
    ("sinfo -R -t all -o \"%12U|%E|%N\"",
     "USER        |REASON|NODELIST\nroot(0)     |maint|n4\nUnknown     |none|n[1-3]\n", "", 0),
    ("sinfo -t alloc -R -o \"%E|%N\"", "REASON|NODELIST\n", "", 0),
    ("sinfo -t bogus", "", "sinfo: error: Bad state string: \"bogus\"\n"
     "sinfo: error: valid states: unknown,down,idle,allocated,?,mixed,future,drain,drained,"
     "draining,no_respond,reserved,perfctrs,cloud,completing,powering_down,powered_down,"
     "power_down,powering_up,fail,maint,reboot,reboot^,unknown\n", 1),
]


@pytest.mark.parametrize(("cmd", "out", "err", "rc"), CASES, ids=[c[0] for c in CASES])
def test_sinfo_prints_what_22_05_8_printed(tmp_path: Path, cmd: str, out: str, err: str,
                                           rc: int) -> None:
    cluster = reference_cluster(tmp_path)
    assert cluster.run("scontrol update nodename=n4 state=drain reason=maint").returncode == 0
    res = cluster.run(cmd)
    assert (res.stdout, res.stderr, res.returncode) == (out, err, rc)


def _settle(real_slurm: RealSlurm, tmp_path: Path) -> None:
    """Wait until every node is plainly idle, then into the next second.

    ``sinfo -R`` sorts its lines by the nodes' reason time, newest first, to the second
    (measured on 22.05.8: after ``drain`` + ``resume`` of n1 a second later than n4's
    drain, ``none|n[1-3]`` comes before ``maint|n4``). A node an earlier test of the
    session left changing (a DOWN node resumed, a job completing) may still get a newer
    time than n4's drain, so n4 is drained only once the others are idle and in a later
    second than their last change."""
    deadline = time.monotonic() + 30
    while set(real_slurm.run(["sinfo", "-h", "-N", "-o", "%t"], cwd=tmp_path).stdout.split()) != {
            "idle"}:
        assert time.monotonic() < deadline, "nodes not idle 30 s after cancel_all"
        time.sleep(0.2)
    time.sleep(1 - time.time() % 1 + 0.05)


@pytest.mark.realslurm
def test_replayed_on_real_slurm(real_slurm: RealSlurm, tmp_path: Path) -> None:
    real_slurm.cancel_all()
    _settle(real_slurm, tmp_path)
    real_slurm.run("scontrol update nodename=n4 state=drain reason=maint", cwd=tmp_path)
    try:
        got = [real_slurm.run(cmd, cwd=tmp_path) for cmd, *_ in CASES]
    finally:
        real_slurm.run("scontrol update nodename=n4 state=resume", cwd=tmp_path)
    for (cmd, out, err, rc), res in zip(CASES, got, strict=True):
        assert (res.stdout, res.stderr, res.rc) == (out, err, rc), cmd
