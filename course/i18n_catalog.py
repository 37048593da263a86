"""The ``course`` gettext catalogue: extraction and update (``python -m course.i18n_catalog
update [LANG ...]``), the same rules as the quiz engine's (quizzes/i18n.py).

Messages are found by Babel in the course's learner-facing code -- the lesson widgets
(course/lessons/*.py), the site build (course/build*.py, course/i18n*.py) and the site's
templates (course/site/**.j2, ``_("...")``) -- with the keywords :data:`KEYWORDS`
(``t(lang, "...")``, ``N_("...")``, ``busy.working("...", **args)``), plus the course's
name and the modules' titles from course/manifest.yaml (the site shows them).  The
catalogue is ``course/locale/<ll_CC>/LC_MESSAGES/course.po``, read directly at run time
(course/i18n.py registers it with :func:`quizzes.i18n.register`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from course.i18n import DOMAIN, LOCALE_DIR
from quizzes.i18n import update_command, write_catalogue

COURSE = Path(__file__).resolve().parent
#: Babel keywords: t(lang, msg), N_(msg), BusyIndicator.working(msg, **args).
KEYWORDS: dict[str, Any] = {"t": (2,), "N_": None, "working": None, "_": None}
#: The files holding learner-facing messages, relative to course/.
SOURCES = (("lessons/*.py", "python"), ("build*.py", "python"), ("i18n*.py", "python"),
           ("site/**.j2", "jinja2.ext:babel_extract"))


def extract(root: Path = COURSE) -> dict[str, list[str]]:
    """msgid -> the ``course/file:line`` places it occurs."""
    from babel.messages.extract import extract_from_dir

    found: dict[str, list[str]] = {}
    method_map = [(pattern, method) for pattern, method in SOURCES]
    options = {"site/**.j2": {"extensions": ""}}
    for filename, lineno, message, _comments, _context in extract_from_dir(
            str(root), method_map=method_map, options_map=options, keywords=KEYWORDS,
            comment_tags=(), strip_comment_tags=True):
        if isinstance(message, tuple | list):   # no plural forms in the course's messages
            message = message[0]
        found.setdefault(str(message), []).append(f"course/{filename}:{lineno}")
    for msgid, where in manifest_messages().items():
        found.setdefault(msgid, []).append(where)
    return found


def manifest_messages() -> dict[str, str]:
    """The course's name and the modules' titles (course/manifest.yaml)."""
    from course.manifest import MANIFEST, load_manifest

    man = load_manifest()
    out = {man.course: f"course/{MANIFEST.name}:1"}
    for m in man.modules:
        out.setdefault(m.title, f"course/{MANIFEST.name}:1")
    return out


def update(lang: str) -> tuple[list[str], Path]:
    """Rewrite ``lang``'s course.po with the messages :func:`extract` finds now, keeping
    the translations it holds; the messages still untranslated and the path."""
    return write_catalogue(lang, DOMAIN, extract())


def main(argv: list[str] | None = None) -> int:
    """``python -m course.i18n_catalog update [LANG ...]``: refresh course.po."""
    return update_command("course.i18n_catalog", update, argv)


__all__ = ["KEYWORDS", "LOCALE_DIR", "extract", "main", "manifest_messages", "update"]

if __name__ == "__main__":
    raise SystemExit(main())
