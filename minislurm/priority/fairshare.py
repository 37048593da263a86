"""The fair-share factor: classic ``2**(-U_E/S)`` and Fair Tree, as pure functions.

Both take an ``AssociationSet`` and every association's decayed ``usage_raw``
(``UsageTracker.raw_usage``) and return one ``ShareRow`` per association: the data
``sshare -l`` prints (RawShares, NormShares, RawUsage, NormUsage, EffectvUsage,
FairShare, LevelFS) and the factor a job of that association gets.

- Fair Tree (the default since Slurm 19.05: ``PriorityFlags`` without
  ``NO_FAIR_TREE``) follows ``src/plugins/priority/multifactor/fair_tree.c`` and
  https://slurm.schedmd.com/fair_tree.html: per association ``LevelFS = S / U`` with
  ``S = shares / shares of self+siblings`` and ``U = usage / parent's usage``; siblings
  are sorted by LevelFS (users before accounts on ties), the tree is walked depth
  first and users are ranked in that order: ``FairShare = rank / user_count``.  Sibling
  users with equal LevelFS share a rank; tied sibling accounts have their children
  merged before descending.
- Classic (``PriorityFlags=NO_FAIR_TREE``) follows ``_set_usage_efctv`` /
  ``priority_p_calc_fs_factor`` and https://slurm.schedmd.com/classic_fair_share.html:
  ``S`` = product of ``shares / level shares`` down the tree, ``U = usage / root usage``,
  effective usage ``U_E = U + (U_E,parent - U) * shares / level shares`` (equal to ``U``
  just below root) and ``F = 2**(-U_E / S / FairShareDampeningFactor)``.
  ``DEPTH_OBLIVIOUS`` uses ``_depth_oblivious_set_usage_efctv``.

``FairShare=parent`` associations use their parent's values: Slurm attaches the
children of such an account to the nearest ancestor that has shares (``fs_assoc_ptr``).

User associations of the account ``root`` itself (``root``/``root``) are not part of
the fair-share tree in a real 22.05 controller (measured with ``sshare -a -l``): they
take no part in the level shares of root's children, have a blank NormUsage and
LevelFS, and sshare lists them first, above root.  Fair Tree gives them NormShares 0,
EffectvUsage 1 and FairShare 0 but counts them among its users; classic gives them
NormShares 1, EffectvUsage 1 and so FairShare 0.5.  Root itself shows EffectvUsage 0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from minislurm.common.accounts import ROOT, USE_PARENT, Association, AssociationSet, AssocKey


@dataclass(frozen=True, slots=True)
class ShareRow:
    """One association's fair-share data: a row of ``sshare -l``.

    ``raw_shares`` None = ``parent`` (or root, whose RawShares sshare leaves blank);
    ``fairshare`` None where sshare leaves FairShare blank (accounts under Fair Tree);
    ``level_fs`` None where LevelFS is blank (classic, root, ``parent`` accounts).
    """

    account: str
    user: str | None
    parent: str | None
    depth: int
    raw_shares: int | None
    norm_shares: float
    raw_usage: float
    norm_usage: float | None
    effective_usage: float
    fairshare: float | None
    level_fs: float | None

    @property
    def key(self) -> AssocKey:
        """``(account, user)`` of the association."""
        return (self.account, self.user)


# ------------------------------------------------------------------ tree helpers


def is_root_user(aset: AssociationSet, key: AssocKey) -> bool:
    """A user association of the account root (outside the fair-share tree)."""
    return key[1] is not None and key[0] == ROOT[0]


def sshare_order(aset: AssociationSet) -> list[tuple[Association, int]]:
    """sshare's row order: root's own users (depth 0), then the tree from root."""
    first = [(a, 0) for a in aset.children(ROOT) if a.is_user]
    rest = [(a, d) for a, d in aset.hierarchy() if not is_root_user(aset, a.key)]
    return first + rest


def fs_parent(aset: AssociationSet, key: AssocKey) -> AssocKey | None:
    """The nearest ancestor that has shares of its own (Slurm's ``fs_assoc_ptr``)."""
    if is_root_user(aset, key):
        return None
    p = aset.parent_key(key)
    while p is not None and p != ROOT:
        a = aset.get(p)
        if a is None or a.shares is not USE_PARENT:
            break
        p = aset.parent_key(p)
    return p


def fs_children(aset: AssociationSet, key: AssocKey) -> list[Association]:
    """The associations whose ``fs_parent`` is ``key``, users first, then by name."""
    kids = [a for a in aset.associations if a.key != key and fs_parent(aset, a.key) == key]
    return sorted(kids, key=lambda a: (not a.is_user, a.user or a.account))


def _level_shares(aset: AssociationSet) -> dict[AssocKey, int]:
    """``level_shares`` of every association: the shares of itself and its siblings."""
    by_parent: dict[AssocKey | None, int] = {}
    parent_of: dict[AssocKey, AssocKey | None] = {}
    for a in aset.associations:
        p = fs_parent(aset, a.key) if a.key != ROOT else None
        parent_of[a.key] = p
        if a.shares is not USE_PARENT and p is not None:
            by_parent[p] = by_parent.get(p, 0) + a.shares
    return {k: (by_parent.get(p, 0) if p is not None else 0) for k, p in parent_of.items()}


def _parent_name(aset: AssociationSet, key: AssocKey) -> str | None:
    p = aset.parent_key(key)
    return p[0] if p is not None else None


def _usage_norm(raw: float, total: float) -> float:
    if total <= 0:
        return 0.0
    return min(1.0, raw / total)


def calc_fs_factor(usage_efctv: float, shares_norm: float, damp_factor: float = 1.0) -> float:
    """``priority_p_calc_fs_factor``: ``2**(-(U_E / S) / damp)``, 0 without shares."""
    if shares_norm <= 0:
        return 0.0
    return float(2.0 ** (-((usage_efctv / shares_norm) / damp_factor)))


# ------------------------------------------------------------------ classic


def classic_shares(
    aset: AssociationSet,
    raw_usage: Mapping[AssocKey, float],
    *,
    total_usage: float | None = None,
    damp_factor: float = 1.0,
    depth_oblivious: bool = False,
) -> dict[AssocKey, ShareRow]:
    """Classic fair share for every association (``PriorityFlags=NO_FAIR_TREE``).

    ``total_usage`` is the R_H the usage is normalised by; by default root's usage
    (the cluster's total, as Slurm does).  The documented example expresses usage as a
    fraction of the whole machine, i.e. ``total_usage=1.0``.
    """
    level = _level_shares(aset)
    total = raw_usage.get(ROOT, 0.0) if total_usage is None else total_usage
    norm_shares: dict[AssocKey, float] = {}
    efctv: dict[AssocKey, float] = {}
    usage_norm: dict[AssocKey, float] = {}
    rows: dict[AssocKey, ShareRow] = {}

    def shares_of(a: Association) -> float:
        if a.key == ROOT:
            return 1.0
        if a.shares is USE_PARENT:
            p = fs_parent(aset, a.key)
            return norm_shares[p] if p is not None else 1.0
        s = 1.0
        for k in aset.lineage(a.key)[:-1]:  # all but root
            anc = aset.get(k)
            if anc is None or anc.shares is USE_PARENT:
                continue
            s = 0.0 if not level[k] else s * anc.shares / level[k]
        return s

    for a, depth in sshare_order(aset):  # parents before children
        k = a.key
        raw = raw_usage.get(k, 0.0)
        usage_norm[k] = _usage_norm(raw, total)
        norm_shares[k] = 1.0 if is_root_user(aset, k) else shares_of(a)
        p = fs_parent(aset, k) if k != ROOT else None
        if k == ROOT:  # measured: root's EffectvUsage is 0 (FairShare 1)
            efctv[k] = 0.0
        elif is_root_user(aset, k):  # measured: NormShares 1, EffectvUsage 1, FairShare 0.5
            efctv[k] = 1.0
        elif p == ROOT:
            efctv[k] = usage_norm[k]
        elif a.shares is USE_PARENT:
            efctv[k] = efctv[p] if p is not None else usage_norm[k]
        elif depth_oblivious and p is not None:
            efctv[k] = _depth_oblivious(aset, a, p, usage_norm, norm_shares, efctv)
        elif not level[k] or p is None:
            efctv[k] = efctv[p] if p is not None else usage_norm[k]
        else:
            ua = usage_norm[k]
            efctv[k] = ua + (efctv[p] - ua) * (a.shares / level[k])
        rows[k] = ShareRow(
            account=a.account,
            user=a.user,
            parent=_parent_name(aset, k),
            depth=depth,
            raw_shares=None if k == ROOT else a.shares,
            norm_shares=norm_shares[k],
            raw_usage=raw,
            norm_usage=None if k == ROOT or is_root_user(aset, k) else usage_norm[k],
            effective_usage=efctv[k],
            fairshare=calc_fs_factor(efctv[k], norm_shares[k], damp_factor),
            level_fs=None,
        )
    return rows


def _depth_oblivious(
    aset: AssociationSet,
    a: Association,
    parent: AssocKey,
    usage_norm: Mapping[AssocKey, float],
    norm_shares: Mapping[AssocKey, float],
    efctv: Mapping[AssocKey, float],
) -> float:
    """``_depth_oblivious_set_usage_efctv``: ``R = ratio_p * ratio_l**k``, ``U_E = R * S``."""
    k_ = a.key
    s, ps, pe, un = norm_shares[k_], norm_shares[parent], efctv[parent], usage_norm[k_]
    if not (s and ps and pe and un):
        return un
    ratio_p = pe / ps
    ratio_s = sum(
        usage_norm.get(sib.key, 0.0)
        for sib in fs_children(aset, parent)
        if sib.shares is not USE_PARENT
    )
    ratio_s /= ps
    ratio_l = (un / s) / ratio_s
    f = 5.0
    if not ratio_p or not ratio_l or math.log(ratio_p) * math.log(ratio_l) >= 0:
        k = 1.0
    else:
        k = 1.0 / (1.0 + (f * math.log(ratio_p)) ** 2)
    return float(ratio_p * ratio_l**k * s)


# ------------------------------------------------------------------ Fair Tree


@dataclass(frozen=True, slots=True)
class _Tree:
    """What Fair Tree reads of the association tree, derived once per (frozen)
    ``AssociationSet`` by the helpers above: slurmctld's assoc_mgr keeps these links
    (``fs_assoc_ptr``, ``usage->children_list``, ``level_shares``) with the
    associations and recomputes only the usage on each decay pass."""

    level: dict[AssocKey, int]  # _level_shares
    fs_parent: dict[AssocKey, AssocKey | None]  # fs_parent of every association
    fs_children: dict[AssocKey, tuple[Association, ...]]  # fs_children of every one
    order: tuple[tuple[Association, int], ...]  # sshare_order
    parent_name: dict[AssocKey, str | None]  # _parent_name
    root_users: frozenset[AssocKey]  # is_root_user
    user_count: int


#: ``_tree`` per association set (by identity; the set is kept, so its id stays its own).
_TREES: dict[int, tuple[AssociationSet, _Tree]] = {}


def _tree(aset: AssociationSet) -> _Tree:
    """The `_Tree` of ``aset`` (built on first use)."""
    hit = _TREES.get(id(aset))
    if hit is not None and hit[0] is aset:
        return hit[1]
    keys = [a.key for a in aset.associations]
    tree = _Tree(
        level=_level_shares(aset),
        fs_parent={k: fs_parent(aset, k) for k in keys},
        fs_children={k: tuple(fs_children(aset, k)) for k in [ROOT, *keys]},
        order=tuple(sshare_order(aset)),
        parent_name={k: _parent_name(aset, k) for k in keys},
        root_users=frozenset(k for k in keys if is_root_user(aset, k)),
        user_count=aset.user_count(),
    )
    if len(_TREES) >= 16:
        _TREES.clear()
    _TREES[id(aset)] = (aset, tree)
    return tree


def fair_tree_shares(
    aset: AssociationSet, raw_usage: Mapping[AssocKey, float]
) -> dict[AssocKey, ShareRow]:
    """Fair Tree for every association (the 22.05 default)."""
    tree = _tree(aset)
    level = tree.level
    root_raw = raw_usage.get(ROOT, 0.0)
    s_norm: dict[AssocKey, float] = {}
    u_eff: dict[AssocKey, float] = {}
    lfs: dict[AssocKey, float | None] = {}
    for a in aset.associations:
        k = a.key
        if k == ROOT:  # measured: NormShares 0, EffectvUsage 0, no LevelFS
            s_norm[k], u_eff[k], lfs[k] = 0.0, 0.0, None
            continue
        if k in tree.root_users:
            s_norm[k], u_eff[k], lfs[k] = 0.0, 1.0, None
            continue
        p = tree.fs_parent[k]
        fs_k = p if a.shares is USE_PARENT and p is not None else k
        fs_a = aset.get(fs_k)
        shares = fs_a.shares if fs_a is not None and fs_a.shares is not USE_PARENT else 0
        s_norm[k] = shares / level[fs_k] if level.get(fs_k) else 0.0
        praw = raw_usage.get(p, 0.0) if p is not None else 0.0
        u_eff[k] = raw_usage.get(k, 0.0) / praw if praw else 0.0
        if a.shares is USE_PARENT:
            lfs[k] = math.inf if a.is_user else None
        elif s_norm[k] == 0.0:
            lfs[k] = 0.0
        else:
            lfs[k] = s_norm[k] / u_eff[k] if u_eff[k] else math.inf

    factor = _rank_users(aset, lfs)
    rows: dict[AssocKey, ShareRow] = {}
    for a, depth in tree.order:
        k = a.key
        raw = raw_usage.get(k, 0.0)
        rows[k] = ShareRow(
            account=a.account,
            user=a.user,
            parent=tree.parent_name[k],
            depth=depth,
            raw_shares=None if k == ROOT else a.shares,
            norm_shares=s_norm[k],
            raw_usage=raw,
            norm_usage=None if k == ROOT or k in tree.root_users else _usage_norm(raw, root_raw),
            effective_usage=u_eff[k],
            fairshare=factor.get(k, 0.0) if a.is_user else None,
            level_fs=lfs[k],
        )
    return rows


def _sort_level(siblings: list[Association], lfs: Mapping[AssocKey, float | None]) -> None:
    """``_cmp_level_fs``: higher LevelFS first; on ties users before accounts.

    A ``parent`` account (LevelFS ``NO_VAL`` in Slurm) sorts first.
    """

    def key(a: Association) -> tuple[float, int]:
        v = lfs[a.key]
        return (-(math.inf if v is None else v), 0 if a.is_user else 1)

    siblings.sort(key=key)


def _rank_users(
    aset: AssociationSet, lfs: Mapping[AssocKey, float | None]
) -> dict[AssocKey, float]:
    """``_apply_priority_fs`` / ``_calc_tree_fs``: FairShare = rank / user count."""
    tree = _tree(aset)
    count = tree.user_count
    out: dict[AssocKey, float] = {}
    if count == 0:
        return out
    state = {"rank": count, "rnt": count}

    def calc(siblings: list[Association], account_tied: bool) -> None:
        _sort_level(siblings, lfs)
        prev: float | None = None
        i = 0
        while i < len(siblings):
            a = siblings[i]
            # _calc_tree_fs: the first child inherits the parent account's tie
            tied = account_tied if i == 0 else (prev == lfs[a.key])
            if a.is_user:
                if not tied:
                    state["rank"] = state["rnt"]
                out[a.key] = state["rank"] / count
                state["rnt"] -= 1
                prev = lfs[a.key]
                i += 1
                continue
            # merge sibling accounts tied with this one (documented tie rule 3)
            j = i
            while (
                j + 1 < len(siblings)
                and not siblings[j + 1].is_user
                and lfs[siblings[j + 1].key] == lfs[a.key]
            ):
                j += 1
            merged: list[Association] = []
            for acct in siblings[i : j + 1]:
                merged.extend(tree.fs_children[acct.key])
            calc(merged, tied)
            prev = lfs[a.key]
            i = j + 1

    calc(list(tree.fs_children[ROOT]), False)
    return out


def compute_shares(
    aset: AssociationSet,
    raw_usage: Mapping[AssocKey, float],
    *,
    fair_tree: bool = True,
    damp_factor: float = 1.0,
    depth_oblivious: bool = False,
) -> dict[AssocKey, ShareRow]:
    """Fair Tree or classic, as ``PriorityFlags`` selects."""
    if fair_tree and not depth_oblivious:
        return fair_tree_shares(aset, raw_usage)
    return classic_shares(aset, raw_usage, damp_factor=damp_factor, depth_oblivious=depth_oblivious)


def job_fairshare(
    rows: Mapping[AssocKey, ShareRow], aset: AssociationSet, user: str, account: str
) -> float:
    """The fair-share factor of a job of ``user`` in ``account`` (0 without an association).

    Classic uses the ``fs_assoc_ptr`` of a ``FairShare=parent`` user, whose row already
    carries the parent's values.
    """
    row = rows.get((account, user))
    if row is None or row.fairshare is None:
        return 0.0
    return row.fairshare


__all__ = [
    "ShareRow",
    "calc_fs_factor",
    "classic_shares",
    "compute_shares",
    "fair_tree_shares",
    "fs_children",
    "fs_parent",
    "is_root_user",
    "job_fairshare",
    "sshare_order",
]
