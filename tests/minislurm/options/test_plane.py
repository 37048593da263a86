"""``-m plane`` without ``=size`` as 22.05.8 reads it (``verify_dist_type``: getenv).

Measured on real 22.05.8 (reference cluster) for srun, sbatch and salloc: ``-m plane``
takes its size from ``SLURM_DIST_PLANESIZE`` (``SLURM_DIST_PLANESIZE=3 srun -N2 -n4 -m
plane`` runs tasks 0-2 on n1 and 3 on n2, each seeing ``SLURM_DISTRIBUTION=plane``,
``SLURM_DIST_PLANESIZE=3``); without the variable, with 0 or a non-number, and for
``-m plane=3:cyclic``, the command prints ``<cmd>: error: Invalid plane size or size not
specified`` then ``<cmd>: error: Invalid --distribution specification`` and exits 255.
``-m plane=1`` on the command line wins over the variable.
"""

from __future__ import annotations

import pytest
from minicluster import MiniCluster
from realslurm import RealSlurm

from minislurm.errors import OptionError
from minislurm.options.sbatch import parse_sbatch
from minislurm.options.srun import parse_salloc, parse_srun

ERR = ("{p}: error: Invalid plane size or size not specified\n"
       "{p}: error: Invalid --distribution specification")


@pytest.mark.parametrize("env", [{}, {"SLURM_DIST_PLANESIZE": "0"},
                                 {"SLURM_DIST_PLANESIZE": "x"}])
def test_plane_without_a_size_is_refused_like_slurm(env: dict[str, str]) -> None:
    for prog, parse in (("srun", parse_srun), ("salloc", parse_salloc)):
        with pytest.raises(OptionError) as exc:
            parse(["-N2", "-n4", "-m", "plane", "hostname"], env=env)
        assert (str(exc.value), exc.value.exit_code) == (ERR.format(p=prog), 255)
    with pytest.raises(OptionError) as exc:
        parse_sbatch(["-N2", "-n4", "-m", "plane", "--wrap", "true"], env=env, cwd="/")
    assert (str(exc.value), exc.value.exit_code) == (ERR.format(p="sbatch"), 255)


def test_plane_takes_its_size_from_the_environment() -> None:
    env = {"SLURM_DIST_PLANESIZE": "3"}
    assert parse_srun(["-m", "plane", "hostname"], env=env).options.distribution == "plane=3"
    assert parse_srun(["-m", "plane=1", "hostname"], env=env).options.distribution == "plane=1"
    batch = parse_sbatch(["-m", "plane", "--wrap", "true"], env=env, cwd="/")
    assert batch.options.distribution == "plane=3"
    with pytest.raises(OptionError) as exc:
        parse_srun(["-m", "plane=3:cyclic", "hostname"], env=env)
    assert str(exc.value) == ERR.format(p="srun")


CMD = ("SLURM_DIST_PLANESIZE=3 srun -N2 -n4 -m plane "
       "bash -c 'echo $SLURM_PROCID $SLURMD_NODENAME $SLURM_DISTRIBUTION $SLURM_DIST_PLANESIZE'")


def _replay(cluster: MiniCluster | RealSlurm) -> None:
    res = cluster.run(CMD)
    assert res.rc == 0, res.stderr
    assert sorted(res.stdout.splitlines()) == [
        "0 n1 plane 3", "1 n1 plane 3", "2 n1 plane 3", "3 n2 plane 3"]
    res = cluster.run("srun -N2 -n4 -m plane hostname")
    assert (res.rc, res.stderr.strip()) == (255, ERR.format(p="srun"))


def test_plane_size_from_the_environment_on_minislurm(mini_slurm: MiniCluster) -> None:
    _replay(mini_slurm)


def test_plane_size_from_the_environment_on_real_slurm(real_slurm: RealSlurm) -> None:
    _replay(real_slurm)
