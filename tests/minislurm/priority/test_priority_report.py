# ruff: noqa: E501
"""sprio and sshare text, from frozen rows, in Slurm 22.05's default layouts
(src/sprio/sprio.c + print.c; src/sshare/process.c + src/common/print_fields.c)."""

from __future__ import annotations

from typing import Any

import pytest

from minislurm.common.accounts import QOS, Association, AssociationSet, AssocKey
from minislurm.priority.factors import PriorityFactors, PriorityWeights
from minislurm.priority.fairshare import classic_shares, fair_tree_shares
from minislurm.priority.report import (
    SPRIO_LONG_FORMAT,
    _fmt_double,
    format_sprio,
    format_sshare,
    sort_sprio_rows,
    sprio_default_format,
)
from minislurm.priority.usage import rollup

W = PriorityWeights(age=1000, fairshare=10000, job_size=1000, partition=1000, qos=1000)


def row(job_id: int, **kw: Any) -> PriorityFactors:
    base: dict[str, Any] = dict(
        job_id=job_id, partition="gpu", user="alice", account="llm", weights=W
    )
    base.update(kw)
    return PriorityFactors(**base)


# ----------------------------------------------------------------- sprio


def test_default_format_lists_the_factors_with_a_weight() -> None:
    assert sprio_default_format(W) == "%.15i %9r %.10Y %.10S %.10A %.10F %.10J %.10P %.10Q"
    only_age = PriorityWeights(age=5)
    assert sprio_default_format(only_age) == "%.15i %9r %.10Y %.10S %.10A"
    assert sprio_default_format(only_age, users=True) == "%.15i %9r %.8u %.10Y %.10S %.10A"
    tres = PriorityWeights(tres=(("cpu", 1.0),))
    assert sprio_default_format(tres, norm=True) == "%.15i %9r %10y %20t"  # -n: no SITE
    assert sprio_default_format(tres) == "%.15i %9r %.10Y %.10S %.20T"
    assert sprio_default_format(W, long=True) == SPRIO_LONG_FORMAT


def test_default_sprio_output() -> None:
    rows = [
        row(42, age=0.5, fairshare=0.25, job_size=0.125, part=1.0, qos=0.5),
        row(7, partition="debug", age=1.0, fairshare=0.5, job_size=0.0625, part=0.1),
    ]
    assert format_sprio(sort_sprio_rows(rows)) == (
        "          JOBID PARTITION   PRIORITY       SITE        AGE  FAIRSHARE    JOBSIZE  PARTITION        QOS\n"
        "              7 debug           6162          0       1000       5000         62        100          0\n"
        "             42 gpu             4625          0        500       2500        125       1000        500\n"
    )


def test_weighted_factors_round_but_priority_truncates() -> None:
    f = row(1, age=0.0015, fairshare=0.00049)  # 1.5 and 4.9 weighted
    text = format_sprio([f], fmt="%.5i %.8Y %.5A %.5F", noheader=True)
    assert text == "    1        6     2     5\n"  # %.0f of 1.5 is 2 (round half even), 6.4 -> 6


def test_long_format_has_user_nice_and_tres() -> None:
    w = PriorityWeights(age=100, tres=(("cpu", 1000.0), ("gres/gpu", 2000.0)))
    f = PriorityFactors(3, "gpu", "bob", "llm", w, age=1.0, nice=-20,
                        tres=(("cpu", 0.25), ("gres/gpu", 0.5)))  # fmt: skip
    lines = format_sprio([f], long=True).splitlines()
    assert lines[0].split() == [
        "JOBID", "PARTITION", "USER", "PRIORITY", "SITE", "AGE", "ASSOC", "FAIRSHARE",
        "JOBSIZE", "PARTITION", "QOS", "NICE", "TRES",
    ]  # fmt: skip
    assert lines[1].split() == [
        "3", "gpu", "bob", "1370", "0", "100", "0", "0", "0", "0", "0", "-20",
        "cpu=250,gres/gpu=100",  # %.20T cuts the TRES column at 20 characters
    ]  # fmt: skip


def test_normalised_output() -> None:
    f = row(5, age=0.5, fairshare=0.25)
    text = format_sprio([f], fmt="%.6i %10y %10a %10f", noheader=True)
    prio = f"{f.priority / 0xFFFFFFFF:16.14f}"[:10]  # %16.14f, cut to the width
    assert text == f"     5 {prio} 0.5000000  0.2500000 \n"  # %10a is padded on the right


def test_left_justified_fields_are_cut_and_padded() -> None:
    f = row(1, partition="verylongpartition")
    assert format_sprio([f], fmt="%9r|", noheader=True) == "verylongp|\n"


def test_weights_line() -> None:
    text = format_sprio([], weights=W, show_weights=True, fmt="%.15i %.10S %.10A %.10F %20T",
                        tres_weights_spec="CPU=1000")  # fmt: skip
    weights_line = "        Weights          1       1000      10000 CPU=1000            "
    assert text.splitlines()[1] == weights_line


def test_unknown_sprio_field() -> None:
    with pytest.raises(ValueError, match="Invalid job format specification: Z"):
        format_sprio([], fmt="%Z")


