"""QOS access under ``AccountingStorageEnforce=...,qos`` (slurmctld ``_get_qos_info``).

Measured on 22.05.8 with slurmdbd (``sacctmgr add qos high``; ``sacctmgr add user
nobody account=ml qos=normal defaultqos=normal``; enforce ``associations,limits,qos``,
slurmctld restarted): ``sbatch -A ml --qos=high`` and ``--qos=nosuch`` as ``nobody`` ->
``sbatch: error: Batch job submission failed: Invalid qos specification`` (exit 1;
salloc ``Job submit/allocate failed: Invalid qos specification``, srun ``Unable to
allocate resources: ...``); ``--qos=normal`` and no ``--qos`` are accepted; a user
with no association ``Invalid account or account/partition combination specified``.
Without enforcement (Slurm's default, ``none``) all of them are accepted.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from minislurm.sim import Cluster

ETC = Path(__file__).resolve().parents[3] / "minislurm" / "etc"
QOS_ERROR = "sbatch: error: Batch job submission failed: Invalid qos specification\n"


def _cluster(tmp_path: Path, extra: str) -> Cluster:
    for f in ETC.iterdir():
        if f.is_file():
            shutil.copy(f, tmp_path / f.name)
    conf = tmp_path / "slurm.conf"
    conf.write_text(conf.read_text() + extra)
    return Cluster(str(conf), workdir=tmp_path / "work")


def _sbatch(cluster: Cluster, user: str, args: str) -> tuple[int, str]:
    r = cluster.run(f"sbatch {args} -t 10 --wrap true", user=user)
    return r.returncode, r.stderr


@pytest.mark.parametrize("enforce", ["qos", "associations,limits,qos", "all"])
def test_a_qos_the_association_does_not_list_is_refused(tmp_path: Path, enforce: str) -> None:
    cluster = _cluster(tmp_path, f"AccountingStorageEnforce={enforce}\n")
    assert _sbatch(cluster, "bob", "--qos=high") == (1, QOS_ERROR)      # bob: normal,debug,...
    assert _sbatch(cluster, "bob", "--qos=nosuch") == (1, QOS_ERROR)
    assert _sbatch(cluster, "bob", "--qos=debug")[0] == 0
    assert _sbatch(cluster, "bob", "")[0] == 0
    assert _sbatch(cluster, "alice", "--qos=high")[0] == 0              # alice lists high
    assert _sbatch(cluster, "zed", "") == (
        1, "sbatch: error: Batch job submission failed: Invalid account or account/partition "
           "combination specified\n")
    assert [j.user for j in cluster.controller.jobs()] == ["bob", "bob", "alice"]


@pytest.mark.parametrize("extra", ["", "AccountingStorageEnforce=none\n",
                                   "AccountingStorageEnforce=associations,limits\n"])
def test_without_qos_enforcement_any_qos_is_accepted(tmp_path: Path, extra: str) -> None:
    cluster = _cluster(tmp_path, extra)
    assert _sbatch(cluster, "bob", "--qos=high")[0] == 0
