"""Question banks: one YAML file per course module under ``quizzes/banks/``.

A bank is learner-facing: it holds prompts, explanations, objective tags and
*salted hashes* of the answers (see :mod:`quizzes.hashing`), never the answers
themselves.  :func:`load_bank` validates it and reports the first problem as
``<file>: item '<id>': field '<name>': <problem>``.  The bank version is a
content hash (sha256 of the canonical JSON of the parsed file, 16 hex digits),
so a submission made against an edited bank is recognised as outdated.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

import yaml

from quizzes.errors import BankError
from quizzes.hashing import canonical_json, unseal
from quizzes.items.base import Common, Outcome, Presented
from quizzes.policy import Policy, parse_policy
from quizzes.variants import MAX_VARIANTS, count, variant_keys
from quizzes.where import Where

BANKS_DIR = Path(__file__).parent / "banks"
SCHEMA = 1
ITEM_TYPES = ("single", "multiple", "numeric", "text", "sbatch", "scheduler", "lab")
_COMMON_FIELDS = {"id", "type", "prompt", "explanation", "objectives", "points", "params"}


class Item(Protocol):
    """What the grader and the widget need from any item type."""

    @property
    def common(self) -> Common: ...

    def present(self, params: Mapping[str, Any], seed: int = 0) -> Presented: ...

    def grade(
        self, response: Any, params: Mapping[str, Any], salt: str, variant: str
    ) -> Outcome: ...


@dataclass(frozen=True, slots=True)
class Bank:
    """One validated quiz."""

    quiz_id: str
    title: str
    course: str
    module: str
    pass_mark: float
    policy: Policy
    salt: str
    objectives: tuple[tuple[str, str], ...]
    items: tuple[Item, ...]
    version: str
    path: str

    def item(self, item_id: str) -> Item:
        for it in self.items:
            if it.common.id == item_id:
                return it
        raise KeyError(item_id)

    @property
    def max_points(self) -> float:
        return sum(it.common.points for it in self.items)


def bank_version(data: Any) -> str:
    """Content hash of a parsed bank."""
    return hashlib.sha256(canonical_json(data).encode("utf-8")).hexdigest()[:16]


def read_yaml(path: Path) -> Any:
    """Parse a YAML file, turning I/O and syntax errors into BankError."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise BankError(f"{path}: cannot read: {exc.strerror}") from exc
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise BankError(f"{path}: not valid YAML{where}: {getattr(exc, 'problem', exc)}") from exc


def load_bank(path: str | Path) -> Bank:
    """Load and validate one bank file."""
    p = Path(path)
    return parse_bank(read_yaml(p), p.name, str(p))


def parse_bank(data: Any, file: str, path: str = "") -> Bank:
    """Validate parsed bank data (``file`` is used in messages)."""
    if not isinstance(data, dict):
        raise BankError(f"{file}: quiz: must be a mapping at top level")
    top = Where(file, "?")

    def req(name: str, kind: type | tuple[type, ...]) -> Any:
        try:
            return top.require(data, name, kind)
        except BankError as exc:
            raise BankError(exc.message.replace("item '?'", "quiz")) from None

    if data.get("schema") != SCHEMA:
        raise BankError(f"{file}: quiz: field 'schema': must be {SCHEMA}")
    quiz_id = req("quiz_id", str)
    pass_mark = req("pass_mark", (int, float))
    if not 0 < pass_mark <= 1:
        raise BankError(f"{file}: quiz: field 'pass_mark': must be a fraction in (0, 1]")
    salt = req("salt", str)
    objectives = req("objectives", dict)
    raw_items = req("items", list)
    if not raw_items:
        raise BankError(f"{file}: quiz: field 'items': must not be empty")
    items: list[Item] = []
    seen: set[str] = set()
    for index, raw in enumerate(raw_items):
        item = parse_item(raw, Where(file, _item_name(raw, index)), objectives, salt)
        if item.common.id in seen:
            raise BankError(f"{file}: item '{item.common.id}': field 'id': duplicate item id")
        seen.add(item.common.id)
        items.append(item)
    return Bank(
        quiz_id=quiz_id, title=req("title", str), course=req("course", str),
        module=str(data.get("module", quiz_id)), pass_mark=float(pass_mark),
        policy=parse_policy(data.get("policy"), file), salt=salt,
        objectives=tuple((str(k), str(v)) for k, v in objectives.items()),
        items=tuple(items), version=bank_version(data), path=path)


