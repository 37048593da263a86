"""How slurmctld's records go to disk: a tagged JSON encoding of minislurm's values.

Real slurmctld packs its records with ``pack32``/``packstr`` into binary buffers
behind a protocol version (``src/common/pack.c``); minislurm writes JSON that a
learner can read, with just enough tags to rebuild the same Python values:

* dataclasses (``JobRecord``, ``Allocation``, ``JobOptions``, ``ProcessBody``...) as
  ``{"__dc__": "module.Class", field: value...}``, leaving out fields that hold their
  default;
* enums (``JobState``, ``Reason``, ``NodeFlag``) as ``{"__enum__": "module.Class", "v": ...}``;
* tuples, sets, frozensets and dicts whose keys are not strings, tagged likewise.

Only classes of the ``minislurm`` package are rebuilt (a state file is data, never
code). A field the class no longer has is dropped and a new field takes its
default, so state saved by an older minislurm still loads; so does a class whose
module has moved since (`MOVED`); anything else that does not fit raises
`StateFormatError`.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
from collections.abc import Mapping
from typing import Any

__all__ = ["MOVED", "MOVED_CLASSES", "StateFormatError", "current_name", "decode", "encode"]

_PACKAGE = "minislurm."

#: Where the modules of an older minislurm went (the package layout of issue 20):
#: a state file names a class by its module, and a learner's saved cluster must load
#: after an upgrade. The longest matching old module wins.
MOVED: dict[str, str] = {
    **{f"minislurm.{m}": f"minislurm.common.{m}" for m in (
        "accounts", "billing", "filenames", "gres", "hostlist", "jobacct", "jobarray",
        "layout", "rpc", "timespec")},
    **{f"minislurm.{m}": f"minislurm.sim.{m}" for m in (
        "cluster", "metrics", "plots", "simscript", "simulate", "workload")},
    "minislurm.realtime": "minislurm.daemon.realtime",
    "minislurm.slurmctld": "minislurm.daemon.slurmctld",
    "minislurm.ctld.step_service": "minislurm.daemon.step_service",
    "minislurm.cgroup_conf": "minislurm.conf.cgroup_conf",
    "minislurm.conf_parse": "minislurm.conf.parse_config",
    "minislurm.conf_records": "minislurm.conf.records",
    "minislurm.cli.simulate": "minislurm.sim.command",
}

#: Classes that moved to another module on their own.
MOVED_CLASSES: dict[str, str] = {
    "minislurm.gres.GresConfLine": "minislurm.conf.gres_conf.GresConfLine",
    "minislurm.select.cons_tres.ResourceRequest": "minislurm.select.request.ResourceRequest",
}


def current_name(name: str) -> str:
    """``name`` (``module.Class``) as this minislurm spells it (`MOVED`, `MOVED_CLASSES`)."""
    if name in MOVED_CLASSES:
        return MOVED_CLASSES[name]
    old = max((m for m in MOVED if name.startswith(m + ".")), key=len, default=None)
    return name if old is None else MOVED[old] + name[len(old):]


class StateFormatError(ValueError):
    """A state record that cannot be rebuilt (unknown class, wrong shape)."""


def _name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def encode(value: Any) -> Any:
    """``value`` as JSON-ready data (see the module docstring)."""
    if isinstance(value, enum.Enum):
        raw = value.value if isinstance(value, enum.Flag) else value.name
        return {"__enum__": _name(type(value)), "v": raw}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {"__dc__": _name(type(value))}
        for f in dataclasses.fields(value):
            item = getattr(value, f.name)
            if f.init and _is_default(f, item):
                continue  # rebuilt from the class's default (keeps the files small)
            out[f.name] = encode(item)
        return out
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, tuple):
        return {"__tuple__": [encode(v) for v in value]}
    if isinstance(value, (set, frozenset)):
        tag = "__frozenset__" if isinstance(value, frozenset) else "__set__"
        return {tag: [encode(v) for v in sorted(value, key=repr)]}
    if isinstance(value, Mapping):
        if all(isinstance(k, str) and not k.startswith("__") for k in value):
            return {k: encode(v) for k, v in value.items()}
        return {"__map__": [[encode(k), encode(v)] for k, v in value.items()]}
    raise StateFormatError(f"cannot save a value of type {type(value).__name__}")


def _is_default(f: dataclasses.Field[Any], value: Any) -> bool:
    if f.default is not dataclasses.MISSING:
        default = f.default
    elif f.default_factory is not dataclasses.MISSING:
        default = f.default_factory()
    else:
        return False
    try:
        return type(value) is type(default) and bool(value == default)
    except Exception:  # an exotic __eq__: keep the value
        return False


def _class(name: str) -> type:
    if not isinstance(name, str) or not name.startswith(_PACKAGE):
        raise StateFormatError(f"refusing to rebuild {name!r}: not a minislurm class")
    name = current_name(name)
    module, _, qual = name.rpartition(".")
    try:
        obj: Any = importlib.import_module(module)
    except ImportError:
        # a nested class (module.Outer.Inner): walk down from the longest module found
        module, _, outer = module.rpartition(".")
        try:
            obj = getattr(importlib.import_module(module), outer)
        except (ImportError, AttributeError) as exc:
            raise StateFormatError(f"unknown class {name}") from exc
    try:
        cls = getattr(obj, qual)
    except AttributeError as exc:
        raise StateFormatError(f"unknown class {name}") from exc
    if not isinstance(cls, type):
        raise StateFormatError(f"{name} is not a class")
    return cls


def decode(data: Any) -> Any:
    """The value `encode` made ``data`` from."""
    if data is None or isinstance(data, (bool, int, float, str)):
        return data
    if isinstance(data, list):
        return [decode(v) for v in data]
    if not isinstance(data, dict):
        raise StateFormatError(f"unexpected {type(data).__name__} in a state record")
    if "__tuple__" in data:
        return tuple(decode(v) for v in data["__tuple__"])
    if "__set__" in data:
        return {decode(v) for v in data["__set__"]}
    if "__frozenset__" in data:
        return frozenset(decode(v) for v in data["__frozenset__"])
    if "__map__" in data:
        return {decode(k): decode(v) for k, v in data["__map__"]}
    if "__enum__" in data:
        cls = _class(data["__enum__"])
        if not issubclass(cls, enum.Enum):
            raise StateFormatError(f"{data['__enum__']} is not an enum")
        try:
            return cls(data["v"]) if issubclass(cls, enum.Flag) else cls[data["v"]]
        except (KeyError, ValueError) as exc:
            raise StateFormatError(f"{data['__enum__']} has no member {data['v']!r}") from exc
    if "__dc__" in data:
        return _dataclass(data)
    return {k: decode(v) for k, v in data.items()}


def _dataclass(data: dict[str, Any]) -> Any:
    cls = _class(data["__dc__"])
    if not dataclasses.is_dataclass(cls):
        raise StateFormatError(f"{data['__dc__']} is not a dataclass")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    init = {k: decode(v) for k, v in data.items() if k in fields and fields[k].init}
    try:
        obj = cls(**init)
    except TypeError as exc:
        raise StateFormatError(f"cannot rebuild {data['__dc__']}: {exc}") from exc
    for k, v in data.items():
        if k in fields and not fields[k].init:
            object.__setattr__(obj, k, decode(v))
    return obj
