"""Every lesson in a real JupyterLab, driven by a real chromium (Playwright).

For each notebook under notebooks/ (a copy in a temporary root, so the stored notebooks
are not touched), one after another in one page as a learner goes through the course
(`open_and_run` closes the previous lesson and shuts its kernel down): open it, clear
the outputs, run all cells, wait for the kernel to be idle, check that no cell errored
and that JupyterLab and the widgets speak English (the
English edition: tests/browser/test_browser_pt_br.py runs the pt-BR one), commit a
prediction in each experiment's predict step (its sliders show only after it), move the
experiment's ipywidgets slider (the first of the notebook) with the keyboard and check
that its readout and the plotly figure drawn in the same cell changed, and save a
screenshot of the lesson to build/screenshots/NN-name.png and
build/screenshots/en/NN-name.png (beside the pt-BR edition's) and to a temporary folder
the test prints. A notebook without a slider fails only if the course manifest says its
experiment has one.

One lab is completed in its lesson's widget: a wrong batch script typed, its feedback
read, a right one typed, PASS seen (build/screenshots/lab-first-job.png).

The built site's lesson page is also opened from disk, to check that its plotly
figures draw offline. Skipped, with the reason, only when chromium or playwright is
missing (CI installs them via scripts/install-system-packages).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import nbformat
import pytest
from lab_driver import (
    BROWSER_MARKS,
    EDITION_WORDS,
    HAVE_PLAYWRIGHT,
    QUIZ_LEARNER,
    SCREENSHOTS,
    lab_env,
    launched_chromium,
    menu_bar,
    open_and_run,
    running_lab,
)
from lab_driver import errors as _errors
from lab_driver import wait_idle as _wait_idle

from course.manifest import ROOT, load_manifest

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))

if TYPE_CHECKING or HAVE_PLAYWRIGHT:  # else BROWSER_MARKS skips the module
    from playwright.sync_api import Page, expect

pytestmark = BROWSER_MARKS


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """JupyterLab started as scripts/course starts it (``python -m course lab``) on a copy
    of notebooks/ (its readings/ links resolving into the real course/lessons/), with a
    minislurm cluster up and a HOME whose profile rebuilds PATH; yields (base url, token).
    Its lessons' DDP jobs take the worker's own job ids (tests/ddp_notebooks.py), so the
    DDP notebooks run beside the tests that need the stored ids."""
    tmp = tmp_path_factory.mktemp("lab")
    root = tmp / "notebooks"
    shutil.copytree(ROOT / "notebooks", root, symlinks=True)
    (tmp / "course").mkdir()
    (tmp / "course" / "lessons").symlink_to(ROOT / "course" / "lessons")
    env = lab_env(tmp)
    up = subprocess.run([sys.executable, "-m", "minislurm", "cluster", "up"], env=env,
                        capture_output=True, text=True, timeout=120)
    assert up.returncode == 0, up.stdout + up.stderr
    try:
        with running_lab(tmp, root, env) as lab:
            yield lab
    finally:
        subprocess.run([sys.executable, "-m", "minislurm", "cluster", "down"], env=env,
                       capture_output=True, timeout=60)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched_chromium() as b:
        yield b


@pytest.fixture(scope="module")
def lesson_page(browser: Any) -> Iterator[Page]:
    """The one page the lessons run in, one after another (`open_and_run`), as a learner
    works through the course in one JupyterLab tab."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    yield page
    page.close()


#: notebook -> how its slider moved ("4 -> 7"), printed at the end of the module.
moved: dict[str, str] = {}
#: notebook -> quiz items answered wrongly in the browser.
quizzed: dict[str, int] = {}


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("screenshots")
    print(f"\nscreenshots: {folder} and {SCREENSHOTS}")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    yield folder
    print("\nsliders moved: " + ", ".join(f"{k} {v}" for k, v in sorted(moved.items())))
    print("quiz items answered wrongly: " + ", ".join(f"{k} {v}" for k, v in
                                                      sorted(quizzed.items())))


#: The drawn plotly figures inside one element (the slider's cell): traces and title.
_FIGURES = """cell => Array.from(cell.querySelectorAll('.js-plotly-plot'))
  .map(el => JSON.stringify({data: (el.data || []).map(t => [t.name, Array.from(t.x || []),
                                                             Array.from(t.y || [])]),
                             title: el.layout && el.layout.title && el.layout.title.text}))"""

