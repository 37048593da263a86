"""``#SBATCH`` directives of a batch script (src/sbatch/opt.c).

``_opt_batch_script`` reads the script line by line: a line that starts
with exactly ``#SBATCH`` (case-sensitive, column 0) contributes the words
after it; blank lines and other comment lines (``# SBATCH``, ``#sbatch``,
indented ``  #SBATCH``) are skipped; the first other line (a command, even
``set -e``) ends the scan (capture f1_sbatch_directive_parsing).  Words are
split by ``get_argument``: whitespace separates, ``'`` and ``"`` group,
``\\`` escapes, an unquoted ``#`` starts a trailing comment.
"""

from __future__ import annotations

from dataclasses import dataclass

from minislurm.errors import OptionError

MAGIC = "#SBATCH"


@dataclass(frozen=True, slots=True)
class Directive:
    """One ``#SBATCH`` line: its 1-based line number and its words."""

    lineno: int
    words: tuple[str, ...]


def _get_argument(filename: str, lineno: int, line: str, prog: str) -> tuple[str | None, int]:
    """``get_argument``: the next word of ``line`` and how many characters
    were consumed; ``(None, n)`` when no word is left."""
    p = 0
    n = len(line)
    while p < n and line[p].isspace():
        p += 1
    if p < n and line[p] == ":":
        raise OptionError(
            f"{prog}: fatal: {filename}: line {lineno}: Unexpected `:` in [{line}]", 1)
    if p >= n:
        return None, p
    out: list[str] = []
    started = False
    quote = ""
    escape = False
    while p < n and (quote or not line[p].isspace()) and line[p] != "\n":
        c = line[p]
        if escape:
            escape = False
        elif c == "\\":
            escape = True
            p += 1
            continue
        elif quote:
            if c == quote:
                quote = ""
                p += 1
                continue
        elif c in ("'", '"'):
            quote = c
            p += 1
            continue
        elif c == "#":
            break
        started = True
        out.append(c)
        p += 1
    if quote:
        raise OptionError(
            f"{prog}: fatal: {filename}: line {lineno}: Unmatched `{quote}` in [{line}]", 1)
    return ("".join(out) if started else None), p


def _is_command(line: str) -> bool:
    """A line that is neither blank nor a comment ends the directive scan."""
    stripped = line.lstrip()
    return bool(stripped) and not stripped.startswith("#")


def parse_directives(script_text: str, *, filename: str = "(null)",
                     prog: str = "sbatch") -> list[Directive]:
    """All ``#SBATCH`` lines before the first command, split into words.

    A directive line naming ``hetjob`` (or the older ``packjob``) ends the
    first heterogeneous-job component; minislurm reads only that component.
    Raises `OptionError` (exit 1) for an unmatched quote, like Slurm's fatal().
    """
    result: list[Directive] = []
    for lineno, line in enumerate(script_text.split("\n"), start=1):
        if not line.startswith(MAGIC):
            if _is_command(line):
                break
            continue
        lowered = line.lower()
        if "hetjob" in lowered or "packjob" in lowered:
            break
        # the first word is looked for past the blanks (an error quotes the rest from
        # there: "Unexpected `:` in [:]"), a later one right after the word before it
        rest = line[len(MAGIC):].lstrip(" \t\n\v\f\r")
        words: list[str] = []
        while True:
            word, used = _get_argument(filename, lineno, rest, prog)
            if word is None:
                break
            words.append(word)
            rest = rest[used:]
        result.append(Directive(lineno, tuple(words)))
    return result


def sbatch_directives(script_text: str) -> list[str]:
    """The option words the ``#SBATCH`` lines of ``script_text`` contribute,
    in order, as sbatch hands them to getopt (docs/ARCHITECTURE.md)."""
    return [w for d in parse_directives(script_text) for w in d.words]
