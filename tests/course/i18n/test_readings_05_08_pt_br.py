"""The pt-BR readings of lessons 05-08 match their English files block by block
(docs/i18n.md): the same headings count, every fenced and indented code block byte for
byte in the same order, every inline `code` span kept, the same number of boxes and of
key points.  Words change; Slurm's words and outputs do not."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
import yaml

LESSONS = Path(__file__).resolve().parents[3] / "course" / "lessons"
NAMES = ["05-priority-fairshare", "06-backfill", "07-failures-requeue", "08-frontier-scale"]
FENCE = re.compile(r"^```.*?^```[ \t]*$", re.M | re.S)
INLINE = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")


def fenced(text: str) -> list[str]:
    return FENCE.findall(text)


def indented(text: str) -> list[str]:
    """Indented code blocks (4 spaces after a blank line), outside fences and lists."""
    blocks: list[str] = []
    lines = FENCE.sub("", text).split("\n")
    current: list[str] = []
    previous_blank = True
    for line in lines:
        if line.startswith("    ") and (current or previous_blank):
            current.append(line)
        else:
            if current:
                blocks.append("\n".join(current))
                current = []
            previous_blank = not line.strip()
    if current:
        blocks.append("\n".join(current))
    return blocks


def headings(text: str) -> list[str]:
    return re.findall(r"^(#+) ", FENCE.sub("", text), re.M)


def key_points(text: str) -> int:
    body = FENCE.sub("", text).split("\n## ")[-1]
    return len(re.findall(r"^[*-] ", body, re.M))


def boxes(text: str) -> int:
    return len(re.findall(r"^> \*\*", FENCE.sub("", text), re.M))


def spans(text: str) -> Counter[str]:
    prose = FENCE.sub("", text)
    for block in indented(text):
        prose = prose.replace(block, "")
    return Counter(INLINE.findall(re.sub(r"\s*\n\s*", " ", prose)))


@pytest.mark.parametrize("name", NAMES)
def test_pt_br_reading_matches_the_english_block_by_block(name: str) -> None:
    en = (LESSONS / f"{name}.md").read_text(encoding="utf-8")
    pt = (LESSONS / "pt-BR" / f"{name}.md").read_text(encoding="utf-8")
    assert headings(pt) == headings(en)
    assert fenced(pt) == fenced(en)
    assert indented(pt) == indented(en)
    assert boxes(pt) == boxes(en)
    assert key_points(pt) == key_points(en) > 0
    assert pt.split("\n## ")[-1].startswith("Pontos-chave")
    missing, extra = spans(en) - spans(pt), spans(pt) - spans(en)
    assert not missing and not extra, (missing, extra)


SOURCES = Path(__file__).resolve().parents[3] / "quizzes" / "authoring" / "sources"
PARAM = re.compile(r"\{\{\s*\w+\s*\}\}")


@pytest.mark.parametrize("name", NAMES)
def test_pt_br_bank_words_of_lessons_05_08_are_current_and_keep_params_and_code(name: str
                                                                                 ) -> None:
    from quizzes import translations
    from quizzes.bank import load_banks

    bank = load_banks()[name]
    assert name not in translations.report({name: bank}, "pt-BR")
    en = {it["id"]: it for it in yaml.safe_load(
        (SOURCES / f"{name}.yaml").read_text(encoding="utf-8"))["items"]}
    pt = yaml.safe_load((SOURCES / "pt-BR" / f"{name}.yaml").read_text(encoding="utf-8"))
    assert set(pt["items"]) == set(en)  # every item, the labs' statements included
    for item_id, words in pt["items"].items():
        english = en[item_id]
        pairs = [(words.get("prompt"), english["prompt"]),
                 (words.get("explanation"), english.get("explanation"))]
        texts = {o["id"]: o["text"] for o in english.get("options", [])}
        pairs += [(text, texts[oid]) for oid, text in (words.get("options") or {}).items()]
        for ours, theirs in pairs:
            if ours is None:
                continue
            assert Counter(PARAM.findall(ours)) == Counter(PARAM.findall(theirs)), item_id
            assert Counter(INLINE.findall(ours)) == Counter(INLINE.findall(theirs)), item_id
