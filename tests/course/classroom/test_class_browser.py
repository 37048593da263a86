"""A class in a real browser: real hub, real proxy, real quiz service, real chromium.

Two learners log in through the hub's login page and take module 1's quiz in exam
mode: ada in her own JupyterLab, in the lesson notebook's quiz cell (the widget asks
the service for her items and verdicts; she answers right, the lab item included:
the service plays her batch script on its own minislurm, and she earns a
certificate), bob on the service's exam page (he guesses and fails). A third
learner's forged submission for ada is refused, the instructor exports the Canvas
CSV, and ada's certificate verifies on the public page with no login.
Screenshots go to build/screenshots/class/.
"""

from __future__ import annotations

import csv
import io
import json
import re
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from course.classroom.harness import RunningClass, correct_responses
from quizzes.author import load_sources
from quizzes.bank import load_banks
from quizzes.exam import present_items

pytest.importorskip("jupyterhub", reason="the 'class' extra (jupyterhub) is not installed")
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")

CHROMIUM = Path("/usr/bin/chromium")
SHOTS = Path(__file__).resolve().parents[3] / "build" / "screenshots" / "class"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--no-first-run"]
QUIZ = "01-what-is-slurm"
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not CHROMIUM.is_file(),
                                 reason="chromium is not installed at /usr/bin/chromium")]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS, timeout=60_000)
        try:
            yield b
        finally:
            b.close()


def login(browser: Any, cls: RunningClass, user: str) -> Any:
    ctx = browser.new_context(accept_downloads=True)
    ctx.set_default_timeout(60_000)
    page = ctx.new_page()
    page.goto(f"{cls.url}/hub/login")
    page.fill("#username_input", user)
    page.fill("#password_input", f"{user}-pw")
    page.click("#login_submit")
    page.wait_for_url("**/hub/home**")
    return page


def wrong(response: Any, options: list[list[str]]) -> Any:
    if isinstance(response, list):
        others = [o[0] for o in options if o[0] not in response]
        return others[:1] or response[:1]
    if options:
        return next(o[0] for o in options if o[0] != response)
    return "certainly not this"


def take_quiz(page: Any, cls: RunningClass, user: str, right: bool) -> str:
    bank = load_banks()[QUIZ]
    answers = correct_responses(bank, load_sources()[QUIZ], user, 1)
    page.goto(f"{cls.service}exam/{QUIZ}")  # hub OAuth: authorize, callback, back here
    page.wait_for_selector(".item")
    for item in bank.items:
        iid = item.common.id
        div = page.locator(f"#item-{iid}")
        presented = item.present({}, 0)
        options = [list(o) for o in presented.options]
        response = answers[iid] if right else wrong(answers[iid], options)
        if options:
            for oid in response if isinstance(response, list) else [response]:
                div.locator(f"input[value='{oid}']").check()
        else:
            div.locator(f"[name='r-{iid}']").fill(str(response))
        div.locator("button.check").click()
        div.locator(".feedback").wait_for()
    page.screenshot(path=str(SHOTS / f"{user}-answered.png"), full_page=True)
    page.click("#submit")
    page.wait_for_selector("#score")
    page.screenshot(path=str(SHOTS / f"{user}-submitted.png"), full_page=True)
    return str(page.inner_text("#score"))


NOTEBOOK = "01-what-is-slurm.ipynb"
RUN_QUIZ_CELL = """async (quiz) => {
  const panel = window.jupyterapp.shell.currentWidget;
  const nb = panel.content;
  const index = nb.widgets.findIndex(c => c.model.type === 'code' &&
      c.model.sharedModel.getSource().includes('quiz("' + quiz + '")'));
  nb.activeCellIndex = index;
  await window.jupyterapp.commands.execute('notebook:run-cell');
  return '#' + panel.id + ' .jp-Cell:nth-child(' + (index + 1) + ')';
}"""