def _item_name(raw: Any, index: int) -> str:
    if isinstance(raw, dict) and isinstance(raw.get("id"), str):
        return str(raw["id"])
    return f"#{index + 1}"


def parse_common(raw: Mapping[str, Any], where: Where, objectives: Mapping[str, Any],
                 salt: str = "") -> Common:
    """The fields shared by all item types."""
    item_id = where.require(raw, "id", str)
    kind = where.require(raw, "type", str)
    if kind not in ITEM_TYPES:
        raise where.error("type", f"unknown item type '{kind}' (one of {', '.join(ITEM_TYPES)})")
    tags = where.require(raw, "objectives", list)
    if not tags:
        raise where.error("objectives", "must tag at least one lesson objective")
    for tag in tags:
        if str(tag) not in {str(k) for k in objectives}:
            raise where.error("objectives", f"'{tag}' is not an objective of this bank")
    points = where.optional(raw, "points", (int, float), 1)
    if points <= 0:
        raise where.error("points", "must be positive")
    params_raw = where.optional(raw, "params", dict, {})
    params = []
    for name, values in params_raw.items():
        if not isinstance(values, list) or not values:
            raise where.error(f"params.{name}", "must be a non-empty list of values")
        params.append((str(name), tuple(values)))
    if count(params) > MAX_VARIANTS:
        raise where.error("params", f"more than {MAX_VARIANTS} combinations")
    try:
        explanation = unseal(salt, item_id, where.require(raw, "explanation", str))
    except ValueError as exc:
        raise where.error("explanation", str(exc)) from None
    return Common(item_id, kind, where.require(raw, "prompt", str), explanation,
                  tuple(str(t) for t in tags), float(points), tuple(params))


def parse_item(raw: Any, where: Where, objectives: Mapping[str, Any], salt: str = "") -> Item:
    """Dispatch to the item type's ``from_bank``."""
    if not isinstance(raw, dict):
        raise BankError(f"{where.file}: item '{where.item_id}': must be a mapping")
    common = parse_common(raw, where, objectives, salt)
    cls = item_class(common.type)
    rest = {k: v for k, v in raw.items() if k not in _COMMON_FIELDS}
    variants = variant_keys(common.params)
    item: Item = cls.from_bank(common, rest, where, variants)
    return item


def item_class(kind: str) -> Any:
    """The class implementing an item type (imported lazily)."""
    if kind in ("single", "multiple"):
        from quizzes.items.choice import ChoiceItem
        return ChoiceItem
    if kind == "numeric":
        from quizzes.items.numeric import NumericItem
        return NumericItem
    if kind == "text":
        from quizzes.items.text import TextItem
        return TextItem
    if kind == "sbatch":
        from quizzes.items.sbatch import SbatchItem
        return SbatchItem
    if kind == "lab":
        from quizzes.items.lab import LabItem
        return LabItem
    from quizzes.items.scheduler import SchedulerItem
    return SchedulerItem


@lru_cache(maxsize=8)
def load_banks(folder: str | None = None) -> Mapping[str, Bank]:
    """Every bank of a folder (default ``quizzes/banks``), by quiz id."""
    base = Path(folder) if folder else BANKS_DIR
    banks: dict[str, Bank] = {}
    for path in sorted(base.glob("*.yaml")):
        bank = load_bank(path)
        if bank.quiz_id in banks:
            raise BankError(f"{path.name}: quiz: field 'quiz_id': '{bank.quiz_id}' is also "
                            f"the id of {Path(banks[bank.quiz_id].path).name}")
        banks[bank.quiz_id] = bank
    if not banks:
        raise BankError(f"{base}: no question banks (*.yaml) found")
    return banks
