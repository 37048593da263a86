"""Authoring: turn the private source of a quiz (plain answers) into its bank (hashes).

Authors edit ``<sources>/<module>.yaml``; ``quizzes author build`` writes
``quizzes/banks/<module>.yaml``.  ``<sources>`` is ``--sources DIR``, else
``$QUIZZES_SOURCES``, else the checkout's ``quizzes/authoring/sources/``
(:func:`sources_dir`).  A source item is a bank item plus its
plain answer, which the build removes after hashing:

* ``single`` / ``multiple``: ``correct: true`` on the right options;
* ``numeric``: ``answer: 64`` or ``answer_expr: "nodes * gpus"`` (arithmetic on
  the item's ``params``), with ``tolerance``;
* ``text``: ``accept: [spelling, ...]`` (``{{param}}`` allowed);
* ``sbatch``: ``answer`` (a model ``#SBATCH`` script or command) and ``check``
  (the JobOptions fields compared);
* ``scheduler``: nothing; the controller computes the key at grading time;
* ``lab``: ``lab: <lab id>`` (kept) and a model ``answer`` (private), which must
  pass the lab at build time; grading replays the learner's answer on minislurm.

The source's ``salt`` (or, if absent, one derived from the source content) salts
every hash.  The sources are not package data, so a wheel ships banks only.
"""

from __future__ import annotations

import ast
import hashlib
import math
import operator
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml

from quizzes.bank import ITEM_TYPES, parse_bank, read_yaml
from quizzes.errors import BankError
from quizzes.hashing import answer_hash, canonical_json, seal
from quizzes.sources import SOURCES_ENV, sources_dir
from quizzes.variants import params_of, variant_keys
from quizzes.where import Where

PRIVATE_FIELDS = {"answer", "answer_expr", "accept", "check"}

