"""The srun steps of a batch script in sacct, on the simulated clock as on real Slurm.

Measured on 22.05.8 (reference cluster): a script ``srun sleep 5; srun -n1 sleep 3``
in ``-N2 -n2`` shows ``.batch`` then step ``.0`` (sleep, n[1-2], 2 CPUs, 5 s) and
``.1`` (sleep, n1, 1 CPU, 3 s), all COMPLETED; a step running when its job is
cancelled is listed RUNNING until then and ends ``CANCELLED 0:15`` like ``.batch``.
The embedded cluster plays the script's srun lines (`minislurm.ctld.sim_steps`); the
same commands run on real Slurm.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
from captures import checked_stdout, reference_cluster
from realslurm import RealSlurm

STEPS = "#!/bin/bash\n#SBATCH -N2 -n2 -t5\nsrun sleep 5\nsrun -n1 sleep 3\nexit 0\n"
LONG = "#!/bin/bash\n#SBATCH -n1 -t5\nsrun sleep 300\n"
FIELDS = "JobID,JobName,State,ExitCode,NodeList,AllocCPUS,AllocTRES%32"

RUNNING = """\
<long>          long.sh    RUNNING      0:0              n1          1 billing=1,cpu=1,mem=1000M,node=1
<long>.batch      batch    RUNNING      0:0              n1          1           cpu=1,mem=1000M,node=1
<long>.0          sleep    RUNNING      0:0              n1          1           cpu=1,mem=1000M,node=1
"""  # noqa: E501
ENDED = """\
<steps>        steps.sh  COMPLETED      0:0          n[1-2]          2 billing=2,cpu=2,mem=2000M,node=2
<steps>.batch     batch  COMPLETED      0:0              n1          1           cpu=1,mem=1000M,node=1
<steps>.0         sleep  COMPLETED      0:0          n[1-2]          2           cpu=2,mem=2000M,node=2
<steps>.1         sleep  COMPLETED      0:0              n1          1           cpu=1,mem=1000M,node=1
<long>          long.sh CANCELLED+      0:0              n1          1 billing=1,cpu=1,mem=1000M,node=1
<long>.batch      batch  CANCELLED     0:15              n1          1           cpu=1,mem=1000M,node=1
<long>.0          sleep  CANCELLED     0:15              n1          1           cpu=1,mem=1000M,node=1
"""  # noqa: E501


def _scene(run: Callable[[str], str], pause: Callable[[float], None],
           folder: Path) -> tuple[list[list[str]], list[list[str]]]:
    (folder / "steps.sh").write_text(STEPS)
    (folder / "long.sh").write_text(LONG)
    ids = {"steps": run(f"sbatch --parsable {folder}/steps.sh").strip(),
           "long": run(f"sbatch --parsable {folder}/long.sh").strip()}

    names = {job: name for name, job in ids.items()}

    def norm(text: str) -> list[list[str]]:
        """Fields per line, the job id as <name> (ids differ in length between clusters)."""
        rows = []
        for line in text.splitlines():
            job, _, step = line.split()[0].partition(".")
            rows.append([f"<{names.get(job, job)}>" + (f".{step}" if step else ""),
                         *line.split()[1:]])
        return rows

    def sample() -> list[list[str]]:
        return norm(run(f"sacct -n -j {ids['long']} -o {FIELDS}"))

    try:
        pause(3)
        running = sample()
        for _ in range(10):  # real slurmdbd may not have the job's start yet
            if [r[2] for r in running] == ["RUNNING"] * 3:
                break
            pause(1)
            running = sample()
        run(f"scancel {ids['long']}")
        for _ in range(30):  # steps.sh ends ~8 s after its start
            if not run(f"squeue -h -j {ids['steps']},{ids['long']}").strip():
                break
            pause(1)
        pause(1)  # slurmdbd has the steps' ends
        return running, norm(run(f"sacct -n -j {ids['steps']},{ids['long']} -o {FIELDS}"))
    finally:
        run("scancel " + " ".join(ids.values()))


def _rows(text: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines()]


def test_script_steps_on_minislurm(tmp_path: Path) -> None:
    cluster = reference_cluster(tmp_path)
    got = _scene(checked_stdout(cluster.run), cluster.advance, tmp_path)
    assert got == (_rows(RUNNING), _rows(ENDED))


#: The ``.batch`` line of the cancelled job as real Slurm showed it once (a clean-clone CI
#: run of 2026-12-08): the batch shell ended with exit status 15 instead of by the
#: cancel's SIGTERM, most likely because its srun, signalled too, exited first.  The
#: capture and every other run show ``CANCELLED 0:15``, which minislurm gives.
_BATCH_RACED = ["<long>.batch", "batch", "FAILED", "15:0"]


@pytest.mark.realslurm
def test_script_steps_on_real_slurm(real_slurm: RealSlurm, tmp_path: Path) -> None:
    running, ended = _scene(checked_stdout(real_slurm.run, cwd=tmp_path), time.sleep,
                            tmp_path)  # fmt: skip
    want = _rows(ENDED)
    ended = [want[i] if row[:4] == _BATCH_RACED and want[i][0] == row[0] else row
             for i, row in enumerate(ended)]  # fmt: skip
    assert (running, ended) == (_rows(RUNNING), want)
