"""Who is taking the quiz: the hub's user, else a name asked once and remembered.

* Under JupyterHub, ``JUPYTERHUB_USER`` (set by the hub in every learner's
  server) is the learner id: the hub has authenticated that person.
* Outside a hub (self-study), the widget asks for a name once and keeps it in
  the learner's config file, ``$XDG_CONFIG_HOME/minislurm-course/learner.json``
  (``~/.config/...`` when the variable is unset), so every later quiz knows who
  is answering.  The id is the name's slug (``Ada Lovelace`` -> ``ada-lovelace``).

No notebook names a learner: ``quiz("06-backfill")`` asks this module.
"""

from __future__ import annotations

import json
import os
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from quizzes.errors import QuizError

HUB_USER = "JUPYTERHUB_USER"
APP_DIR = "minislurm-course"
FILE_NAME = "learner.json"
MAX_NAME = 100


class IdentityError(QuizError):
    """A name that cannot identify a learner, or a config file that cannot be written."""


@dataclass(frozen=True, slots=True)
class Learner:
    """A learner's id (what the gradebook keys on), display name, and where it came from
    (``hub``: JupyterHub's authenticated user; ``config``: the remembered name)."""

    id: str
    name: str
    source: str


def config_path(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CONFIG_HOME/minislurm-course/learner.json`` (default ``~/.config``)."""
    env = os.environ if env is None else env
    base = env.get("XDG_CONFIG_HOME", "").strip()
    root = Path(base) if base else Path(env.get("HOME") or Path.home()) / ".config"
    return root / APP_DIR / FILE_NAME


def slug(name: str) -> str:
    """The learner id of a name: ASCII letters and digits, lower case, ``-`` between words."""
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", ascii_name.lower()).strip("-")[:64]


def clean_name(name: str) -> str:
    """A name fit for a certificate, or IdentityError saying why not."""
    text = " ".join(name.split())
    if not text:
        raise IdentityError("type your name (it is shown on your certificates)")
    if len(text) > MAX_NAME:
        raise IdentityError(f"a name of at most {MAX_NAME} characters, please")
    if any(unicodedata.category(c).startswith("C") for c in text):
        raise IdentityError("a name without control characters, please")
    if not slug(text):
        raise IdentityError("a name with at least one letter or digit, please")
    return text


def saved(env: Mapping[str, str] | None = None) -> Learner | None:
    """The remembered learner, or None (no file, or one that is not a learner record)."""
    path = config_path(env)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("learner_id"), str) \
            or not isinstance(data.get("learner_name"), str) or not data["learner_id"].strip():
        return None
    return Learner(data["learner_id"], data["learner_name"] or data["learner_id"], "config")


def current(env: Mapping[str, str] | None = None) -> Learner | None:
    """The hub's user when ``JUPYTERHUB_USER`` is set, else the remembered learner, else
    None (the widget then asks for a name)."""
    env = os.environ if env is None else env
    hub = env.get(HUB_USER, "").strip()
    if hub:
        mine = saved(env)
        name = mine.name if mine is not None and mine.id == hub else hub
        return Learner(hub, name, "hub")
    return saved(env)


def remember(name: str, env: Mapping[str, str] | None = None) -> Learner:
    """Keep ``name`` as this learner's identity (written atomically, readable by the
    learner only).  Under a hub the id stays the hub's user; the name is what a
    certificate shows.  A previous file that is not a learner record is kept as
    ``learner.json.bak``."""
    env = os.environ if env is None else env
    text = clean_name(name)
    hub = env.get(HUB_USER, "").strip()
    learner = Learner(hub or slug(text), text, "hub" if hub else "config")
    path = config_path(env)
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if path.exists() and saved(env) is None:
            path.replace(path.with_name(FILE_NAME + ".bak"))
        tmp = path.with_name(f".{FILE_NAME}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({"learner_id": learner.id, "learner_name": learner.name}, fh, indent=1)
            fh.write("\n")
        tmp.replace(path)
    except OSError as exc:
        raise IdentityError(f"cannot keep your name in {path}: {exc.strerror}") from None
    return learner