_OPS: dict[type, Callable[..., Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
    ast.Pow: operator.pow, ast.USub: operator.neg, ast.UAdd: operator.pos,
}
_FUNCS: dict[str, Callable[..., Any]] = {
    "min": min, "max": max, "ceil": math.ceil, "floor": math.floor}


def evaluate(expr: str, params: Mapping[str, Any]) -> float:
    """Evaluate an arithmetic ``answer_expr`` over parameters (no other Python)."""

    def ev(node: ast.AST) -> Any:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            return node.value
        if isinstance(node, ast.Name) and node.id in params:
            return params[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.UnaryOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](ev(node.operand))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in _FUNCS and not node.keywords:
            return _FUNCS[node.func.id](*(ev(a) for a in node.args))
        raise ValueError(f"not allowed in answer_expr: {ast.dump(node)[:40]}")

    return float(ev(ast.parse(expr, mode="eval")))


def build_item(raw: Mapping[str, Any], salt: str, file: str) -> dict[str, Any]:
    """One source item -> one bank item (answers replaced by ``keys``)."""
    item_id = str(raw.get("id", "?"))
    where = Where(file, item_id)
    kind = raw.get("type")
    if kind not in ITEM_TYPES:
        raise where.error("type", f"unknown item type '{kind}'")
    params = [(str(k), tuple(v)) for k, v in (raw.get("params") or {}).items()]
    variants = variant_keys(tuple(params))
    out = {k: v for k, v in raw.items() if k not in PRIVATE_FIELDS}
    if isinstance(raw.get("explanation"), str):
        out["explanation"] = seal(salt, item_id, raw["explanation"])
    if kind in ("single", "multiple"):
        from quizzes.items import choice
        out["options"] = [{"id": o["id"], "text": o["text"]} for o in raw.get("options", [])
                          if isinstance(o, dict) and "id" in o and "text" in o]
        out["keys"] = choice.author_key(raw, salt, item_id, variants, where)
    elif kind == "numeric":
        from quizzes.items.numeric import author_cells
        tol = raw.get("tolerance")
        if not isinstance(tol, dict):
            raise where.error("tolerance", "must be {abs: x} or {rel: r}")
        keys = {}
        for variant in variants:
            try:
                value = (evaluate(str(raw["answer_expr"]), params_of(variant))
                         if "answer_expr" in raw else float(raw["answer"]))
            except (KeyError, ValueError, TypeError, ZeroDivisionError, SyntaxError) as exc:
                raise where.error("answer", f"needs a numeric answer or answer_expr ({exc})") \
                    from exc
            keys[variant] = author_cells(value, tol, salt, item_id, variant)
        out["keys"] = keys
    elif kind == "text":
        from quizzes.items import text
        out["keys"] = text.author_key(raw, salt, item_id, variants, where)
    elif kind == "sbatch":
        from dataclasses import fields

        from minislurm.options import JobOptions
        from quizzes.items import sbatch
        known = {f.name for f in fields(JobOptions)}
        for name in raw.get("check") or []:
            if name not in known:
                raise where.error("check", f"'{name}' is not a JobOptions field")
        out["keys"] = sbatch.author_key(raw, salt, item_id, variants, where)
    elif kind == "lab":
        from quizzes.items import lab
        lab.author_key(raw, salt, item_id, variants, where)
    if raw.get("exhibit") is not None:
        from quizzes.exhibit import check, parse_exhibit
        check(parse_exhibit(where, raw), where, [params_of(v) for v in variants])
    return out


def build_source(path: str | Path) -> tuple[dict[str, Any], str]:
    """Build the bank data of one source file; returns (data, bank file name)."""
    p = Path(path)
    src = read_yaml(p)
    if not isinstance(src, dict) or not isinstance(src.get("items"), list):
        raise BankError(f"{p.name}: quiz: field 'items': a source needs a list of items")
    salt = str(src.get("salt") or hashlib.sha256(canonical_json(src).encode()).hexdigest()[:32])
    data = {k: v for k, v in src.items() if k != "items"}
    data["salt"] = salt
    data["items"] = [build_item(it, salt, p.name) for it in src["items"]]
    parse_bank(data, p.name)  # the built bank must validate
    return data, p.name


def build_all(sources: str | Path | None = None, out: str | Path | None = None) -> list[Path]:
    """Build every source into the banks folder; returns the written paths."""
    from quizzes.bank import BANKS_DIR

    src_dir = sources_dir(sources)
    found = sorted(src_dir.glob("*.yaml"))
    if not found:
        where = "no such folder" if not src_dir.is_dir() else "no *.yaml sources in it"
        raise BankError(f"{src_dir}: {where}; nothing to build (give --sources DIR or set "
                        f"{SOURCES_ENV})")
    out_dir = Path(out) if out else BANKS_DIR
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for path in found:
        data, name = build_source(path)
        target = out_dir / name
        header = ("# GENERATED by `quizzes author build` from the private authoring source.\n"
                  "# Answers are stored as salted hashes; edit the source, not this file.\n")
        target.write_text(header + yaml.safe_dump(data, sort_keys=False, allow_unicode=True,
                                                  width=100), encoding="utf-8")
        written.append(target)
    from quizzes import translations
    from quizzes.bank import load_bank
    built = {bank.quiz_id: bank for bank in map(load_bank, written)}
    written += translations.build_all(built, src_dir, out_dir)
    return written


def hash_answer(salt: str, item_id: str, answer: str, variant: str = "") -> str:
    """``quizzes author hash``: the stored hash of one canonical answer."""
    return answer_hash(salt, item_id, variant, answer)


def model_answer(source_item: Mapping[str, Any], params: Mapping[str, Any]) -> Any:
    """A correct response to one source item's variant (for tests, benchmarks, demos).

    Scheduler items have no authored answer (the controller computes it): None.
    """
    from quizzes.items.base import fill

    kind = source_item.get("type")
    options = source_item.get("options") or []
    correct = [o["id"] for o in options if isinstance(o, dict) and o.get("correct")]
    if kind == "single":
        return correct[0]
    if kind == "multiple":
        return correct
    if kind == "numeric":
        if "answer_expr" in source_item:
            return evaluate(str(source_item["answer_expr"]), params)
        return float(source_item["answer"])
    if kind == "text":
        return fill(str(source_item["accept"][0]), params)
    if kind in ("sbatch", "lab"):
        return fill(str(source_item["answer"]), params)
    return None


def load_sources(folder: str | Path | None = None) -> dict[str, dict[str, Any]]:
    """quiz id -> parsed source (the private answers)."""
    src_dir = sources_dir(folder)
    out = {}
    for path in sorted(src_dir.glob("*.yaml")):
        data = read_yaml(path)
        out[str(data["quiz_id"])] = data
    return out
