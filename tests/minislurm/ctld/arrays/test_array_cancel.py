"""``scancel`` of an array task that has not started yet, as Slurm 22.05.8 does it.

Measured on real 22.05.8 (reference cluster, slurmdbd): ``sbatch --array=0-7%2 -n4``,
then ``scancel 1_5`` and ``scancel 1_[6-7]`` while those tasks are still in the pending
remainder: the indices just leave the array (squeue ``1_[2-4,6-7%2]``, then
``1_[2-4%2]``), ``scontrol show job 1_5`` prints ``Job 1_5 not found`` on stdout
(exit 1) and sacct
has no row for them -- no job record, no job id is used.  minislurm used to split each
one off as a CANCELLED task with a job id of its own.  The same commands run on
minislurm's embedded cluster and on real Slurm.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from captures import reference_cluster
from polling import poll
from realslurm import RealSlurm


def _scenario(run: Callable[[str], tuple[int, str]], pause: Callable[[float], None]
              ) -> dict[str, object]:
    _rc, out = run("sbatch --parsable --array=0-7%2 -n4 --wrap 'sleep 300'")
    a = out.strip()
    poll(lambda: run(f"squeue -h -j {a} -t R -o %i")[1].split(), lambda got: len(got) == 2,
         what="a scheduling pass starting tasks 0 and 1", tries=20, every=1, pause=pause)
    run(f"scancel {a}_5")
    pause(2)
    queue1 = run(f"squeue -h -j {a} -o %i")[1].split()
    shown = run(f"scontrol show job {a}_5")
    run(f"scancel {a}_[6-7]")
    pause(2)
    queue2 = run(f"squeue -h -j {a} -o %i")[1].split()
    rows = run(f"sacct -n -P -X -o JobID,State -j {a}")[1].split()
    run(f"scancel {a}")
    return {
        "queue1": sorted(q.replace(a, "A", 1) for q in queue1),
        "queue2": sorted(q.replace(a, "A", 1) for q in queue2),
        "shown": (shown[0], shown[1].strip().replace(a, "A")),
        "cancelled_rows": [r.replace(a, "A", 1) for r in rows if "CANCELLED" in r],
    }


def _check(seen: dict[str, object]) -> None:
    assert seen["queue1"] == ["A_0", "A_1", "A_[2-4,6-7%2]"]
    assert seen["queue2"] == ["A_0", "A_1", "A_[2-4%2]"]
    assert seen["shown"] == (1, "")
    assert seen["cancelled_rows"] == []


def test_cancelling_a_pending_array_task_drops_its_index(tmp_path: Path) -> None:
    cluster = reference_cluster(tmp_path)

    def run(cmd: str) -> tuple[int, str]:
        res = cluster.run(cmd)
        if cmd.startswith("scontrol"):  # on stdout, as real scontrol prints it
            assert res.stdout.strip() == f"Job {cmd.split()[-1]} not found"
            return res.returncode, ""
        return res.returncode, res.stdout

    _check(_scenario(run, cluster.advance))
    # no job id was used up: the next job follows the two started tasks
    assert cluster.run("sbatch --parsable --wrap true").stdout.strip() == "4"


def test_cancelling_a_pending_array_task_on_real_slurm(real_slurm: RealSlurm) -> None:
    def run(cmd: str) -> tuple[int, str]:
        res = real_slurm.run(cmd)
        if cmd.startswith("scontrol"):
            assert res.stdout.strip() == f"Job {cmd.split()[-1]} not found", res
            return res.rc, ""
        return res.rc, res.stdout

    _check(_scenario(run, time.sleep))
