"""sbatch-writing items: the learner writes ``#SBATCH`` lines or an ``sbatch`` command.

The answer is parsed with minislurm's own sbatch front end
(:func:`minislurm.options.parse_sbatch`, mirroring src/sbatch/opt.c), and the
resulting request fields of :class:`minislurm.options.JobOptions` named by the
key are compared.  Because the *request* is compared, not the text,
``-N2 --ntasks-per-node=8``, ``--nodes=2 --ntasks-per-node 8`` and the same as
``#SBATCH`` lines are all right.  A typo is reported with Slurm's own message
(``sbatch: unrecognized option '--nodess=2'``).

Key storage: per variant, ``fields: {nodes_min: <hash>, ...}`` where each hash
covers the canonical value of that field (:func:`canonical_field`).  Fields not
named by the key are not checked.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, is_dataclass
from functools import lru_cache
from typing import Any

from minislurm.errors import SlurmError
from quizzes.hashing import answer_hash, canonical_json
from quizzes.i18n import M
from quizzes.items.base import (
    Common,
    Outcome,
    Presented,
    as_text,
    fill,
    variant_table,
    with_extras,
)
from quizzes.where import Where

MAX_ANSWER = 4000
_CWD = "/home/learner"
_NOW = 1767600000  # docs/ARCHITECTURE.md's default epoch, for --begin
_SCRIPT_BODY = "srun python train.py\n"


@dataclass(frozen=True, slots=True)
class SbatchItem:
    """``type: sbatch``."""

    common: Common
    keys: Mapping[str, Mapping[str, str]]

    @classmethod
    def from_bank(
        cls, common: Common, raw: Mapping[str, Any], where: Where, variants: Sequence[str]
    ) -> SbatchItem:
        common = with_extras(common, raw, where)
        from minislurm.options import JobOptions

        known = {f.name for f in fields(JobOptions)}
        table = variant_table(where, raw, "keys", variants)
        keys: dict[str, dict[str, str]] = {}
        for variant in variants:
            entry = table[variant]
            if not isinstance(entry, dict) or not isinstance(entry.get("fields"), dict) \
                    or not entry["fields"]:
                raise where.error("keys", "each variant key needs a non-empty 'fields' mapping")
            for name in entry["fields"]:
                if name not in known:
                    raise where.error("keys", f"'{name}' is not a JobOptions field")
            keys[variant] = {str(k): str(v) for k, v in entry["fields"].items()}
        return cls(common, keys)

    def present(self, params: Mapping[str, Any], seed: int = 0) -> Presented:
        return Presented(self.common.id, "sbatch", fill(self.common.prompt, params),
                         points=self.common.points)

    def grade(self, response: Any, params: Mapping[str, Any], salt: str, variant: str) -> Outcome:
        text = as_text(response)
        if text is None or not text.strip():
            return Outcome.said(0.0, M("Write #SBATCH lines or an sbatch command line."),
                                readable=False)
        if len(text) > MAX_ANSWER:
            return Outcome.said(0.0, M("That answer is too long for an sbatch request."),
                                readable=False)
        try:
            options = parse_request(text)
        except SlurmError as exc:
            return Outcome.said(0.0, M("Incorrect: Slurm would reject this: {slurm}",
                                          slurm=exc.message))
        except Exception as exc:  # the parser choked (e.g. --begin=now+99999999999days)
            return Outcome.said(0.0, M("This answer cannot be read as an sbatch request ({why}).",
                                     why=type(exc).__name__ + ": " + str(exc)))
        key = self.keys[variant]
        wrong = [name for name, digest in key.items()
                 if answer_hash(salt, self.common.id, variant,
                                f"{name}={canonical_field(getattr(options, name))}") != digest]
        if not wrong:
            return Outcome.said(1.0, M("Correct: the request matches."))
        right = len(key) - len(wrong)
        verdict = M("Partly right") if right else M("Incorrect")
        return Outcome.said(right / len(key),
                            M("{verdict}: {right} of {total} request fields right.",
                              verdict=verdict, right=right, total=len(key)),
                            tuple(M("not what was asked: {option}", option=field_option(n))
                                  for n in wrong))


def field_option(name: str) -> str:
    """The sbatch option a JobOptions field comes from (``nodes_min`` -> ``--nodes``)."""
    special = {"nodes_min": "--nodes", "nodes_max": "--nodes", "mem_mb": "--mem",
               "mem_per_cpu_mb": "--mem-per-cpu", "mem_per_gpu_mb": "--mem-per-gpu",
               "time_limit": "--time", "job_name": "--job-name", "chdir": "--chdir"}
    return special.get(name, "--" + name.replace("_", "-"))


def canonical_field(value: Any) -> str:
    """A stable text for one JobOptions value (dataclasses become sorted JSON)."""
    if is_dataclass(value) and not isinstance(value, type):
        return canonical_json({f.name: getattr(value, f.name) for f in fields(value)})
    if isinstance(value, tuple | list):
        return canonical_json([canonical_field(v) for v in value])
    return canonical_json(value)


@lru_cache(maxsize=4096)
def parse_request(text: str) -> Any:
    """Parse ``#SBATCH`` lines or an ``sbatch ...`` command into JobOptions.

    A command line may name a batch script (``sbatch -N2 train.sh``); since the
    learner's script is not at hand, sbatch reads a two-line ``#!/bin/bash``
    script under that name, so only the options are judged.  Raises
    :class:`~minislurm.errors.SlurmError` with sbatch's own message.  Results
    are cached by text (JobOptions is frozen): a class writes the same few
    answers many times.
    """
    from minislurm.options import InfoExit, parse_sbatch

    stripped = text.strip()
    script = "#!/bin/bash\n" + _SCRIPT_BODY
    if stripped.startswith("sbatch") and (len(stripped) == 6 or stripped[6].isspace()):
        try:
            argv = shlex.split(stripped)[1:]
        except ValueError as exc:
            raise SlurmError(f"sbatch: error: cannot split the command line: {exc}") from None
    else:
        lines = stripped.splitlines()
        if not lines or not lines[0].startswith("#!"):
            lines.insert(0, "#!/bin/bash")
        script = "\n".join(lines) + "\n" + _SCRIPT_BODY
        argv = []
    try:
        invocation = parse_sbatch(argv, env={}, stdin=script, cwd=_CWD, now=_NOW,
                                  read_file=lambda path: script.encode())
    except InfoExit:
        raise SlurmError("sbatch: error: that prints help; write the options of a job") from None
    return invocation.options


def author_key(
    source: Mapping[str, Any], salt: str, item_id: str, variants: Sequence[str], where: Where
) -> dict[str, Any]:
    """Parse the model ``answer`` of each variant and hash the ``check`` fields."""
    from quizzes.variants import params_of

    answer = source.get("answer")
    check = source.get("check")
    if not isinstance(answer, str) or not isinstance(check, list) or not check:
        raise where.error("answer", "needs a model 'answer' and a non-empty 'check' list")
    keys = {}
    for variant in variants:
        try:
            options = parse_request(fill(answer, params_of(variant)))
        except SlurmError as exc:
            raise where.error("answer", f"the model answer is rejected: {exc.message}") from exc
        keys[variant] = {"fields": {
            name: answer_hash(salt, item_id, variant,
                              f"{name}={canonical_field(getattr(options, name))}")
            for name in check}}
    return keys
