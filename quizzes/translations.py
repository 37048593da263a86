"""Per-locale text of a bank: the same items, ids, params and keys, other words.

A translation is a sibling bank file, ``quizzes/banks/<lang>/<module>.yaml``
(format ``quizzes-translation/1``), built from the authors' source
``<sources>/<lang>/<module>.yaml``.  It holds only words, keyed by item id::

    quiz_id: 02-sbatch
    title: "Módulo 2: jobs em lote com sbatch"
    objectives: {directives: "Ler diretivas #SBATCH ..."}
    items:
      nodes-and-tasks:
        prompt: "Quantas tasks o `srun` inicia com `-N{{n}} --ntasks-per-node=8`?"
        options: {a: "...", b: "..."}          # by option id (order and shuffle unchanged)
        explanation: "..."                      # sealed in the built file, like the bank's

Answers never appear here: the keys stay in the English bank, so grading,
variants, shuffles, the gradebook and item analysis are one and the same for
every language.  Portuguese spellings of a text answer are listed in the
English source's ``accept`` as ``{pt-BR: [...]}`` (:func:`quizzes.items.text.author_key`).

Each built item records the fingerprint of the English text it translates
(:func:`fingerprint`).  When the English item changes, the old translation is
*stale*: it is not shown (the learner sees the English text, the fallback for
any field not translated) and :func:`report` lists it, so a translation cannot
silently drift from what is graded.  Why a sibling file and not fields inside
the bank: the bank's version is a hash of its content and submissions carry
it, so fixing a Portuguese typo must not outdate English learners' work
(docs/i18n.md).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from quizzes.errors import BankError
from quizzes.hashing import canonical_json, seal, unseal
from quizzes.i18n import DEFAULT_LANG, language
from quizzes.template import fill

if TYPE_CHECKING:
    from quizzes.bank import Bank, Item
    from quizzes.items.base import Presented

FORMAT = "quizzes-translation/1"
TEXT_FIELDS = ("prompt", "options", "explanation")


@dataclass(frozen=True, slots=True)
class ItemText:
    """One item's words in one language (``None``/empty: not translated)."""

    fingerprint: str
    prompt: str | None = None
    options: tuple[tuple[str, str], ...] = ()
    explanation: str | None = None  # plain (unsealed on load)


@dataclass(frozen=True, slots=True)
class Translation:
    """A bank's words in one language; ``items`` holds only the current (not stale) ones."""

    quiz_id: str
    lang: str
    title: str | None = None
    objectives: tuple[tuple[str, str], ...] = ()
    items: Mapping[str, ItemText] = field(default_factory=dict)
    stale: tuple[str, ...] = ()  # item ids translated from older English text

    def prompt(self, item: Item, presented: Presented, params: Mapping[str, Any]) -> Presented:
        """``presented`` with this language's prompt and option texts where translated.

        Only the item's own prompt is replaced (a scheduler item's scenario lines and
        an exhibit, which are Slurm's output, stay as they are).  A lab item's statement
        after its prompt comes from the lab's own translation
        (`quizzes.items.lab.LabItem.in_language`), even when the prompt has none."""
        from quizzes.items.lab import LabItem

        if isinstance(item, LabItem):
            presented = item.in_language(presented, self.lang)
        text = self.items.get(item.common.id)
        if text is None:
            return presented
        prompt = presented.prompt
        english = fill(item.common.prompt, params)
        if text.prompt and prompt.startswith(english):
            prompt = fill(text.prompt, params) + prompt[len(english):]
        words = dict(text.options)
        options = tuple((oid, fill(words[oid], params) if oid in words else shown)
                        for oid, shown in presented.options)
        return replace(presented, prompt=prompt, options=options)

    def explanation(self, item_id: str, params: Mapping[str, Any]) -> str | None:
        text = self.items.get(item_id)
        if text is None or not text.explanation:
            return None
        return fill(text.explanation, params)