#: A numeric/text answer no item expects.
_WRONG_TEXT = "-987654"


def _wrong_answers(quiz_id: str, learner: str, count: int = 2) -> list[tuple[int, str, str, Any]]:
    """``count`` items of the quiz (display index, item id, input kind, what to enter) with
    an answer the quiz's own grader marks wrong for this learner: the browser then gives
    exactly these answers. Kinds: radio (option text), checks (option texts), text."""
    from quizzes.bank import load_banks
    from quizzes.grade import grade_response
    from quizzes.session import QuizSession

    bank = load_banks()[quiz_id]
    chosen: list[tuple[int, str, str, Any]] = []
    for index, item in enumerate(QuizSession(bank, learner).items()):
        tries: list[tuple[str, Any, Any]] = []
        if item.type == "multiple":
            tries = [("checks", [text], [oid]) for oid, text in item.options]
        elif item.options:
            tries = [("radio", text, oid) for oid, text in item.options]
        elif item.type not in ("sbatch", "lab"):
            tries = [("text", _WRONG_TEXT, _WRONG_TEXT)]
        for kind, shown, response in tries:
            try:
                wrong = grade_response(bank, learner, item.item_id, response).score < 1.0
            except Exception:  # an answer the grader refuses: try another
                continue
            if wrong:
                chosen.append((index, item.item_id, kind, shown))
                break
        if len(chosen) == count:
            break
    return chosen


def _shown_pattern(text: str) -> str:
    """A regex for an option's text as the browser shows it (markdown marks may render)."""
    plain = re.sub(r"[`*]", "", text)
    return r"\s*".join(re.escape(part) for part in plain.split())


_QUIZ_CARD = """(root, itemId) => {
  const checks = Array.from(root.querySelectorAll('button')).filter(
      b => b.innerText.trim() === 'Check');
  for (const b of checks) {
    const card = b.closest('.widget-vbox');
    if (card && card.innerText.includes(itemId)) return true;
  }
  return false;
}"""


def _answer_quiz_wrongly(page: Page, panel: str, notebook: Path) -> list[str]:
    """Answer two items of the lesson's quiz wrongly in its widget; their feedback texts."""
    nb = nbformat.read(str(notebook), as_version=4)
    match = next((re.search(r'quiz\(\s*"([^"]+)"(?:\s*,\s*learner_id\s*=\s*"([^"]+)")?',
                            c.source)
                  for c in nb.cells if c.cell_type == "code" and "quiz(" in c.source), None)
    if match is None:
        return []
    quiz_id, learner = match.group(1), match.group(2) or QUIZ_LEARNER
    cell = page.locator(f"{panel} .jp-CodeCell").filter(
        has=page.locator(".jp-InputArea", has_text="quiz(")).last
    out = cell.locator(".jp-OutputArea")
    feedback = []
    for _index, item_id, kind, shown in _wrong_answers(quiz_id, learner):
        for _ in range(200):  # "Next" until the item's card shows (one item at a time)
            if out.evaluate(_QUIZ_CARD, item_id):
                break
            out.locator("button", has_text="Next").first.click()
            page.wait_for_timeout(150)
        else:
            pytest.fail(f"{notebook.name}: quiz item {item_id} never shown")
        card = out.locator(".widget-vbox").filter(has_text=item_id).filter(
            has=page.locator("button", has_text="Check")).last
        if kind in ("radio", "checks"):
            for text in [shown] if kind == "radio" else shown:
                option = card.locator(".widget-radio-box label, .widget-checkbox label").filter(
                    has_text=re.compile(rf"^\s*{_shown_pattern(text)}\s*$"))
                assert option.count() >= 1, f"{notebook.name}: no option {text!r} in {item_id}"
                option.first.click()
        else:
            card.locator("input[type=text], textarea").first.fill(shown)
        card.locator("button", has_text="Check").first.click()
        deadline = time.monotonic() + 30
        while not re.search(r"\b(Incorrect|Partly right|Correct)\b", card.inner_text()):
            if time.monotonic() > deadline:
                pytest.fail(f"{notebook.name}: no feedback for {item_id}:\n{card.inner_text()}")
            page.wait_for_timeout(200)
        text = card.inner_text()
        assert re.search(r"\b(Incorrect|Partly right)\b", text), (
            f"{notebook.name}: {item_id} answered {shown!r} was not marked wrong:\n{text}")
        feedback.append(text)
    return feedback


