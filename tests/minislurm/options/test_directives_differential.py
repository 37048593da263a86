"""Differential tests of how sbatch reads a job's options: #SBATCH directives, the
command line and SBATCH_* variables (captures f1/f2), on real Slurm 22.05 and on
minislurm's local cluster, both on the reference slurm.conf.

Each case submits a held job (``-H``: it stays in the queue, nothing runs) and
prints what the controller recorded with ``squeue -h -j <id> -o "%j|%l|%P|%D|%C"``
(name, time limit, partition, nodes, CPUs), then cancels it. Normalised
(tests/minicluster.py ``normalizer``): the cluster folder and job ids.
"""

from __future__ import annotations

import pytest
from minicluster import Cluster, MiniCluster, has_command, run_case, text_diff
from realslurm import RealSlurm

pytestmark = [
    pytest.mark.spread,  # independent cases: any worker
    pytest.mark.realslurm,
    pytest.mark.skipif(not has_command("squeue"), reason="minislurm/cli/squeue.py missing"),
]

SHOW = 'squeue -h -j $id -o "%j|%l|%P|%D|%C"; scancel $id'

#: name -> (job.sh text, what comes before ``sbatch``, sbatch arguments before job.sh)
CASES: dict[str, tuple[str, str, str]] = {
    "after-first-command-ignored": (
        "#!/bin/bash\n#SBATCH -J first\n#SBATCH --time=5\necho x\n#SBATCH -J second\n"
        "#SBATCH --time=9\n",
        "",
        "",
    ),
    "blank-and-comments-first": (
        "#!/bin/bash\n\n# a comment\n#SBATCH -J late -N2\nhostname\n",
        "",
        "",
    ),
    "spacing-and-tab": ("#!/bin/bash\n#SBATCH  -J two\n#SBATCH\t--time=3\ntrue\n", "", ""),
    "no-space-after-SBATCH": ("#!/bin/bash\n#SBATCH-J nospace\ntrue\n", "", ""),
    "not-directives": (
        "#!/bin/bash\n# SBATCH -J a\n#sbatch -J b\n  #SBATCH -J c\ntrue\n",
        "",
        "",
    ),
    "several-options-one-line": ("#!/bin/bash\n#SBATCH -J multi -N2 -n3 --time=4\ntrue\n", "", ""),
    "double-quoted-name": ('#!/bin/bash\n#SBATCH -J "quoted name"\ntrue\n', "", ""),
    "single-quoted-name": ("#!/bin/bash\n#SBATCH -J 'single quoted'\ntrue\n", "", ""),
    "trailing-comment": ("#!/bin/bash\n#SBATCH -J trail # comment\ntrue\n", "", ""),
    "separate-value": ("#!/bin/bash\n#SBATCH --time 11\ntrue\n", "", ""),
    "repeated-last-wins": ("#!/bin/bash\n#SBATCH -J one\n#SBATCH -J two\ntrue\n", "", ""),
    "set-e-ends-directives": ("#!/bin/bash\nset -e\n#SBATCH -J after\ntrue\n", "", ""),
    "python-script": ("#!/usr/bin/env python3\n#SBATCH -J py -p gpu\nprint(1)\n", "", ""),
    "command-line-wins": ("#!/bin/bash\n#SBATCH -J directive --time=3\ntrue\n", "", "-J cli"),
    "environment-over-directive": (
        "#!/bin/bash\n#SBATCH -J directive --time=3\ntrue\n",
        "SBATCH_JOB_NAME=envname SBATCH_TIMELIMIT=7 ",
        "",
    ),
    "command-line-over-environment": (
        "#!/bin/bash\ntrue\n",
        "SBATCH_JOB_NAME=envname SBATCH_PARTITION=gpu ",
        "-J cli -p short",
    ),
    "partition-defaults": ("#!/bin/bash\ntrue\n", "", "-p short"),
}


def show(cluster: Cluster, case: str) -> str:
    script, prefix, args = CASES[case]
    cmd = f"id=$({prefix}sbatch --parsable -H {args} job.sh) && {SHOW}"
    run = run_case(cluster, cmd, folder=f"differential-dir-{case}", files={"job.sh": script})
    return f"{run.result.stdout}--- stderr:\n{run.result.stderr}--- rc {run.result.rc}\n"


@pytest.mark.parametrize("case", sorted(CASES))
def test_recorded_options(real_slurm: RealSlurm, mini_slurm: MiniCluster, case: str) -> None:
    real, mini = show(real_slurm, case), show(mini_slurm, case)
    assert "|" in real, real
    diff = text_diff(real, mini)
    assert not diff, "\n" + diff


@pytest.mark.parametrize(
    ("name", "cmd"),
    [
        ("wrap", "sbatch --parsable -H --wrap true"),
        ("stdin", "sbatch --parsable -H < job.sh"),
    ],
)
def test_default_job_names(
    real_slurm: RealSlurm, mini_slurm: MiniCluster, name: str, cmd: str
) -> None:
    """``--wrap`` jobs are named ``wrap``, a script read from stdin ``sbatch``."""
    outs = []
    side: Cluster
    for side in (real_slurm, mini_slurm):
        run = run_case(
            side, f"id=$({cmd}) && {SHOW}", folder=f"differential-name-{name}",
            files={"job.sh": "#!/bin/bash\ntrue\n"},
        )
        outs.append(f"{run.result.stdout}--- stderr:\n{run.result.stderr}")
    assert outs[1] == outs[0]
