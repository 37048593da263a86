"""Both editions in a real JupyterLab, driven by a real chromium (Playwright).

JupyterLab is started as ``scripts/course --lang LANG`` starts it (``python -m course lab
--lang LANG``) on a copy of the edition (notebooks/ for English, notebooks/pt-BR/ built
by course/i18n.py from the English notebooks and course/locale/pt_BR/notebooks/), with
JupyterLab's own interface in that language (course/i18n_lab.py).  Each lesson of each
edition is opened, its outputs cleared, all its cells run; no cell may error; each
experiment's prediction is committed through its (translated) Check button; a screenshot
goes to build/screenshots/<lang>/NN-name.png.  In pt-BR, JupyterLab's menu bar says
"Arquivo" (not "File"), its launcher and file browser speak Portuguese, and the course's
widgets too ("Preveja primeiro:", "Verificar"), while the code cells are the English
ones.  Skipped, with the reason, only when chromium or playwright is missing.
"""

from __future__ import annotations

import shutil
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from lab_driver import (  # the same JupyterLab drill as the English test
    BROWSER_MARKS,
    SCREENSHOTS,
    errors,
    lab_env,
    launched_chromium,
    open_and_run,
    running_lab,
    wait_idle,
)

from course.i18n import build_edition
from course.manifest import ROOT

NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb"))
#: What the interface says in each edition: the File menu, the predict step's words.
WORDS = {
    "en": {"menu": "File", "predict": "Predict first:", "check": "Check",
           "explore": "Now explore"},
    "pt-BR": {"menu": "Arquivo", "predict": "Preveja primeiro:", "check": "Verificar",
              "explore": "Agora explore"},
}

if TYPE_CHECKING:
    from playwright.sync_api import Page

#: One xdist group per edition (each has its own JupyterLab): the two run side by side.
pytestmark = [*BROWSER_MARKS, pytest.mark.spread_by("edition")]


def _start(tmp: Path, lang: str) -> Iterator[tuple[str, str]]:
    """JupyterLab for one edition, on a copy of notebooks/ (the pt-BR edition built into
    it; its readings/ links resolve through the copy's course/lessons link). Its lessons'
    DDP jobs take the worker's own job ids (tests/ddp_notebooks.py)."""
    root = tmp / "notebooks"
    shutil.copytree(ROOT / "notebooks", root, symlinks=True,
                    ignore=shutil.ignore_patterns("pt-BR"))
    (tmp / "course").mkdir()
    (tmp / "course" / "lessons").symlink_to(ROOT / "course" / "lessons")
    if lang != "en":
        build_edition(lang, sorted(root.glob("[0-9][0-9]-*.ipynb")), root / lang,
                      lessons=tmp / "course" / "lessons")
        root = root / lang
    with running_lab(tmp, root, lab_env(tmp), ["--lang", lang]) as lab:
        yield lab


@pytest.fixture(scope="module", params=["en", "pt-BR"])
def edition(request: pytest.FixtureRequest,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, str]]:
    """(language, base url, token) of a JupyterLab serving that edition."""
    lang = str(request.param)
    for base, token in _start(tmp_path_factory.mktemp(f"lab-{lang}"), lang):
        yield lang, base, token


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched_chromium() as b:
        yield b


def _predict_checks(words: dict[str, str]) -> str:
    """Every predict step's Check button, found by the edition's words."""
    return ("xpath=//div[contains(concat(' ', @class, ' '), ' widget-html ')]"
            f"[.//b[normalize-space()='{words['predict']}']]"
            "/following-sibling::div[contains(concat(' ', @class, ' '), ' widget-hbox ')][1]"
            f"//button[normalize-space()='{words['check']}']")


def _answer_predictions(page: Page, panel: str, words: dict[str, str]) -> int:
    buttons = page.locator(f"{panel} >> {_predict_checks(words)}")
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
            has_text=words["explore"]).wait_for(timeout=60_000)
    return buttons.count()


def _menu_bar(page: Page) -> list[str]:
    page.wait_for_selector("#jp-MainMenu .lm-MenuBar-itemLabel", timeout=60_000)
    return page.eval_on_selector_all("#jp-MainMenu .lm-MenuBar-itemLabel",
                                     "els => els.map(e => e.textContent)")


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[n.stem for n in NOTEBOOKS])
def test_each_lesson_runs_in_each_edition_in_its_language(
        notebook: Path, edition: tuple[str, str, str], browser: Any) -> None:
    lang, base, token = edition
    words = WORDS[lang]
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        panel = open_and_run(page, (base, token), notebook, f"{lang}-{notebook.stem}")
        menus = _menu_bar(page)
        assert menus[0] == words["menu"], f"{lang}: JupyterLab's menu bar says {menus}"
        if lang == "pt-BR":
            assert "Arquivo" in menus and "File" not in menus and "Ajuda" in menus
            # a menu's items come from the language pack: the File menu opens in Portuguese
            page.locator("#jp-MainMenu .lm-MenuBar-itemLabel", has_text="Arquivo").click()
            items = page.locator(".lm-Menu-itemLabel").all_inner_texts()
            page.keyboard.press("Escape")
            assert any(i.startswith("Salvar") for i in items), items
        answered = _answer_predictions(page, panel, words)
        other = WORDS["en" if lang == "pt-BR" else "pt-BR"]
        text = page.locator(panel).inner_text()
        if answered:
            assert words["predict"] in text and other["predict"] not in text
        wait_idle(page, 120)
        assert errors(page) == [], f"{lang} {notebook.name}: cells errored"
        page.wait_for_timeout(800)
        folder = SCREENSHOTS / lang
        folder.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(folder / f"{notebook.stem}.png"))
        print(f"\n{lang} {notebook.stem}: {answered} prediction(s), menus {menus[:3]}, "
              f"screenshot {folder / notebook.name.replace('.ipynb', '.png')}")
    finally:
        page.close()


def test_the_pt_br_edition_has_the_english_code_cells(edition: tuple[str, str, str],
                                                      browser: Any) -> None:
    """What JupyterLab serves as the pt-BR notebook holds the English code cells."""
    import json

    import nbformat

    lang, base, token = edition
    if lang != "pt-BR":
        pytest.skip("the English edition is the source")
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
