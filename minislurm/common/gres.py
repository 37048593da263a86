"""Generic resources (GRES): ``--gres`` and ``Gres=`` on a NodeName line.

Mirrors Slurm 22.05's ``src/common/gres.c`` for the parts a GPU cluster uses:

* :func:`parse_gres_request` reads ``sbatch/srun --gres=name[[:type]:count][,...]``
  (``gpu``, ``gpu:2``, ``gpu:a100:2``, ``gpu:a100``); a missing count means 1, a
  count may carry a ``k/m/g/t/p`` multiplier (powers of 1024) like Slurm's.
  Anything else raises :class:`GresError` with sbatch's text
  ``Invalid generic resource (gres) specification`` (the caller adds the
  ``sbatch: error:`` prefix).
* :func:`parse_node_gres` reads ``Gres=gpu:a100:4,gpu:v100:2`` on a NodeName line.
* :func:`parse_count` reads one count (``2``, ``4k``: a multiplier is a power of 1024).

gres.conf itself is read by :mod:`minislurm.conf.gres_conf`, beside slurm.conf.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from minislurm.errors import Errno, GresError

__all__ = [
    "INVALID_GRES",
    "GresRequest",
    "NodeGres",
    "parse_count",
    "parse_gres_request",
    "parse_node_gres",
]

INVALID_GRES = Errno.ESLURM_INVALID_GRES

_COUNT_RE = re.compile(r"^(\d+)([kKmMgGtTpP]?)$")
_MULTIPLIER = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4, "p": 1024**5}
_NAME_RE = re.compile(r"^[A-Za-z0-9_.\-]+$")


@dataclass(frozen=True, slots=True)
class GresRequest:
    """One item of ``--gres`` (``gpu:a100:2`` -> name ``gpu``, type ``a100``, count 2)."""

    name: str
    type: str | None
    count: int

    def __str__(self) -> str:
        """The TRES form Slurm prints (``gres/gpu:a100:2`` without the ``gres/``)."""
        middle = f":{self.type}" if self.type else ""
        return f"{self.name}{middle}:{self.count}"


@dataclass(frozen=True, slots=True)
class NodeGres:
    """GRES configured on a node (slurm.conf ``Gres=``, completed by gres.conf).

    ``files`` are the device files from gres.conf ``File=`` (empty when gres.conf
    does not list any); ``indices`` are the GRES indices Slurm gives those devices
    on the node (0-based, counted over every type of the same name in config order),
    used for ``CUDA_VISIBLE_DEVICES``.
    """

    name: str
    type: str | None
    count: int
    files: tuple[str, ...] = ()
    indices: tuple[int, ...] = ()

    @property
    def device_numbers(self) -> tuple[int, ...]:
        """Minor numbers of ``files`` (``/dev/nvidia3`` -> 3), Slurm's ``dev_num``."""
        numbers: list[int] = []
        for path in self.files:
            match = re.search(r"(\d+)$", path)
            numbers.append(int(match.group(1)) if match else -1)
        return tuple(numbers)

    def __str__(self) -> str:
        """``gpu:a100:4`` as ``scontrol show node`` prints it in ``Gres=``."""
        middle = f":{self.type}" if self.type else ""
        return f"{self.name}{middle}:{self.count}"


def parse_count(text: str) -> int | None:
    """A GRES count: digits plus an optional k/m/g/t/p multiplier, else ``None``."""
    match = _COUNT_RE.match(text)
    if not match:
        return None
    return int(match.group(1)) * _MULTIPLIER[match.group(2).lower()]


def _split_item(item: str) -> tuple[str, str | None, int]:
    """``name[[:type]:count]`` -> (name, type, count); raises ValueError if malformed."""
    if item.startswith("gres/"):
        item = item[len("gres/") :]
    parts = item.split(":")
    if len(parts) > 3 or any(not part for part in parts) or not _NAME_RE.match(parts[0]):
        raise ValueError(item)
    name, gres_type, count = parts[0], None, 1
    if len(parts) == 2:
        number = parse_count(parts[1])
        if number is None:
            gres_type = parts[1]
        else:
            count = number
    elif len(parts) == 3:
        number = parse_count(parts[2])
        if number is None:
            raise ValueError(item)
        gres_type, count = parts[1], number
    if gres_type is not None and not _NAME_RE.match(gres_type):
        raise ValueError(item)
    return name, gres_type, count


def parse_gres_request(spec: str) -> tuple[GresRequest, ...]:
    """Parse ``--gres`` (``gpu:a100:2,mps:50``); ``none`` clears the request.

    >>> parse_gres_request("gpu:a100:2")
    (GresRequest(name='gpu', type='a100', count=2),)
    """
    if spec.lower() == "none":
        return ()
    try:
        return tuple(GresRequest(*_split_item(item)) for item in spec.split(","))
    except ValueError:
        raise GresError(INVALID_GRES) from None


def parse_node_gres(spec: str) -> tuple[NodeGres, ...]:
    """Parse slurm.conf ``NodeName=... Gres=gpu:a100:4,gpu:v100:2`` (count defaults to 1)."""
    if spec == "" or spec.lower() == "(null)":
        return ()
    try:
        return tuple(NodeGres(*_split_item(item)) for item in spec.split(","))
    except ValueError:
        raise GresError(INVALID_GRES) from None
