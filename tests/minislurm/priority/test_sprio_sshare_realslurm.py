# ruff: noqa: E501
"""sprio and sshare against a real Slurm 22.05.8 (Debian bookworm), same scenario.

Captured with the real-Slurm harness of tests/realslurm (4 nodes x 4 CPUs x 4 GPUs,
partitions debug (PriorityJobFactor 1) / gpu (set to 10) / short), slurm.conf plus::

    PriorityType=priority/multifactor
    PriorityWeightAge=1000        PriorityWeightFairshare=10000
    PriorityWeightJobSize=1000    PriorityWeightPartition=1000
    PriorityWeightQOS=1000        PriorityWeightTRES=CPU=100,GRES/gpu=200
    PriorityMaxAge=1-0  PriorityDecayHalfLife=1-0  PriorityCalcPeriod=1

and ``sacctmgr add qos high Priority=100``; accounts phys (Fairshare 60) and bio (40)
under root, theory (10) under phys; user root in phys (2), bio (parent) and theory (1).
Jobs in phys had used 639 CPU-seconds (sshare's RawUsage); a 16-CPU job held the whole
cluster while these waited ~38 s (normalised age 0.0004398):
104 ``-A phys -n1 --time=10``, 105 ``-A bio -N2 -n4 --time=20``,
106 ``-A theory -p gpu --gres=gpu:2 -n2 --time=5 --nice=100``,
107 ``-A phys --qos=high -n4 --time=10``, 108 ``-A bio -p debug,gpu -n1 --time=10``.
The outputs below are verbatim (trailing blanks included).

A second run used the classic algorithm (``PriorityFlags=NO_FAIR_TREE``) with
``PriorityFavorSmall=YES`` and ``PriorityWeightAssoc=1000`` (accounts bio and phys
given ``Priority=5`` / ``20``; root in bio with Fairshare 1, since ``Fairshare=parent``
under NO_FAIR_TREE crashed that slurmctld).  There, real Slurm showed the *accounts*
with NormUsage and EffectvUsage 0 although phys had 607 CPU-seconds of usage, so its
users' effective usage was computed against a parent of 0; minislurm follows the
documented formula instead (see classic_fair_share.html and tests/minislurm/priority/test_fairshare_classic.py),
so only the rows and columns untouched by that difference are compared.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from minislurm.common.accounts import QOS, Association, AssociationSet
from minislurm.job import JobRecord
from minislurm.priority.factors import (
    ClusterView,
    MultifactorParams,
    PartitionView,
    PriorityFactors,
    PriorityWeights,
    parse_tres_weights,
)
from minislurm.priority.multifactor import MultifactorPriority
from minislurm.priority.report import format_sprio, format_sshare, sort_sprio_rows
from minislurm.states import JobState, Reason

CAPTURED = {
    'sprio': (
        '          JOBID PARTITION   PRIORITY       SITE        AGE  FAIRSHARE    JOBSIZE  PARTITION        QOS                 TRES\n'
        '            104 debug           5262          0          0       5000        156        100          0                cpu=6\n'
        '            105 debug          10500          0          0      10000        375        100          0               cpu=25\n'
        '            106 gpu             8625          0          0       7500        188       1000          0   cpu=12,gres/gpu=25\n'
        '            107 debug           6375          0          0       5000        250        100       1000               cpu=25\n'
        '            108 debug          10262          0          0      10000        156        100          0                cpu=6\n'
        '            108 gpu            11162          0          0      10000        156       1000          0                cpu=6\n'
    ),
    'sprio -l': (
        '          JOBID PARTITION     USER   PRIORITY       SITE        AGE      ASSOC  FAIRSHARE    JOBSIZE  PARTITION        QOS        NICE                 TRES\n'
        '            104 debug         root       5262          0          0          0       5000        156        100          0           0                cpu=6\n'
        '            105 debug         root      10500          0          0          0      10000        375        100          0           0               cpu=25\n'
        '            106 gpu           root       8625          0          0          0       7500        188       1000          0         100   cpu=12,gres/gpu=25\n'
        '            107 debug         root       6375          0          0          0       5000        250        100       1000           0               cpu=25\n'
        '            108 debug         root      10262          0          0          0      10000        156        100          0           0                cpu=6\n'
        '            108 gpu           root      11162          0          0          0      10000        156       1000          0           0                cpu=6\n'
    ),
    'sprio -n': (
        '          JOBID PARTITION PRIORITY   AGE        FAIRSHARE  JOBSIZE    PARTITION  QOS        TRES                \n'
        '            104 debug     0.00000122 0.0004398  0.5000000  0.1562500  0.1000000  0.0000000  cpu=0.06            \n'
        '            105 debug     0.00000244 0.0004398  1.0000000  0.3750000  0.1000000  0.0000000  cpu=0.25            \n'
        '            106 gpu       0.00000200 0.0004398  0.7500000  0.1875000  1.0000000  0.0000000  cpu=0.12,gres/gpu=0.\n'
        '            107 debug     0.00000148 0.0004398  0.5000000  0.2500000  0.1000000  1.0000000  cpu=0.25            \n'
        '            108 debug     0.00000238 0.0004398  1.0000000  0.1562500  0.1000000  0.0000000  cpu=0.06            \n'
        '            108 gpu       0.00000259 0.0004398  1.0000000  0.1562500  1.0000000  0.0000000  cpu=0.06            \n'
    ),
    'sprio -w': (
        '          JOBID PARTITION   PRIORITY       SITE        AGE  FAIRSHARE    JOBSIZE  PARTITION        QOS                 TRES\n'
        '        Weights                               1       1000      10000       1000       1000       1000 CPU=100,GRES/gpu=200\n'
    ),
    'sprio -n -l': (
        '          JOBID PARTITION     USER PRIORITY   AGE        ASSOC      FAIRSHARE  JOBSIZE    PARTITION  QOS        TRES                \n'
        '            104 debug         root 0.00000122 0.0004398  0.0000000  0.5000000  0.1562500  0.1000000  0.0000000  cpu=0.06            \n'
        '            105 debug         root 0.00000244 0.0004398  0.0000000  1.0000000  0.3750000  0.1000000  0.0000000  cpu=0.25            \n'
        '            106 gpu           root 0.00000200 0.0004398  0.0000000  0.7500000  0.1875000  1.0000000  0.0000000  cpu=0.12,gres/gpu=0.\n'
        '            107 debug         root 0.00000148 0.0004398  0.0000000  0.5000000  0.2500000  0.1000000  1.0000000  cpu=0.25            \n'
        '            108 debug         root 0.00000238 0.0004398  0.0000000  1.0000000  0.1562500  0.1000000  0.0000000  cpu=0.06            \n'
        '            108 gpu           root 0.00000259 0.0004398  0.0000000  1.0000000  0.1562500  1.0000000  0.0000000  cpu=0.06            \n'
    ),
    'sshare -a': (
        'Account                    User  RawShares  NormShares    RawUsage  EffectvUsage  FairShare \n'
        '-------------------- ---------- ---------- ----------- ----------- ------------- ---------- \n'
        'root                       root          1    0.000000           0      1.000000   0.000000 \n'
        'root                                          0.000000         639      0.000000            \n'
        ' bio                                    40    0.400000           0      0.000000            \n'
        '  bio                      root     parent    0.400000           0      0.000000   1.000000 \n'
        ' phys                                   60    0.600000         639      1.000000            \n'
        '  phys                     root          2    0.166667         639      1.000000   0.500000 \n'
        '  theory                                10    0.833333           0      0.000000            \n'
        '   theory                  root          1    1.000000           0      0.000000   0.750000 \n'
    ),
    'sshare -a -l': (
        'Account                    User  RawShares  NormShares    RawUsage   NormUsage  EffectvUsage  FairShare    LevelFS                    GrpTRESMins                    TRESRunMins \n'
        '-------------------- ---------- ---------- ----------- ----------- ----------- ------------- ---------- ---------- ------------------------------ ------------------------------ \n'
        'root                       root          1    0.000000           0                  1.000000   0.000000                                           cpu=0,mem=0,energy=0,node=0,b+ \n'
        'root                                          0.000000         639                  0.000000                                                      cpu=0,mem=0,energy=0,node=0,b+ \n'
        ' bio                                    40    0.400000           0    0.000000      0.000000                   inf                                cpu=0,mem=0,energy=0,node=0,b+ \n'
        '  bio                      root     parent    0.400000           0    0.000000      0.000000   1.000000                                           cpu=0,mem=0,energy=0,node=0,b+ \n'
        ' phys                                   60    0.600000         639    1.000000      1.000000              0.600000                                cpu=0,mem=0,energy=0,node=0,b+ \n'
        '  phys                     root          2    0.166667         639    1.000000      1.000000   0.500000   0.166667                                cpu=0,mem=0,energy=0,node=0,b+ \n'
        '  theory                                10    0.833333           0    0.000000      0.000000                   inf                                cpu=0,mem=0,energy=0,node=0,b+ \n'
        '   theory                  root          1    1.000000           0    0.000000      0.000000   0.750000        inf                                cpu=0,mem=0,energy=0,node=0,b+ \n'
    ),
    'sshare -a -P': (
        'Account|User|RawShares|NormShares|RawUsage|EffectvUsage|FairShare\n'
        'root|root|1|0.000000|0|1.000000|0.000000\n'
        'root|||0.000000|639|0.000000|\n'
        ' bio||40|0.400000|0|0.000000|\n'
        '  bio|root|parent|0.400000|0|0.000000|1.000000\n'
        ' phys||60|0.600000|639|1.000000|\n'
        '  phys|root|2|0.166667|639|1.000000|0.500000\n'
        '  theory||10|0.833333|0|0.000000|\n'
        '   theory|root|1|1.000000|0|0.000000|0.750000\n'
    ),
    'sshare -a -l -p': (
        'Account|User|RawShares|NormShares|RawUsage|NormUsage|EffectvUsage|FairShare|LevelFS|GrpTRESMins|TRESRunMins|\n'
        'root|root|1|0.000000|0||1.000000|0.000000|||cpu=0,mem=0,energy=0,node=0,billing=0,fs/disk=0,vmem=0,pages=0,gres/gpu=0|\n'
        'root|||0.000000|639||0.000000||||cpu=0,mem=0,energy=0,node=0,billing=0,fs/disk=0,vmem=0,pages=0,gres/gpu=0|\n'
        ' bio||40|0.400000|0|0.000000|0.000000||inf||cpu=0,mem=0,energy=0,node=0,billing=0,fs/disk=0,vmem=0,pages=0,gres/gpu=0|\n'
        '  bio|root|parent|0.400000|0|0.000000|0.000000|1.000000|||cpu=0,mem=0,energy=0,node=0,billing=0,fs/disk=0,vmem=0,pages=0,gres/gpu=0|\n'
        ' phys||60|0.600000|639|1.000000|1.000000||0.600000||cpu=0,mem=0,energy=0,node=0,billing=0,fs/disk=0,vmem=0,pages=0,gres/gpu=0|\n'
        '  phys|root|2|0.166667|639|1.000000|1.000000|0.500000|0.166667||cpu=0,mem=0,energy=0,node=0,billing=0,fs/disk=0,vmem=0,pages=0,gres/gpu=0|\n'
        '  theory||10|0.833333|0|0.000000|0.000000||inf||cpu=0,mem=0,energy=0,node=0,billing=0,fs/disk=0,vmem=0,pages=0,gres/gpu=0|\n'
        '   theory|root|1|1.000000|0|0.000000|0.000000|0.750000|inf||cpu=0,mem=0,energy=0,node=0,billing=0,fs/disk=0,vmem=0,pages=0,gres/gpu=0|\n'
    ),
    'sshare -a -U': (
        'Account                    User  RawShares  NormShares    RawUsage  EffectvUsage  FairShare \n'
        '-------------------- ---------- ---------- ----------- ----------- ------------- ---------- \n'
        'root                       root          1    0.000000           0      1.000000   0.000000 \n'
        'bio                        root     parent    0.400000           0      0.000000   1.000000 \n'
        'phys                       root          2    0.166667         639      1.000000   0.500000 \n'
        'theory                     root          1    1.000000           0      0.000000   0.750000 \n'
    ),
}


NOW = 1767600000
WAITED = 38  # seconds pending when sprio ran

TOTALS = {"cpu": 16, "mem": 16000, "node": 4, "billing": 16, "gres/gpu": 16}
CLUSTER = ClusterView(
    node_count=4,
    cpu_count=16,
    partitions={
        "debug": PartitionView("debug", 1, 60, TOTALS),
        "gpu": PartitionView("gpu", 10, 120, TOTALS),
        "short": PartitionView("short", 1, 5, {**TOTALS, "cpu": 8, "node": 2}),
    },
)
WEIGHTS = PriorityWeights(
    age=1000, fairshare=10000, job_size=1000, partition=1000, qos=1000,
    tres=parse_tres_weights("CPU=100,GRES/gpu=200"),
)  # fmt: skip
ASSOCS = AssociationSet(
    "mini",
    (
        Association("root", parent=None),
        Association("root", user="root", parent="root"),
        Association("phys", parent="root", shares=60),
        Association("bio", parent="root", shares=40),
        Association("theory", parent="phys", shares=10),
        Association("phys", user="root", parent="phys", shares=2),
        Association("bio", user="root", parent="bio", shares=None),
        Association("theory", user="root", parent="theory", shares=1),
    ),
    (QOS("normal"), QOS("high", priority=100)),
)


def pending(job_id: int, account: str, partition: str, cpus: int, nodes: int = 1,
            **kw: Any) -> JobRecord:  # fmt: skip
    fields: dict[str, Any] = dict(
        job_id=job_id, name="wrap", user="root", uid=0, group="root", gid=0,
        account=account, partition=partition, qos="normal", state=JobState.PENDING,
        reason=Reason.PRIORITY, submit_time=NOW - WAITED, eligible_time=NOW - WAITED,
        accrue_time=NOW - WAITED, num_nodes=nodes, num_cpus=cpus,
        tres_req={"cpu": cpus, "mem": 1000 * cpus, "node": nodes, "billing": cpus},
    )  # fmt: skip
    fields.update(kw)
    return JobRecord(**fields)


JOBS = [
    pending(104, "phys", "debug", 1, time_limit=10),
    pending(105, "bio", "debug", 4, 2, time_limit=20),
    pending(106, "theory", "gpu", 2, time_limit=5, nice=100,
            tres_req={"cpu": 2, "mem": 2000, "node": 1, "billing": 2, "gres/gpu": 2}),
    pending(107, "phys", "debug", 4, time_limit=10, qos="high"),
    pending(108, "bio", "debug,gpu", 1, time_limit=10),
]  # fmt: skip


@pytest.fixture(scope="module")
def plugin() -> MultifactorPriority:
    p = MultifactorPriority(
        MultifactorParams(weights=WEIGHTS, max_age=86400, decay_half_life=86400,
                          calc_period=60),
        CLUSTER, ASSOCS, start=NOW - 600,
    )  # fmt: skip
    p.usage.record(("phys", "root"), 639.4, NOW - 60)
    return p


def sprio_rows(plugin: MultifactorPriority) -> list[PriorityFactors]:
    rows = [plugin.factors(j, NOW, partition=part)
            for j in JOBS for part in j.partition.split(",")]  # fmt: skip
    return sort_sprio_rows(rows)


@pytest.mark.parametrize(
    ("cmd", "options"),
    [
        ("sprio", {}),
        ("sprio -l", {"long": True}),
        ("sprio -n", {"norm": True}),
        ("sprio -n -l", {"norm": True, "long": True}),
    ],
)
def test_sprio_matches_real_slurm(plugin: MultifactorPriority, cmd: str,
                                  options: dict[str, Any]) -> None:  # fmt: skip
    assert format_sprio(sprio_rows(plugin), **options) == CAPTURED[cmd]


def test_sprio_weights_line_matches_real_slurm() -> None:
    text = format_sprio([], weights=WEIGHTS, show_weights=True,
                        tres_weights_spec="CPU=100,GRES/gpu=200")  # fmt: skip
    assert text == CAPTURED["sprio -w"]


def test_squeue_priorities_agree(plugin: MultifactorPriority) -> None:
    """squeue -o %Q showed 5262, 10500, 8625, 6375 and 10262 (108: its first partition)."""
    assert [plugin.priority(j, NOW) for j in JOBS] == [5262, 10500, 8625, 6375, 10262]


@pytest.mark.parametrize(
    ("cmd", "options"),
    [
        ("sshare -a", {}),
        ("sshare -a -l", {"long": True}),
        ("sshare -a -P", {"parsable2": True}),
        ("sshare -a -l -p", {"long": True, "parsable": True}),
        ("sshare -a -U", {"users_only": True}),
    ],
)
def test_sshare_matches_real_slurm(plugin: MultifactorPriority, cmd: str,
                                   options: dict[str, Any]) -> None:  # fmt: skip
    rows = list(plugin.share_rows(NOW).values())
    assert format_sshare(rows, **options) == CAPTURED[cmd]


# --------------------------------------------------------------------- classic run

CAPTURED_CLASSIC = {
    'sprio': (
        '          JOBID PARTITION   PRIORITY       SITE        AGE      ASSOC  FAIRSHARE    JOBSIZE  PARTITION        QOS                 TRES\n'
        '            104 debug            981          0          0          0         31        844        100          0                cpu=6\n'
        '            105 debug          10750          0          0          0      10000        625        100          0               cpu=25\n'
        '            106 gpu            11750          0          0          0      10000        812       1000          0   cpu=12,gres/gpu=25\n'
        '            107 debug           1906          0          0          0         31        750        100       1000               cpu=25\n'
        '            108 debug          10950          0          0          0      10000        844        100          0                cpu=6\n'
        '            108 gpu            11850          0          0          0      10000        844       1000          0                cpu=6\n'
    ),
    'sshare -a -l': (
        'Account                    User  RawShares  NormShares    RawUsage   NormUsage  EffectvUsage  FairShare                    GrpTRESMins                    TRESRunMins \n'
        '-------------------- ---------- ---------- ----------- ----------- ----------- ------------- ---------- ------------------------------ ------------------------------ \n'
        'root                       root          1    1.000000           0                  1.000000   0.500000                                cpu=0,mem=0,energy=0,node=0,b+ \n'
        'root                                          1.000000         607                  0.000000   1.000000                                cpu=0,mem=0,energy=0,node=0,b+ \n'
        ' bio                                    40    0.400000           0    0.000000      0.000000   1.000000                                cpu=0,mem=0,energy=0,node=0,b+ \n'
        '  bio                      root          1    0.400000           0    0.000000      0.000000   1.000000                                cpu=0,mem=0,energy=0,node=0,b+ \n'
        ' phys                                   60    0.600000         607    0.000000      0.000000   1.000000                                cpu=0,mem=0,energy=0,node=0,b+ \n'
        '  phys                     root          2    0.100000         607    1.000000      0.833333   0.003100                                cpu=0,mem=0,energy=0,node=0,b+ \n'
        '  theory                                10    0.500000           0    0.000000      0.000000   1.000000                                cpu=0,mem=0,energy=0,node=0,b+ \n'
        '   theory                  root          1    0.500000           0    0.000000      0.000000   1.000000                                cpu=0,mem=0,energy=0,node=0,b+ \n'
    ),
}


CLASSIC_ASSOCS = AssociationSet(
    "mini",
    (
        Association("root", parent=None),
        Association("root", user="root", parent="root"),
        Association("phys", parent="root", shares=60, priority=20),
        Association("bio", parent="root", shares=40, priority=5),
        Association("theory", parent="phys", shares=10),
        Association("phys", user="root", parent="phys", shares=2),
        Association("bio", user="root", parent="bio", shares=1),
        Association("theory", user="root", parent="theory", shares=1),
    ),
    (QOS("normal"), QOS("high", priority=100)),
)


@pytest.fixture(scope="module")
def classic() -> MultifactorPriority:
    weights = replace(WEIGHTS, assoc=1000)
    p = MultifactorPriority(
        MultifactorParams(weights=weights, max_age=86400, decay_half_life=86400,
                          calc_period=60, favor_small=True,
                          flags=frozenset({"NO_FAIR_TREE"})),
        CLUSTER, CLASSIC_ASSOCS, start=NOW - 600,
    )  # fmt: skip
    p.usage.record(("phys", "root"), 607.4, NOW - 60)
    return p


def _drop(line: str, columns: tuple[int, ...]) -> list[str]:
    return [c for i, c in enumerate(line.split()) if i not in columns]


def test_classic_sprio_matches_real_slurm_but_for_fairshare(classic: MultifactorPriority) -> None:
    """Header, SITE, AGE, ASSOC (0: users do not inherit their account's Priority),
    JOBSIZE with PriorityFavorSmall, PARTITION, QOS and TRES agree exactly."""
    mine = format_sprio(sprio_rows(classic)).splitlines()
    real = CAPTURED_CLASSIC["sprio"].splitlines()
    assert mine[0] == real[0]
    for m, r in zip(mine[1:], real[1:], strict=True):
        assert _drop(m, (2, 6)) == _drop(r, (2, 6))  # all but PRIORITY and FAIRSHARE
    # jobs of bio (no usage anywhere in its subtree) agree on FAIRSHARE and PRIORITY too
    for m, r in zip(mine[1:], real[1:], strict=True):
        if r.split()[0] in ("105", "108"):
            assert m == r


def test_classic_sshare_rows_outside_the_used_account_match(classic: MultifactorPriority) -> None:
    rows = list(classic.share_rows(NOW).values())
    mine = format_sshare(rows, long=True, fair_tree=False).splitlines()
    real = CAPTURED_CLASSIC["sshare -a -l"].splitlines()
    assert len(mine) == len(real)
    for i in (0, 1, 2, 3, 4, 5):  # header, dashes, root/root, root, bio, bio/root
        assert mine[i] == real[i]
    # phys: documented values (NormUsage 1, U_E 1) where real Slurm showed 0 and 0
    assert mine[6].split()[:6] == ["phys", "60", "0.600000", "607", "1.000000", "1.000000"]
    assert real[6].split()[:6] == ["phys", "60", "0.600000", "607", "0.000000", "0.000000"]
