"""gres.conf: each node's GRES device files, read beside slurm.conf.

Mirrors the gres.conf side of Slurm 22.05's ``src/common/gres.c``
(``_gres_options``, the ``s_p_options_t`` table slurmd parses gres.conf with):
lines such as ``NodeName=n[1-4] Name=gpu Type=a100 File=/dev/nvidia[0-3]``;
``File`` takes hostlist-style ranges. :mod:`minislurm.conf.node_conf` merges
those lines into each node, so a node knows its device files and the index of
every GPU. The line tokenizer is slurm.conf's (:mod:`minislurm.conf.parse_config`).
"""

from __future__ import annotations

from dataclasses import dataclass

from minislurm.common import hostlist
from minislurm.common.gres import parse_count
from minislurm.conf.parse_config import conf_lines, next_pair
from minislurm.errors import GresError, HostlistError

__all__ = ["GresConfLine", "parse_gres_conf"]


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
            count = parse_count(values["count"])
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