# ----------------------------------------------------------------- sshare


def tree() -> AssociationSet:
    return AssociationSet(
        "mini",
        (
            Association("root", parent=None),
            Association("root", user="root", parent="root"),
            Association("science", parent="root", shares=1),
            Association("science", user="user1", parent="science"),
            Association("science", user="user2", parent="science", shares=None),
        ),
        (QOS("normal"),),
    )


USAGE: dict[AssocKey, float] = {("science", "user1"): 147128.7}


def test_default_sshare_layout_under_fair_tree() -> None:
    """As measured on 22.05: "Account" is left-justified like its column; root's own
    user comes first, outside the tree (NormShares 0, EffectvUsage 1, FairShare 0) but
    counted among the users; FairShare is blank for accounts."""
    aset = tree()
    rows = list(fair_tree_shares(aset, rollup(aset, USAGE)).values())
    assert format_sshare(rows) == (
        "Account                    User  RawShares  NormShares    RawUsage  EffectvUsage  FairShare \n"
        "-------------------- ---------- ---------- ----------- ----------- ------------- ---------- \n"
        "root                       root          1    0.000000           0      1.000000   0.000000 \n"
        "root                                          0.000000      147128      0.000000            \n"
        " science                                 1    1.000000      147128      1.000000            \n"
        "  science                 user1          1    1.000000      147128      1.000000   0.666667 \n"
        "  science                 user2     parent    1.000000           0      0.000000   1.000000 \n"
    )


def test_long_sshare_adds_norm_usage_level_fs_and_tres_minutes() -> None:
    aset = tree()
    rows = list(fair_tree_shares(aset, rollup(aset, USAGE)).values())
    lines = format_sshare(rows, long=True, tres_names=("cpu", "mem")).splitlines()
    assert lines[0].split() == [
        "Account", "User", "RawShares", "NormShares", "RawUsage", "NormUsage", "EffectvUsage",
        "FairShare", "LevelFS", "GrpTRESMins", "TRESRunMins",
    ]  # fmt: skip
    assert lines[5].split() == ["science", "user1", "1", "1.000000", "147128", "1.000000",
                                "1.000000", "0.666667", "1.000000", "cpu=0,mem=0"]  # fmt: skip
    # FairShare=parent: no LevelFS; root and root's user: no NormUsage, no LevelFS
    assert lines[6].split()[-2:] == ["1.000000", "cpu=0,mem=0"]
    assert lines[3][67:78] == " " * 11  # NormUsage of root
    assert lines[3].endswith("                   cpu=0,mem=0 ")  # TRES columns are right-justified


def test_classic_sshare_has_no_level_fs_and_a_fairshare_everywhere() -> None:
    aset = tree()
    rows = list(classic_shares(aset, rollup(aset, USAGE)).values())
    text = format_sshare(rows, long=True, fair_tree=False)
    assert "LevelFS" not in text
    lines = text.splitlines()
    # as measured: root's user NormShares 1, EffectvUsage 1 -> FairShare 0.5; root
    # NormShares 1, no NormUsage, EffectvUsage 0 -> FairShare 1; a FairShare everywhere
    assert lines[2].split()[:6] == ["root", "root", "1", "1.000000", "0", "1.000000"]
    assert lines[2].split()[6] == "0.500000"
    assert lines[3].split()[:5] == ["root", "1.000000", "147128", "0.000000", "1.000000"]
    assert lines[4].split()[6] == "0.500000"  # science: 2**(-1/1)


def test_parsable_sshare() -> None:
    aset = tree()
    rows = list(fair_tree_shares(aset, rollup(aset, USAGE)).values())
    p = format_sshare(rows, parsable=True).splitlines()
    assert p[0] == "Account|User|RawShares|NormShares|RawUsage|EffectvUsage|FairShare|"
    assert p[4] == "  science|user1|1|1.000000|147128|1.000000|0.666667|"
    p2 = format_sshare(rows, parsable2=True, users_only=True, noheader=True).splitlines()
    assert p2 == [
        "root|root|1|0.000000|0|1.000000|0.000000",
        "science|user1|1|1.000000|147128|1.000000|0.666667",
        "science|user2|parent|1.000000|0|0.000000|1.000000",
    ]


def test_wide_values_switch_to_scientific_notation_like_print_fields_double() -> None:
    assert _fmt_double(0.5, 10) == "  0.500000"
    assert _fmt_double(123456789012.5, 10) == "1.2346e+11"
    assert _fmt_double(float("inf"), 10) == "       inf"


def test_long_names_are_cut_with_a_plus() -> None:
    aset = AssociationSet(
        "c",
        (Association("root", parent=None),
         Association("averyveryverylongaccountname", parent="root")),
        (QOS("normal"),),
    )  # fmt: skip
    rows = list(fair_tree_shares(aset, {}).values())
    assert format_sshare(rows, noheader=True).splitlines()[1].startswith(" averyveryverylonga+ ")


def test_unknown_sshare_field() -> None:
    with pytest.raises(ValueError, match='Invalid field requested: "Bogus"'):
        format_sshare([], fields=["Bogus"])
