"""The quiz engine's languages: one switch, gettext catalogues, translatable messages.

* :func:`resolve` is the one place the language is chosen: the ``lang=`` argument,
  else ``$COURSE_LANG``, else English (``en``); ``pt_BR``, ``pt-br``, ``pt`` name
  ``pt-BR`` (:func:`language`).  Numbers are read in the same language
  (:mod:`quizzes.items.units`).
* :func:`tr` translates one message for a language, from the
  catalogue ``quizzes/locale/<ll_CC>/LC_MESSAGES/quizzes.po`` (GNU gettext,
  read with Babel).  The ``.po`` file is read directly (cached per process): no
  compiled ``.mo`` is kept in the repository, so the file reviewers edit is the
  file the engine runs, and a wheel needs no build step.  A message missing
  from the catalogue (or marked fuzzy) falls back to English.
* :class:`Msg` (made by :func:`M`) is a message not yet translated: graders
  return one with their English feedback, and the widget renders it in the
  learner's language.  Arguments may be Msgs too (rendered in the same language).

Slurm's own words (commands, options, states, reasons, outputs) are never
messages: they are arguments, and stay in English in every language.

Extraction keywords (Babel): ``tr`` (message = 2nd argument), ``M`` and ``N_``
(1st).  ``python -m quizzes.i18n update`` re-extracts the messages into every
``.po`` (translations kept, new messages empty, gone ones dropped);
``tests/quizzes/i18n/test_quiz_i18n.py`` fails when a message lacks a pt-BR translation.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

DEFAULT_LANG = "en"
#: Languages of the course: tag -> gettext locale directory name.
LANGS = {"en": "en", "pt-BR": "pt_BR"}
ENV_VAR = "COURSE_LANG"
#: A file naming the edition's language in the folder of its notebooks (see resolve).
MARKER = ".course-lang"
DOMAIN = "quizzes"
LOCALE_DIR = Path(__file__).resolve().parent / "locale"
#: Other packages' gettext domains and their locale folders (``course`` registers its
#: own: course imports quizzes, never the reverse).
DOMAINS: dict[str, Path] = {}
#: Babel extraction keywords of this module's functions.
KEYWORDS: dict[str, Any] = {"tr": (2,), "M": None, "N_": None}


def language(lang: str | None) -> str:
    """The supported language a tag names (``pt_BR``, ``pt-br``, ``pt`` -> ``pt-BR``;
    ``en_US``, ``C`` -> ``en``); ValueError naming the known ones otherwise."""
    tag = (lang or DEFAULT_LANG).strip().replace("_", "-").split(".")[0].lower()
    if tag in ("en", "c", "posix") or tag.startswith("en-"):
        return "en"
    if tag in ("pt", "pt-br") or tag.startswith("pt-"):
        return "pt-BR"
    raise ValueError(f"unknown language '{lang}': quizzes and numbers cannot be read in "
                     f"language '{lang}' (known: {', '.join(LANGS)})")


def resolve(lang: str | None = None, env: Mapping[str, str] | None = None,
            cwd: str | Path | None = None) -> str:
    """The language to use: ``lang`` when given, else ``$COURSE_LANG``, else the
    edition's marker file :data:`MARKER` in the working directory (a kernel runs in
    its notebook's folder: the pt-BR build writes ``notebooks/pt-BR/.course-lang``,
    so one JupyterLab can serve both editions), else ``en``.

    >>> resolve(None, {"COURSE_LANG": "pt_BR"})
    'pt-BR'
    >>> resolve("en", {"COURSE_LANG": "pt-BR"})
    'en'
    """
    environ = os.environ if env is None else env
    chosen = (lang or "").strip() or environ.get(ENV_VAR, "").strip()
    if not chosen:
        marker = Path.cwd() / MARKER if cwd is None else Path(cwd) / MARKER
        try:
            chosen = marker.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            chosen = ""
    return language(chosen or DEFAULT_LANG)


def register(domain: str, locale_dir: str | Path) -> None:
    """Another package's catalogues: ``<locale_dir>/<ll_CC>/LC_MESSAGES/<domain>.po``."""
    DOMAINS[domain] = Path(locale_dir)
    catalogue.cache_clear()


def po_path(lang: str, domain: str = DOMAIN) -> Path:
    """``quizzes/locale/<ll_CC>/LC_MESSAGES/quizzes.po`` of a language (or of a
    registered domain)."""
    base = LOCALE_DIR if domain == DOMAIN else DOMAINS[domain]
    return base / LANGS[language(lang)] / "LC_MESSAGES" / f"{domain}.po"