#: Every predict-then-check step's Check button (course/lessons/predict.py PredictStep):
#: the button in the row after the "Predict first:" prompt.
_PREDICT_CHECKS = ("xpath=//div[contains(concat(' ', @class, ' '), ' widget-html ')]"
                   f"[.//b[normalize-space()='{EDITION_WORDS['en']['predict']}']]"
                   "/following-sibling::div[contains(concat(' ', @class, ' '), ' widget-hbox ')][1]"
                   f"//button[normalize-space()='{EDITION_WORDS['en']['check']}']")


def _answer_predictions(page: Page, panel: str) -> int:
    """Commit a prediction in each experiment widget (its body shows after Check):
    the first option of a choice, 1 for a number. Returns how many were answered."""
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
        feedback = row.locator("xpath=following-sibling::div[1]")
        feedback.filter(has_text=EDITION_WORDS["en"]["explore"]).wait_for(timeout=60_000)
    return buttons.count()


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[n.stem for n in NOTEBOOKS])
def test_lesson_runs_and_its_slider_moves_a_figure(notebook: Path, lab: tuple[str, str],
                                                   lesson_page: Page, shots: Path) -> None:
    module = load_manifest().by_notebook(notebook.name)
    page = lesson_page
    panel = open_and_run(page, lab, notebook, notebook.stem)
    assert page.locator(f"{panel} .js-plotly-plot").count() >= 1 or not (
        module and module.slider), f"{notebook.name}: no plotly figure was drawn"
    menus = menu_bar(page)
    english, portuguese = EDITION_WORDS["en"], EDITION_WORDS["pt-BR"]
    assert menus[0] == english["menu"] and portuguese["menu"] not in menus, menus

    answered = _answer_predictions(page, panel)
    assert answered >= 1 or not (module and module.slider), (
        f"{notebook.name}: the experiment asks for no prediction")
    if answered:
        text = page.locator(panel).inner_text()
        assert english["predict"] in text and portuguese["predict"] not in text
    _wait_idle(page, 120)
    sliders = page.locator(f"{panel} .widget-slider .noUi-handle")
    if sliders.count() == 0:
        if module is not None and module.slider:
            pytest.fail(f"{notebook.name}: the manifest says the experiment has a slider, "
                        "but none is shown")
    else:
        # the experiment's figure: the one drawn in the same cell as the slider
        handle = sliders.first
        cell = handle.locator("xpath=ancestor::div[contains(concat(' ', @class, ' '),"
                              " ' jp-CodeCell ')][1]")
        readout = handle.locator("xpath=ancestor::div[contains(concat(' ', @class, ' '),"
                                 " ' widget-slider ')][1]").locator(".widget-readout")
        before = cell.evaluate(_FIGURES)
        assert before and all('"data":[]' not in f for f in before), (
            f"{notebook.name}: the slider's cell shows no drawn plotly figure")
        value = readout.inner_text()
        handle.scroll_into_view_if_needed()
        handle.focus()
        for _ in range(3):
            page.keyboard.press("ArrowRight")
            page.wait_for_timeout(150)
        deadline, back = time.monotonic() + 60, time.monotonic() + 15
        while cell.evaluate(_FIGURES) == before:
            if time.monotonic() > deadline:
                pytest.fail(f"{notebook.name}: moving the slider ({value!r} -> "
                            f"{readout.inner_text()!r}) did not change its figure")
            if back and time.monotonic() > back:  # maybe it was at its maximum
                back = 0.0
                handle.focus()
                for _ in range(6):
                    page.keyboard.press("ArrowLeft")
                    page.wait_for_timeout(150)
            page.wait_for_timeout(300)
        assert readout.inner_text() != value, f"{notebook.name}: the slider did not move"
        _wait_idle(page, 120)
        assert _errors(page) == []
        page.locator(f"{panel} .widget-slider").first.scroll_into_view_if_needed()
        page.wait_for_timeout(800)
        moved[notebook.stem] = f"{value} -> {readout.inner_text()}"
    name = f"{notebook.stem}.png"
    page.screenshot(path=str(shots / name))
    shutil.copyfile(shots / name, SCREENSHOTS / name)
    (SCREENSHOTS / "en").mkdir(exist_ok=True)
    shutil.copyfile(shots / name, SCREENSHOTS / "en" / name)
    print(f"\n{notebook.stem}: screenshot {SCREENSHOTS / name} (and en/)")
    # two quiz items answered wrongly: their feedback and explanation are filled in
    feedback = _answer_quiz_wrongly(page, panel, notebook)
    if module is not None and module.quiz:
        assert len(feedback) == 2, f"{notebook.name}: two quiz items answered: {feedback}"
    for text in feedback:
        assert "{{" not in text and "}}" not in text, f"{notebook.name}: {text}"
    quiz_text = page.locator(f"{panel} .jp-CodeCell").filter(
        has=page.locator(".jp-InputArea", has_text="quiz(")).last.inner_text()
    assert "{{" not in quiz_text, f"{notebook.name}: raw template text in the quiz"
    if feedback:
        name = f"{notebook.stem}-quiz.png"
        page.screenshot(path=str(shots / name))
        shutil.copyfile(shots / name, SCREENSHOTS / name)
        quizzed[notebook.stem] = len(feedback)


