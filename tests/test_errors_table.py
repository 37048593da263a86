"""The one table of Slurm's error texts (`minislurm.errors.Errno`).

Each ``slurm_strerror`` text minislurm prints is spelled once, in the table;
code elsewhere names the member.  The guard below parses every Python file of
minislurm/, course/ and quizzes/ and fails on a string literal (docstrings
excepted: they may quote what a command prints) that contains one of the
table's texts.

Since ctld switched to the table (h-ctld 86db2e2) no folder is exempt: a folder
may be listed in ``EXEMPT_DIRS`` only while it is being moved over.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from minislurm.errors import ERRNO_TEXTS, Errno, RequestError, SlurmError

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("minislurm", "course", "quizzes")
#: Folders whose copies are not switched yet (see the module docstring).
EXEMPT_DIRS: tuple[str, ...] = ()
#: Literals that contain a table text but are another message of Slurm's own,
#: not ``slurm_strerror``'s: (file, literal prefix).
NOT_ERRNO = {
    # sbatch/srun opt.c: "Invalid --nice value, out of range (+/- %u)".
    ("minislurm/options/values.py", "Invalid --nice value, out of range"),
}
LIBSLURM = Path("/usr/lib/x86_64-linux-gnu/slurm-wlm/libslurmfull.so")


def _docstring_ids(tree: ast.AST) -> set[int]:
    ids: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
        # attribute docstrings: a bare string right after an assignment
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            if isinstance(stmts, list):
                for stmt in stmts:
                    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                        ids.add(id(stmt.value))
    return ids


def _literals(path: Path) -> Iterator[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    docs = _docstring_ids(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            yield node.lineno, node.value


def copies(roots: tuple[str, ...] = SCANNED) -> list[str]:
    """``file:line: text`` for each literal copy of a table text outside the table."""
    found = []
    for root in roots:
        for path in sorted((ROOT / root).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel == "minislurm/errors.py" or rel.startswith(tuple(d + "/" for d in EXEMPT_DIRS)):
                continue
            for line, value in _literals(path):
                if any(rel == f and value.startswith(p) for f, p in NOT_ERRNO):
                    continue
                found += [f"{rel}:{line}: {text!r}" for text in ERRNO_TEXTS.values()
                          if text in value]
    return found


def test_no_error_text_is_spelled_outside_the_table() -> None:
    assert copies() == []


def test_the_guard_sees_a_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(
        '"""Docstrings may quote Invalid job id specified."""\n'
        'X = "slurm_load_jobs error: Invalid job id specified"\n'
        'Y = f"{0}: Requested nodes are busy"\n')
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert copies(("pkg",)) == [
        "pkg/m.py:2: 'Invalid job id specified'",
        "pkg/m.py:3: 'Requested nodes are busy'",
    ]


def test_each_text_once() -> None:
    texts = list(ERRNO_TEXTS.values())
    assert len(texts) == len(set(texts)) >= 30
    assert ERRNO_TEXTS["ESLURM_INVALID_JOB_ID"] == Errno.ESLURM_INVALID_JOB_ID


@pytest.mark.skipif(not LIBSLURM.exists() or shutil.which("strings") is None,
                    reason="Debian's libslurmfull.so (slurm-wlm 22.05.8) is not installed")
def test_texts_are_slurm_22_05_s() -> None:
    """Each text is one of the strings of the real library, character for character."""
    out = subprocess.run(["strings", str(LIBSLURM)], capture_output=True, text=True,
                         check=True).stdout
    strings = set(out.splitlines())
    assert [name for name, text in ERRNO_TEXTS.items() if text not in strings] == []


def test_request_error_carries_message_and_exit_code() -> None:
    err = RequestError(Errno.ESLURM_INVALID_JOB_ID, "slurm_load_jobs error: ")
    assert isinstance(err, SlurmError)
    assert (err.message, err.exit_code, err.errno_name) == (
        "slurm_load_jobs error: Invalid job id specified", 1, "ESLURM_INVALID_JOB_ID")