def shown(text: str) -> re.Pattern[str]:
    """An option's text as ipywidgets shows it (markdown marks dropped)."""
    plain = re.sub(r"[`*]", "", text)
    return re.compile(r"^\s*" + r"\s*".join(re.escape(w) for w in plain.split()) + r"\s*$")


def lab_settings(home: Path) -> None:
    """The learner's own JupyterLab settings a test needs (as
    tests/browser/test_lessons_in_browser.py):
    ``window.jupyterapp`` to drive it, every cell in the DOM, no news pop-up."""
    jupyter = home / ".jupyter"
    for name in ("jupyter_server_config.json", "jupyter_lab_config.json"):
        (jupyter / name).parent.mkdir(parents=True, exist_ok=True)
        (jupyter / name).write_text(json.dumps({"LabApp": {"expose_app_in_browser": True}}))
    for plugin, value in (("@jupyterlab/apputils-extension/notification",
                           {"fetchNews": "false", "checkForUpdates": False}),
                          ("@jupyterlab/notebook-extension/tracker", {"windowingMode": "none"})):
        path = jupyter / "lab" / "user-settings" / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value))


def take_quiz_in_notebook(page: Any, cls: RunningClass, user: str) -> str:
    """Open the lesson notebook in ``user``'s own JupyterLab, run its quiz cell and answer
    every item right in the widget (one item at a time, Next), then hand in."""
    bank = load_banks()[QUIZ]
    lab_settings(cls.paths.home(user))
    answers = correct_responses(bank, load_sources()[QUIZ], user, 1)
    page.goto(f"{cls.url}/hub/spawn/{user}")  # the hub starts the server, then JupyterLab
    page.wait_for_url(f"**/user/{user}/lab**", timeout=180_000)
    page.goto(f"{cls.url}/user/{user}/lab/tree/{NOTEBOOK}")
    page.wait_for_function(
        "() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
        " const s = w && w.sessionContext; return s && s.session && s.session.kernel"
        " && s.session.kernel.status === 'idle'; }", timeout=120_000)
    cell = page.locator(page.evaluate(RUN_QUIZ_CELL, QUIZ))
    out = cell.locator(".jp-OutputArea")
    start = out.locator("button", has_text="Start attempt").first
    start.wait_for(timeout=60_000)  # running the cell opened nothing: the quiz's panel
    assert "attempts left" in out.inner_text()
    page.screenshot(path=str(SHOTS / f"{user}-notebook-start.png"), full_page=True)
    start.click()
    out.locator("button", has_text="Finish and hand in").wait_for(timeout=60_000)
    for index, item in enumerate(present_items(bank, user, 1)):
        card = out.locator(".widget-vbox").filter(has_text=item.item_id).filter(
            has=page.locator("button", has_text="Check")).last
        if index:  # the widget shows the items in this order, one at a time: Next once,
            # then wait for the item's card (clicking again before it showed, as a fixed
            # 150 ms pause did on a loaded machine, skipped items until Next was disabled)
            out.locator("button", has_text="Next").first.click()
        card.wait_for(state="visible", timeout=60_000)
        response = answers[item.item_id]
        if item.options:
            label = dict(item.options)
            for oid in response if isinstance(response, list) else [response]:
                card.locator(".widget-radio-box label, .widget-checkbox label").filter(
                    has_text=shown(label[oid])).first.click()
        else:
            card.locator("input[type=text], textarea").first.fill(str(response))
        card.locator("button", has_text="Check").first.click()
        deadline = time.monotonic() + 60
        while "quiz-feedback" not in card.inner_html():
            assert time.monotonic() < deadline, f"no verdict for {item.item_id}"
            page.wait_for_timeout(200)
        assert card.locator("button", has_text="Check").first.is_disabled()
        if item.type == "lab":
            page.screenshot(path=str(SHOTS / f"{user}-notebook-lab-item.png"), full_page=True)
    out.locator("button", has_text="Finish and hand in").first.click()
    out.locator(".quiz-result").wait_for(timeout=60_000)
    page.screenshot(path=str(SHOTS / f"{user}-notebook-handed-in.png"), full_page=True)
    return str(out.locator(".quiz-result").inner_text())


