"""``-d/--dependency`` specifications (slurmctld ``update_job_dependency``).

Syntax (Slurm 22.05 sbatch(1)):

* ``after:job_id[+time][:job_id[+time]...]`` - after the jobs started (or
  were cancelled), plus ``time`` minutes;
* ``afterany``, ``afterok``, ``afternotok``, ``aftercorr``,
  ``afterburstbuffer``: ``type:job_id[:job_id...]``;
* ``singleton``;
* a bare ``job_id[:job_id...]`` means ``afterany``;
* ``,`` joins conditions that must all hold, ``?`` conditions of which any
  one suffices; the two cannot be mixed.

Job ids may name an array task (``123_4``) or a whole array (``123`` or
``123_*``).  sbatch passes the text unchecked; slurmctld rejects a bad one
with ``Job dependency problem`` (capture b_sbatch_errors/34, exit 1), the
message of the `SubmitError` raised here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from minislurm.errors import SubmitError

DEPENDENCY_PROBLEM = "Job dependency problem"
"""slurm_strerror(ESLURM_DEPENDENCY)."""

KINDS = ("after", "afterany", "afternotok", "afterok", "aftercorr", "afterburstbuffer",
         "singleton")
"""Dependency types Slurm 22.05 knows."""

_TARGET = re.compile(r"^(\d+)(?:_(\d+|\*))?(?:\+(\d+))?$")


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


def _parse_item(text: str) -> list[Dependency]:
    if text.lower() == "singleton":
        return [Dependency("singleton")]
    kind, colon, rest = text.partition(":")
    if not colon or kind.isdigit():
        kind, rest = "afterany", text
    kind = kind.lower()
    if kind not in KINDS or kind == "singleton" or not rest:
        raise _problem()
    result: list[Dependency] = []
    for target in rest.split(":"):
        m = _TARGET.match(target)
        if m is None:
            raise _problem()
        job_id = int(m.group(1))
        if job_id == 0:
            raise _problem()
        task = m.group(2)
        array_task = None if task is None else (-1 if task == "*" else int(task))
        delay = int(m.group(3)) if m.group(3) else 0
        result.append(Dependency(kind, (job_id,), array_task, delay))
    return result


def parse_dependency(s: str) -> DependencySpec:
    """Parse a ``--dependency`` value; raises `SubmitError`
    (`DEPENDENCY_PROBLEM`) for anything slurmctld would reject."""
    if not s or ("," in s and "?" in s):
        raise _problem()
    any_of = "?" in s
    items: list[Dependency] = []
    for part in s.split("?" if any_of else ","):
        if not part:
            raise _problem()
        items.extend(_parse_item(part))
    return DependencySpec(tuple(items), any_of)
