"""slurmctld's refusals as each command words them (`minislurm.ctld.submit.reject`).

Measured on 22.05.8 (tests/test_differential_gres_frontend.py runs the same lines on
real Slurm): salloc says ``Job submit/allocate failed``, srun ``Unable to allocate
resources``, sbatch ``Batch job submission failed``; ``--gpus=x``/``--gpus-per-node=-1``
reach slurmctld (a job id is used) and end ``Requested node configuration is not
available``.
"""

from __future__ import annotations

import pytest

from minislurm.ctld.submit import NODE_CONFIG, reject
from minislurm.sim import Cluster


@pytest.mark.parametrize(("prog", "words"), [
    ("sbatch", "Batch job submission failed"),
    ("salloc", "Job submit/allocate failed"),
    ("srun", "Unable to allocate resources"),
])
def test_each_command_words_a_rejection_its_own_way(prog: str, words: str) -> None:
    err = reject(prog, NODE_CONFIG, "first line")
    assert err.message == f"{prog}: error: first line\n{prog}: error: {words}: {NODE_CONFIG}"
    assert err.exit_code == 1


@pytest.mark.parametrize("option", ["--gpus=x", "--gpus=-1", "--gpus-per-node=x",
                                    "--gpus-per-node=-1"])
def test_gpus_text_that_is_not_a_count_is_refused_by_slurmctld(option: str) -> None:
    cluster = Cluster()
    refused = cluster.run(f"sbatch {option} --wrap true")
    assert (refused.returncode, refused.stdout, refused.stderr) == (
        1, "", f"sbatch: error: Batch job submission failed: {NODE_CONFIG}\n")
    assert cluster.run("sbatch --parsable --wrap true").stdout == "2\n"  # id 1 was used
