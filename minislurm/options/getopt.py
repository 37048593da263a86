"""glibc ``getopt_long`` as sbatch/srun/salloc call it (option string ``+...``).

Slurm builds its option table in slurm_opt.c ``slurm_option_table_create``
with a leading ``+`` (POSIXLY_CORRECT): parsing stops at the first
non-option argument, which is the batch script (sbatch) or the command
(srun/salloc); ``--`` also ends the options.  Long options may be
abbreviated to any unique prefix, take their value as ``--opt=value`` or
``--opt value`` (required arguments only) and glibc prints these errors,
which we reproduce word for word (glibc 2.36, Debian bookworm)::

    sbatch: unrecognized option '--foo'
    sbatch: invalid option -- 'Z'
    sbatch: option requires an argument -- 'N'
    sbatch: option '--time' requires an argument
    sbatch: option '--hold' doesn't allow an argument
    sbatch: option '--gpu' is ambiguous; possibilities: '--gpu-bind' '--gpus' ...
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum


class HasArg(Enum):
    """``no_argument`` / ``required_argument`` / ``optional_argument``."""

    NO = 0
    REQUIRED = 1
    OPTIONAL = 2


@dataclass(frozen=True, slots=True)
class LongOption:
    """One ``struct option``: ``name``, ``has_arg`` and the value returned
    (``key``: the short letter, or the long name for long-only options)."""

    name: str
    has_arg: HasArg
    key: str


@dataclass(frozen=True, slots=True)
class ParsedOption:
    """One option found: ``key`` of its table entry and ``arg`` (or ``None``)."""

    key: str
    arg: str | None


class GetoptError(Exception):
    """getopt returned ``'?'``: ``message`` is the line glibc printed and
    ``found`` the options getopt had returned before it."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        self.found: list[ParsedOption] = []


def getopt_long(
    argv: Sequence[str],
    shorts: dict[str, HasArg],
    longs: Sequence[LongOption],
    prog: str,
) -> tuple[list[ParsedOption], int]:
    """Parse ``argv`` (without the program name) like getopt_long with ``+``.

    Returns the options found and the index of the first non-option
    argument (``optind - 1``).  Raises `GetoptError` on the first error.
    """
    found: list[ParsedOption] = []
    try:
        return _scan(argv, shorts, longs, prog, found)
    except GetoptError as e:
        e.found = found
        raise


def _scan(
    argv: Sequence[str],
    shorts: dict[str, HasArg],
    longs: Sequence[LongOption],
    prog: str,
    found: list[ParsedOption],
) -> tuple[list[ParsedOption], int]:
    """The body of `getopt_long`, appending to ``found``."""
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            return found, i + 1
        if not arg.startswith("-") or arg == "-":
            return found, i
        if arg.startswith("--"):
            i = _long(argv, i, longs, prog, found)
            continue
        # a cluster of short options: -vvv, -N2, -J name
        j = 1
        while j < len(arg):
            c = arg[j]
            has = shorts.get(c)
            if has is None or c == ":":
                raise GetoptError(f"{prog}: invalid option -- '{c}'")
            rest = arg[j + 1:]
            if has is HasArg.NO:
                found.append(ParsedOption(c, None))
                j += 1
                continue
            if rest:
                found.append(ParsedOption(c, rest))
            elif has is HasArg.OPTIONAL:
                found.append(ParsedOption(c, None))
            elif i + 1 < len(argv):
                i += 1
                found.append(ParsedOption(c, argv[i]))
            else:
                raise GetoptError(f"{prog}: option requires an argument -- '{c}'")
            break
        i += 1
    return found, i


def _long(
    argv: Sequence[str], i: int, longs: Sequence[LongOption], prog: str,
    found: list[ParsedOption],
) -> int:
    """Handle ``argv[i]`` = ``--name[=value]``; returns the next index."""
    text = argv[i][2:]
    name, eq, value = text.partition("=")
    exact = [o for o in longs if o.name == name]
    if exact:
        opt = exact[0]
    else:
        cands = [o for o in longs if o.name.startswith(name)]
        if not cands:
            raise GetoptError(f"{prog}: unrecognized option '--{text}'")
        first = cands[0]
        # glibc lists the first match and every later one that differs from it
        others = [o for o in cands[1:] if (o.has_arg, o.key) != (first.has_arg, first.key)]
        if others:
            names = " ".join(f"'--{o.name}'" for o in [first, *others])
            raise GetoptError(f"{prog}: option '--{text}' is ambiguous; possibilities: {names}")
        opt = first
    if eq:
        if opt.has_arg is HasArg.NO:
            raise GetoptError(f"{prog}: option '--{opt.name}' doesn't allow an argument")
        found.append(ParsedOption(opt.key, value))
        return i + 1
    if opt.has_arg is HasArg.REQUIRED:
        if i + 1 >= len(argv):
            raise GetoptError(f"{prog}: option '--{opt.name}' requires an argument")
        found.append(ParsedOption(opt.key, argv[i + 1]))
        return i + 2
    found.append(ParsedOption(opt.key, None))
    return i + 1