def test_a_class_in_the_browser(cls, browser):
    SHOTS.mkdir(parents=True, exist_ok=True)
    ada = login(browser, cls, "ada")
    ada.screenshot(path=str(SHOTS / "ada-hub-home.png"))
    result = take_quiz_in_notebook(ada, cls, "ada")
    assert "Graded: 100%." in result, result
    found = re.search(r"Certificate (\S+) \(verify at", result)
    assert found is not None, result
    cert_id = found.group(1)
    db = sqlite3.connect(cls.paths.gradebook.resolve().as_uri() + "?mode=ro", uri=True)
    try:  # the lab was graded by the service and is in ada's record
        labs = db.execute("SELECT r.item_id, r.score FROM item_responses r JOIN attempts a"
                          " USING (attempt_id) WHERE a.learner_id = 'ada' AND r.item_id"
                          " LIKE 'lab-%'").fetchall()
    finally:
        db.close()
    lab_items = {it.common.id for it in load_banks()[QUIZ].items if it.common.type == "lab"}
    assert lab_items and {i for i, _ in labs} == lab_items and all(s == 1.0 for _, s in labs)

    bob = login(browser, cls, "bob")
    score = take_quiz(bob, cls, "bob", right=False)
    assert "not passed" in score
    assert bob.locator("#certificate").count() == 0

    cy = login(browser, cls, "cy")
    cy.goto(f"{cls.service}exam/{QUIZ}")
    cy.wait_for_selector(".item")
    forged = cy.evaluate("""async () => {
        const doc = {format: "quizzes-submission/1", learner_id: "ada", quiz_id: Q,
                     bank_version: "x", started_at: 0, submitted_at: 1, answers: {}};
        const r = await fetch(P + "submit", {method: "POST", credentials: "same-origin",
            headers: {"Content-Type": "application/json", "X-XSRFToken": X},
            body: JSON.stringify(doc)});
        const out = {status: r.status, body: await r.json()};
        const p = document.createElement("p"); p.id = "forged";
        p.textContent = "forged submission for ada: " + r.status + " " + out.body.error;
        document.body.prepend(p);
        return out;
    }""")
    assert forged["status"] == 403 and "another learner" in forged["body"]["error"]
    no_xsrf = cy.evaluate("""async () => (await fetch(P + "api/attempts", {method: "POST",
        credentials: "same-origin", headers: {"Content-Type": "application/json"},
        body: JSON.stringify({quiz_id: Q})})).status""")
    assert no_xsrf == 403  # a cookie alone (a cross-site form) cannot act for cy
    cy.screenshot(path=str(SHOTS / "cy-forged-refused.png"))

    teacher = login(browser, cls, "teacher")
    teacher.goto(cls.service)
    teacher.wait_for_selector("#export-canvas")
    teacher.screenshot(path=str(SHOTS / "teacher-service.png"))
    with teacher.expect_download() as info:
        teacher.click("#export-canvas")
    path = info.value.path()
    rows = list(csv.reader(io.StringIO(Path(path).read_text(encoding="utf-8"))))
    assert rows[0][:4] == ["Student", "ID", "SIS User ID", "SIS Login ID"]
    by_id = {r[2]: r for r in rows[2:]}
    assert set(by_id) >= {"ada", "bob"} and "cy" not in by_id
    assert float(by_id["ada"][5]) == 100.0 and float(by_id["bob"][5]) < 70.0

    public = browser.new_context().new_page()  # nobody logged in
    public.goto(f"{cls.service}verify/{cert_id}")
    text = public.inner_text("body")
    assert "VALID" in text and "ada" in text and cert_id in text
    public.screenshot(path=str(SHOTS / "certificate-verified.png"), full_page=True)
