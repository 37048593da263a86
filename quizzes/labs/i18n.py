"""The labs' words in other languages: title, task statement and hints, per lab id.

``quizzes/labs/locale/<lang>.yaml`` (format ``quizzes-lab-translation/1``) is a sibling
of the catalogue, like the banks' translation files (docs/i18n.md): keyed by lab id,
words only (``title``, ``task``, ``hints``), each lab recording ``source``, the
fingerprint of the English words it translates (:func:`fingerprint`).  Ids, checkers,
starting files, skeletons, events and the documentation lines (quoted from Slurm's man
pages) stay in the catalogue and in English.

A lab whose English words changed since it was translated is **stale**: it is shown in
English (never a translation of an older task the checker no longer grades), and
``python -m quizzes.labs.i18n report pt-BR`` lists it with its current fingerprint.
A field missing from a current translation is shown in English too.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

from quizzes.i18n import DEFAULT_LANG, language
from quizzes.labs.model import Lab

FORMAT = "quizzes-lab-translation/1"
LOCALE_DIR = Path(__file__).resolve().parent / "locale"


@dataclass(frozen=True, slots=True)
class LabText:
    """One lab's words in one language, and the fingerprint of the English they translate."""

    source: str
    title: str = ""
    task: str = ""
    hints: tuple[str, ...] = ()


def fingerprint(lab: Lab) -> str:
    """A short hash of a lab's English words (title, task, hints): ``sha256[:16]``."""
    words = [lab.title, lab.task, list(lab.hints)]
    canonical = json.dumps(words, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def path_for(lang: str, folder: str | Path | None = None) -> Path:
    """``quizzes/labs/locale/<lang>.yaml``."""
    return Path(folder or LOCALE_DIR) / f"{language(lang)}.yaml"


def parse(data: Any, where: str) -> dict[str, LabText]:
    """The translations of a loaded file; ValueError naming the file and the lab on a
    malformed entry."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"{where}: not a lab translation file (format: {FORMAT})")
    labs = data.get("labs") or {}
    if not isinstance(labs, dict):
        raise ValueError(f"{where}: 'labs' must map lab ids to their words")
    out: dict[str, LabText] = {}
    for lab_id, entry in labs.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("source"), str):
            raise ValueError(f"{where}: lab {lab_id}: needs 'source' (the English fingerprint)")
        unknown = set(entry) - {"source", "title", "task", "hints"}
        if unknown:
            raise ValueError(f"{where}: lab {lab_id}: only words are translated, not "
                             f"{', '.join(sorted(unknown))}")
        hints = entry.get("hints") or ()
        if not isinstance(hints, list | tuple) or not all(isinstance(h, str) for h in hints):
            raise ValueError(f"{where}: lab {lab_id}: 'hints' must be a list of strings")
        out[str(lab_id)] = LabText(source=entry["source"], title=str(entry.get("title") or ""),
                                   task=str(entry.get("task") or ""), hints=tuple(hints))
    return out


def load(lang: str, folder: str | Path | None = None) -> Mapping[str, LabText]:
    """Lab id -> words in ``lang`` (empty for English or without a file)."""
    lang = language(lang)
    if lang == DEFAULT_LANG:
        return {}
    return _load_file(path_for(lang, folder))


@cache
def _load_file(path: Path) -> Mapping[str, LabText]:
    import yaml

    if not path.exists():
        return {}
    return parse(yaml.safe_load(path.read_text(encoding="utf-8")), str(path))


def current(lab: Lab, lang: str, folder: str | Path | None = None) -> LabText | None:
    """The lab's translation in ``lang`` if it translates the lab's present English words."""
    text = load(lang, folder).get(lab.id)
    return text if text is not None and text.source == fingerprint(lab) else None


def localise(lab: Lab, lang: str, folder: str | Path | None = None) -> Lab:
    """The lab with its title, task and hints in ``lang`` where a current translation
    has them; the same lab otherwise (checker, files, ids, docs are never touched)."""
    text = current(lab, lang, folder)
    if text is None:
        return lab
    hints = text.hints if len(text.hints) == len(lab.hints) else lab.hints
    return replace(lab, title=text.title or lab.title, task=text.task or lab.task,
                   hints=hints)


def statement_markdown(lab: Lab, lang: str = DEFAULT_LANG) -> str:
    """The lab as a quiz item shows it after the item's prompt, in ``lang``: the title
    line, the task (localised when current), the lab's files and starting file as fenced
    code under their (translated) labels.  For ``en`` it is the text
    `quizzes.items.lab.LabItem.present` builds, so a bank's translation can swap one for
    the other (tests/quizzes/labs/test_lab_i18n.py checks that equality)."""
    from quizzes.i18n import tr

    def fenced(text: str) -> list[str]:
        return ["```", *text.rstrip("\n").split("\n"), "```"]

    item = localise(lab, lang)
    lines = [f"{item.id}: {item.title} ({item.lesson})", "", item.task]
    for name, content in item.files:
        lines += ["", tr(lang, "{name} (in the lab's folder):").format(name=f"`{name}`"),
                  "", *fenced(content)]
    if item.skeleton:
        lines += ["", tr(lang, "{name} (start from this):").format(
            name=f"`{item.answer_file}`"), "", *fenced(item.skeleton)]
    return "\n".join(lines)


def report(lang: str, folder: str | Path | None = None) -> list[str]:
    """One line per lab without a current translation in ``lang``: missing or stale
    (with the fingerprint of the English words to translate), and unknown ids."""
    from quizzes.labs.catalog import LABS

    texts = load(lang, folder)
    lines = []
    for lab in LABS:
        text = texts.get(lab.id)
        if text is None:
            lines.append(f"{lab.id}: missing (source: {fingerprint(lab)})")
        elif text.source != fingerprint(lab):
            lines.append(f"{lab.id}: stale, the English changed (source: {fingerprint(lab)})")
        elif len(text.hints) != len(lab.hints):
            lines.append(f"{lab.id}: {len(text.hints)} hint(s) for {len(lab.hints)}")
    known = {lab.id for lab in LABS}
    lines += [f"{i}: no such lab" for i in texts if i not in known]
    return lines


def main(argv: list[str] | None = None) -> int:
    """``python -m quizzes.labs.i18n report [LANG]``: labs lacking a current translation
    (exit 1 when some do)."""
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] != "report":
        print("usage: python -m quizzes.labs.i18n report [LANG]", file=sys.stderr)
        return 2
    lang = args[1] if len(args) > 1 else "pt-BR"
    lines = report(lang)
    print(f"{path_for(lang)}: {len(lines)} lab(s) without a current translation")
    for line in lines:
        print("  " + line)
    return 1 if lines else 0


if __name__ == "__main__":
    raise SystemExit(main())
