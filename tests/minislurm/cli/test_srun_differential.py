"""Differential tests of srun from the command line (its own allocation): the same
command lines on real Slurm 22.05 and on minislurm's local cluster, outputs diffed.

Task output lines arrive in any order, so each command sorts them (``| sort``) on
both sides. Normalised (tests/minicluster.py ``normalizer``): the cluster folder,
job ids (shifted so that the first id the output shows, ``SLURM_JOB_ID=N``, is 1),
pids, srun's ports, times, minislurm's ``bin/`` on PATH; ``MINISLURM_STATE_DIR``
lines (and the harness's ``PYTHONPATH``) are dropped, and so are the known gaps
(``KNOWN_ENV_GAPS``), which have strict xfail tests of their own.
The cases are expected to fail only while minislurm's srun is missing.
"""

from __future__ import annotations

import pytest
from minicluster import (
    HARNESS_ONLY_VARS,
    KNOWN_ENV_GAPS,
    Cluster,
    MiniCluster,
    run_case,
    srun_works,
    text_diff,
)
from realslurm import RealSlurm

pytestmark = [
    pytest.mark.realslurm,
    pytest.mark.xfail(
        not srun_works(), strict=False, reason="srun not landed (minislurm srun --version fails)"
    ),
]

CASES = {
    # a1's request: every task's environment, labelled (-l), sorted.
    "env-gres": "srun -l -N2 --ntasks-per-node=2 --gres=gpu:2 env | sort",
    "procid-layout": "srun -l -n5 bash -c 'echo $SLURMD_NODENAME $SLURM_LOCALID' | sort",
    "cyclic": "srun -l -N2 -n4 -m cyclic bash -c 'echo $SLURMD_NODENAME' | sort",
    "exit-code": "srun -N1 bash -c 'exit 3'",
    "unknown-partition": "srun -p nosuch true",
    "unknown-option": "srun --foo true",
    "per-task-output": "srun -N2 --ntasks-per-node=1 -o task%t.out hostname; cat task*.out",
    "block-n4-on-N2": "srun -l -N2 -n4 bash -c 'echo $SLURMD_NODENAME $SLURM_JOB_CPUS_PER_NODE' "
    "| sort",
}
#: Known gaps: case -> what differs (strict xfail; flips when minislurm is fixed).
GAPS: dict[str, str] = {
    # "cyclic" and "block-n4-on-N2" differed (2+2 CPUs instead of real Slurm's 3+1)
    # until select/cons_tres mirrored _eval_nodes/_cpus_to_use (eval_nodes).
}


def run_on(cluster: Cluster, cmd: str, folder: str, keep: tuple[str, ...] = ()) -> str:
    """``cmd`` with bash in a fresh folder; stdout, stderr, rc and the files left, as
    one normalised text."""
    run = run_case(cluster, cmd, folder=f"differential-srun-{folder}", timeout=60)
    res = run.result
    text = f"{res.stdout}--- stderr:\n{res.stderr}--- rc {res.rc}\n--- files: {sorted(run.files)}\n"
    dropped = (*HARNESS_ONLY_VARS, *(g for g in KNOWN_ENV_GAPS if g not in keep))
    return "".join(line for line in text.splitlines(True) if not any(d in line for d in dropped))


def gap(case: str) -> object:
    if case not in GAPS:
        return case
    return pytest.param(case, marks=pytest.mark.xfail(strict=True, reason=GAPS[case]))


@pytest.mark.parametrize("case", [gap(c) for c in sorted(CASES)])
def test_srun_same_output(real_slurm: RealSlurm, mini_slurm: MiniCluster, case: str) -> None:
    real = run_on(real_slurm, CASES[case], case)
    mini = run_on(mini_slurm, CASES[case], case)
    diff = text_diff(real, mini)
    assert not diff, "\n" + diff


@pytest.mark.parametrize("case", [gap("working-cluster")])
def test_srun_task_has_slurm_working_cluster(
    real_slurm: RealSlurm, mini_slurm: MiniCluster, case: str
) -> None:
    cmd = "srun -N1 env | grep ^SLURM_WORKING_CLUSTER="
    real = run_on(real_slurm, cmd, case, keep=KNOWN_ENV_GAPS)
    mini = run_on(mini_slurm, cmd, case, keep=KNOWN_ENV_GAPS)
    assert "SLURM_WORKING_CLUSTER=" in real
    diff = text_diff(real, mini)
    assert not diff, "\n" + diff
