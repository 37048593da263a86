"""The quiz service under a real JupyterHub (real proxy, real HTTP on 127.0.0.1).

One class for the module: learners ada, bob, cy, dan, eve and the instructor teacher.
Identity comes from hub tokens; every bad request gets a 4xx and leaves the
gradebook and the exam tables exactly as they were.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("jupyterhub", reason="the 'class' extra (jupyterhub) is not installed")

from course.classroom import deploy
from course.classroom.harness import RunningClass, correct_responses
from quizzes.author import load_sources
from quizzes.bank import load_banks
from quizzes.grade import attempt_items

pytestmark = pytest.mark.slow
QUIZ = "01-what-is-slurm"
CLASS_LEARNERS = ("ada", "bob", "cy", "dan", "eve", "gil", "hal")


@pytest.fixture(scope="module")
def cls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningClass]:
    """The conftest's class, with a 5 s token cache (the revocation test waits it out)."""
    try:
        deploy.proxy_bin()
    except Exception as exc:
        pytest.skip(str(exc))
    with RunningClass(tmp_path_factory.mktemp("class"), learners=CLASS_LEARNERS,
                      token_cache=5) as running:
        yield running


@pytest.fixture(scope="module")
def bank():
    return load_banks()[QUIZ]


@pytest.fixture(scope="module")
def source():
    return load_sources()[QUIZ]


def stored(cls: RunningClass) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the gradebook and the exam tables (to prove nothing changed)."""
    db = sqlite3.connect(Path(cls.paths.gradebook).resolve().as_uri() + "?mode=ro", uri=True)
    try:
        out = {}
        for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
            out[table] = db.execute(f"SELECT * FROM {table} ORDER BY 1").fetchall()
        return out
    finally:
        db.close()


def take(cls: RunningClass, user: str, answers: dict[str, object]) -> dict:
    tok = cls.token(user)
    code, att = cls.call("POST", "api/attempts", token=tok, body={"quiz_id": QUIZ})
    assert code == 200, att
    for item_id, response in answers.items():
        if item_id in att["answered"]:  # a resumed attempt
            continue
        code, fb = cls.call("POST", f"api/attempts/{att['attempt_id']}/answers", token=tok,
                            body={"item_id": item_id, "response": response})
        assert code == 200, fb
    code, result = cls.call("POST", f"api/attempts/{att['attempt_id']}/submit", token=tok)
    assert code == 200, result
    return result


def test_identity_is_the_hub_user(cls):
    code, me = cls.call("GET", "api/me", token=cls.token("ada"))
    assert (code, me["name"], me["instructor"]) == (200, "ada", False)
    code, me = cls.call("GET", "api/me", token=cls.token("teacher"))
    assert (code, me["name"], me["instructor"]) == (200, "teacher", True)


def test_the_hubs_database_is_in_wal_mode(cls):
    """The generated config sets WAL + synchronous=NORMAL on the hub's SQLite (a new
    token's first check commits its last_activity: ~20 ms of fsyncs otherwise)."""
    cls.call("GET", "api/me", token=cls.token("dan"))  # a first check: a commit
    db = sqlite3.connect(cls.paths.hub_db)
    try:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        db.close()


@pytest.mark.parametrize("headers", [
    {}, {"Authorization": "token 0123456789abcdef0123456789abcdef"},
    {"Cookie": "jupyterhub-services-quizzes=forged-cookie-value"},
])
def test_no_or_forged_credentials_are_refused(cls, headers):
    before = stored(cls)
    for method, path, body in (("GET", "api/me", None),
                               ("POST", "api/attempts", {"quiz_id": QUIZ})):
        code, reply = cls.call(method, path, body=body, headers=headers)
        assert code == 403, reply
        assert "error" in reply
    assert stored(cls) == before


