"""pt-BR readings and bank words of lessons 01-04 against the English (issue 23).

A reading's translation must keep the English file's structure block by block:
the same headings in the same order (count and level), every fenced code block
byte for byte, every inline ``code`` span (Slurm's words stay Slurm's), the same
boxes, tables and key-points list length.  Each bank's non-lab items must have a
current pt-BR text (not missing, not translated from older English words).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from quizzes import translations
from quizzes.bank import load_banks

ROOT = Path(__file__).resolve().parents[3]
LESSONS = ("01-what-is-slurm", "02-sbatch", "03-gres-gpus", "04-srun-ddp")
FENCE = re.compile(r"^[ \t]*```.*?^[ \t]*```[ \t]*$", re.M | re.S)  # indented ones too
SPAN = re.compile(r"(`+)(.+?)\1")


def _split(text: str) -> tuple[list[str], str]:
    """The fenced code blocks, and the prose with each block replaced by a marker."""
    blocks = FENCE.findall(text)
    return blocks, FENCE.sub("```FENCE```", text)


def _headings(prose: str) -> list[int]:
    return [len(m.group(1)) for m in re.finditer(r"^(#+) ", prose, re.M)]


def _key_points(prose: str) -> list[str]:
    last = prose.rsplit("\n## ", 1)[1]
    return [line for line in last.splitlines() if re.match(r"^[*-] ", line)]


def _shape(prose: str) -> dict[str, int]:
    lines = prose.splitlines()
    return {"quote lines": sum(line.startswith(">") for line in lines),
            "table rows": sum(line.startswith("|") for line in lines),
            "list items": sum(bool(re.match(r"^\s*([*-]|\d+\.) ", line)) for line in lines)}


def _pair(name: str) -> tuple[str, str]:
    en = (ROOT / "course" / "lessons" / f"{name}.md").read_text(encoding="utf-8")
    pt = (ROOT / "course" / "lessons" / "pt-BR" / f"{name}.md").read_text(encoding="utf-8")
    return en, pt


@pytest.mark.parametrize("name", LESSONS)
def test_reading_keeps_every_code_block_byte_for_byte(name: str) -> None:
    en, pt = _pair(name)
    assert _split(pt)[0] == _split(en)[0]


@pytest.mark.parametrize("name", LESSONS)
def test_reading_keeps_headings_boxes_tables_and_key_points(name: str) -> None:
    en, pt = (_split(text)[1] for text in _pair(name))
    assert _headings(pt) == _headings(en)
    assert pt.splitlines()[0].startswith("# Lição ")
    assert "\n## Pontos-chave\n" in pt and "\n## Key points\n" in en
    assert len(_key_points(pt)) == len(_key_points(en))
    assert _shape(pt) == _shape(en)
    assert pt.count("**Equívoco") == en.count("**Common misconception")
    assert pt.count("**Para administradores") == en.count("**For administrators")


@pytest.mark.parametrize("name", LESSONS)
def test_reading_keeps_every_inline_code_span(name: str) -> None:
    en, pt = (_split(text)[1] for text in _pair(name))
    spans_en = Counter(m.group(2) for m in SPAN.finditer(en) if m.group(2) != "FENCE")
    spans_pt = Counter(m.group(2) for m in SPAN.finditer(pt) if m.group(2) != "FENCE")
    assert spans_pt == spans_en


def test_structure_check_catches_a_changed_code_block() -> None:
    en, pt = _pair(LESSONS[0])
    broken = pt.replace("idle gpu[01-04]", "ocioso gpu[01-04]", 1)
    assert broken != pt and _split(broken)[0] != _split(en)[0]


def test_every_non_lab_item_of_lessons_01_04_has_a_current_pt_br_text() -> None:
    banks = load_banks()
    missing = translations.report({name: banks[name] for name in LESSONS}, "pt-BR")
    labs = {name: {it.common.id for it in banks[name].items if it.common.type == "lab"}
            for name in LESSONS}
    not_done = {quiz: [i for i in ids if i not in labs[quiz]] for quiz, ids in missing.items()}
    assert {quiz: ids for quiz, ids in not_done.items() if ids} == {}
