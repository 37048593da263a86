"""``JobRequeue`` in slurm.conf: the Requeue flag of a batch job that names neither
``--requeue`` nor ``--no-requeue``.

Measured on 22.05.8 with ``JobRequeue=0``: ``sbatch --wrap true`` shows ``Requeue=0``
in ``scontrol show job``, ``sbatch --requeue`` ``Requeue=1``; the default (1) makes
every batch job requeue-able unless ``--no-requeue``.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from minislurm.conf import load_config
from minislurm.sim import Cluster

ETC = Path(__file__).resolve().parents[3] / "minislurm" / "etc"


def _cluster(tmp_path: Path, extra: str) -> Cluster:
    for f in ETC.iterdir():
        if f.is_file():
            shutil.copy(f, tmp_path / f.name)
    conf = tmp_path / "slurm.conf"
    conf.write_text(conf.read_text() + extra)
    return Cluster(str(conf), workdir=tmp_path / "work")


def _requeue_flag(cluster: Cluster, args: str) -> str:
    job = cluster.run(f"sbatch --parsable -H {args} --wrap true").stdout.strip()
    match = re.search(r"Requeue=(\d)", cluster.run(f"scontrol show job {job}").stdout)
    assert match, job
    return match.group(1)


@pytest.mark.parametrize(("extra", "expected"), [
    ("", {"": "1", "--requeue": "1", "--no-requeue": "0"}),
    ("JobRequeue=1\n", {"": "1", "--requeue": "1", "--no-requeue": "0"}),
    ("JobRequeue=0\n", {"": "0", "--requeue": "1", "--no-requeue": "0"}),
])
def test_job_requeue_is_the_default_of_the_requeue_flag(
    tmp_path: Path, extra: str, expected: dict[str, str]
) -> None:
    cluster = _cluster(tmp_path, extra)
    assert {args: _requeue_flag(cluster, args) for args in expected} == expected


def test_a_node_failure_requeues_only_a_requeue_job_under_job_requeue_0(
    tmp_path: Path,
) -> None:
    cluster = _cluster(tmp_path, "JobRequeue=0\n")
    assert load_config(str(tmp_path / "slurm.conf")).job_requeue == 0
    plain = int(cluster.run("sbatch --parsable -N1 -w gpu01 --wrap 'sleep 600'").stdout)
    asked = int(cluster.run("sbatch --parsable -N1 -w gpu02 --requeue --wrap 'sleep 600'")
                .stdout)
    cluster.advance(5)
    cluster.run("scontrol update nodename=gpu01,gpu02 state=down reason=drill")
    cluster.advance(1)
    assert cluster.controller.job(plain).state.value == "NODE_FAIL"
    assert cluster.controller.job(asked).state.value == "PENDING"
