"""Where the authors' private quiz sources are (answers, accepted spellings, checks).

They never ship to a learner: ``quizzes author build`` seals them into the banks and
the translation files. One rule, read by the authoring build and the translations'
command line.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["SOURCES_DIR", "SOURCES_ENV", "sources_dir"]

SOURCES_DIR = Path(__file__).parent / "authoring" / "sources"
SOURCES_ENV = "QUIZZES_SOURCES"


def sources_dir(folder: str | Path | None = None) -> Path:
    """Where the private sources are: ``folder``, else ``$QUIZZES_SOURCES``, else the
    checkout's ``quizzes/authoring/sources/`` (a course deployment keeps them outside
    the learner's workspace and points the variable or ``--sources`` there)."""
    if folder:
        return Path(folder)
    env = os.environ.get(SOURCES_ENV, "").strip()
    return Path(env) if env else SOURCES_DIR