#: The lab completed in the browser, its lesson, a wrong answer (2 GPUs where the task
#: asks for 1) and a right one, typed into the widget's answer box as a learner would.
LAB_ID = "first-job"
LAB_NOTEBOOK = ROOT / "notebooks" / "01-what-is-slurm.ipynb"
LAB_WRONG = ("#!/bin/bash\n#SBATCH -p gpu -J train -N1 --gres=gpu:2 -t 30 -o train-%j.out\n"
             "srun python train.py\n")
LAB_RIGHT = ("#!/bin/bash\n#SBATCH -p gpu -J train -N1 --gres=gpu:1 -t 30 -o train-%j.out\n"
             "srun python train.py\n")

#: The lab widget's feedback: its ``.lab-feedback`` block (quizzes/labs/widget.py).
_LAB_FEEDBACK = """box => {
  const blocks = Array.from(box.querySelectorAll('.widget-html .lab-feedback'))
      .filter(p => /^(PASS|NOT YET): /.test(p.textContent));
  return blocks.length ? blocks[blocks.length - 1].textContent : null;
}"""


def _lab_check(page: Page, box: Any, answer: str, before: str | None) -> str:
    """Replace the answer box's text by typing ``answer`` key by key, press Check and
    return the feedback once it differs from ``before`` (at most 30 s)."""
    area = box.locator("textarea").first
    area.click()
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    assert area.input_value() == "", "the lab's answer box could not be emptied"
    area.press_sequentially(answer)
    assert area.input_value() == answer, f"typed {answer!r}, the box holds {area.input_value()!r}"
    box.locator("button", has_text=re.compile(r"^\s*Check\s*$")).first.click()
    deadline = time.monotonic() + 30
    while (shown := box.evaluate(_LAB_FEEDBACK)) in (None, before):
        if time.monotonic() > deadline:
            pytest.fail(f"lab {LAB_ID}: no new feedback after Check:\n{box.inner_text()}")
        page.wait_for_timeout(200)
    return str(shown)


