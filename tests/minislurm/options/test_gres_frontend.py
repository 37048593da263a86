"""The GRES check sbatch/srun/salloc make before contacting slurmctld (issue 18);
measured on 22.05.8, diffed against real Slurm in
tests/minislurm/options/test_gres_frontend_differential.py.
These run everywhere: the pure check, and sbatch on the embedded cluster (no id used)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from minislurm.common.gres import INVALID_GRES
from minislurm.errors import GRES_TYPE_MIX, GresError
from minislurm.options.gres_names import check_command_gres, check_gres_names, client_gres_types
from minislurm.sim import Cluster


@pytest.mark.parametrize(
    "gres", ["foo:1", "foo", "GPU:1", "gres/gpu:1", ":1", "shard:1", "mps:1", "gpu:1,foo:1"]
)
def test_names_not_in_grestypes_are_refused(gres: str) -> None:
    with pytest.raises(GresError) as info:
        check_gres_names(gres, ("gpu",), "srun")
    assert info.value.message == f"srun: error: {INVALID_GRES}"
    assert info.value.exit_code == 1


@pytest.mark.parametrize(
    "gres",
    [None, "none", "gpu", "gpu:0", "gpu:-1", "gpu:badtype:1", "gpu:a100:99", ",gpu:1",
     "gpu:1,gpu:1", "gpu:a100:1,gpu:a100:2", "gpu:2k"],
)
def test_left_to_slurmctld(gres: str | None) -> None:
    check_gres_names(gres, ("gpu",), "sbatch")


@pytest.mark.parametrize("gres", ["gpu:a100:1,gpu:1", "gpu:2,gpu:a100", "gpu,gpu:a100:1"])
def test_typed_and_untyped_together(gres: str) -> None:
    with pytest.raises(GresError) as info:
        check_gres_names(gres, ("gpu",), "salloc")
    assert info.value.message == f"salloc: error: {GRES_TYPE_MIX}"


def test_configured_names_pass() -> None:
    check_gres_names("gpu:1,mps:50", ("gpu", "mps"), "sbatch")


def test_client_reads_grestypes_from_slurm_conf(tmp_path: Path) -> None:
    assert client_gres_types({}) == ("gpu",)  # the embedded default cluster
    conf = tmp_path / "slurm.conf"
    conf.write_text("ClusterName=c\nSlurmctldHost=h\nGresTypes=gpu,shard\n"
                    "NodeName=n1 CPUs=2 State=UNKNOWN\nPartitionName=p Nodes=n1 Default=YES\n")
    assert client_gres_types({"SLURM_CONF": str(conf)}) == ("gpu", "shard")
    assert client_gres_types({"SLURM_CONF": str(conf) + ".missing"}) is None


def test_sbatch_refuses_before_the_controller_and_uses_no_id() -> None:
    cluster = Cluster()
    first = cluster.run("sbatch --parsable --wrap true")
    refused = cluster.run("sbatch --gres=foo:1 --wrap true")
    mixed = cluster.run("sbatch --gres=gpu:1,gpu:a100:1 --wrap true")
    second = cluster.run("sbatch --parsable --wrap true")
    assert refused.stderr == f"sbatch: error: {INVALID_GRES}\n" and refused.returncode == 1
    assert mixed.stderr == f"sbatch: error: {GRES_TYPE_MIX}\n" and mixed.returncode == 1
    assert int(second.stdout) == int(first.stdout) + 1


def test_the_one_command_check_reads_slurm_conf_or_takes_the_served_types(
        tmp_path: Path) -> None:
    """`check_command_gres`: what sbatch, srun and salloc all call."""
    conf = tmp_path / "slurm.conf"
    conf.write_text("ClusterName=c\nSlurmctldHost=h\nGresTypes=shard\n"
                    "NodeName=n1 CPUs=2 State=UNKNOWN\nPartitionName=p Nodes=n1 Default=YES\n")
    env = {"SLURM_CONF": str(conf)}
    with pytest.raises(GresError) as info:
        check_command_gres("gpu:1", "srun", env)
    assert info.value.message == f"srun: error: {INVALID_GRES}"
    check_command_gres("shard:1", "salloc", env)
    check_command_gres("gpu:1", "sbatch", env, ("gpu",))  # a controller's own slurm.conf
    check_command_gres("foo:1", "srun", {"SLURM_CONF": str(conf) + ".missing"})  # slurmctld's


@pytest.mark.parametrize("command", ["srun", "salloc"])
def test_srun_and_salloc_refuse_before_contacting_slurmctld(command: str) -> None:
    from minislurm.cli import salloc, srun
    from minislurm.cli.common import Context

    stderr = io.StringIO()
    ctx = Context(stderr=stderr)
    module = srun if command == "srun" else salloc
    rc = module.run(["--gres=foo:1", "true"], ctx)
    assert (rc, stderr.getvalue()) == (1, f"{command}: error: {INVALID_GRES}\n")
