"""Associations and QOS: what ``sacctmgr show assoc`` and ``sacctmgr show qos`` hold.

Slurm keeps, in slurmdbd, a tree of *associations* per cluster: ``root`` at the top,
accounts below it (``sacctmgr add account ml Parent=root Fairshare=60``) and users
attached to accounts (``sacctmgr add user alice Account=ml Fairshare=1``).  Every
association has ``Shares`` (sacctmgr's ``Fairshare=``, the word ``parent`` meaning
*use my parent's*: Slurm's ``SLURMDB_FS_USE_PARENT``), an optional ``Priority``
(the association factor of priority/multifactor) and the QOS it may use.  QOS records
carry ``Priority``, ``UsageFactor``, limits (``MaxTRESPerUser``, ``MaxTRESPerJob``,
``MaxWall``, ``GrpTRES``, ``MaxJobsPerUser``, ``MaxSubmitJobsPerUser``) and preemption
(``Preempt``, ``PreemptMode``).

minislurm reads them from a small YAML file (the embedded default is
``minislurm/etc/associations.yaml``) with sacctmgr's spellings as keys::

    cluster: mini
    qos:
      - {Name: normal, Priority: 0}
      - {Name: scavenger, Priority: 0, UsageFactor: 0.0, PreemptMode: requeue}
    accounts:                       # sacctmgr add account NAME Parent=... Fairshare=...
      - {Name: ml, Parent: root, Fairshare: 60}
    users:                          # sacctmgr add user NAME Account=... Fairshare=...
      - {Name: alice, Account: ml, Fairshare: 1, QOS: "normal,scavenger", DefaultQOS: normal}

``root`` (and the user association ``root``/``root``, as ``sacctmgr add cluster``
creates them) always exist; the QOS ``normal`` always exists too.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from minislurm.common.timespec import parse_time_limit
from minislurm.errors import ConfigError

#: Where the embedded cluster's associations live.
DEFAULT_ASSOCIATIONS = Path(__file__).parent.parent / "etc" / "associations.yaml"

#: sacctmgr's ``Fairshare=parent`` (Slurm's ``SLURMDB_FS_USE_PARENT``) is stored as None.
USE_PARENT = None

#: PreemptMode values sacctmgr accepts for a QOS (``preempt_mode_num``).
PREEMPT_MODES = ("cluster", "off", "cancel", "requeue", "suspend", "gang")

#: Memory suffixes of TRES strings (``mem=10G``), converted to MB.
_MEM_UNITS = {"": 1, "M": 1, "G": 1024, "T": 1024 * 1024}


@dataclass(frozen=True, slots=True)
class QOS:
    """One QOS as ``sacctmgr show qos`` lists it.

    ``max_wall`` is in minutes (``None`` = no limit); TRES limits map TRES names
    (``cpu``, ``mem`` in MB, ``node``, ``gres/gpu``) to counts.
    """

    name: str
    priority: int = 0
    usage_factor: float = 1.0
    max_tres_per_user: Mapping[str, int] = field(default_factory=dict)
    max_tres_per_job: Mapping[str, int] = field(default_factory=dict)
    grp_tres: Mapping[str, int] = field(default_factory=dict)
    max_wall: int | None = None
    max_jobs_per_user: int | None = None
    max_submit_jobs_per_user: int | None = None
    preempt: tuple[str, ...] = ()
    preempt_mode: str = "cluster"
    flags: tuple[str, ...] = ()
    description: str = ""


@dataclass(frozen=True, slots=True)
class Association:
    """One association: an account (``user is None``) or a user in an account.

    ``parent`` is the parent *account* of an account association; for a user
    association it is the account itself (the user hangs below it).  ``shares`` is
    sacctmgr's ``Fairshare`` (``None`` = ``parent``).
    """

    account: str
    user: str | None = None
    parent: str | None = None
    shares: int | None = 1
    priority: int | None = None
    qos: tuple[str, ...] = ("normal",)
    default_qos: str | None = None
    grp_tres: Mapping[str, int] = field(default_factory=dict)
    max_tres_per_job: Mapping[str, int] = field(default_factory=dict)
    max_jobs: int | None = None
    max_submit_jobs: int | None = None
    description: str = ""

    @property
    def key(self) -> AssocKey:
        """``(account, user)``; ``user`` is None for an account association."""
        return (self.account, self.user)

    @property
    def is_user(self) -> bool:
        """True for a user association."""
        return self.user is not None


#: An association's identity: (account, user or None).
AssocKey = tuple[str, str | None]

ROOT: AssocKey = ("root", None)


@dataclass(frozen=True, slots=True)
class AssociationSet:
    """The associations of one cluster plus the QOS table (what slurmctld's assoc_mgr caches)."""

    cluster: str
    associations: tuple[Association, ...]
    qos: tuple[QOS, ...]
    _by_key: dict[AssocKey, Association] = field(
        init=False, repr=False, compare=False, hash=False, default_factory=dict
    )
    _qos_by_name: dict[str, QOS] = field(
        init=False, repr=False, compare=False, hash=False, default_factory=dict
    )
    _cache: dict[str, int] = field(
        init=False, repr=False, compare=False, hash=False, default_factory=dict
    )

    def __post_init__(self) -> None:
        self._by_key.update((a.key, a) for a in self.associations)
        self._qos_by_name.update((q.name, q) for q in self.qos)

    def get(self, key: AssocKey) -> Association | None:
        """The association with this key, or None."""
        return self._by_key.get(key)

    def user_association(self, user: str, account: str) -> Association | None:
        """The association of ``user`` in ``account`` (what a job's ``-A``/user select)."""
        return self.get((account, user))

    def qos_allowed(self, user: str, account: str, qos: str) -> bool:
        """May ``user`` run jobs under ``account`` in ``qos`` (the association's QOS
        list, ``assoc_mgr``'s ``valid_qos``)?  False for a QOS that does not exist or
        a user with no association in ``account``."""
        assoc = self.user_association(user, account)
        return assoc is not None and qos in assoc.qos and self.qos_named(qos) is not None

    def qos_named(self, name: str) -> QOS | None:
        """The QOS called ``name``, or None."""
        return self._qos_by_name.get(name)

    def parent_key(self, key: AssocKey) -> AssocKey | None:
        """The key of the parent association in the tree (None for root)."""
        account, user = key
        if user is not None:
            return (account, None)
        assoc = self.get(key)
        if assoc is None or assoc.parent is None:
            return None
        return (assoc.parent, None)

    def children(self, key: AssocKey) -> list[Association]:
        """Children of an account, as Slurm sorts them: users first, then accounts, by name."""
        account, user = key
        if user is not None:
            return []
        kids = [
            a
            for a in self.associations
            if (a.user is not None and a.account == account and key != a.key)
            or (a.user is None and a.parent == account)
        ]
        return sorted(kids, key=lambda a: (not a.is_user, a.user or a.account))

    def hierarchy(self) -> list[tuple[Association, int]]:
        """Pre-order walk of the tree from root, with depths (root = 0)."""
        out: list[tuple[Association, int]] = []
        root = self.get(ROOT)
        if root is None:
            return out

        def walk(a: Association, depth: int) -> None:
            out.append((a, depth))
            for child in self.children(a.key):
                walk(child, depth + 1)

        walk(root, 0)
        return out

    def lineage(self, key: AssocKey) -> list[AssocKey]:
        """``key`` and its ancestors up to and including root."""
        keys: list[AssocKey] = []
        cur: AssocKey | None = key
        while cur is not None:
            keys.append(cur)
            cur = self.parent_key(cur)
        return keys

    def user_count(self) -> int:
        """Number of user associations (Fair Tree's ``g_user_assoc_count``)."""
        return sum(1 for a in self.associations if a.is_user)

    def default_account(self, user: str) -> str | None:
        """The first account listed for ``user`` (sacctmgr's ``DefaultAccount``)."""
        for a in self.associations:
            if a.user == user:
                return a.account
        return None

    def max_qos_priority(self) -> int:
        """Highest QOS Priority (the QOS factor normalises to it)."""
        if "qos" not in self._cache:
            self._cache["qos"] = max((q.priority for q in self.qos), default=0)
        return self._cache["qos"]

    def assoc_priority(self, key: AssocKey) -> int:
        """An association's own ``Priority`` (0 when unset).

        Measured on 22.05.8: a user association does not inherit the Priority of its
        account for the association factor (``sacctmgr modify account set Priority=5``
        leaves the users' jobs with ASSOC 0 in sprio).
        """
        a = self.get(key)
        return a.priority if a is not None and a.priority is not None else 0

    def max_assoc_priority(self) -> int:
        """Highest association Priority (the association factor normalises to it)."""
        if "assoc" not in self._cache:
            self._cache["assoc"] = max(
                (self.assoc_priority(a.key) for a in self.associations), default=0
            )
        return self._cache["assoc"]


# --------------------------------------------------------------------------- parsing


def parse_tres(text: str | Mapping[str, Any] | None, where: str = "") -> dict[str, int]:
    """Parse a sacctmgr TRES string (``cpu=4,mem=10G,gres/gpu=8``) into counts (mem in MB)."""
    if text is None or text == "":
        return {}
    items: Iterable[tuple[str, Any]]
    if isinstance(text, Mapping):
        items = text.items()
    else:
        pairs = []
        for part in str(text).split(","):
            name, sep, value = part.partition("=")
            if not sep or not name.strip():
                raise ConfigError(f"{where}Invalid TRES specification: {text}")
            pairs.append((name.strip(), value.strip()))
        items = pairs
    out: dict[str, int] = {}
    for name, value in items:
        name = str(name).lower()
        raw = str(value).strip()
        unit = ""
        if name == "mem" and raw[-1:].upper() in _MEM_UNITS and not raw[-1:].isdigit():
            unit = raw[-1:].upper()
            raw = raw[:-1]
        try:
            count = int(raw)
        except ValueError:
            raise ConfigError(f"{where}Invalid TRES specification: {name}={value}") from None
        out[name] = count * _MEM_UNITS[unit]
    return out


def _shares(value: Any, where: str) -> int | None:
    if value is None:
        return 1
    if isinstance(value, str) and value.strip().lower() == "parent":
        return USE_PARENT
    try:
        shares = int(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{where}Invalid Fairshare value: {value}") from None
    if shares < 0:
        raise ConfigError(f"{where}Invalid Fairshare value: {value}")
    return shares


def _opt_int(row: Mapping[str, Any], key: str, where: str) -> int | None:
    value = row.get(key)
    if value is None:
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{where}Invalid {key} value: {value}") from None


def _names(value: Any) -> tuple[str, ...]:
    if value is None or value == "":
        return ()
    if isinstance(value, str):
        return tuple(v.strip() for v in value.split(",") if v.strip())
    return tuple(str(v) for v in value)


_QOS_KEYS = {
    "Name", "Priority", "UsageFactor", "MaxTRESPerUser", "MaxTRESPU", "MaxTRESPerJob",
    "MaxTRES", "GrpTRES", "MaxWall", "MaxJobsPerUser", "MaxJobsPU", "MaxSubmitJobsPerUser",
    "MaxSubmitPU", "Preempt", "PreemptMode", "Flags", "Description",
}  # fmt: skip
_ACCOUNT_KEYS = {
    "Name", "Parent", "Fairshare", "Priority", "QOS", "DefaultQOS", "GrpTRES", "MaxTRES",
    "MaxTRESPerJob", "MaxJobs", "MaxSubmitJobs", "Description",
}  # fmt: skip
_USER_KEYS = _ACCOUNT_KEYS - {"Parent", "Description"} | {"Account"}


def _check_keys(row: Any, allowed: set[str], where: str) -> Mapping[str, Any]:
    if not isinstance(row, Mapping):
        raise ConfigError(f"{where}expected a mapping, got {row!r}")
    unknown = sorted(set(row) - allowed)
    if unknown:
        raise ConfigError(f"{where}Unknown field {unknown[0]!r}")
    if "Name" not in row or not str(row["Name"]).strip():
        raise ConfigError(f"{where}missing Name")
    return row


def _parse_qos(row: Mapping[str, Any], where: str) -> QOS:
    mode = str(row.get("PreemptMode", "cluster")).lower()
    if mode not in PREEMPT_MODES:
        raise ConfigError(f"{where}Invalid PreemptMode: {row.get('PreemptMode')}")
    wall = row.get("MaxWall")
    max_wall: int | None = None
    if wall is not None:
        max_wall = wall if isinstance(wall, int) else parse_time_limit(str(wall))
        if max_wall is not None and max_wall < 0:
            raise ConfigError(f"{where}Invalid MaxWall: {wall}")
    try:
        usage_factor = float(row.get("UsageFactor", 1.0))
    except (TypeError, ValueError):
        raise ConfigError(f"{where}Invalid UsageFactor: {row.get('UsageFactor')}") from None
    return QOS(
        name=str(row["Name"]),
        priority=_opt_int(row, "Priority", where) or 0,
        usage_factor=usage_factor,
        max_tres_per_user=parse_tres(row.get("MaxTRESPerUser", row.get("MaxTRESPU")), where),
        max_tres_per_job=parse_tres(row.get("MaxTRESPerJob", row.get("MaxTRES")), where),
        grp_tres=parse_tres(row.get("GrpTRES"), where),
        max_wall=max_wall,
        max_jobs_per_user=_opt_int(row, "MaxJobsPerUser", where)
        or _opt_int(row, "MaxJobsPU", where),
        max_submit_jobs_per_user=_opt_int(row, "MaxSubmitJobsPerUser", where)
        or _opt_int(row, "MaxSubmitPU", where),
        preempt=_names(row.get("Preempt")),
        preempt_mode=mode,
        flags=_names(row.get("Flags")),
        description=str(row.get("Description", "")),
    )


def _parse_assoc(row: Mapping[str, Any], where: str, *, user: bool) -> Association:
    name = str(row["Name"])
    qos = _names(row.get("QOS")) or ("normal",)
    default_qos = row.get("DefaultQOS")
    return Association(
        account=str(row["Account"]) if user else name,
        user=name if user else None,
        parent=str(row["Account"]) if user else str(row.get("Parent", "root")),
        shares=_shares(row.get("Fairshare"), where),
        priority=_opt_int(row, "Priority", where),
        qos=qos,
        default_qos=str(default_qos) if default_qos is not None else None,
        grp_tres=parse_tres(row.get("GrpTRES"), where),
        max_tres_per_job=parse_tres(row.get("MaxTRESPerJob", row.get("MaxTRES")), where),
        max_jobs=_opt_int(row, "MaxJobs", where),
        max_submit_jobs=_opt_int(row, "MaxSubmitJobs", where),
        description=str(row.get("Description", "")),
    )


def parse_associations(text: str, filename: str = "associations.yaml") -> AssociationSet:
    """Parse the YAML text of an associations file; errors name the file and the entry."""
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" line {mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{filename}{line}: invalid YAML") from None
    if not isinstance(data, Mapping):
        raise ConfigError(f"{filename}: expected a mapping at the top level")
    unknown = sorted(set(data) - {"cluster", "qos", "accounts", "users"})
    if unknown:
        raise ConfigError(f"{filename}: Unknown section {unknown[0]!r}")

    qos_list: list[QOS] = []
    for i, row in enumerate(data.get("qos") or []):
        where = f"{filename}: qos[{i}]: "
        q = _parse_qos(_check_keys(row, _QOS_KEYS, where), where)
        if any(x.name == q.name for x in qos_list):
            raise ConfigError(f"{where}Duplicate QOS {q.name}")
        qos_list.append(q)
    if not any(q.name == "normal" for q in qos_list):
        qos_list.insert(0, QOS(name="normal"))
    qos_names = {q.name for q in qos_list}
    for q in qos_list:
        for target in q.preempt:
            if target not in qos_names:
                raise ConfigError(f"{filename}: qos {q.name}: Preempt: Invalid QOS name {target}")

    assocs: dict[AssocKey, Association] = {
        ROOT: Association(account="root", parent=None, shares=1),
        ("root", "root"): Association(account="root", user="root", parent="root", shares=1),
    }
    rows: list[tuple[str, Mapping[str, Any], bool]] = []
    for section, allowed, is_user in (
        ("accounts", _ACCOUNT_KEYS, False),
        ("users", _USER_KEYS, True),
    ):
        for i, row in enumerate(data.get(section) or []):
            where = f"{filename}: {section}[{i}]: "
            rows.append((where, _check_keys(row, allowed, where), is_user))
    for where, row, is_user in rows:
        if is_user and "Account" not in row:
            raise ConfigError(f"{where}missing Account")
        a = _parse_assoc(row, where, user=is_user)
        if not is_user and a.account == "root":
            raise ConfigError(f"{where}Account root is created with the cluster")
        if a.key in assocs and a.key != ("root", "root"):
            raise ConfigError(f"{where}Duplicate association {a.account}/{a.user or ''}")
        for name in (*a.qos, *([a.default_qos] if a.default_qos else [])):
            if name not in qos_names:
                raise ConfigError(f"{where}Invalid qos name {name}")
        assocs[a.key] = a
    for where, row, is_user in rows:
        parent = str(row["Account"]) if is_user else str(row.get("Parent", "root"))
        if (parent, None) not in assocs:
            raise ConfigError(f"{where}Parent account {parent} doesn't exist")
    _check_cycles(assocs, filename)
    return AssociationSet(
        cluster=str(data.get("cluster", "mini")),
        associations=tuple(assocs.values()),
        qos=tuple(qos_list),
    )


def _check_cycles(assocs: Mapping[AssocKey, Association], filename: str) -> None:
    for key, a in assocs.items():
        seen = {key}
        parent = a.parent if a.user is None else None
        while parent is not None:
            pkey: AssocKey = (parent, None)
            if pkey in seen:
                raise ConfigError(f"{filename}: account {a.account}: parent loop")
            seen.add(pkey)
            parent = assocs[pkey].parent


def load_associations(path: str | os.PathLike[str] | None = None) -> AssociationSet:
    """Load an associations file (default: the embedded ``etc/associations.yaml``)."""
    p = Path(path) if path is not None else DEFAULT_ASSOCIATIONS
    try:
        text = p.read_text()
    except OSError:
        raise ConfigError(f"Unable to open associations file {p}") from None
    return parse_associations(text, str(p))


def flat_associations(qos: Iterable[QOS] = (), *, cluster: str = "mini") -> AssociationSet:
    """Only root and root/root (what a fresh ``sacctmgr add cluster`` holds)."""
    qos_t = tuple(qos) or (QOS(name="normal"),)
    return AssociationSet(
        cluster=cluster,
        associations=(
            Association(account="root", parent=None, shares=1),
            Association(account="root", user="root", parent="root", shares=1),
        ),
        qos=qos_t,
    )


__all__ = [
    "DEFAULT_ASSOCIATIONS",
    "PREEMPT_MODES",
    "QOS",
    "ROOT",
    "USE_PARENT",
    "AssocKey",
    "Association",
    "AssociationSet",
    "flat_associations",
    "load_associations",
    "parse_associations",
    "parse_tres",
]