def test_a_revoked_token_replayed_is_refused(cls):
    code, reply = cls.hub("POST", "users/dan/tokens", {"note": "to be revoked"})
    assert code == 201
    token, token_id = reply["token"], reply["id"]
    assert cls.call("GET", "api/me", token=token)[0] == 200
    assert cls.hub("DELETE", f"users/dan/tokens/{token_id}")[0] == 204
    time.sleep(6)  # this class's service remembers an identity for 5 s (token_cache)
    before = stored(cls)
    code, reply = cls.call("POST", "api/attempts", token=token, body={"quiz_id": QUIZ})
    assert code == 403, reply
    assert stored(cls) == before


def test_exam_items_carry_no_answer_material(cls, bank):
    code, att = cls.call("POST", "api/attempts", token=cls.token("cy"), body={"quiz_id": QUIZ})
    assert code == 200, att
    shown = [it.common.id for it in attempt_items(bank, "cy", 1)]  # the widget's draw and order
    assert [i["item_id"] for i in att["items"]] == shown
    text = json.dumps(att)
    assert bank.salt not in text
    for item in att["items"]:
        assert set(item) == {"item_id", "type", "prompt", "options", "multiple", "unit",
                             "points", "exhibit"}  # exhibit: minislurm output, no key
    for it in bank.items:  # neither the explanations nor any stored hash
        assert it.common.explanation not in text
    raw = Path(bank.path).read_text()
    hashes = {w.strip("'\"[],") for w in raw.split() if len(w.strip("'\"[],")) == 24}
    assert not any(h in text for h in hashes)


def test_a_passing_exam_earns_an_exam_certificate_that_verifies_publicly(cls, bank, source):
    result = take(cls, "ada", correct_responses(bank, source, "ada", 1))
    assert result["passed"] and result["score"] == 1.0
    cert = result["certificate_id"]
    code, page = cls.call("GET", f"verify/{cert}.json")  # no token: public
    assert code == 200 and page["status"] == "valid", page
    assert page["record"]["assessment"] == "exam"
    assert page["record"]["learner_id"] == "ada"
    code, html = cls.call("GET", f"verify/{cert}")
    assert code == 200 and "ada" in html


def test_feedback_is_immediate_and_items_lock(cls, bank, source):
    tok = cls.token("bob")
    code, att = cls.call("POST", "api/attempts", token=tok, body={"quiz_id": QUIZ})
    assert code == 200
    first = bank.items[0].common.id
    right = correct_responses(bank, source, "bob", att["attempt"])[first]
    code, fb = cls.call("POST", f"api/attempts/{att['attempt_id']}/answers", token=tok,
                        body={"item_id": first, "response": right})
    assert code == 200 and fb["correct"] and fb["explanation"]
    before = stored(cls)
    code, reply = cls.call("POST", f"api/attempts/{att['attempt_id']}/answers", token=tok,
                           body={"item_id": first, "response": right})
    assert code == 409 and "already answered" in reply["error"]
    # resuming shows the attempt with the answered item and its feedback
    code, again = cls.call("POST", "api/attempts", token=tok, body={"quiz_id": QUIZ})
    assert again["attempt_id"] == att["attempt_id"] and first in again["answered"]
    assert stored(cls) == before


@pytest.mark.parametrize("body, status, words", [
    ({"item_id": "no-such-item", "response": "a"}, 422, "not in your variant"),
    ({"item_id": "slurm-purpose", "response": ""}, 400, "non-empty"),
    ({"item_id": "slurm-purpose", "response": True}, 400, "non-empty"),
    ({"item_id": "slurm-purpose"}, 400, "needs 'item_id' and 'response'"),
    ({"item_id": "slurm-purpose", "response": "a", "learner_id": "ada"}, 403, "another learner"),
])
def test_bad_answers_are_refused_and_store_nothing(cls, body, status, words):
    tok = cls.token("cy")
    code, att = cls.call("POST", "api/attempts", token=tok, body={"quiz_id": QUIZ})
    assert code == 200
    before = stored(cls)
    code, reply = cls.call("POST", f"api/attempts/{att['attempt_id']}/answers", token=tok,
                           body=body)
    assert code == status, reply
    assert words in reply["error"]
    assert stored(cls) == before


