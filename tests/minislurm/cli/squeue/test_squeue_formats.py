"""squeue's ``-o`` / ``-O`` output to the character, measured on real Slurm 22.05.8.

Reference cluster, as root, five submissions (``JOBS``), about 40 s later (``J0`` is
the first job id, ``J5``/``J6`` the two started tasks of the array ``J3``):

* ``%c`` is the CPUs per node asked (``pn_min_cpus``, scontrol's ``MinCPUsNode``):
  2 for ``--ntasks-per-node=2`` and for ``-c 2``; ``%p`` is ``%16.14f``; ``%s``
  (select job info) prints nothing, padded to its width, and is no error.
* Cutting to the width (``_print_str``): right-justified node lists (``%N``, ``%Y``)
  are not cut, header included; the time fields (``%l %L %M``), ``%n`` and
  ``ResizeTime`` cut their header but not their value; ``%R`` cuts a ``(reason)`` but
  not a node list.  A NULL string (``(null)``: comment, dependency, SCHEDNODES...)
  left-justified in fewer than 6 columns prints as blanks (glibc's ``%.2s`` of NULL).
* ``-O``: ``JobID`` is the bare job id (``%A``), many more field names exist
  (``MaxCPUs``, ``Profile``, ``Origin``, ``VIALBLE_SIBLINGS_RAW`` sic...), an unknown
  name prints ``Invalid job format specification: NAME`` on stderr and nothing but
  its suffix on stdout (exit 0); ``name:-4`` (a negative width, read by ``strtol``)
  prints the value and one blank; ``tres-alloc`` of a pending job is what it asks:
  ``node=`` is the node count asked (1 for ``-n16`` alone), not ``NumNodes``' 4.
* ``-o ""`` prints one empty line per job and the header; ``--start`` prints its own
  format even with ``-O`` (``-l`` adds the date unless ``-h``).
* ``-t`` takes the state flags too (``SO``, ``REQUEUE_FED``...); an unknown state lists
  all 24 and the message ends with an empty line.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from captures import REF
from polling import poll
from realslurm import RealSlurm

from minislurm.sim import Cluster

SLEEP = "#!/bin/bash\nsleep 300\n"
JOBS = (
    "sbatch -J run1 -N2 --ntasks-per-node=2 --gres=gpu:2 -t 30 --mem=500 --comment=hello "
    "-x n4 sleep.sh",
    "sbatch -J run2 -n1 -p gpu --gpus=1 -c 2 sleep.sh",
    "sbatch -J held -H -p short sleep.sh",
    "sbatch -J arr --array=0-5%2 -n4 -t 5 sleep.sh",
    "sbatch -J bigpendingname -n16 sleep.sh",
)
FIRST = 100000  # FirstJobId of the minislurm side (and of the real test harness)

CUTS = ('squeue -o "%.1l|%.1L|%.1M|%.1N|%.1Y|%.1R|%.1j|%2k|%.2k|%6k|%.1n|%2Y"')
CUTS_OUT = """\
T|T|T|NODELIST|SCHEDNODES|NODELIST(REASON)|N|CO|CO|COMMEN|R|SC
5:00|5:00|0:00| |(null)|(|a|  |(n|(null)| |  
10:00|10:00|0:00| |n[1-4]|(|b|  |(n|(null)| |n[
30:00|29:20|0:40|n[1-2]|(null)|n[1-2]|r|he|he|hello | |  
5:00|4:20|0:40|n3|(null)|n3|a|  |(n|(null)| |  
5:00|4:20|0:40|n4|(null)|n4|a|  |(n|(null)| |  
2:00:00|1:59:20|0:40|n1|(null)|n1|r|  |(n|(null)| |  
1:00|1:00|0:00| |(null)|(|h|  |(n|(null)| |  
"""  # noqa: W291

LETTERS = 'squeue -o "%c|%s|%.3s|%j"'
LETTERS_OUT = """\
MIN_CPUS||   |NAME
1||   |arr
1||   |bigpendingname
2||   |run1
1||   |arr
1||   |arr
2||   |run2
1||   |held
"""

LONG = ('squeue -O "ReasonList:.3|,tres-alloc:36,MaxCPUs:4,MaxNodes:4,NTPerNode:4,'
        'Origin:3,Profile:7,exit_code:3,BatchFlag:2,Requeue:2,Cluster:5,SiblingsViableRaw:.5,'
        'ResizeTime:.2|,EligibleTime:.4|,tres-per-job:.11,Reboot:1,Network:5"')
LONG_OUT = """\
NODELIST(REASON)|TRES_ALLOC                          MAX_MAX_NTASORIPROFILEEXIBARECLUSTVIALBRE|ELIG|TRES_PER_JORNETWO
(Jo|cpu=4,mem=4000M,node=1,billing=4    4   1   0   NA NotSet 0  1 1 mini    NAN/A| N/A|        N/A0     
(Re|cpu=16,mem=16000M,node=1,billing=16 16  4   0   NA NotSet 0  1 1 mini    NAN/A|2026|        N/A0     
n[1-2]|cpu=4,mem=1000M,node=2,billing=4,gre4   2   2   NA NotSet 0  1 1 mini    NAN/A|2026|        N/A0     
 n3|cpu=4,mem=4000M,node=1,billing=4    4   1   0   NA NotSet 0  1 1 mini    NAN/A|2026|        N/A0     
 n4|cpu=4,mem=4000M,node=1,billing=4    4   1   0   NA NotSet 0  1 1 mini    NAN/A|2026|        N/A0     
 n1|cpu=2,mem=2000M,node=1,billing=2,gre2   1   0   NA NotSet 0  1 1 mini    NAN/A|2026| gres:gpu:10     
(Jo|cpu=1,mem=1000M,node=1,billing=1    1   1   0   NA NotSet 0  1 1 mini    NAN/A| N/A|        N/A0     
"""  # noqa: E501, W291

ODD = 'squeue -O "nosuch:5|,name:-4,jobid:.-2|,JobID:0|,CPUFreq"'
ODD_OUT = """\
|NAME JOBID |JOBID|
|arr J3 |J3|
|bigpendingname J4 |J4|
|run1 J0 |J0|
|arr J5 |J5|
|arr J6 |J6|
|run2 J1 |J1|
|held J2 |J2|
"""
ODD_ERR = ("squeue: error: Invalid job format specification: nosuch\n"
           "squeue: error: Invalid job format specification: CPUFreq\n")

START_HEADER = ("             JOBID PARTITION     NAME     USER ST          START_TIME  NODES "
                "SCHEDNODES           NODELIST(REASON)\n")

VALID = ("PENDING,RUNNING,SUSPENDED,COMPLETED,CANCELLED,FAILED,TIMEOUT,NODE_FAIL,PREEMPTED,"
         "BOOT_FAIL,DEADLINE,OUT_OF_MEMORY,COMPLETING,CONFIGURING,RESIZING,RESV_DEL_HOLD,"
         "REQUEUED,REQUEUE_FED,REQUEUE_HOLD,REVOKED,SIGNALING,SPECIAL_EXIT,STAGE_OUT,STOPPED")

Run = Callable[[str], tuple[str, str, int]]


def ids_relative(text: str, first: int) -> str:
    """Job ids ``first``.. written ``J0``..; other numbers left alone."""
    return re.sub(r"(?<![\d.])\d+(?![\d.])",
                  lambda m: f"J{int(m.group()) - first}"
                  if first <= int(m.group()) < first + 50 else m.group(), text)


def mini_cluster(tmp_path: Path, *, tasks_first: bool = False) -> Cluster:
    """minislurm on the reference conf with FirstJobId=100000, the queue of ``JOBS``.

    ``tasks_first``: a second passes before the last submission, so the array's two
    tasks start (and are split off with the next job ids) before ``bigpendingname``
    is submitted: ``J4``/``J5`` are the tasks and ``J6`` is ``bigpendingname``.
    """
    if not (REF / "slurm.conf").exists():
        pytest.skip("the reference captures are not here")
    tmp_path.mkdir(parents=True, exist_ok=True)
    shutil.copy(REF / "gres.conf", tmp_path / "gres.conf")
    (tmp_path / "slurm.conf").write_text(
        (REF / "slurm.conf").read_text() + f"\nFirstJobId={FIRST}\n")
    cluster = Cluster(tmp_path / "slurm.conf", user="root", uid=0, workdir=tmp_path / "w")
    cluster.write("sleep.sh", SLEEP)
    for line in JOBS:
        if tasks_first and line == JOBS[-1]:
            cluster.advance(1)
        assert cluster.run(line).returncode == 0, line
    cluster.advance(39 if tasks_first else 40)
    return cluster


@pytest.fixture
def mini(tmp_path: Path) -> Run:
    cluster = mini_cluster(tmp_path)

    def run(cmd: str) -> tuple[str, str, int]:
        res = cluster.run(cmd)
        return ids_relative(res.stdout, FIRST), res.stderr, res.returncode

    return run


def test_letters_min_cpus_and_select_info(mini: Run) -> None:
    assert mini(LETTERS) == (LETTERS_OUT, "", 0)


def test_priority_is_16_14f(mini: Run) -> None:
    out = mini('squeue -h -o "%p|%Q" -n held,run1')[0].splitlines()
    assert out == ["0.99998474121093|4294901759", "0.00000000000000|0"]


def test_which_fields_are_cut_to_their_width(mini: Run) -> None:
    assert mini(CUTS) == (CUTS_OUT, "", 0)


def test_long_only_fields(mini: Run) -> None:
    assert mini(LONG) == (LONG_OUT, "", 0)


def test_unknown_long_field_and_negative_width(mini: Run) -> None:
    assert mini(ODD) == (ODD_OUT, ODD_ERR, 0)
    assert mini('squeue -O nosuch') == ("\n" * 8, "squeue: error: Invalid job format "
                                                 "specification: nosuch\n", 0)


def test_empty_format_prints_empty_lines(mini: Run) -> None:
    assert mini('squeue -o ""') == ("\n" * 8, "", 0)
    assert mini('squeue -O ""') == ("\n" * 8, "", 0)


def test_start_ignores_Format(mini: Run) -> None:
    out, err, rc = mini("squeue --start -O name")
    assert (out.splitlines(keepends=True)[0], err, rc) == (START_HEADER, "", 0)
    assert len(out.splitlines()) == 4
    out = mini("squeue -O name -l --start -h")[0]
    assert out.splitlines()[0].startswith("            J4     debug bigpendi     root PD ")


def test_state_flags_and_the_list_of_valid_states(mini: Run) -> None:
    header = ("             JOBID PARTITION     NAME     USER ST       TIME  NODES "
              "NODELIST(REASON)\n")
    assert mini("squeue -t SO,requeue_fed") == (header, "", 0)
    assert mini("squeue -t BOGUS") == (
        "", "squeue: error: Invalid job state specified: BOGUS\n"
        f"squeue: error: Valid job states include: {VALID}\n\n", 1)


#: Commands whose outputs do not depend on timing: replayed on both sides.
REPLAYED = (LETTERS, 'squeue -o "%.1Y|%.1j|%2k|%.2k|%6k|%.1n|%2Y|%.1l"',
            ODD, 'squeue -O nosuch', 'squeue -o ""', 'squeue -O ""',
            'squeue -O "JobID:.6,tres-alloc:.30,MaxCPUs:4,Profile:7,exit_code:3,Cluster:5,'
            'SiblingsViableRaw:.5,ResizeTime:.2|,tres-per-job:.11,Network:5" -n run1,run2,arr',
            'squeue -h -O "tres-alloc:40,MaxNodes:4" -n bigpendingname',
            "squeue -t SO,requeue_fed", "squeue -t BOGUS")


@pytest.mark.realslurm
def test_replayed_on_real_slurm(real_slurm: RealSlurm, tmp_path: Path) -> None:
    real_slurm.cancel_all()
    work = tmp_path / "real"
    work.mkdir()
    (work / "sleep.sh").write_text(SLEEP)
    try:
        ids = []
        for line in JOBS:
            res = real_slurm.run(line, cwd=work)
            assert res.rc == 0, res
            ids.append(int(res.stdout.split()[-1]))
        first = ids[0]
        # Slurm's race: an array is never started at submission (job_allocate), but by
        # the scheduler pass its submission queues, and each task it starts is split off
        # with the next job id.  That pass may come before the next sbatch (a loaded
        # host): then the two tasks, started in one pass (_schedule's next_task), take
        # J4/J5 and bigpendingname J6.  minislurm is replayed in the order Slurm took.
        assert ids[-1] - first in (4, 6), ids
        cluster = mini_cluster(tmp_path / "mini", tasks_first=ids[-1] - first == 6)
        poll(lambda: (real_slurm.run("squeue -h -t R -n arr -o %i", cwd=work).stdout.split(),
                      real_slurm.run("squeue -h -n bigpendingname -o %Y", cwd=work).stdout),
             lambda got: len(got[0]) == 2 and got[1].strip() not in ("", "(null)"),
             what="the array's two tasks running and backfill's plan for the big job",
             tries=60)
        for cmd in REPLAYED:
            res = real_slurm.run(cmd, cwd=work)
            ours = cluster.run(cmd)
            # the order of equal-priority started tasks varies on real Slurm: lines
            # are compared as a multiset (the order is
            # tests/minislurm/cli/squeue/test_squeue_order.py's)
            assert (sorted(ids_relative(res.stdout, first).splitlines()), res.stderr,
                    res.rc) == (sorted(ids_relative(ours.stdout, FIRST).splitlines()),
                                ours.stderr, ours.returncode), cmd
    finally:
        real_slurm.cancel_all()
