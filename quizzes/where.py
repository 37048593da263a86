"""Where a bank problem is: the file, item and field a validation message names.

The lowest piece of the quiz engine's validation: banks, items, exhibits and the
authoring build all report ``file: item 'id': field 'x': problem`` through it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from quizzes.errors import BankError

__all__ = ["Where"]


@dataclass(frozen=True, slots=True)
class Where:
    """Location used in validation messages: ``file: item 'id': field 'x': problem``."""

    file: str
    item_id: str = "?"

    def error(self, fieldname: str, problem: str) -> BankError:
        return BankError(f"{self.file}: item '{self.item_id}': field '{fieldname}': {problem}")

    def require(self, raw: Mapping[str, Any], name: str, kind: type | tuple[type, ...]) -> Any:
        if name not in raw:
            raise self.error(name, "is required")
        value = raw[name]
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
            raise self.error(name, f"must be {_kind_name(kind)}, got {type(value).__name__}")
        return value

    def optional(
        self, raw: Mapping[str, Any], name: str, kind: type | tuple[type, ...], default: Any
    ) -> Any:
        if name not in raw or raw[name] is None:
            return default
        return self.require(raw, name, kind)


def _kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {str: "a string", int: "an integer", float: "a number", list: "a list",
             dict: "a mapping", bool: "true or false"}
    return " or ".join(names.get(k, k.__name__) for k in kinds)