@pytest.mark.parametrize("raw, status", [
    (b"{not json", 400), (b"[1, 2]", 400), (b"\xff\xfe", 400),
    (b'{"quiz_id": "' + b"x" * 300_000 + b'"}', 413), (b"x" * 3_000_000, 413),
])
def test_malformed_and_oversized_bodies(cls, raw, status):
    before = stored(cls)
    code, reply = cls.call("POST", "api/attempts", token=cls.token("cy"), raw=raw)
    assert code == status, reply
    assert stored(cls) == before


def test_another_learners_attempt_or_id_is_refused(cls):
    code, att = cls.call("POST", "api/attempts", token=cls.token("cy"), body={"quiz_id": QUIZ})
    assert code == 200
    before = stored(cls)
    bob = cls.token("bob")
    code, reply = cls.call("POST", f"api/attempts/{att['attempt_id']}/answers", token=bob,
                           body={"item_id": "slurm-purpose", "response": "a"})
    assert code == 403 and "another learner" in reply["error"]
    code, reply = cls.call("POST", f"api/attempts/{att['attempt_id']}/submit", token=bob)
    assert code == 403
    code, reply = cls.call("POST", "api/attempts", token=bob,
                           body={"quiz_id": QUIZ, "learner_id": "cy"})
    assert code == 403 and "'cy'" in reply["error"]
    forged = {"format": "quizzes-submission/1", "learner_id": "ada", "quiz_id": QUIZ,
              "bank_version": "x", "started_at": 0, "submitted_at": 1, "answers": {}}
    code, reply = cls.call("POST", "submit", token=bob, body=forged)
    assert code == 403 and "another learner" in reply["error"]
    forged["learner_id"] = "bob"  # even for oneself: a class grades in exam mode only
    code, reply = cls.call("POST", "submit", token=bob, body=forged)
    assert code == 403 and "exam mode" in reply["error"]
    assert stored(cls) == before


def test_no_attempt_after_the_limit(cls, bank):
    tok = cls.token("dan")
    limit = bank.policy.attempts
    assert limit is not None
    for _ in range(limit):
        code, att = cls.call("POST", "api/attempts", token=tok, body={"quiz_id": QUIZ})
        assert code == 200, att
        assert cls.call("POST", f"api/attempts/{att['attempt_id']}/submit", token=tok)[0] == 200
    before = stored(cls)
    code, reply = cls.call("POST", "api/attempts", token=tok, body={"quiz_id": QUIZ})
    assert code == 409 and f"{limit} of {limit} used" in reply["error"]
    code, reply = cls.call("POST", f"api/attempts/{att['attempt_id']}/submit", token=tok)
    assert code == 409 and "already submitted" in reply["error"]
    assert stored(cls) == before