def fingerprint(item: Item) -> str:
    """A short hash of an item's English words (prompt, option texts, explanation)."""
    words = [item.common.prompt, [list(o) for o in getattr(item, "options", ())],
             item.common.explanation]
    return hashlib.sha256(canonical_json(words).encode("utf-8")).hexdigest()[:16]


def path_for(bank: Bank, lang: str, folder: str | Path | None = None) -> Path:
    """``<banks>/<lang>/<module>.yaml`` beside the bank's own file."""
    base = Path(folder) if folder is not None else Path(bank.path).parent
    return base / language(lang) / Path(bank.path).name


def _words(where: str, raw: Any, name: str) -> str | None:
    value = raw.get(name)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise BankError(f"{where}: field '{name}': must be a non-empty string")
    return value


def build(source: Mapping[str, Any], bank: Bank, file: str) -> dict[str, Any]:
    """An author's translation source -> the translation file's data (explanations
    sealed, each item's English fingerprint recorded).  Unknown items or option ids
    and a wrong quiz id are errors naming the file and item."""
    if not isinstance(source, dict) or source.get("quiz_id") != bank.quiz_id:
        raise BankError(f"{file}: quiz: field 'quiz_id': must be '{bank.quiz_id}'")
    items = source.get("items") or {}
    if not isinstance(items, dict):
        raise BankError(f"{file}: quiz: field 'items': a mapping of item id to its words")
    out: dict[str, Any] = {"format": FORMAT, "quiz_id": bank.quiz_id}
    if source.get("title") is not None:
        out["title"] = _words(f"{file}: quiz", source, "title")
    objectives = source.get("objectives") or {}
    known_objectives = {k for k, _ in bank.objectives}
    if not isinstance(objectives, dict) or set(objectives) - known_objectives:
        raise BankError(f"{file}: quiz: field 'objectives': unknown objective(s) "
                        f"{sorted(set(objectives) - known_objectives)}")
    if objectives:
        out["objectives"] = {str(k): str(v) for k, v in objectives.items()}
    built: dict[str, Any] = {}
    ids = {it.common.id for it in bank.items}
    for item_id, raw in items.items():
        where = f"{file}: item '{item_id}'"
        if item_id not in ids:
            raise BankError(f"{where}: no such item in {Path(bank.path).name or bank.quiz_id}")
        if not isinstance(raw, dict) or set(raw) - set(TEXT_FIELDS):
            raise BankError(f"{where}: only {', '.join(TEXT_FIELDS)} are translated")
        item = bank.item(item_id)
        entry: dict[str, Any] = {"source": fingerprint(item)}
        if (prompt := _words(where, raw, "prompt")) is not None:
            entry["prompt"] = prompt
        options = raw.get("options") or {}
        option_ids = {oid for oid, _ in getattr(item, "options", ())}
        if not isinstance(options, dict) or set(options) - option_ids:
            raise BankError(f"{where}: field 'options': option ids of the item only "
                            f"({', '.join(sorted(option_ids)) or 'none'})")
        if options:
            entry["options"] = {str(k): str(v) for k, v in options.items()}
        if (why := _words(where, raw, "explanation")) is not None:
            entry["explanation"] = seal(bank.salt, item_id, why)
        built[item_id] = entry
    out["items"] = built
    return out


def parse(data: Any, bank: Bank, lang: str, file: str = "") -> Translation:
    """A translation file's data, checked against its bank; stale items set aside."""
    if not isinstance(data, dict) or data.get("format") != FORMAT \
            or data.get("quiz_id") != bank.quiz_id or not isinstance(data.get("items"), dict):
        raise BankError(f"{file}: not a {FORMAT} file of {bank.quiz_id}")
    items: dict[str, ItemText] = {}
    stale: list[str] = []
    ids = {it.common.id for it in bank.items}
    for item_id, raw in data["items"].items():
        if item_id not in ids:
            stale.append(item_id)
            continue
        if raw.get("source") != fingerprint(bank.item(item_id)):
            stale.append(item_id)
            continue
        sealed = raw.get("explanation")
        items[item_id] = ItemText(
            str(raw["source"]), raw.get("prompt"),
            tuple((str(k), str(v)) for k, v in (raw.get("options") or {}).items()),
            unseal(bank.salt, item_id, sealed) if isinstance(sealed, str) else None)
    return Translation(bank.quiz_id, language(lang), data.get("title"),
                       tuple((str(k), str(v)) for k, v in (data.get("objectives") or {}).items()),
                       items, tuple(sorted(stale)))


