"""Classic fair share (``PriorityFlags=NO_FAIR_TREE``), checked against Slurm's own
worked example: https://slurm.schedmd.com/classic_fair_share.html#example

Accounts A (40 shares) and D (60) under root; B (30) and C (10) under A; E (25) and
F (35) under D.  User 1 in B, users 2 and 3 (1 share each) in C, user 4 in E, user 5
in F.  Usage as a fraction of the machine: user 1 0.2, user 2 0.25, user 4 0.25.
"""

from __future__ import annotations

import pytest

from minislurm.common.accounts import QOS, Association, AssociationSet, AssocKey
from minislurm.priority.fairshare import ShareRow, calc_fs_factor, classic_shares
from minislurm.priority.usage import rollup


def doc_example() -> AssociationSet:
    return AssociationSet(
        cluster="doc",
        associations=(
            Association("root", parent=None),
            Association("A", parent="root", shares=40),
            Association("D", parent="root", shares=60),
            Association("B", parent="A", shares=30),
            Association("C", parent="A", shares=10),
            Association("E", parent="D", shares=25),
            Association("F", parent="D", shares=35),
            Association("B", user="user1", parent="B"),
            Association("C", user="user2", parent="C"),
            Association("C", user="user3", parent="C"),
            Association("E", user="user4", parent="E"),
            Association("F", user="user5", parent="F"),
        ),
        qos=(QOS("normal"),),
    )


DOC_USAGE: dict[AssocKey, float] = {("B", "user1"): 0.2, ("C", "user2"): 0.25, ("E", "user4"): 0.25}


@pytest.fixture
def rows() -> dict[AssocKey, ShareRow]:
    aset = doc_example()
    # the example measures usage as a fraction of the whole machine: R_H = 1
    return classic_shares(aset, rollup(aset, DOC_USAGE), total_usage=1.0)


def test_normalized_shares_are_products_down_the_tree(rows: dict[AssocKey, ShareRow]) -> None:
    assert rows[("A", None)].norm_shares == pytest.approx(0.4)
    assert rows[("B", None)].norm_shares == pytest.approx(0.3)
    assert rows[("B", "user1")].norm_shares == pytest.approx(0.3)
    assert rows[("C", "user2")].norm_shares == pytest.approx(0.05)
    assert rows[("C", "user3")].norm_shares == pytest.approx(0.05)
    assert rows[("E", "user4")].norm_shares == pytest.approx(0.25)
    assert rows[("F", "user5")].norm_shares == pytest.approx(0.35)


def test_usage_is_summed_up_the_tree(rows: dict[AssocKey, ShareRow]) -> None:
    assert rows[("A", None)].raw_usage == pytest.approx(0.45)
    assert rows[("D", None)].raw_usage == pytest.approx(0.25)
    assert rows[("C", None)].raw_usage == pytest.approx(0.25)


def test_effective_usage_as_documented(rows: dict[AssocKey, ShareRow]) -> None:
    # first tier: effective usage = actual usage
    assert rows[("A", None)].effective_usage == pytest.approx(0.45)
    assert rows[("D", None)].effective_usage == pytest.approx(0.25)
    assert rows[("B", None)].effective_usage == pytest.approx(0.3875)
    assert rows[("C", None)].effective_usage == pytest.approx(0.3)
    assert rows[("E", None)].effective_usage == pytest.approx(0.25)
    assert rows[("F", None)].effective_usage == pytest.approx(0.1458, abs=5e-5)
    assert rows[("B", "user1")].effective_usage == pytest.approx(0.3875)
    assert rows[("C", "user2")].effective_usage == pytest.approx(0.275)
    assert rows[("C", "user3")].effective_usage == pytest.approx(0.15)
    assert rows[("E", "user4")].effective_usage == pytest.approx(0.25)
    assert rows[("F", "user5")].effective_usage == pytest.approx(0.1458, abs=5e-5)


@pytest.mark.parametrize(
    ("user", "account", "documented"),
    [
        ("user1", "B", "0.408479"),
        ("user2", "C", "0.022097"),
        ("user3", "C", "0.125000"),
        ("user4", "E", "0.500000"),
        ("user5", "F", "0.749154"),
    ],
)
def test_fair_share_factors_match_the_documented_example(
    rows: dict[AssocKey, ShareRow], user: str, account: str, documented: str
) -> None:
    assert f"{rows[(account, user)].fairshare:.6f}" == documented


def test_user3_is_penalised_for_the_usage_of_its_account(rows: dict[AssocKey, ShareRow]) -> None:
    """User 3 never ran a job, yet its factor is below 0.5: account C is over-served."""
    assert rows[("C", "user3")].raw_usage == 0
    assert (rows[("C", "user3")].fairshare or 0.0) < 0.5
    best = max((r for r in rows.values() if r.user), key=lambda r: r.fairshare or 0.0)
    assert best.user == "user5"


def test_default_normalisation_is_by_root_usage() -> None:
    """Without an explicit R_H, usage is normalised by root's (the cluster total)."""
    aset = doc_example()
    rows = classic_shares(aset, rollup(aset, DOC_USAGE))
    assert rows[("A", None)].norm_usage == pytest.approx(0.45 / 0.7)
    assert rows[("D", None)].norm_usage == pytest.approx(0.25 / 0.7)
    assert rows[("root", None)].norm_usage is None  # sshare leaves root's blank


def test_dampening_factor_divides_the_exponent() -> None:
    assert calc_fs_factor(0.3875, 0.3) == pytest.approx(0.408479, abs=1e-6)
    assert calc_fs_factor(0.3875, 0.3, damp_factor=2) == pytest.approx(2 ** (-0.3875 / 0.3 / 2))
    assert calc_fs_factor(0.5, 0.0) == 0.0


def test_fairshare_parent_user_uses_its_accounts_values() -> None:
    aset = AssociationSet(
        "c",
        (
            Association("root", parent=None),
            Association("a", parent="root", shares=1),
            Association("b", parent="root", shares=1),
            Association("a", user="u1", parent="a", shares=None),
            Association("b", user="u2", parent="b", shares=1),
        ),
        (QOS("normal"),),
    )
    rows = classic_shares(aset, rollup(aset, {("a", "u1"): 30.0, ("b", "u2"): 10.0}))
    u1, acct = rows[("a", "u1")], rows[("a", None)]
    assert (u1.norm_shares, u1.effective_usage) == (acct.norm_shares, acct.effective_usage)
    assert u1.fairshare == pytest.approx(2 ** (-0.75 / 0.5))
