"""A class in a real browser: real hub, real proxy, real quiz service, real chromium.

Two learners log in through the hub's login page, take module 1's quiz in exam mode
(ada answers right and earns a certificate, bob guesses and fails), a third
learner's forged submission for ada is refused, the instructor exports the Canvas
CSV, and ada's certificate verifies on the public page with no login.
Screenshots go to build/screenshots/class/.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from course.classroom.harness import RunningClass, correct_responses
from quizzes.author import load_sources
from quizzes.bank import load_banks

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


def test_a_class_in_the_browser(cls, browser):
    SHOTS.mkdir(parents=True, exist_ok=True)
    ada = login(browser, cls, "ada")
    ada.screenshot(path=str(SHOTS / "ada-hub-home.png"))
    score = take_quiz(ada, cls, "ada", right=True)
    assert "Score 100%" in score and "passed" in score and "not passed" not in score
    cert = ada.get_attribute("#certificate", "href")
    assert cert and "/verify/" in cert
    cert_id = cert.rsplit("/", 1)[-1]

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