def load(bank: Bank, lang: str, folder: str | Path | None = None) -> Translation | None:
    """The bank's translation into ``lang`` (None for English or when there is none)."""
    lang = language(lang)
    if lang == DEFAULT_LANG or not bank.path:
        return None
    path = path_for(bank, lang, folder)
    if not path.is_file():
        return None
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise BankError(f"{path}: cannot read the translation: {exc}") from None
    return parse(data, bank, lang, path.name)


def build_all(banks: Mapping[str, Bank], sources: str | Path, out: str | Path | None = None,
              ) -> list[Path]:
    """Build ``<sources>/<lang>/*.yaml`` into ``<out or banks>/<lang>/*.yaml``."""
    written = []
    for lang_dir in sorted(p for p in Path(sources).iterdir() if p.is_dir()):
        try:
            lang = language(lang_dir.name)
        except ValueError:
            continue
        by_file = {Path(b.path).name: b for b in banks.values()}
        for src in sorted(lang_dir.glob("*.yaml")):
            bank = by_file.get(src.name)
            if bank is None:
                raise BankError(f"{lang_dir.name}/{src.name}: no bank {src.name} to translate")
            data = build(yaml.safe_load(src.read_text(encoding="utf-8")), bank,
                         f"{lang_dir.name}/{src.name}")
            target = path_for(bank, lang, out)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False,
                                             width=100), encoding="utf-8")
            written.append(target)
    return written


def report(banks: Mapping[str, Bank], lang: str, folder: str | Path | None = None
           ) -> dict[str, list[str]]:
    """Per quiz, the item ids with no current translation into ``lang`` (missing or
    stale), in bank order; quizzes with none missing are left out."""
    out = {}
    for quiz_id, bank in sorted(banks.items()):
        tr = load(bank, lang, folder)
        done = tr.items if tr is not None else {}
        missing = [it.common.id for it in bank.items if it.common.id not in done
                   or done[it.common.id].prompt is None]
        if missing:
            out[quiz_id] = missing
    return out


def main(argv: list[str] | None = None) -> int:
    """``python -m quizzes.translations build [--sources DIR] [--banks DIR]`` builds every
    ``<sources>/<lang>/*.yaml``; ``... report [LANG]`` lists the items without a current
    translation (exit 1 when there are some)."""
    import argparse

    from quizzes.bank import load_banks
    from quizzes.errors import QuizError
    from quizzes.sources import sources_dir

    parser = argparse.ArgumentParser(prog="python -m quizzes.translations")
    parser.add_argument("action", choices=["build", "report"])
    parser.add_argument("lang", nargs="?", default="pt-BR")
    parser.add_argument("--sources", help="authoring sources (default: quizzes.sources' rule)")
    parser.add_argument("--banks", help="banks folder (default: the packaged banks)")
    args = parser.parse_args(argv)
    try:
        banks = load_banks(args.banks)
        if args.action == "build":
            for path in build_all(banks, sources_dir(args.sources), args.banks):
                print(f"wrote {path}")
            return 0
        missing = report(banks, args.lang, args.banks)
    except QuizError as exc:
        print(exc.message)
        return 1
    for quiz_id, ids in missing.items():
        print(f"{quiz_id}: {len(ids)} item(s) without a current {args.lang} text: "
              f"{', '.join(ids)}")
    return 1 if missing else 0


if __name__ == "__main__":
    raise SystemExit(main())
