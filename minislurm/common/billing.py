"""The billing TRES: partition ``TRESBillingWeights`` and ``PriorityFlags=MAX_TRES``.

slurm.conf(5) ``PartitionName=... TRESBillingWeights=CPU=1.0,Mem=0.25G,GRES/gpu=2.0``
gives a job in that partition a *billing* value: the weighted sum of its TRES
(``assoc_mgr_tres_weighted``, src/common/assoc_mgr.c), or with
``PriorityFlags=MAX_TRES`` the largest weighted *node* TRES (``cpu``, ``mem``,
``node``, ``gres/*``) plus the sum of the other ones. Without weights the billing
is the job's CPU count. slurmctld keeps the value as a double
(``calc_job_billable_tres``, job_mgr.c) and charges fair-share usage with it
(``_apply_new_usage``: usage_raw += billable_tres x seconds); ``scontrol show job``
(``TRES=...,billing=N``) and sacct's ``AllocTRES``/``ReqTRES`` show it truncated to
an integer (``tres_alloc_cnt[TRES_ARRAY_BILLING]`` is a ``uint64_t``).

Parsing follows ``_tres_weight_item`` (slurm_protocol_api.c): items ``TYPE=VALUE`` or
``TYPE/NAME=VALUE`` separated by commas, names matched without case against the
configured TRES (``AccountingStorageTRES`` adds ``gres/gpu``...), and a unit suffix
on the value divides it by the unit over the TRES's base unit (``Mem=0.25G``: mem
counts MB, so 0.25 per GB = 0.25/1024 per MB; ``K``/``M`` leave a mem weight as is).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

__all__ = [
    "BillingError",
    "TresWeights",
    "billable_tres",
    "parse_tres_weights",
]

#: ``get_unit_type``: the position of a unit suffix in ``"\0KMGTP"``.
_UNITS = "KMGTP"
#: ``slurmdb_get_tres_base_unit``: mem and bb count MB (UNIT_MEGA), the rest units.
_BASE_UNIT = {"mem": 2, "bb": 2}
#: TRES that ``MAX_TRES`` treats as node TRES (the largest one counts).
_NODE_TRES = ("cpu", "mem", "node")


class BillingError(ValueError):
    """A ``TRESBillingWeights`` string slurmctld refuses: ``lines`` are its ``error:``
    messages (without the prefix); ``fatal`` is the ``fatal:`` line read_config ends on."""

    def __init__(self, lines: list[str], text: str) -> None:
        self.lines = lines
        self.fatal = f"fatal: failed to parse tres weights str '{text}'"
        super().__init__("\n".join([*lines, self.fatal]))


@dataclass(frozen=True, slots=True)
class TresWeights:
    """A partition's parsed ``TRESBillingWeights``: TRES name (``cpu``, ``mem``,
    ``gres/gpu``: lower case, as minislurm keys TRES) -> weight per counted unit
    (per MB for mem), ``text`` as written (``scontrol show partition`` prints it),
    and ``max_tres`` (``PriorityFlags=MAX_TRES``)."""

    weights: tuple[tuple[str, float], ...]
    text: str
    max_tres: bool = False

    def weight(self, tres: str) -> float:
        """The weight of ``tres`` (0 when the string does not name it)."""
        return next((w for name, w in self.weights if name == tres), 0.0)


def _unit_divisor(tres: str, unit: str) -> int | None:
    """``get_convert_unit_val(base_unit, unit)``: 1024 per unit step above the TRES's
    base unit, 0 (no conversion) at or below it, None for an unknown suffix."""
    if unit.upper() not in _UNITS:
        return None
    target = _UNITS.index(unit.upper()) + 1
    base = _BASE_UNIT.get(tres.split("/")[0], 0)
    steps = target - base
    return 1024**steps if steps > 0 else 0


def _strtod(text: str) -> tuple[float, str]:
    """C ``strtod``: the longest leading float and the rest (0.0 and all of ``text``
    when nothing parses)."""
    for end in range(len(text), 0, -1):
        head = text[:end]
        if head.strip() != head or head.lower() in ("inf", "nan", "infinity"):
            continue
        try:
            return float(head), text[end:]
        except ValueError:
            continue
    return 0.0, text


def parse_tres_weights(
    text: str, configured: Iterable[str], *, max_tres: bool = False
) -> TresWeights | None:
    """Parse ``TRESBillingWeights`` (``slurm_get_tres_weight_array``); ``configured``
    are the cluster's TRES (``cpu``, ``mem``, ..., plus ``AccountingStorageTRES``).
    An empty string means no weights (None). Raises :class:`BillingError` with
    slurmctld's words."""
    if not text or not text.strip():
        return None
    known = {t.lower() for t in configured}
    weights: dict[str, float] = {}
    for item in (i for i in text.split(",") if i):
        kind, sep, value = item.lstrip("=").partition("=")  # strtok_r skips leading '='
        if not kind:
            raise BillingError([f'"{item}" is an invalid TRES weight entry'], text)
        type_, slash, name = kind.partition("/")
        if not sep or not value:  # strtok_r cut the buffer at '/': only TYPE is left
            raise BillingError([f'"{type_}" is an invalid TRES weight entry'], text)
        tres = f"{type_}/{name}".lower() if slash else type_.lower()
        if tres not in known:
            shown = f"{type_}:{name}" if slash else type_
            raise BillingError([f"TRES weight '{shown}' is not a configured TRES type."], text)
        weight, unit = _strtod(value)
        if unit:
            divisor = _unit_divisor(tres, unit[0])
            if divisor is None:
                raise BillingError(
                    [f"Invalid unit type '{unit[0]}'. Possible options are '{_UNITS}'"], text)
            if divisor > 0:
                weight /= divisor
        weights[tres] = weight
    return TresWeights(tuple(weights.items()), text, max_tres)


def billable_tres(tres: Mapping[str, float], weights: TresWeights | None) -> float:
    """``assoc_mgr_tres_weighted``: the billing value of TRES counts ``tres``
    (``cpu``, ``mem`` in MB, ``node``, ``gres/gpu``...; ``billing`` itself is skipped).

    No weights: the CPU count. ``SUM(TRES)`` by default; with ``MAX_TRES``,
    ``MAX(node TRES) + SUM(global TRES)``, node TRES being cpu, mem, node and gres/*.
    """
    if weights is None:
        return float(tres.get("cpu", 0))
    node = 0.0
    total = 0.0
    for name, count in tres.items():
        if name == "billing":
            continue
        value = float(count) * weights.weight(name)
        if weights.max_tres and (name in _NODE_TRES or name.startswith("gres/")):
            node = max(node, value)
        else:
            total += value
    return node + total
