"""What a learner's server runs: the course without any answer material.

:func:`build` copies the packages (``minislurm``, ``course``, ``quizzes``), the
``bin/`` commands and ``notebooks/`` into the class's ``image/`` folder, leaving
out ``quizzes/banks`` (the hashed keys) and ``quizzes/authoring`` (the plain
answers).  Learners' servers get ``PYTHONPATH=<image>``, which shadows the
checkout or the installed package, and their notebooks are copied from
``<image>/notebooks``.  The image's ``.venv`` links to the Python environment
running the hub, so the ``bin/`` wrappers find it.

On Kubernetes the same rule makes the learners' container image (docs/classroom.md).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

#: Folders of the course a learner must not get (relative to the repository).
EXCLUDED = ("quizzes/banks", "quizzes/authoring")
PACKAGES = ("minislurm", "course", "quizzes")
COPIED = (*PACKAGES, "bin", "notebooks")


def _ignore(root: Path) -> Callable[[str, list[str]], set[str]]:
    excluded = {(root / e).resolve() for e in EXCLUDED}

    def ignore(folder: str, names: list[str]) -> set[str]:
        here = Path(folder).resolve()
        out = {n for n in names if n in ("__pycache__", ".ipynb_checkpoints")
               or n.endswith(".pyc")}
        out |= {n for n in names if (here / n) in excluded}
        return out

    return ignore


def build(repo: Path, dest: Path, python_prefix: Path | None = None) -> Path:
    """(Re)build the image at ``dest`` from the repository ``repo``; returns ``dest``.
    Its ``.venv`` links to ``python_prefix`` (the learners' Python environment,
    default the one running this)."""
    tmp = dest.with_name(dest.name + ".new")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    for name in COPIED:
        shutil.copytree(repo / name, tmp / name, ignore=_ignore(repo), symlinks=True)
    os.symlink(python_prefix or sys.prefix, tmp / ".venv")
    for folder in (tmp, *tmp.rglob("*")):
        if folder.is_dir() and not folder.is_symlink():
            folder.chmod(0o755)
    old = dest.with_name(dest.name + ".old")
    if dest.exists():
        if old.exists():
            shutil.rmtree(old)
        dest.rename(old)
    tmp.rename(dest)
    if old.exists():
        shutil.rmtree(old)
    return dest


def answer_material(root: Path) -> list[Path]:
    """Files under ``root`` a learner must not have (empty for a good image)."""
    return sorted(p for e in EXCLUDED for p in (root / e).rglob("*") if p.is_file())