def test_lab_is_completed_in_the_notebook(lab: tuple[str, str], browser: Any,
                                          shots: Path) -> None:
    """Lesson 01 run in JupyterLab; in its "Hands-on labs" the ``first-job`` widget gets
    a wrong script (typed), whose feedback names the difference, then a right one, which
    passes: both feedbacks are exactly what the lab's checker (``quizzes lab check``)
    says for the same text, with no raw {{template}} text; the lab closes as passed."""
    from quizzes.labs import check

    wrong, right = check(LAB_ID, LAB_WRONG), check(LAB_ID, LAB_RIGHT)
    assert not wrong.passed and right.passed  # the answers are what the test says
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        panel = open_and_run(page, lab, LAB_NOTEBOOK, f"lab-{LAB_ID}")
        cell = page.locator(f"{panel} .jp-CodeCell").filter(
            has=page.locator(".jp-InputArea", has_text=f'lab_widget("{LAB_ID}")'))
        assert cell.count() == 1, f"{LAB_NOTEBOOK.name}: no cell showing lab {LAB_ID}"
        box = cell.locator(".jp-OutputArea .widget-vbox").filter(
            has_text=f"Lab {LAB_ID}").filter(has=page.locator("textarea")).last
        box.wait_for(timeout=30_000)
        box.scroll_into_view_if_needed()
        header = box.locator(".widget-html").first
        check_button = box.locator("button", has_text=re.compile(r"^\s*Check\s*$")).first
        # the header and the button follow the feedback in messages of their own: waited for
        expect(header).to_contain_text(re.compile(r"\b0 check\(s\) used, \d+ check\(s\) left"))

        missed = _lab_check(page, box, LAB_WRONG, None)
        assert missed.startswith("NOT YET: ") and "PASS" not in missed, missed
        assert "2 GPUs" in missed and "--gres=gpu:1" in missed, missed  # the difference
        assert missed.strip() == wrong.text().strip(), (missed, wrong.text())
        expect(header).to_contain_text(re.compile(r"\b1 check\(s\) used\b"))
        expect(check_button).to_be_enabled()

        passed = _lab_check(page, box, LAB_RIGHT, missed)
        assert re.match(r"PASS: Job \d+ ran train\.py through srun on 1 node with 1 GPU",
                        passed), passed
        assert passed.strip() == right.text().strip(), (passed, right.text())
        expect(header).to_contain_text("passed on check 2")
        expect(check_button).to_be_disabled()
        text = box.inner_text()
        assert "{{" not in text and "}}" not in text, text
        assert _errors(page) == [], f"{LAB_NOTEBOOK.name}: a cell errored during the lab"

        box.scroll_into_view_if_needed()
        page.wait_for_timeout(500)
        name = f"lab-{LAB_ID}.png"
        page.screenshot(path=str(shots / name))
        shutil.copyfile(shots / name, SCREENSHOTS / name)
        print(f"\nlab {LAB_ID}: {missed!r} then {passed!r}; screenshot {SCREENSHOTS / name}")
    finally:
        page.close()


