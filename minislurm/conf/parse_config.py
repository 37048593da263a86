"""The slurm.conf tokenizer and parser: lines, ``Key=Value`` pairs, values, errors.

Mirrors ``src/common/parse_config.c`` as Slurm 22.05 uses it for slurm.conf
(``s_p_parse_file``): ``_get_next_line`` (``#`` comments unless escaped, ``\\``
line continuation, ``_strip_escapes``), ``_parse_next_key`` (case-insensitive
keys, ``"quoted values"``, the ``+=`` / ``-=`` / ``*=`` / ``/=`` operators), ``Include FILE``
(relative to the including file), the value handlers ``_handle_uint16`` /
``_handle_uint32`` / ``_handle_uint64`` / ``_handle_boolean``, and the
``DEFAULT`` entries of the ``NodeName=`` / ``PartitionName=`` lines
(``src/common/read_config.c``).  ``time_str2mins`` is ``src/common/parse_time.c``'s.

Errors: a key Slurm does not know, a malformed line or a bad value becomes a
:class:`~minislurm.errors.ConfigError` whose message is the lines Slurm logs
(``error: ... Parse error in file F line N: "..."`` then
``fatal: Unable to process configuration file``), without the program prefix.
Where Slurm names no file and line (``KillWait value "abc" is not a valid
number``), minislurm adds one line of its own, ``error: in file F line N: "..."``,
so a learner always finds the culprit.  :class:`Rejected` carries such a
complaint from the code that validates values to the code that knows the line.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from minislurm.conf.tables import (
    INFINITE16,
    INFINITE32,
    NODE_OPTIONS,
    OTHER_ARRAY_OPTIONS,
    PARTITION_OPTIONS,
    TOP_OPTIONS,
)
from minislurm.errors import ConfigError

__all__ = [
    "FATAL", "ConfLine", "ConfParser", "ParsedConf", "Rejected", "conf_lines", "config_error",
    "convert_value", "key_values", "next_pair", "read_conf_file", "strtoul", "time_str2mins",
    "where",
]  # fmt: skip

FATAL = "fatal: Unable to process configuration file"

# ---- tokenizer (parse_config.c) -----------------------------------------------------------

_KV_RE = re.compile(r'\s*([A-Za-z0-9_.]+)\s*([-*+/]?)=\s*(?:"([^"]*)"|(\S+))(?=\s|$)')


def conf_lines(text: str) -> list[tuple[int, str]]:
    """Logical lines of a Slurm config file: (first line number, text).

    ``_get_next_line``: text after an unescaped ``#`` is a comment, an odd
    number of trailing backslashes continues the line, then ``\\x`` becomes
    ``x``; blank lines are dropped.
    """
    result: list[tuple[int, str]] = []
    physical = text.split("\n")
    i = 0
    while i < len(physical):
        start, buf = i + 1, ""
        while i < len(physical):
            part = _strip_comment(physical[i].rstrip("\r"))
            i += 1
            stripped = part.rstrip()
            trailing = len(stripped) - len(stripped.rstrip("\\"))
            if trailing % 2 == 1:
                buf += stripped[: len(stripped) - trailing] + "\\" * (trailing - 1)
                continue
            buf += part
            break
        line = re.sub(r"\\(.?)", r"\1", buf, flags=re.DOTALL)  # _strip_escapes
        if line.strip():
            result.append((start, line))
    return result


def _strip_comment(line: str) -> str:
    backslashes = 0
    for idx, char in enumerate(line):
        if char == "#" and backslashes % 2 == 0:
            return line[:idx]
        backslashes = backslashes + 1 if char == "\\" else 0
    return line


def next_pair(text: str) -> tuple[str, str, str, str] | None:
    """One ``Key=Value`` at the start of ``text``: (key, operator, value, rest)."""
    match = _KV_RE.match(text)
    if match is None:
        return None
    value = match.group(3) if match.group(3) is not None else match.group(4)
    return match.group(1), match.group(2), value, text[match.end() :]


def key_values(line: str) -> tuple[list[tuple[str, str]], str]:
    """All leading ``Key=Value`` pairs of a line and the text that did not parse."""
    pairs: list[tuple[str, str]] = []
    rest = line
    while (pair := next_pair(rest)) is not None:
        pairs.append((pair[0], pair[2]))
        rest = pair[3]
    return pairs, rest


# ---- values ---------------------------------------------------------------------------------


class Rejected(Exception):
    """Something Slurm rejects: its ``error:`` lines (without the prefix, ``\n``-separated,
    possibly none), the key concerned and the ``fatal:`` line it ends with."""

    def __init__(self, message: str, key: str = "", fatal: str = "") -> None:
        super().__init__(message)
        self.key = key
        self.fatal = fatal or FATAL

    def lines(self) -> list[str]:
        return [line for line in str(self).split("\n") if line]


def strtoul(value: str) -> int | None:
    """C ``strtoul(value, &end, 0)`` over the whole string, else ``None``."""
    text = value.strip()
    sign = -1 if text.startswith("-") else 1
    text = text.lstrip("+-")
    try:
        if re.fullmatch(r"0[xX][0-9a-fA-F]+", text):
            return sign * int(text, 16)
        if re.fullmatch(r"0[0-7]+", text):
            return sign * int(text, 8)
        if re.fullmatch(r"\d+", text):
            return sign * int(text)
    except ValueError:
        return None
    return None


def convert_value(key: str, kind: str, value: str) -> Any:
    """``_handle_uint16`` / ``_handle_uint32`` / ``_handle_uint64`` / ``_handle_boolean``."""
    if kind in ("s", "a"):
        return value
    if kind == "b":
        low = value.lower()
        if low in ("yes", "up", "true", "1"):
            return True
        if low in ("no", "down", "false", "0"):
            return False
        raise Rejected(f'"{value}" is not a valid option for "{key}"')
    limit = {"u16": INFINITE16, "u32": INFINITE32, "u64": 2**64 - 1}[kind]
    text = value
    multiplier = 1
    if kind != "u16" and text[-1:] in ("k", "K"):
        text, multiplier = text[:-1], 1024
    num = strtoul(text)
    if num is None:
        if value.lower() in ("unlimited", "infinite"):
            return limit
        quoted = f'"{value}"' if kind == "u16" else f"({value})"
        raise Rejected(f"{key} value {quoted} is not a valid number")
    if value.startswith("-"):
        raise Rejected(f"{key} value ({value}) is less than zero")
    num *= multiplier
    if num > limit:
        raise Rejected(f"{key} value ({value}) is greater than {limit}")
    return num


def time_str2mins(text: str) -> int | None:
    """Slurm's ``time_str2mins`` for config times (``MaxTime``, ``PriorityMaxAge``, ...).

    ``M``, ``M:S``, ``H:M:S``, ``D-H``, ``D-H:M``, ``D-H:M:S`` -> minutes rounded up;
    ``INFINITE`` / ``UNLIMITED`` / ``-1`` -> ``None``.  Raises ``ValueError`` otherwise.
    """
    if text.lower() in ("infinite", "unlimited", "-1"):
        return None
    if re.fullmatch(r"\d+-\d+(:\d+){0,2}", text):
        days, rest = text.split("-")
        parts = [int(p) for p in rest.split(":")] + [0, 0]
        secs = int(days) * 86400 + parts[0] * 3600 + parts[1] * 60 + parts[2]
    elif re.fullmatch(r"\d+(:\d+){0,2}", text):
        parts = [int(p) for p in text.split(":")]
        if len(parts) == 3:
            secs = parts[0] * 3600 + parts[1] * 60 + parts[2]
        else:
            secs = parts[0] * 60 + (parts[1] if len(parts) == 2 else 0)
    else:
        raise ValueError(text)
    return math.ceil(secs / 60)


# ---- the parser -----------------------------------------------------------------------------


@dataclass(slots=True)
class ConfLine:
    """A parsed NodeName/PartitionName line: its name, options and where it came from."""

    name: str
    options: dict[str, Any]
    lineno: int
    text: str
    filename: str


@dataclass(slots=True)
class ParsedConf:
    top: dict[str, tuple[str, Any]] = field(default_factory=dict)
    nodes: list[ConfLine] = field(default_factory=list)
    partitions: list[ConfLine] = field(default_factory=list)


class ConfParser:
    """``s_p_parse_file`` over one slurm.conf text, collecting Slurm's error lines."""

    def __init__(self, filename: str) -> None:
        self.filename = filename
        self.errors: list[str] = []
        self.result = ParsedConf()
        self.defaults: dict[str, dict[str, Any]] = {"nodename": {}, "partitionname": {}}
        self.lines: dict[str, tuple[str, int, str]] = {}

    def parse_error(self, lineno: int, text: str) -> None:
        """The line Slurm logs when a line does not parse completely."""
        self.errors.append(f'Parse error in file {self.filename} line {lineno}: "{text}"')

    def located(self, lineno: int, text: str) -> None:
        """minislurm's own location line, where Slurm logs none."""
        self.errors.append(f'in file {self.filename} line {lineno}: "{text}"')

    def feed(self, text: str) -> None:
        for lineno, line in conf_lines(text):
            self.line(lineno, line)

    def include(self, lineno: int, line: str) -> None:
        """``Include FILE`` (relative names are relative to the including file)."""
        words = line.split()
        if len(words) < 2:
            self.parse_error(lineno, line)
            return
        path = Path(words[1])
        if not path.is_absolute():
            path = Path(self.filename).parent / path
        outer, before = self.filename, len(self.errors)
        try:
            self.filename = str(path)
            self.feed(read_conf_file(path))
        except ConfigError as exc:
            self.errors.extend(m.removeprefix("error: ") for m in exc.message.split("\n")[:-1])
        finally:
            self.filename = outer
        if len(self.errors) > before:
            self.errors.append(f'"Include" failed in file {outer} line {lineno}')

    def line(self, lineno: int, line: str) -> None:
        if re.match(r"(?i)include\s", line):
            self.include(lineno, line)
            return
        pair = next_pair(line)
        if pair is None:
            self.parse_error(lineno, line)
            return
        key, _op, value, rest = pair
        entry = TOP_OPTIONS.get(key.lower())
        if entry is None:
            self.errors.append(f"_parse_next_key: Parsing error at unrecognized key: {key}")
            self.located(lineno, line)
            return
        canonical, kind = entry
        if kind == "a":
            self.array_line(lineno, line, canonical, value, rest)
            return
        try:
            converted = convert_value(canonical, kind, value)
        except Rejected as exc:
            self.errors.append(str(exc))
            self.located(lineno, line)
            return
        self.result.top[canonical.lower()] = (canonical, converted)
        self.lines[canonical.lower()] = (self.filename, lineno, line)
        if rest.strip():
            self.parse_error(lineno, rest)

    def array_line(self, lineno: int, line: str, key: str, value: str, rest: str) -> None:
        tables = {"NodeName": NODE_OPTIONS, "PartitionName": PARTITION_OPTIONS}
        table = tables.get(key, OTHER_ARRAY_OPTIONS)
        options: dict[str, Any] = {}
        while (pair := next_pair(rest)) is not None:
            sub_key, _op, sub_value, after = pair
            entry = table.get(sub_key.lower())
            if entry is None:
                self.errors.append(f"Parsing error at unrecognized key: {sub_key}")
                break
            try:
                options[entry[0].lower()] = convert_value(entry[0], entry[1], sub_value)
            except Rejected as exc:
                self.errors.append(str(exc))
                break
            rest = after
        if rest.strip():
            self.parse_error(lineno, rest)
            return
        kind = key.lower()
        if kind not in self.defaults:
            self.result.top.setdefault(kind, (key, []))[1].append((value, options))
            return
        if value.lower() == "default":
            if kind == "nodename":
                for forbidden in ("NodeHostname", "BcastAddr", "NodeAddr"):
                    if forbidden.lower() in options:
                        self.errors.append(f"{forbidden} not allowed with NodeName=DEFAULT")
                        self.located(lineno, line)
                        return
            self.defaults[kind].update(options)
            return
        if kind == "nodename" and value.lower() == "all":
            raise ConfigError(
                f"fatal: '{value}' is a reserved word disallowed for use with NodeName"
            )
        merged = {**self.defaults[kind], **options}
        target = self.result.nodes if kind == "nodename" else self.result.partitions
        target.append(ConfLine(value, merged, lineno, line, self.filename))


# ---- errors (what Slurm logs, naming file and line) -----------------------------------


def config_error(lines: list[str], fatal: str = FATAL) -> ConfigError:
    """The :class:`ConfigError` for Slurm's ``error:`` lines and the ``fatal:`` line."""
    return ConfigError("\n".join([*(f"error: {line}" for line in lines), fatal]))


def where(item: ConfLine) -> str:
    """minislurm's location line for a NodeName/PartitionName line Slurm rejects."""
    return f'in file {item.filename} line {item.lineno}: "{item.text}"'


def read_conf_file(path: Path) -> str:
    """The text of a slurm.conf (or an ``Include``d file), or what ``s_p_parse_file`` logs."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(
            f"error: s_p_parse_file: cannot stat file {path}: No such file or directory, "
            f"retrying in 1sec up to 60sec\n{FATAL}"
        ) from None
    except OSError as exc:
        raise ConfigError(f'error: s_p_parse_file: unable to read "{path}": {exc.strerror}\n'
                          f"{FATAL}") from None  # fmt: skip