def test_a_pt_br_learner_gets_portuguese_and_shares_the_items_rows(cls, bank, source):
    """gil asks in pt-BR (what the kernel's quizzes.i18n.resolve says), hal in English:
    gil's title, prompts, options, feedback and explanations are the bank's Portuguese;
    the gradebook keeps one row per item whatever the language (English feedback), the
    item analysis counts both learners on the same item, and gil's certificate records
    pt-BR."""
    from quizzes import translations
    from quizzes.exam import explain, present_items

    words = translations.load(bank, "pt-BR")
    assert words is not None
    gil, teacher = cls.token("gil"), cls.token("teacher")
    code, quizzes = cls.call("GET", "api/quizzes?lang=pt-BR", token=gil)
    mine = next(q for q in quizzes if q["quiz_id"] == QUIZ)
    assert code == 200 and mine["title"] == words.title and mine["open"] is None
    assert not [r for r in stored(cls)["exam_attempts"] if r[1] == "gil"]  # asking opens none
    before = stored(cls)
    code, reply = cls.call("POST", "api/attempts", token=gil,
                           body={"quiz_id": QUIZ, "lang": "fr"})
    assert code == 400 and "unknown language 'fr'" in reply["error"]
    assert stored(cls) == before
    code, att = cls.call("POST", "api/attempts", token=gil,
                         body={"quiz_id": QUIZ, "lang": "pt-BR"})
    assert code == 200 and att["lang"] == "pt-BR" and att["title"] == words.title
    expected = present_items(bank, "gil", 1, words)
    assert [(i["item_id"], i["prompt"], [list(o) for o in i["options"]]) for i in att["items"]] \
        == [(p.item_id, p.prompt, [list(o) for o in p.options]) for p in expected]
    english = {p.item_id: p.prompt for p in present_items(bank, "gil", 1)}
    assert sum(p.prompt != english[p.item_id] for p in expected) >= len(expected) // 2
    answers = correct_responses(bank, source, "gil", 1)
    choice = next(p for p in expected if p.options and not p.multiple)
    wrong = next(o for o, _ in choice.options if o != answers[choice.item_id])
    code, fb = cls.call("POST", f"api/attempts/{att['attempt_id']}/answers", token=gil,
                        body={"item_id": choice.item_id, "response": wrong, "lang": "pt-BR"})
    assert code == 200 and fb["feedback"].startswith("Incorreto"), fb
    assert fb["explanation"] == explain(bank, "gil", choice.item_id, 1, words)
    assert fb["explanation"] != explain(bank, "gil", choice.item_id, 1)  # Portuguese
    for item_id, response in answers.items():
        if item_id != choice.item_id:
            code, fb = cls.call("POST", f"api/attempts/{att['attempt_id']}/answers", token=gil,
                                body={"item_id": item_id, "response": response,
                                      "lang": "pt-BR"})
            assert code == 200, fb
    code, result = cls.call("POST", f"api/attempts/{att['attempt_id']}/submit", token=gil)
    assert code == 200 and result["lang"] == "pt-BR" and result["certificate_id"], result
    code, page = cls.call("GET", f"verify/{result['certificate_id']}.json")
    assert page["status"] == "valid" and page["record"]["lang"] == "pt-BR"
    assert page["record"]["assessment"] == "exam"
    hal = take(cls, "hal", correct_responses(bank, source, "hal", 1))  # English
    code, page = cls.call("GET", f"verify/{hal['certificate_id']}.json")
    assert page["record"]["lang"] == "en"
    book = stored(cls)
    counted = {r[0]: r[2] for r in book["attempts"]}  # attempt id -> learner
    rows = [(counted[r[0]], r[1], r[6]) for r in book["item_responses"]
            if counted[r[0]] in ("gil", "hal")]
    shared = {i for w, i, _ in rows if w == "gil"} & {i for w, i, _ in rows if w == "hal"}
    assert choice.item_id in {i for _, i, _ in rows} and shared
    assert not any(fb.startswith(("Correto", "Incorreto")) for _, _, fb in rows), rows
    wrong_row = next(fb for w, i, fb in rows if (w, i) == ("gil", choice.item_id))
    assert wrong_row.startswith("Incorrect")
    code, stats = cls.call("GET", f"analysis/{QUIZ}.json", token=teacher)
    ids = [i["item_id"] for i in stats["items"]]
    assert code == 200 and len(ids) == len(set(ids)) == len(bank.items)


def test_instructor_routes_are_for_instructors_only(cls):
    ada = cls.token("ada")
    for path in ("api/gradebook", "export/canvas.csv", f"analysis/{QUIZ}.json"):
        code, reply = cls.call("GET", path, token=ada)
        assert code == 403 and "instructors" in reply["error"], path
    code, reply = cls.call("POST", "api/revoke", token=ada, body={"id": "X"})
    assert code == 403