@cache
def catalogue(lang: str, domain: str = DOMAIN
              ) -> Mapping[str | tuple[str, str], tuple[str, ...]]:
    """msgid (or (singular, plural)) -> translated forms, from the language's ``.po``;
    English and a missing file give an empty catalogue (messages stay English)."""
    lang = language(lang)
    path = po_path(lang, domain)
    if lang == DEFAULT_LANG or not path.exists():
        return {}
    from babel.messages.pofile import read_po

    with path.open("rb") as fh:
        cat = read_po(fh, locale=LANGS[lang])
    out: dict[str | tuple[str, str], tuple[str, ...]] = {}
    for message in cat:
        if not message.id or message.fuzzy:
            continue
        raw = message.string
        forms = tuple(str(f or "") for f in raw) if isinstance(raw, tuple | list) \
            else (str(raw or ""),)
        if all(forms):
            key: Any = tuple(message.id) if isinstance(message.id, tuple | list) else message.id
            out[key] = forms
    return out


def tr(lang: str, message: str, domain: str = DOMAIN) -> str:
    """``message`` (an English msgid) in ``lang`` (from ``domain``'s catalogue);
    English when not translated."""
    forms = catalogue(language(lang), domain).get(message)
    return forms[0] if forms else message


def N_(message: str) -> str:
    """Marks a message for extraction where it is defined; translated where shown."""
    return message


@dataclass(frozen=True, slots=True)
class Msg:
    """A message with named arguments, rendered in a language when shown."""

    msgid: str
    args: tuple[tuple[str, Any], ...] = ()

    def render(self, lang: str = DEFAULT_LANG) -> str:
        values = {k: (v.render(lang) if isinstance(v, Msg) else v) for k, v in self.args}
        return tr(lang, self.msgid).format(**values)

    def __str__(self) -> str:
        return self.render(DEFAULT_LANG)


def M(message: str, **args: Any) -> Msg:
    """A :class:`Msg` (``M("Cannot read this number: {reason}.", reason=...)``)."""
    return Msg(message, tuple(sorted(args.items())))


def text(value: str | Msg, lang: str) -> str:
    """``value`` in ``lang`` when it is a Msg; a plain string as it is."""
    return value.render(lang) if isinstance(value, Msg) else value


def extract(root: Path | None = None) -> dict[str | tuple[str, str], list[str]]:
    """Every message of the engine's ``.py`` files under ``root`` (default: the
    ``quizzes`` package) found by Babel's extractor with :data:`KEYWORDS`:
    msgid (or (singular, plural)) -> the ``file:line`` places it occurs."""
    from babel.messages.extract import extract_from_dir

    base = root or Path(__file__).resolve().parent
    found: dict[str | tuple[str, str], list[str]] = {}
    for filename, lineno, message, _comments, _context in extract_from_dir(
            str(base), method_map=[("**.py", "python")], keywords=KEYWORDS,
            comment_tags=(), strip_comment_tags=True):
        key: Any = tuple(message) if isinstance(message, tuple | list) else message
        found.setdefault(key, []).append(f"{filename}:{lineno}")
    return found


def update(lang: str) -> tuple[list[str], Path]:
    """Rewrite ``lang``'s ``.po`` with the messages :func:`extract` finds now, keeping
    the translations it holds; returns the messages still untranslated and the path."""
    from babel.messages.catalog import Catalog
    from babel.messages.pofile import read_po, write_po

    lang = language(lang)
    path = po_path(lang)
    old: dict[Any, Any] = {}
    dates: dict[str, Any] = {}
    if path.exists():
        with path.open("rb") as fh:
            previous = read_po(fh, locale=LANGS[lang])
        old = {m.id: m.string for m in previous if m.id}
        dates = {"creation_date": previous.creation_date,   # no churn when nothing changed
                 "revision_date": previous.revision_date}
    cat = Catalog(locale=LANGS[lang], domain=DOMAIN, project="minislurm-course",
                  version="0.1.0", copyright_holder="the minislurm-course authors",
                  msgid_bugs_address="", last_translator="minislurm-course authors",
                  language_team=f"{lang} <minislurm-course>", fuzzy=False, **dates)
    missing = []
    root = Path(__file__).resolve().parent
    for msgid, places in sorted(extract(root).items(), key=lambda kv: kv[1][0]):
        text = old.get(msgid) or ""
        if not text:
            missing.append(str(msgid))
        where = [(f"quizzes/{p.rsplit(':', 1)[0]}", int(p.rsplit(":", 1)[1])) for p in places]
        cat.add(msgid, text, locations=where)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as fh:
        write_po(fh, cat, width=100, sort_by_file=True, omit_header=False)
    catalogue.cache_clear()
    return missing, path


def main(argv: list[str] | None = None) -> int:
    """``python -m quizzes.i18n update [LANG...]``: refresh the catalogues."""
    import sys

    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] != "update":
        print("usage: python -m quizzes.i18n update [LANG ...]", file=sys.stderr)
        return 2
    status = 0
    for lang in args[1:] or [t for t in LANGS if t != DEFAULT_LANG]:
        missing, path = update(lang)
        print(f"{path}: {len(missing)} message(s) without a translation")
        for msgid in missing:
            print(f"  {msgid!r}")
        status |= bool(missing)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
