"""The pt-BR edition in a real JupyterLab, driven by a real chromium (Playwright).

JupyterLab is started as ``scripts/course --lang pt-BR`` starts it (``python -m course
lab --lang pt-BR``) on a copy of the edition (notebooks/pt-BR/, built by course/i18n.py
from the English notebooks and course/locale/pt_BR/notebooks/), with JupyterLab's own
interface in Portuguese (course/i18n_lab.py).  Each lesson is opened in turn in one page
(`open_and_run`: a learner going from one lesson to the next), its outputs
cleared, all its cells run but the DDP trainings of lessons 4 and 7 and the cells that
read their results (`training_cells`: their code and outputs are the English ones, which
the English browser test and both editions' nbval run; here they cost some 40 s of the
suite's CPU and show nothing the Portuguese edition changes); no cell may error; each
experiment's prediction is committed through its translated Check button; a screenshot goes to
build/screenshots/pt-BR/NN-name.png.  JupyterLab's menu bar says "Arquivo" (not "File"),
its menus speak Portuguese, and the course's widgets too ("Preveja primeiro:",
"Verificar"), while the code cells are the English ones.  The English edition is
tests/browser/test_lessons_in_browser.py (its menus in English, its screenshots in
build/screenshots/en/ as well).  Skipped, with the reason, only when chromium or
playwright is missing.
"""

from __future__ import annotations

import shutil
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from ddp_notebooks import training_cells
from lab_driver import (  # the same JupyterLab drill as the English test
    BROWSER_MARKS,
    EDITION_WORDS,
    SCREENSHOTS,
    errors,
    lab_env,
    launched_chromium,
    menu_bar,
    open_and_run,
    running_lab,
    wait_idle,
)

from course.i18n import build_edition
from course.manifest import ROOT

NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb"))
LANG = "pt-BR"
WORDS = EDITION_WORDS[LANG]

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = BROWSER_MARKS


@pytest.fixture(scope="module")
def edition(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """(base url, token) of a JupyterLab serving the pt-BR edition, built into a copy of
    notebooks/ (its readings/ links resolve through the copy's course/lessons link). Its
    lessons' DDP jobs take the worker's own job ids (tests/ddp_notebooks.py)."""
    tmp = tmp_path_factory.mktemp(f"lab-{LANG}")
    root = tmp / "notebooks"
    shutil.copytree(ROOT / "notebooks", root, symlinks=True,
                    ignore=shutil.ignore_patterns(LANG))
    (tmp / "course").mkdir()
    (tmp / "course" / "lessons").symlink_to(ROOT / "course" / "lessons")
    build_edition(LANG, sorted(root.glob("[0-9][0-9]-*.ipynb")), root / LANG,
                  lessons=tmp / "course" / "lessons")
    with running_lab(tmp, root / LANG, lab_env(tmp), ["--lang", LANG]) as lab:
        yield lab


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched_chromium() as b:
        yield b


@pytest.fixture(scope="module")
def lesson_page(browser: Any) -> Iterator[Page]:
    """The one page the lessons run in, one after another (`open_and_run`)."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    yield page
    page.close()


#: Every predict step's Check button, found by the edition's words.
_PREDICT_CHECKS = ("xpath=//div[contains(concat(' ', @class, ' '), ' widget-html ')]"
                   f"[.//b[normalize-space()='{WORDS['predict']}']]"
                   "/following-sibling::div[contains(concat(' ', @class, ' '), "
                   "' widget-hbox ')][1]"
                   f"//button[normalize-space()='{WORDS['check']}']")


def _answer_predictions(page: Page, panel: str) -> int:
    buttons = page.locator(f"{panel} >> {_PREDICT_CHECKS}")
    for i in range(buttons.count()):
        button = buttons.nth(i)
        row = button.locator("xpath=ancestor::div[contains(concat(' ', @class, ' '),"
                             " ' widget-hbox ')][1]")
        button.scroll_into_view_if_needed()
        if row.locator("select").count():
            row.locator("select").first.select_option(index=0)
        else:
            row.locator("input").first.fill("1")
        button.click()
        row.locator("xpath=following-sibling::div[1]").filter(
            has_text=WORDS["explore"]).wait_for(timeout=60_000)
    return buttons.count()


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[n.stem for n in NOTEBOOKS])
def test_each_lesson_runs_in_portuguese(notebook: Path, edition: tuple[str, str],
                                        lesson_page: Page) -> None:
    page = lesson_page
    panel = open_and_run(page, edition, notebook, f"{LANG}-{notebook.stem}",
                         leave_out=training_cells(notebook))
    menus = menu_bar(page)
    assert menus[0] == WORDS["menu"], f"JupyterLab's menu bar says {menus}"
    assert "File" not in menus and "Ajuda" in menus, menus
    # a menu's items come from the language pack: the File menu opens in Portuguese
    page.locator("#jp-MainMenu .lm-MenuBar-itemLabel", has_text=WORDS["menu"]).click()
    items = page.locator(".lm-Menu-itemLabel").all_inner_texts()
    page.keyboard.press("Escape")
    assert any(i.startswith("Salvar") for i in items), items
    answered = _answer_predictions(page, panel)
    text = page.locator(panel).inner_text()
    if answered:
        assert WORDS["predict"] in text and EDITION_WORDS["en"]["predict"] not in text
    wait_idle(page, 120)
    assert errors(page) == [], f"{notebook.name}: cells errored"
    page.wait_for_timeout(800)
    folder = SCREENSHOTS / LANG
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / f"{notebook.stem}.png"))
    print(f"\n{LANG} {notebook.stem}: {answered} prediction(s), menus {menus[:3]}, "
          f"screenshot {folder / notebook.name.replace('.ipynb', '.png')}")


def test_the_pt_br_edition_has_the_english_code_cells(edition: tuple[str, str]) -> None:
    """What JupyterLab serves as the pt-BR notebook holds the English code cells."""
    import json

    import nbformat

    base, token = edition
    for notebook in NOTEBOOKS:
        url = f"{base}/api/contents/{notebook.name}?token={token}&content=1"
        with urllib.request.urlopen(url, timeout=30) as resp:
            served = json.load(resp)["content"]
        english = nbformat.reads(notebook.read_text(encoding="utf-8"), as_version=4)
        code = [json.dumps([c.source, c.outputs], sort_keys=True) for c in english.cells
                if c.cell_type == "code"]
        assert [json.dumps([c["source"], c["outputs"]], sort_keys=True)
                for c in served["cells"] if c["cell_type"] == "code"] == code, notebook.name
        assert served["metadata"]["lang"] == "pt-BR"