def test_built_lesson_page_draws_its_figures_offline(browser: Any, tmp_path: Path) -> None:
    from course.build import BuildOptions, build

    site = tmp_path / "site"
    build(BuildOptions(out=site, execute=False, only=("06-backfill",), progress=False))
    from course.build_render import WIDGET_MIME, WIDGET_STATE_MIME, widget_figures

    stored = nbformat.read(str(ROOT / "notebooks" / "06-backfill.ipynb"), as_version=4)
    figures = sum("application/vnd.plotly.v1+json" in o.get("data", {})
                  for c in stored.cells if c.cell_type == "code" for o in c.outputs)
    assert figures >= 3  # the Gantt charts, utilisation, waits
    state = stored.metadata.get("widgets", {}).get(WIDGET_STATE_MIME, {}).get("state", {})
    starting = sum(len(widget_figures(o["data"][WIDGET_MIME]["model_id"], state))
                   for c in stored.cells if c.cell_type == "code" for o in c.outputs
                   if WIDGET_MIME in o.get("data", {}))
    figures += starting  # each experiment's starting figure(s), drawn as well
    page = browser.new_page(viewport={"width": 1300, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.route("http*://**", lambda route: route.abort())  # offline: no CDN, no web
        page.goto((site / "lessons" / "06-backfill.html").as_uri())
        page.wait_for_function(  # every figure drawn (an svg inside each plot div)
            f"() => Array.from(document.querySelectorAll('.js-plotly-plot'))"
            f".filter(p => p.querySelector('.main-svg')).length === {figures}",
            timeout=30_000)
        assert errors == []
        traces = page.evaluate("() => Array.from(document.querySelectorAll('.js-plotly-plot'))"
                               ".map(p => p.data.length)")
        assert len(traces) == figures and min(traces) >= 1 and max(traces) >= 4
    finally:
        page.close()


#: The text of the (last opened) terminal: xterm.js's buffer, trailing blanks cut per line.
_TERMINAL_TEXT = """() => {
  const terms = Array.from(window.jupyterapp.shell.widgets('main'))
      .filter(w => w.content && w.content._term);
  if (!terms.length) return null;
  const t = terms[terms.length - 1].content._term;
  const b = t.buffer.active, out = [];
  for (let i = 0; i < b.length; i++) out.push(b.getLine(i).translateToString(true));
  return out.join('\\n');
}"""


def _terminal_run(page: Page, command: str, mark: str, seconds: float = 60) -> str:
    """Type ``command`` + Enter in the focused terminal and wait until ``@@<mark>@@``
    shows; it is echoed by the shell (the typed line holds ``@@<mark>@$((0))@``), so it
    appears only once the command finished. Returns what was printed in between."""
    typed = f"echo @@{mark}@$((0))@"
    page.keyboard.type(f"{command}; {typed}")
    page.keyboard.press("Enter")
    done = f"@@{mark}@0@"
    text = _terminal_shows(page, done, seconds, f"the terminal did not finish {command!r}")
    return text.split(typed, 1)[1].rsplit(done, 1)[0]


def _terminal_shows(page: Page, wanted: str, seconds: float, failure: str) -> str:
    """The terminal's text once it holds ``wanted`` (polled every 200 ms); fails with
    ``failure`` and the text's end after ``seconds``."""
    deadline = time.monotonic() + seconds
    text = ""
    while wanted not in text:
        if time.monotonic() > deadline:
            pytest.fail(f"{failure}:\n{text[-3000:]}")
        page.wait_for_timeout(200)
        text = page.evaluate(_TERMINAL_TEXT) or ""
    return text


def _terminal_ready(page: Page, mark: str, seconds: float = 60) -> None:
    """Wait until a shell just started in the focused terminal runs what is typed: type
    ``echo @@<mark>@$((1))@`` and wait for its output, ``@@<mark>@1@``, which only a shell
    running it prints. What is typed while the shell starts is echoed by the terminal
    mixed with the shell's start-up output (its prompt), so `_terminal_run`, which finds
    its command's echo, waits for this first."""
    page.keyboard.type(f"echo @@{mark}@$((1))@")
    page.keyboard.press("Enter")
    _terminal_shows(page, f"@@{mark}@1@", seconds,
                    f"the shell started in the terminal never ran {mark!r}")


def _minislurm(args: list[str], state: Path) -> str:
    """What minislurm's command prints when run directly against the same cluster."""
    env = {k: v for k, v in os.environ.items() if k != "SLURM_CONF"}
    env["MINISLURM_STATE_DIR"] = str(state)
    res = subprocess.run([str(ROOT / "bin" / args[0]), *args[1:]], env=env,
                         capture_output=True, text=True, timeout=60)
    return res.stdout + res.stderr


def test_terminal_runs_minislurm_whatever_the_profile(
        lab: tuple[str, str], browser: Any) -> None:
    """A JupyterLab terminal (login files that rebuild PATH, Debian's slurm-client in
    /usr/bin): ``sinfo``, ``sbatch --wrap 'sleep 5'`` and ``squeue`` are minislurm's,
    also in a ``bash -l`` started inside it."""
    base, token = lab
    page = browser.new_page(viewport={"width": 1300, "height": 900})
    try:
        page.goto(f"{base}/lab/workspaces/terminal?reset&token={token}")
        page.wait_for_function("() => window.jupyterapp && window.jupyterapp.commands"
                               ".hasCommand('terminal:create-new')", timeout=60_000)
        page.evaluate("() => window.jupyterapp.commands.execute('terminal:create-new')")
        page.wait_for_function(f"() => {{ const t = ({_TERMINAL_TEXT})(); "
                               f"return t && t.trim().length > 0; }}", timeout=60_000)
        page.locator(".jp-Terminal").first.click()
        _terminal_ready(page, "terminal")
        where = _terminal_run(page, "command -v sinfo sbatch squeue; echo $MINISLURM_STATE_DIR",
                              "where")
        lines = [line.strip() for line in where.splitlines() if line.strip()]
        assert lines[:3] == [str(ROOT / "bin" / c) for c in ("sinfo", "sbatch", "squeue")], where
        state = Path(lines[3])
        sinfo = _terminal_run(page, "sinfo", "sinfo")
        assert "Could not establish a configuration source" not in sinfo
        expected = _minislurm(["sinfo"], state)
        assert expected.split()[:3] == ["PARTITION", "AVAIL", "TIMELIMIT"], expected
        shown = [line.rstrip() for line in sinfo.splitlines()]
        for line in expected.splitlines():
            assert line.rstrip() in shown, f"{line!r} not in the terminal's sinfo:\n{sinfo}"
        submitted = _terminal_run(page, "sbatch --wrap 'sleep 5'", "sbatch")
        match = re.search(r"^Submitted batch job (\d+)$", submitted, re.M)
        assert match, submitted
        job = match.group(1)
        squeue = _terminal_run(page, "squeue", "squeue")
        assert re.search(r"JOBID\s+PARTITION\s+NAME\s+USER\s+ST\s+TIME\s+NODES\s+"
                         r"NODELIST\(REASON\)", squeue), squeue
        assert re.search(rf"^\s*{job}\s+\S+\s+wrap\s+\S+\s+(R|PD|CF)\s", squeue, re.M), squeue
        assert job in _minislurm(["squeue", "-h", "-o", "%i"], state).split()
        page.keyboard.type("bash -l")  # a login shell inside: its profile resets PATH again
        page.keyboard.press("Enter")
        _terminal_ready(page, "login-shell")
        nested = _terminal_run(page, "command -v sinfo; shopt -q login_shell && echo login",
                               "nested")
        assert [ln.strip() for ln in nested.splitlines() if ln.strip()] == [
            str(ROOT / "bin" / "sinfo"), "login"], nested
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "terminal.png"))
        print(f"\nterminal: screenshot {SCREENSHOTS / 'terminal.png'}")
    finally:
        page.close()


