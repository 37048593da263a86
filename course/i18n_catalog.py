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

import sys
from pathlib import Path
from typing import Any

from course.i18n import DOMAIN, LOCALE_DIR
from quizzes.i18n import DEFAULT_LANG, LANGS, catalogue, language, po_path

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
    from babel.messages.catalog import Catalog
    from babel.messages.pofile import read_po, write_po

    lang = language(lang)
    path = po_path(lang, DOMAIN)
    old: dict[Any, Any] = {}
    dates: dict[str, Any] = {}
    if path.exists():
        with path.open("rb") as fh:
            previous = read_po(fh, locale=LANGS[lang])
        old = {m.id: m.string for m in previous if m.id}
        dates = {"creation_date": previous.creation_date,
                 "revision_date": previous.revision_date}
    cat = Catalog(locale=LANGS[lang], domain=DOMAIN, project="minislurm-course",
                  version="0.1.0", copyright_holder="the minislurm-course authors",
                  msgid_bugs_address="", last_translator="minislurm-course authors",
                  language_team=f"{lang} <minislurm-course>", fuzzy=False, **dates)
    missing = []
    for msgid, places in sorted(extract().items(), key=lambda kv: kv[1][0]):
        text = old.get(msgid) or ""
        if not text:
            missing.append(msgid)
        where = [(p.rsplit(":", 1)[0], int(p.rsplit(":", 1)[1])) for p in places]
        cat.add(msgid, text, locations=where)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as fh:
        write_po(fh, cat, width=100, sort_by_file=True, omit_header=False)
    catalogue.cache_clear()
    return missing, path


def main(argv: list[str] | None = None) -> int:
    """``python -m course.i18n_catalog update [LANG ...]``: refresh course.po."""
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] != "update":
        print("usage: python -m course.i18n_catalog update [LANG ...]", file=sys.stderr)
        return 2
    status = 0
    for lang in args[1:] or [x for x in LANGS if x != DEFAULT_LANG]:
        missing, path = update(lang)
        print(f"{path}: {len(missing)} message(s) without a translation")
        for msgid in missing:
            print(f"  {msgid!r}")
        status |= bool(missing)
    return status


__all__ = ["KEYWORDS", "LOCALE_DIR", "extract", "main", "manifest_messages", "update"]

if __name__ == "__main__":
    raise SystemExit(main())
