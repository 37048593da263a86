"""Generic resources (GRES): ``--gres``, ``Gres=`` on a NodeName line, ``gres.conf``.

Mirrors Slurm 22.05's ``src/common/gres.c`` for the parts a GPU cluster uses:

* :func:`parse_gres_request` reads ``sbatch/srun --gres=name[[:type]:count][,...]``
  (``gpu``, ``gpu:2``, ``gpu:a100:2``, ``gpu:a100``); a missing count means 1, a
  count may carry a ``k/m/g/t/p`` multiplier (powers of 1024) like Slurm's.
  Anything else raises :class:`GresError` with sbatch's text
  ``Invalid generic resource (gres) specification`` (the caller adds the
  ``sbatch: error:`` prefix).
* :func:`parse_node_gres` reads ``Gres=gpu:a100:4,gpu:v100:2`` on a NodeName line.
* :func:`parse_gres_conf` reads gres.conf lines (``NodeName=n[1-4] Name=gpu
  Type=a100 File=/dev/nvidia[0-3]``); ``File`` takes hostlist-style ranges.
  :mod:`minislurm.config` merges those lines into each node, so a node knows
  its device files and the index of every GPU.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from minislurm import hostlist
from minislurm.errors import Errno, GresError, HostlistError

__all__ = [
    "INVALID_GRES",
    "GresConfLine",
    "GresRequest",
    "NodeGres",
    "parse_gres_conf",
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


@dataclass(frozen=True, slots=True)
class GresConfLine:
    """One gres.conf line (``NodeName`` / ``Name`` / ``Type`` / ``File`` / ``Count`` ...).

    ``node_names`` is ``None`` when the line has no ``NodeName=`` (it applies to
    every node).  ``count`` is ``None`` when neither ``Count`` nor ``File`` is given.
    """

    name: str
    type: str | None
    node_names: tuple[str, ...] | None
    files: tuple[str, ...]
    count: int | None
    cores: str | None
    links: str | None
    flags: str | None
    line: int


def _count(text: str) -> int | None:
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
        number = _count(parts[1])
        if number is None:
            gres_type = parts[1]
        else:
            count = number
    elif len(parts) == 3:
        number = _count(parts[2])
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


_GRES_CONF_KEYS = {
    "autodetect", "count", "cpus", "cores", "file", "files", "flags",
    "link", "links", "multiplefiles", "name", "type", "nodename",
}  # fmt: skip


def _fatal(
    filename: str, lineno: int, line: str, fatal: str, logged: tuple[str, ...] = ()
) -> GresError:
    """slurmd's fatal line, after minislurm's location line."""
    where = f'error: in file {filename} line {lineno}: "{line}"'
    return GresError("\n".join([*logged, where, fatal]))


def parse_gres_conf(text: str, filename: str, notes: list[str] | None = None) -> list[GresConfLine]:
    """Parse gres.conf like ``gres.c``'s ``_gres_options`` table, as slurmd does.

    ``AutoDetect`` (nvml/rsmi/...) is accepted and ignored: minislurm has no
    hardware to probe.  A line without ``Name=`` is skipped with Slurm's error
    (added to ``notes``).  Other errors raise :class:`GresError` with slurmd's lines
    (checked with ``slurmd -G`` of Slurm 22.05.8): a line that does not parse ends
    with ``fatal: error opening/reading FILE``; a bad ``Count``/``File`` with
    ``fatal: Invalid GRES record for gpu, ...``, after which minislurm adds its
    location line ``error: in file FILE line N: "..."``.
    """
    from minislurm.config import conf_lines, next_pair  # the shared slurm.conf tokenizer

    result: list[GresConfLine] = []
    for lineno, line in conf_lines(text):
        values: dict[str, str] = {}
        rest, after_first, errors = line, "", []
        while (pair := next_pair(rest)) is not None:
            key, _op, value, after = pair
            if key.lower() not in _GRES_CONF_KEYS:
                errors.append(f"error: Parsing error at unrecognized key: {key}")
                break
            values[key.lower()] = value
            after_first = after_first or after
            rest = after
        if rest.strip():
            parse_error = f'error: Parse error in file {filename} line {lineno}: "{rest}"'
            raise GresError(
                "\n".join([*errors, parse_error, f"fatal: error opening/reading {filename}"])
            )
        if not values or set(values) == {"autodetect"}:
            continue  # a global "AutoDetect=nvml" line
        name = values.get("name")
        if not name:
            if notes is not None:
                notes.append(f"{filename}: Invalid GRES data, no type name ({after_first})")
            continue
        nodes: tuple[str, ...] | None = None
        file_spec = values.get("file") or values.get("files") or values.get("multiplefiles")
        try:
            if "nodename" in values:
                nodes = tuple(hostlist.expand(values["nodename"]))
            files = tuple(hostlist.expand(file_spec)) if file_spec else ()
        except HostlistError as exc:
            logged = tuple(exc.message.split("\n")[:-1])
            what = f"File={file_spec}" if file_spec else f"NodeName={values['nodename']}"
            raise _fatal(filename, lineno, line, f"fatal: can't parse {what}", logged) from None
        count: int | None = None
        if "count" in values:
            count = _count(values["count"])
            if count is None:
                bad = f"fatal: Invalid GRES record for {name}, invalid count {values['count']}"
                raise _fatal(filename, lineno, line, bad)
            if files and count != len(files):
                bad = f"fatal: Invalid GRES record for {name}, count does not match File value"
                raise _fatal(filename, lineno, line, bad)
        elif files:
            count = len(files)
        result.append(
            GresConfLine(
                name=name,
                type=values.get("type"),
                node_names=nodes,
                files=files,
                count=count,
                cores=values.get("cores") or values.get("cpus"),
                links=values.get("links") or values.get("link"),
                flags=values.get("flags"),
                line=lineno,
            )
        )
    return result
