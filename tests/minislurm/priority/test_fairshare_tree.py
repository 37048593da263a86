"""Fair Tree (the 22.05 default), following https://slurm.schedmd.com/fair_tree.html:
LevelFS = S / U per association among its siblings, a depth-first walk in LevelFS
order, users ranked as they are met: FairShare = rank / number of user associations.
"""

from __future__ import annotations

import math

import pytest

from minislurm.common.accounts import QOS, Association, AssociationSet, AssocKey
from minislurm.priority.fairshare import ShareRow, compute_shares, fair_tree_shares
from minislurm.priority.usage import rollup


def tree(*assocs: Association) -> AssociationSet:
    return AssociationSet("c", (Association("root", parent=None), *assocs), (QOS("normal"),))


def shares(aset: AssociationSet, own: dict[AssocKey, float]) -> dict[AssocKey, ShareRow]:
    return fair_tree_shares(aset, rollup(aset, own))


def doc_tree() -> AssociationSet:
    """The classic documentation's tree (A 40 / D 60 ...), ranked by Fair Tree."""
    return tree(
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
    )


DOC_USAGE: dict[AssocKey, float] = {
    ("B", "user1"): 20.0,
    ("C", "user2"): 25.0,
    ("E", "user4"): 25.0,
}


def test_level_fs_is_shares_over_usage_among_siblings() -> None:
    rows = shares(doc_tree(), DOC_USAGE)
    # A: S = 40/100, U = 45/70
    assert rows[("A", None)].norm_shares == pytest.approx(0.4)
    assert rows[("A", None)].effective_usage == pytest.approx(45 / 70)
    assert rows[("A", None)].level_fs == pytest.approx(0.4 / (45 / 70))
    # B within A: S = 30/40, U = 20/45
    assert rows[("B", None)].level_fs == pytest.approx(0.75 / (20 / 45))
    # F has shares but no usage: infinitely under-served
    assert rows[("F", None)].level_fs == math.inf


def test_every_user_of_a_better_account_ranks_above_the_other_accounts_users() -> None:
    rows = shares(doc_tree(), DOC_USAGE)
    fs = {r.user: r.fairshare for r in rows.values() if r.user}
    # D (LevelFS 1.68) beats A (0.62): users 5 and 4 come first; within A, B beats C
    assert fs == {"user5": 1.0, "user4": 0.8, "user1": 0.6, "user3": 0.4, "user2": 0.2}


def test_accounts_have_no_fairshare_of_their_own() -> None:
    rows = shares(doc_tree(), DOC_USAGE)
    assert all(r.fairshare is None for r in rows.values() if r.user is None)


def test_sibling_users_with_equal_level_fs_share_a_rank() -> None:
    aset = tree(
        Association("a", parent="root"),
        Association("a", user="x", parent="a"),
        Association("a", user="y", parent="a"),
        Association("a", user="z", parent="a"),
    )
    rows = shares(aset, {("a", "z"): 5.0})
    # x and y never ran: LevelFS inf, tied at the top rank; z is ranked third
    assert rows[("a", "x")].fairshare == rows[("a", "y")].fairshare == 1.0
    assert rows[("a", "z")].fairshare == pytest.approx(1 / 3)


def test_a_user_tied_with_a_sibling_account_shares_its_best_users_rank() -> None:
    aset = tree(
        Association("a", parent="root"),
        Association("sub", parent="a"),
        Association("a", user="u", parent="a"),
        Association("sub", user="v", parent="sub"),
        Association("sub", user="w", parent="sub"),
        Association("b", parent="root"),
        Association("b", user="t", parent="b"),
    )
    # u and sub used the same (LevelFS 1.0 each, tied); inside sub v is unused, w used
    rows = shares(aset, {("a", "u"): 10.0, ("sub", "w"): 10.0, ("b", "t"): 100.0})
    assert rows[("a", "u")].level_fs == rows[("sub", None)].level_fs == pytest.approx(1.0)
    assert rows[("a", "u")].fairshare == rows[("sub", "v")].fairshare == 1.0
    assert rows[("sub", "w")].fairshare == pytest.approx(2 / 4)
    assert rows[("b", "t")].fairshare == pytest.approx(1 / 4)


def test_tied_sibling_accounts_have_their_children_merged() -> None:
    aset = tree(
        Association("a", parent="root"),
        Association("b", parent="root"),
        Association("a", user="a1", parent="a"),
        Association("a", user="a2", parent="a"),
        Association("b", user="b1", parent="b"),
        Association("b", user="b2", parent="b"),
    )
    # a and b used the same: tied; their users are sorted together by their own LevelFS
    own: dict[AssocKey, float] = {
        ("a", "a1"): 10.0,
        ("a", "a2"): 40.0,
        ("b", "b1"): 30.0,
        ("b", "b2"): 20.0,
    }
    rows = shares(aset, own)
    order = sorted((r for r in rows.values() if r.user), key=lambda r: -(r.fairshare or 0))
    # LevelFS: a1 0.5/0.2 = 2.5, b2 0.5/0.4 = 1.25, b1 0.5/0.6 = 0.83, a2 0.5/0.8 = 0.625
    assert [r.user for r in order] == ["a1", "b2", "b1", "a2"]


def test_zero_shares_rank_last_and_no_usage_anywhere_means_all_tied() -> None:
    aset = tree(
        Association("a", parent="root", shares=0),
        Association("b", parent="root", shares=1),
        Association("a", user="x", parent="a"),
        Association("b", user="y", parent="b"),
    )
    rows = shares(aset, {})
    assert rows[("a", None)].level_fs == 0.0
    assert rows[("b", "y")].fairshare == 1.0
    assert rows[("a", "x")].fairshare == 0.5


def test_fairshare_parent_user_ranks_first_in_its_account() -> None:
    aset = tree(
        Association("a", parent="root"),
        Association("a", user="p", parent="a", shares=None),
        Association("a", user="q", parent="a"),
    )
    rows = shares(aset, {("a", "p"): 50.0})
    assert rows[("a", "p")].level_fs == math.inf
    assert rows[("a", "p")].norm_shares == pytest.approx(1.0)  # the account's S
    assert rows[("a", "p")].fairshare == 1.0


def test_children_of_a_fairshare_parent_account_compete_one_level_up() -> None:
    aset = tree(
        Association("a", parent="root"),
        Association("grp", parent="a", shares=None),
        Association("a", user="u", parent="a"),
        Association("grp", user="v", parent="grp"),
    )
    rows = shares(aset, {("a", "u"): 10.0, ("grp", "v"): 30.0})
    # v's siblings are a's own children: S = 1/2, U = 30/40
    assert rows[("grp", "v")].norm_shares == pytest.approx(0.5)
    assert rows[("grp", "v")].effective_usage == pytest.approx(0.75)
    assert rows[("a", "u")].fairshare == 1.0


def test_rows_come_in_sshare_order() -> None:
    rows = shares(doc_tree(), DOC_USAGE)
    names = [(r.depth, r.account, r.user) for r in rows.values()]
    assert names[:4] == [(0, "root", None), (1, "A", None), (2, "B", None), (3, "B", "user1")]


def test_compute_shares_switches_algorithm() -> None:
    aset = doc_tree()
    raw = rollup(aset, DOC_USAGE)
    assert compute_shares(aset, raw)[("A", None)].level_fs is not None
    assert compute_shares(aset, raw, fair_tree=False)[("A", None)].level_fs is None
