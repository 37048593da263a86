"""Fair Tree's links kept per association set (``fairshare._tree``) against the helpers
that derive them, and ``rollup``'s kept lineages against ``AssociationSet.lineage``:
every link and every lineage must be what the helpers give, for any tree (the rows
built from them are checked against Fair Tree's documented rankings in
test_fairshare_tree.py)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from minislurm.common.accounts import (
    QOS,
    ROOT,
    Association,
    AssociationSet,
    AssocKey,
    load_associations,
)
from minislurm.priority import fairshare
from minislurm.priority.usage import UsageTracker, rollup


def _random_tree(draw: st.DrawFn) -> AssociationSet:
    assocs = [Association("root", parent=None)]
    accounts = ["root"]
    for k in range(draw(st.integers(1, 5))):
        parent = draw(st.sampled_from(accounts))
        shares = draw(st.sampled_from([1, 10, 40, 0, None]))
        assocs.append(Association(f"a{k}", parent=parent, shares=shares))
        accounts.append(f"a{k}")
    for k in range(draw(st.integers(1, 6))):
        acct = draw(st.sampled_from(accounts))
        shares = draw(st.sampled_from([1, 5, 0, None]))
        assocs.append(Association(acct, user=f"u{k}", parent=acct, shares=shares))
    return AssociationSet("c", tuple(assocs), (QOS("normal"),))


@st.composite
def _trees_and_usage(draw: st.DrawFn) -> tuple[AssociationSet, dict[AssocKey, float]]:
    aset = _random_tree(draw)
    users = [a.key for a in aset.associations if a.is_user]
    own = {k: draw(st.sampled_from([0.0, 1.5, 10.0, 37.25])) for k in users
           if draw(st.booleans())}
    return aset, own


@settings(max_examples=150, deadline=None)
@given(_trees_and_usage())
def test_kept_links_are_what_the_helpers_derive(
        case: tuple[AssociationSet, dict[AssocKey, float]]) -> None:
    aset, _own = case
    fairshare._TREES.clear()
    tree = fairshare._tree(aset)
    keys = [a.key for a in aset.associations]
    assert tree.level == fairshare._level_shares(aset)
    assert tree.fs_parent == {k: fairshare.fs_parent(aset, k) for k in keys}
    assert tree.fs_children[ROOT] == tuple(fairshare.fs_children(aset, ROOT))
    for k in keys:
        assert tree.fs_children[k] == tuple(fairshare.fs_children(aset, k))
    assert list(tree.order) == fairshare.sshare_order(aset)
    assert tree.user_count == aset.user_count()
    assert tree.root_users == {k for k in keys if fairshare.is_root_user(aset, k)}
    assert fairshare._tree(aset) is tree  # kept


def test_an_equal_but_other_set_gets_its_own_links() -> None:
    a = load_associations()
    b = AssociationSet(a.cluster, a.associations[:-1], a.qos)  # one association less
    assert fairshare._tree(a).fs_parent.keys() != fairshare._tree(b).fs_parent.keys()
    assert fairshare._tree(a) is fairshare._tree(a)


@settings(max_examples=100, deadline=None)
@given(_trees_and_usage())
def test_tracker_rollup_with_kept_lineages_is_the_plain_one(
        case: tuple[AssociationSet, dict[AssocKey, float]]) -> None:
    aset, own = case
    tracker = UsageTracker(aset, half_life=0)
    for t, (k, amount) in enumerate(own.items()):
        tracker.record(k, amount, t)
        assert tracker.raw_usage(t) == rollup(aset, tracker.own_usage(t))