#: A markdown link to a reading, as the notebooks write it (relative to notebooks/).
_READING_LINK = re.compile(r"\]\((readings/(\d\d-[\w-]+\.md))\)")


def test_reading_link_opens_the_rendered_reading(lab: tuple[str, str], browser: Any) -> None:
    """A notebook's ``readings/NN-name.md`` link, clicked in JupyterLab, opens the lesson's
    reading rendered (Markdown Preview); readings/ serves the readings and nothing else."""
    base, token = lab
    with urllib.request.urlopen(f"{base}/api/contents/readings?token={token}") as resp:
        listing = json.load(resp)
    readings = sorted(p.name for p in (ROOT / "course" / "lessons").glob("[0-9][0-9]-*.md"))
    assert sorted(item["name"] for item in listing["content"]) == readings
    found = [(nb.name, m.group(1), m.group(2)) for nb in NOTEBOOKS
             for cell in nbformat.read(str(nb), as_version=4).cells
             if cell.cell_type == "markdown" for m in _READING_LINK.finditer(cell.source)]
    if found:
        notebook, href, name = found[0]
    else:  # the lessons do not link their readings yet: a notebook of the same form
        notebook, name = "reading-link.ipynb", "03-gres-gpus.md"
        href = f"readings/{name}"
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_markdown_cell(f"The longer reading: [{name}]({href})")]
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                     "language": "python"}
        body = json.dumps({"type": "notebook", "content": nb}).encode()
        req = urllib.request.Request(f"{base}/api/contents/{notebook}?token={token}",
                                     data=body, method="PUT")
        urllib.request.urlopen(req).close()
    title = next(line[2:].strip() for line in
                 (ROOT / "course" / "lessons" / name).read_text().splitlines()
                 if line.startswith("# "))
    page = browser.new_page(viewport={"width": 1300, "height": 900})
    try:
        page.goto(f"{base}/lab/workspaces/reading/tree/{notebook}?reset&token={token}")
        page.wait_for_function("() => document.querySelectorAll("
                               "'.jp-Notebook .jp-RenderedMarkdown a').length > 0",
                               timeout=60_000)
        anchors = page.evaluate("() => Array.from(document.querySelectorAll("
                                "'.jp-Notebook .jp-RenderedMarkdown a')).map(a => a.href)")
        link = page.locator(f'.jp-Notebook .jp-RenderedMarkdown a[href*="{href}"]').first
        assert link.count() == 1, f"no link to {href} among {anchors}"
        if page.locator(".jp-Dialog").count():  # e.g. a kernel choice: not what is tested
            page.keyboard.press("Escape")
            page.locator(".jp-Dialog").wait_for(state="detached", timeout=10_000)
        link.scroll_into_view_if_needed()
        link.click()
        viewer = page.locator(".jp-MarkdownViewer .jp-RenderedMarkdown")
        viewer.locator("h1").first.wait_for(timeout=30_000)
        assert viewer.locator("h1").first.inner_text().strip().rstrip("¶").strip() == title
        tab = page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current "
                           ".lm-TabBar-tabLabel").first
        assert tab.inner_text().strip() == name
        assert page.locator(".jp-MarkdownViewer .jp-RenderedMarkdown p").count() >= 3
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "reading.png"))
        print(f"\nreading {name} from {notebook}: screenshot {SCREENSHOTS / 'reading.png'}")
    finally:
        page.close()