def test_instructor_gradebook_export_analysis_and_revocation(cls, bank, source):
    teacher = cls.token("teacher")
    result = take(cls, "bob", correct_responses(bank, source, "bob", 1))
    code, book = cls.call("GET", "api/gradebook", token=teacher)
    assert code == 200
    rows = {(r["learner_id"], r["quiz_id"]): r for r in book["scores"]}
    assert rows[("bob", QUIZ)]["certificate_id"] == result["certificate_id"]
    code, csv = cls.call("GET", "export/canvas.csv", token=teacher)
    assert code == 200 and csv.splitlines()[0].startswith("Student,ID,SIS User ID")
    assert any(",bob," in line for line in csv.splitlines())
    code, stats = cls.call("GET", f"analysis/{QUIZ}.json", token=teacher)
    assert code == 200 and stats["learners"] >= 1
    cert = result["certificate_id"]
    code, reply = cls.call("POST", "api/revoke", token=teacher,
                           body={"id": cert, "reason": "test of revocation"})
    assert code == 200, reply
    code, page = cls.call("GET", f"verify/{cert}.json")
    assert page["status"] == "revoked" and "test of revocation" in page["reason"]


#: Run in a learner's server's environment: the notebook's quiz cell, answered and handed in.
WIDGET_CLIENT = """
import json, sys
from pathlib import Path
import quizzes
from quizzes.widget import quiz
answers = json.loads(sys.argv[1])
assert not (Path(quizzes.__file__).parent / "banks").exists(), "a bank in the learner image"
box = quiz(%r, mode="all")
panel = box.children[0]
out = {"panel": panel.children[0].value, "button": panel.children[1].description}
panel.children[1].click()  # Start attempt: only now is an attempt opened
view = panel.children[0]
out["items"] = []
for card in view.children[1].children:
    item_id = card.children[0].value.split("<b>", 1)[1].split("</b>", 1)[0]
    box_ = card.children[1]
    kind = type(box_).__name__
    if kind == "VBox":
        for cb in box_.children:
            cb.value = cb.tooltip in answers[item_id]
    else:
        box_.value = answers[item_id] if kind == "RadioButtons" else str(answers[item_id])
    card.children[2].click()
    out["items"].append([item_id, card.children[3].value, card.children[2].disabled])
view.children[2].children[-1].click()
out["result"] = view.children[3].value
print(json.dumps(out))
"""


def test_the_notebook_widget_takes_the_exam_from_the_service(cls, bank, source):
    """eve's own server (started by the hub): the quiz cell's code, in that server's
    environment (its PYTHONPATH is the learner image, which has no bank; its hub API
    token is the server's own), asks the service through the proxy for eve's items,
    gets each verdict from it and hands in; the gradebook has eve's exam attempt."""
    cls.start_server("eve")
    try:
        env = cls.server_env("eve")
        assert env["JUPYTERHUB_USER"] == "eve" and env["JUPYTERHUB_API_TOKEN"]
        assert env["COURSE_QUIZ_SERVICE"] == cls.service
        answers = correct_responses(bank, source, "eve", 1)
        run = subprocess.run([sys.executable, "-c", WIDGET_CLIENT % QUIZ, json.dumps(answers)],
                             env=env, capture_output=True, text=True, timeout=120,
                             cwd=cls.paths.home("eve"))
        assert run.returncode == 0, run.stderr
        out = json.loads(run.stdout)
        assert [i for i, _, _ in out["items"]] == [it.common.id for it in
                                                    attempt_items(bank, "eve", 1)]
        assert all("quiz-feedback" in fb and locked for _, fb, locked in out["items"]), out
        assert "Graded: 100%." in out["result"]
        assert bank.title in out["panel"] and out["button"] == "Start attempt"
        book = stored(cls)
        mine = [r for r in book["exam_attempts"] if r[1] == "eve"]
        assert len(mine) == 1 and mine[0][9] is not None  # opened and submitted by the service
        assert mine[0][10] == "en"  # the language it was taken in
        assert sum(1 for r in book["exam_answers"] if r[0] == mine[0][0]) == len(answers)
        cert = next(r[0] for r in book["certificates"] if r[1] == "eve")
        assert f"{cls.service}verify/{cert}" in out["result"]
        # the same server token cannot act for another learner
        code, reply = cls.call("POST", "api/attempts", token=env["JUPYTERHUB_API_TOKEN"],
                               body={"quiz_id": QUIZ, "learner_id": "ada"})
        assert code == 403 and "another learner" in reply["error"]
    finally:
        cls.stop_server("eve")
