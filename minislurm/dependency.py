"""``-d/--dependency`` specifications (slurmctld ``update_job_dependency``).

Syntax (Slurm 22.05 sbatch(1)):

* ``after:job_id[+time][:job_id[+time]...]`` - after the jobs started (or
  were cancelled), plus ``time`` minutes;
* ``afterany``, ``afterok``, ``afternotok``, ``aftercorr``,
  ``afterburstbuffer``: ``type:job_id[:job_id...]``;
* ``singleton``;
* a bare ``job_id[:job_id...]`` means ``afterany``;
* ``,`` joins conditions that must all hold, ``?`` conditions of which any
  one suffices; one ``?`` anywhere makes the whole list "any of".

Job ids may name an array task (``123_4``), several (``123_[1-3]``) or a
whole array (``123`` or ``123_*``).  sbatch passes the text unchecked;
slurmctld rejects a bad one with ``Job dependency problem`` (capture
b_sbatch_errors/34, exit 1), the message of the `SubmitError` raised here.

`parse_dependency` follows ``update_job_dependency`` (job_scheduler.c) scan by
scan, quirks included, as measured on 22.05.8: numbers are ``strtol`` (leading
blanks and a sign are fine: ``afterok:+5``), job and task ids are ``uint32_t``
(``afterok:-1`` waits for job 4294967295, ``afterok:4294967296`` is job 0:
rejected); ``+time`` is minutes kept as ``uint32_t`` seconds, must be positive,
and ends the scan of its condition list (``after:5+1+2`` is ``after:5+1``); a
time carries over to the later ids of the same type (``afterok:5+5:6`` waits
5 minutes after both); repeated (type, job, task) conditions collapse; the bare
job id form (``5,6``) allows no ``:``, ``+`` or ``?`` anywhere after it
(``5,afterok:6`` is rejected).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from minislurm.errors import Errno, SubmitError

DEPENDENCY_PROBLEM = Errno.ESLURM_DEPENDENCY
"""slurm_strerror(ESLURM_DEPENDENCY)."""

KINDS = ("after", "afterany", "afternotok", "afterok", "aftercorr", "afterburstbuffer",
         "singleton")
"""Dependency types Slurm 22.05 knows."""

_STRTOL = re.compile(r"[ \t\n\v\f\r]*([+-]?\d+)")
_LONG = 2**63
_UINT32 = 2**32
_INFINITE = _UINT32 - 1
_TYPES = (("afternotok:", "afternotok"), ("aftercorr:", "aftercorr"),
          ("afterany:", "afterany"), ("afterok:", "afterok"),
          ("afterburstbuffer:", "afterburstbuffer"), ("after:", "after"))
"""The ``xstrncasecmp`` prefixes, in the order slurmctld tries them."""


@dataclass(frozen=True, slots=True)
class Dependency:
    """One condition on one job: ``kind`` (lower case, one of `KINDS`),
    ``job_ids`` (one id; empty for ``singleton``), ``array_task_id``
    (``None`` = the whole job or array, ``-1`` = ``_*``) and ``delay``
    minutes (``after:5+10``)."""

    kind: str
    job_ids: tuple[int, ...] = ()
    array_task_id: int | None = None
    delay: int = 0

    def __str__(self) -> str:
        if self.kind == "singleton":
            return "singleton"
        task = "" if self.array_task_id is None else (
            "_*" if self.array_task_id == -1 else f"_{self.array_task_id}")
        delay = f"+{self.delay}" if self.delay else ""
        return f"{self.kind}:{self.job_ids[0]}{task}{delay}"


@dataclass(frozen=True, slots=True)
class DependencySpec:
    """All conditions of a ``--dependency``; ``any_of`` for ``?`` (OR)."""

    items: tuple[Dependency, ...]
    any_of: bool = False

    def __str__(self) -> str:
        return ("?" if self.any_of else ",").join(str(d) for d in self.items)


def _problem() -> SubmitError:
    return SubmitError(DEPENDENCY_PROBLEM)


def _strtol(text: str, pos: int) -> tuple[int, int]:
    """C ``strtol`` into a ``long``: (value, end); (0, pos) without digits."""
    m = _STRTOL.match(text, pos)
    if m is None:
        return 0, pos
    return max(-_LONG, min(_LONG - 1, int(m.group(1)))), m.end()


def _at(text: str, pos: int) -> str:
    return text[pos] if pos < len(text) else ""


def _job_and_task(text: str, pos: int) -> tuple[int, int | None, int]:
    """``job_id[_task|_*]``: (uint32 job id, task (-1 = ``*``) or None, end)."""
    job_id, pos = _strtol(text, pos)
    task: int | None = None
    if _at(text, pos) == "_":
        if _at(text, pos + 1) == "*":
            task, pos = _INFINITE, pos + 2
        else:
            task, pos = _strtol(text, pos + 1)
            task %= _UINT32
        if task == _INFINITE:
            task = -1
    return job_id % _UINT32, task, pos


def _bitfmt2int(text: str) -> list[tuple[int, int]]:
    """``bitfmt2int``: ``1-3,7`` -> [(1, 3), (7, 7)]; other characters are skipped."""
    ranges: list[tuple[int, int]] = []
    total, start = 0, -1
    for ch in text + "\0":
        if "0" <= ch <= "9":
            total = total * 10 + int(ch)
        elif ch == "-":
            start, total = total, 0
        elif ch in ",\0":
            ranges.append((total if start == -1 else start, total))
            total, start = 0, -1
    return ranges


def _xlate_array_dep(text: str, max_array_size: int) -> str | None:
    """``_xlate_array_dep``: ``123_[1-3]`` -> ``123_1:123_2:123_3``; None when
    there is no ``_[`` or the first one is malformed (then the text is parsed as is)."""
    if "_[" not in text:
        return None
    out: list[str] = []
    job_start: int | None = None
    i = 0
    while i < len(text):
        ch = text[i]
        out.append(ch)
        if "0" <= ch <= "9":
            if job_start is None:
                job_start = i
        elif ch == "_" and _at(text, i + 1) == "[" and job_start is not None:
            digits = re.match(r"\d+", text[job_start:])
            assert digits is not None  # text[job_start] is a digit
            job_id = int(digits.group()) % _UINT32
            close = text.find("]", i + 2)
            if close < 0 or close == i + 2:  # bit_unfmt("") sets no bit
                return None
            tasks = sorted({t for lo, hi in _bitfmt2int(text[i + 2:close])
                            for t in range(lo, min(hi, max_array_size - 1) + 1)})
            if not tasks:
                return None
            out.append(str(tasks[0]))
            out.extend(f":{job_id}_{t}" for t in tasks[1:])
            i = close
            job_start = None
        else:
            job_start = None
        i += 1
    return "".join(out)


def parse_dependency(s: str, max_array_size: int = 1001) -> DependencySpec:
    """Parse a ``--dependency`` value; raises `SubmitError`
    (`DEPENDENCY_PROBLEM`) for anything slurmctld would reject (see the module
    docstring). ``expand:`` is rejected too (slurmctld: "Requested operation not
    supported on this system")."""
    text = _xlate_array_dep(s, max_array_size) or s
    if not text:
        raise _problem()
    items: list[Dependency] = []
    seen: set[tuple[str, int, int | None]] = set()
    any_of = False

    def add(dep: Dependency) -> None:
        key = (dep.kind, dep.job_ids[0] if dep.job_ids else 0, dep.array_task_id)
        if key not in seen:
            seen.add(key)
            items.append(dep)

    pos = 0
    while True:
        if text[pos:pos + 9].lower() == "singleton":
            add(Dependency("singleton"))
            pos += 9
            if _at(text, pos) in (",", "?"):
                any_of = any_of or text[pos] == "?"
                pos += 1
                continue
            if pos < len(text):
                raise _problem()
            break
        colon = text.find(":", pos)
        if colon < 0 and "0" <= _at(text, pos) <= "9":  # the old form: a bare job id
            job_id, task, pos = _job_and_task(text, pos)
            if job_id == 0 or _at(text, pos) not in ("", ","):
                raise _problem()
            add(Dependency("afterany", (job_id,), task))
            if _at(text, pos) == ",":
                pos += 1
                continue
            break
        lower = text[pos:].lower()
        kind = next((k for prefix, k in _TYPES if lower.startswith(prefix)), None)
        if colon < 0 or kind is None:
            raise _problem()
        pos += len(kind) + 1
        delay = 0
        while True:
            job_id, task, pos = _job_and_task(text, pos)
            if job_id == 0 or _at(text, pos) not in ("", ",", "?", ":", "+"):
                raise _problem()
            if _at(text, pos) == "+":
                minutes, pos = _strtol(text, pos + 1)
                seconds = minutes * 60
                seconds = (seconds + _LONG) % (2 * _LONG) - _LONG  # a long product
                if seconds <= 0:
                    raise _problem()
                delay = seconds % _UINT32 // 60
            add(Dependency(kind, (job_id,), task, delay))
            if _at(text, pos) != ":":
                break
            pos += 1
        if _at(text, pos) in (",", "?"):
            any_of = any_of or text[pos] == "?"
            pos += 1
            continue
        break
    return DependencySpec(tuple(items), any_of)
