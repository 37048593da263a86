"""TRESBillingWeights and PriorityFlags=MAX_TRES: the billing TRES and fair-share usage.

Every expected number was measured on real Slurm 22.05.8 (scripts/realslurm, the
reference slurm.conf with ``PartitionName=gpu ... TRESBillingWeights=CPU=1.0,
Mem=0.25G,GRES/gpu=2.0``) for ``sbatch -p gpu -n2 --mem=1000 --gres=gpu:3``:
``TRES=cpu=2,mem=1000M,node=1,billing=8,gres/gpu=3`` (2 + 1000 x 0.25/1024 + 3 x 2
= 8.24, stored as an integer), the partition ``billing=51`` and node n1's CfgTRES
``billing=12``; with ``PriorityFlags=MAX_TRES`` the job's billing is 6 (the largest
node TRES), the partition's 32 and the node's 8. sacct shows ``billing=8`` in both
ReqTRES and AllocTRES. Usage (sshare RawUsage) is the unrounded billable TRES x
seconds (priority_multifactor.c ``_apply_new_usage``).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from minislurm.common.billing import BillingError, TresWeights, billable_tres, parse_tres_weights
from minislurm.errors import ConfigError
from minislurm.sim import Cluster

WEIGHTS = "CPU=1.0,Mem=0.25G,GRES/gpu=2.0"
CONFIGURED = ("cpu", "mem", "energy", "node", "billing", "fs/disk", "vmem", "pages", "gres/gpu")
JOB = {"cpu": 2, "mem": 1000, "node": 1, "gres/gpu": 3}


def test_weights_parse_case_blind_with_units_relative_to_the_tres_base_unit() -> None:
    w = parse_tres_weights(WEIGHTS, CONFIGURED)
    assert w is not None
    assert w.weights == (("cpu", 1.0), ("mem", 0.25 / 1024), ("gres/gpu", 2.0))
    assert w.text == WEIGHTS and not w.max_tres
    # mem counts MB: M (and K) leave the weight as written; CPU counts units: G is 1024**3
    assert parse_tres_weights("mem=2M", CONFIGURED) == TresWeights((("mem", 2.0),), "mem=2M")
    cpu_g = parse_tres_weights("cpu=1G", CONFIGURED)
    assert cpu_g is not None and cpu_g.weight("cpu") == 1 / 1024**3
    assert parse_tres_weights("", CONFIGURED) is None


def test_billing_is_the_weighted_sum_or_with_max_tres_the_largest_node_tres() -> None:
    w = parse_tres_weights(WEIGHTS, CONFIGURED)
    assert billable_tres(JOB, w) == pytest.approx(2 + 1000 * 0.25 / 1024 + 6)
    m = parse_tres_weights(WEIGHTS, CONFIGURED, max_tres=True)
    assert billable_tres(JOB, m) == 6.0
    assert billable_tres(JOB, None) == 2.0  # no weights: the CPU count
    # the billing TRES itself never counts
    assert billable_tres({**JOB, "billing": 100}, w) == billable_tres(JOB, w)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("GRES/gpux=2", "TRES weight 'GRES:gpux' is not a configured TRES type."),
        ("CPU", '"CPU" is an invalid TRES weight entry'),
        ("GRES/gpu=", '"GRES" is an invalid TRES weight entry'),
        ("CPU=1.0X", "Invalid unit type 'X'. Possible options are 'KMGTP'"),
        ("license/x=1", "TRES weight 'license:x' is not a configured TRES type."),
    ],
)
def test_bad_weights_get_slurmctlds_words(text: str, error: str) -> None:
    with pytest.raises(BillingError) as info:
        parse_tres_weights(text, CONFIGURED)
    assert info.value.lines == [error]
    assert info.value.fatal == f"fatal: failed to parse tres weights str '{text}'"


def test_gres_gpu_is_a_tres_only_with_accounting_storage_tres() -> None:
    with pytest.raises(BillingError, match="'GRES:gpu' is not a configured TRES type"):
        parse_tres_weights(WEIGHTS, CONFIGURED[:-1])


def _cluster(folder: Path, captures: Path, *, weights: str = WEIGHTS, extra: str = "") -> Cluster:
    text = (captures / "slurm.conf").read_text()
    line = "PartitionName=gpu Nodes=n[1-4] MaxTime=02:00:00 State=UP"
    assert line in text
    if weights:
        text = text.replace(line, f"{line} TRESBillingWeights={weights}")
    text += ("PriorityType=priority/multifactor\nPriorityDecayHalfLife=0\n"
             "PriorityWeightFairshare=1000\n" + extra)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "slurm.conf").write_text(text)
    shutil.copy(captures / "gres.conf", folder / "gres.conf")
    return Cluster(folder / "slurm.conf")


@pytest.fixture
def summed(tmp_path: Path, captures: Path) -> Iterator[Cluster]:
    c = _cluster(tmp_path / "sum", captures)
    yield c
    c.close()


@pytest.fixture
def maxed(tmp_path: Path, captures: Path) -> Iterator[Cluster]:
    c = _cluster(tmp_path / "max", captures, extra="PriorityFlags=MAX_TRES\n")
    yield c
    c.close()


def _line(text: str, key: str) -> str:
    return next(w for line in text.splitlines() for w in line.split() if w.startswith(key))


def _raw_usage(c: Cluster, user: str) -> int:
    out = c.run("sshare -a -P -n -o Account,User,RawUsage").stdout
    return next(int(r.split("|")[2]) for r in out.splitlines() if r.split("|")[1] == user)


@pytest.mark.parametrize(("fixture", "job", "part", "node", "usage"),
                         [("summed", 8, 51, 12, 824), ("maxed", 6, 32, 8, 600)])
def test_scontrol_sacct_and_sshare_show_the_billing(
    request: pytest.FixtureRequest, fixture: str, job: int, part: int, node: int, usage: int
) -> None:
    c: Cluster = request.getfixturevalue(fixture)
    jid = c.sbatch("#!/bin/bash\nsleep 100\n", "-p", "gpu", "-n2", "--mem=1000",
                   "--gres=gpu:3")
    c.advance(1)
    shown = c.run(f"scontrol show job {jid}").stdout
    assert _line(shown, "TRES=") == f"TRES=cpu=2,mem=1000M,node=1,billing={job},gres/gpu=3"
    partition = c.run("scontrol show partition gpu").stdout
    assert _line(partition, "TRES=") == f"TRES=cpu=16,mem=16000M,node=4,billing={part},gres/gpu=16"
    assert partition.rstrip().splitlines()[-1] == f"   TRESBillingWeights={WEIGHTS}"
    # n1 is in debug and short too (no weights there): the highest billing wins
    assert _line(c.run("scontrol show node n1").stdout, "CfgTRES=") == (
        f"CfgTRES=cpu=4,mem=4000M,billing={node},gres/gpu=4")
    c.wait_job(jid)
    sacct = c.run(f"sacct -j {jid} -X -n -P -o ReqTRES,AllocTRES").stdout.strip()
    tres = f"billing={job},cpu=2,gres/gpu=3,mem=1000M,node=1"
    assert sacct == f"{tres}|{tres}"
    # fair share is charged the unrounded billing x 100 s (8.244 x 100 = 824)
    assert _raw_usage(c, "student") == usage


def test_without_weights_usage_counts_cpus_not_gpus(tmp_path: Path, captures: Path) -> None:
    """The default: billing = CPUs, so a 3-GPU job costs 2 CPUs' worth of fair share."""
    c = _cluster(tmp_path / "none", captures, weights="")
    try:
        jid = c.sbatch("#!/bin/bash\nsleep 100\n", "-p", "gpu", "-n2", "--gres=gpu:3")
        c.wait_job(jid)
        assert "TRESBillingWeights" not in c.run("scontrol show partition gpu").stdout
        assert _raw_usage(c, "student") == 200
    finally:
        c.close()


def test_a_bad_weights_string_stops_slurmctld(tmp_path: Path, captures: Path) -> None:
    with pytest.raises(ConfigError) as info:
        _cluster(tmp_path / "bad", captures, weights="GRES/gpux=2")
    assert str(info.value) == (
        "error: TRES weight 'GRES:gpux' is not a configured TRES type.\n"
        "fatal: failed to parse tres weights str 'GRES/gpux=2'")
