"""The course in other languages: the notebook editions and the ``course`` gettext domain.

* **Notebooks** (docs/i18n.md): ``notebooks/NN-name.ipynb`` is the one source of code
  and outputs.  Its markdown in another language lives in
  ``course/locale/<ll_CC>/notebooks/NN-name.yaml`` (format
  ``course-notebook-translation/1``, described in docs/i18n.md: per
  markdown cell id, the fingerprint of the English text translated and the
  translation).  :func:`build_edition` writes ``notebooks/<lang>/NN-name.ipynb``: the
  English notebook's JSON with each markdown cell's ``source`` replaced and
  ``metadata.lang`` set, every other byte (code cells, outputs, ids, widget state) as
  in English; plus the edition marker ``.course-lang`` (which makes the widgets speak
  the edition's language, :func:`quizzes.i18n.resolve`) and ``readings/`` links to
  ``course/lessons/<lang>/NN-name.md`` (the same relative links as in English).  A
  markdown cell with no current translation (missing, or made from an older English
  text) fails the build with :class:`EditionError` naming the notebook and the cell.
* **Widget messages**: the ``course`` gettext domain,
  ``course/locale/<ll_CC>/LC_MESSAGES/course.po``, registered with
  :func:`quizzes.i18n.register`; :func:`t` translates one of them.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from quizzes import i18n as qi18n
from quizzes.i18n import LANGS, MARKER, N_, language, register, resolve, tr

#: The course's locale folder: ``<ll_CC>/LC_MESSAGES/course.po`` and ``<ll_CC>/notebooks/``.
LOCALE_DIR = Path(__file__).resolve().parent / "locale"
DOMAIN = "course"
FORMAT = "course-notebook-translation/1"
#: The English readings (course/lessons/NN-name.md) and each language's folder below it.
LESSONS_DIR = Path(__file__).resolve().parent / "lessons"
#: The English notebooks: an edition is written to ``NOTEBOOKS_DIR / <lang>``.
NOTEBOOKS_DIR = Path(__file__).resolve().parent.parent / "notebooks"
#: The folder under a notebooks folder (JupyterLab's root) holding links to the readings.
READINGS_DIR = "readings"
#: Written into an edition folder: it is built output, never committed (docs/i18n.md).
GITIGNORE = "# built by `python -m course build --lang`: do not edit, do not commit\n*\n"

register(DOMAIN, LOCALE_DIR)


def t(lang: str, message: str) -> str:
    """``message`` (an English msgid of the ``course`` domain) in ``lang``."""
    return tr(lang, message, DOMAIN)


def widget_lang(lang: str | None = None) -> str:
    """The language a course widget speaks: :func:`quizzes.i18n.resolve` (``lang=``, else
    ``$COURSE_LANG``, else the edition marker in the kernel's folder, else English)."""
    return resolve(lang)


class EditionError(RuntimeError):
    """An edition cannot be built; the message names the notebook and each cell."""

    @property
    def message(self) -> str:
        """The user-facing text."""
        return str(self)


def fingerprint(source: str | Sequence[str]) -> str:
    """The fingerprint of a cell's English text: sha256 of its joined source, 16 hex."""
    text = source if isinstance(source, str) else "".join(source)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class CellText:
    """One markdown cell's translation and the fingerprint of the English it translates."""

    en: str
    text: str


@dataclass(frozen=True, slots=True)
class NotebookText:
    """A notebook's words in one language, by English markdown cell id."""

    notebook: str
    lang: str
    cells: Mapping[str, CellText]
    path: Path


def translation_path(lang: str, notebook: str | Path, locale_dir: Path = LOCALE_DIR) -> Path:
    """``course/locale/<ll_CC>/notebooks/NN-name.yaml`` of a notebook."""
    return locale_dir / LANGS[language(lang)] / "notebooks" / f"{Path(notebook).stem}.yaml"


def load_text(path: Path) -> NotebookText:
    """Parse and check a translation file; EditionError saying what is wrong."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise EditionError(f"course build: {path}: cannot read: {exc}") from exc
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise EditionError(f"course build: {path}: not a {FORMAT} file (format: "
                           f"{data.get('format') if isinstance(data, dict) else None!r})")
    cells = data.get("cells") or {}
    if not isinstance(cells, dict):
        raise EditionError(f"course build: {path}: 'cells' must map cell ids to entries")
    out: dict[str, CellText] = {}
    for cid, entry in cells.items():
        if not (isinstance(entry, dict) and isinstance(entry.get("text"), str)
                and entry.get("en") is not None):
            raise EditionError(f"course build: {path}: cell {cid}: needs 'en' (fingerprint) "
                               f"and 'text'")
        out[str(cid)] = CellText(str(entry["en"]), entry["text"])
    return NotebookText(str(data.get("notebook", "")), language(str(data.get("lang", ""))),
                        out, path)


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def translate(nb: dict[str, Any], text: NotebookText, name: str) -> dict[str, Any]:
    """The notebook ``nb`` (parsed JSON) in ``text``'s language; EditionError listing every
    markdown cell with no current translation and every entry naming no markdown cell."""
    problems: list[str] = []
    md_ids: set[str] = set()
    cells = []
    for index, cell in enumerate(nb["cells"]):
        if cell.get("cell_type") != "markdown":
            cells.append(cell)
            continue
        cid = str(cell.get("id", ""))
        md_ids.add(cid)
        english = "".join(cell["source"])
        entry = text.cells.get(cid)
        if entry is None:
            problems.append(f"{name}: markdown cell {cid} (#{index}) has no {text.lang} "
                            f"translation")
            continue
        if entry.en != fingerprint(english):
            problems.append(f"{name}: markdown cell {cid} (#{index}): the {text.lang} "
                            f"translation was made from another English text (fingerprint "
                            f"{entry.en}, the cell's is now {fingerprint(english)})")
            continue
        # a YAML block scalar ends in one newline: end as the English cell ends
        translated = entry.text.rstrip("\n") + "\n" * (len(english) - len(english.rstrip("\n")))
        cells.append({**cell, "source": _lines(translated)})
    for cid in text.cells:
        if cid not in md_ids:
            problems.append(f"{name}: {text.path.name} translates cell {cid}, which is not a "
                            f"markdown cell of the English notebook")
    if problems:
        raise EditionError("course build: no current translation for:\n  "
                           + "\n  ".join(problems))
    metadata = {**nb.get("metadata", {}), "lang": text.lang}
    return {**nb, "metadata": metadata, "cells": cells}


def dump(nb: dict[str, Any]) -> str:
    """A notebook's JSON as the repository stores it (indent 1, UTF-8, final newline)."""
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


def edition_dir(lang: str, notebooks: Path = NOTEBOOKS_DIR) -> Path:
    """Where a language's notebooks are: ``notebooks/`` for English, else
    ``notebooks/<lang>/``."""
    lang = language(lang)
    return notebooks if lang == qi18n.DEFAULT_LANG else notebooks / lang


#: The nbval sanitizer an edition's run adds to notebooks/sanitize.cfg.  A widget cell's
#: output holds, beside the widget view (never compared), a ``text/plain`` repr of the
#: widget tree, ``VBox(children=(VBox(children=(HTML(value='<b>Predict first:</b> ...``:
#: its widget classes are compared, its words (the edition's language) are not.  Every
#: other output -- everything minislurm prints, tables, figures -- is compared byte for byte.
WIDGET_WORDS_SANITIZER = """
# added for a translated edition's nbval run (course/i18n.py: nbval_sanitize)
[widget-repr-words]
regex: ^((?:VBox|HBox|Box|GridBox)\\(children=\\(.*?\\b(?:value|description|placeholder)=)['"].*
replace: \\1<WORDS IN THE EDITION'S LANGUAGE>
"""


def nbval_sanitize(lang: str, dest: Path,
                   base: Path = NOTEBOOKS_DIR / "sanitize.cfg") -> Path:
    """The nbval sanitizer file of an edition: notebooks/sanitize.cfg itself for English;
    for another language, a copy plus :data:`WIDGET_WORDS_SANITIZER` written to ``dest``."""
    if language(lang) == qi18n.DEFAULT_LANG:
        return base
    dest.write_text(base.read_text(encoding="utf-8") + WIDGET_WORDS_SANITIZER,
                    encoding="utf-8")
    return dest


def build_edition(lang: str, sources: Sequence[Path], out: Path | None = None, *,
                  locale_dir: Path = LOCALE_DIR, lessons: Path = LESSONS_DIR) -> list[Path]:
    """Write the ``lang`` edition of the English notebooks ``sources`` into ``out``
    (default ``notebooks/<lang>/``) with its marker and reading links; the paths written.
    English is the source itself: nothing to write.  Every problem of every notebook is
    reported at once (EditionError) and then nothing is written."""
    lang = language(lang)
    if lang == qi18n.DEFAULT_LANG:
        return list(sources)
    folder = out if out is not None else edition_dir(lang, sources[0].parent if sources
                                                     else NOTEBOOKS_DIR)
    built: dict[str, str] = {}
    problems: list[str] = []
    for src in sources:
        path = translation_path(lang, src, locale_dir)
        if not path.is_file():
            problems.append(f"{src.name}: no translation file {path}")
            continue
        try:
            nb = json.loads(src.read_text(encoding="utf-8"))
            built[src.name] = dump(translate(nb, load_text(path), src.name))
        except EditionError as exc:
            problems.append(str(exc).removeprefix("course build: no current translation "
                                                  "for:\n  "))
    if problems:
        raise EditionError(f"course build: the {lang} edition cannot be built, no current "
                           "translation for:\n  " + "\n  ".join(problems))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / ".gitignore").write_text(GITIGNORE, encoding="utf-8")
    (folder / MARKER).write_text(f"{lang}\n", encoding="utf-8")
    written = []
    for name, body in built.items():
        target = folder / name
        tmp = target.with_suffix(".ipynb.tmp")
        tmp.write_text(body, encoding="utf-8")
        os.replace(tmp, target)
        written.append(target)
    link_readings(lang, folder, lessons)
    return written


def link_readings(lang: str, folder: Path, lessons: Path = LESSONS_DIR) -> list[Path]:
    """``<folder>/readings/NN-name.md`` -> ``course/lessons/<lang>/NN-name.md`` (relative
    symbolic links, as notebooks/readings/ holds for English)."""
    readings = folder / READINGS_DIR
    if readings.is_symlink() or readings.is_file():
        readings.unlink()
    elif readings.is_dir():
        shutil.rmtree(readings)
    readings.mkdir(parents=True)
    links = []
    for md in sorted((lessons / language(lang)).glob("*.md")):
        link = readings / md.name
        link.symlink_to(os.path.relpath(md, readings))
        links.append(link)
    return links


__all__ = ["DOMAIN", "FORMAT", "LOCALE_DIR", "N_", "CellText", "EditionError", "NotebookText",
           "build_edition", "dump", "edition_dir", "fingerprint", "link_readings", "load_text",
           "t", "translate", "translation_path", "widget_lang"]
