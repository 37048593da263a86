"""Crafted input never takes the engine down: one bad submission, answer or click is
refused with a clear reason and everything else goes on (review findings, issue 5)."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
import time
from dataclasses import replace
from pathlib import Path

import pytest

from quizzes.author import load_sources, model_answer
from quizzes.bank import load_banks
from quizzes.batch import CertificateIssuer, grade_folder
from quizzes.cli import main
from quizzes.demo import EPOCH, model_submission
from quizzes.errors import QuizError
from quizzes.export import export_csv
from quizzes.grade import grade_response, grade_submission, item_variant
from quizzes.gradebook import Gradebook
from quizzes.keys import generate, load_private
from quizzes.registry import Lookup
from quizzes.session import NoAnswer, QuizSession
from quizzes.submission import MAX_EPOCH, parse_submission

CRASHER = "#SBATCH --begin=now+99999999999days\n#SBATCH -N2"


@pytest.fixture(scope="module")
def banks():
    return load_banks()


@pytest.fixture(scope="module")
def sources():
    return load_sources()


@pytest.fixture()
def issuer(tmp_path):
    return CertificateIssuer(load_private(generate(tmp_path / "issuer")[0]), "Test issuer",
                             clock=lambda: EPOCH + 3600)


def good(banks, sources, learner, quiz="02-sbatch", **kw):
    return model_submission(banks[quiz], sources[quiz], learner, learner.title(), **kw)


# --- 1. one crafted submission never aborts the batch --------------------------------------

def test_a_huge_timestamp_and_a_parser_crashing_answer_are_skipped_by_name(
        tmp_path, banks, sources, issuer):
    folder = tmp_path / "subs"
    folder.mkdir()
    (folder / "a-good.json").write_text(json.dumps(good(banks, sources, "ada")))
    (folder / "b-huge-time.json").write_text(
        json.dumps({**good(banks, sources, "bob"), "started_at": 10**30}))
    crash = good(banks, sources, "cy")
    crash["answers"]["nodes-and-tasks"]["response"] = CRASHER
    (folder / "c-crash.json").write_text(json.dumps(crash))
    (folder / "d-good.json").write_text(json.dumps(good(banks, sources, "dee")))
    with Gradebook(tmp_path / "gb.sqlite") as book:
        report = grade_folder(folder, banks, book, issuer)
        learners = [row[0] for row in book.scores()]
    problems = dict(report.rejected)
    assert list(problems) == ["b-huge-time.json"]
    assert problems["b-huge-time.json"] == (
        "b-huge-time.json: field 'started_at' is out of range (epoch seconds from 0 to "
        f"{MAX_EPOCH}, i.e. 1970 to the year 9999)")
    assert report.graded == 3 and learners == ["ada", "cy", "dee"]  # cy's one answer is 0


def test_timestamps_are_bounded_to_years_1970_to_9999(banks, sources):
    doc = good(banks, sources, "ada")
    for bad in (10**30, -1, "0001-01-01T00:00:00Z"):
        with pytest.raises(QuizError, match="'started_at' is out of range"):
            parse_submission(json.dumps({**doc, "started_at": bad}), banks)
    ok = {**doc, "started_at": 0, "submitted_at": MAX_EPOCH}
    assert parse_submission(json.dumps(ok), banks).submitted_at == MAX_EPOCH


def test_an_answer_that_crashes_the_sbatch_parser_scores_zero_with_a_reason(banks, monkeypatch):
    import minislurm.options

    def crash(*_a, **_k):  # the parser's own crashes (once --begin=now+99999999999days)
        raise OverflowError("date value out of range")

    monkeypatch.setattr(minislurm.options, "parse_sbatch", crash)
    answer = CRASHER + "\n#SBATCH -J crash"  # not an answer parsed (and cached) before
    outcome = grade_response(banks["02-sbatch"], "ada", "nodes-and-tasks", answer)
    assert outcome.score == 0
    assert outcome.feedback.startswith("This answer cannot be read as an sbatch request")


def test_any_exception_while_grading_one_file_rejects_only_that_file(
        tmp_path, banks, sources, issuer, monkeypatch):
    import quizzes.batch

    def flaky(bank, sub):
        if sub.learner_id == "bob":
            raise ZeroDivisionError("float division by zero")
        return grade_submission(bank, sub)

    monkeypatch.setattr(quizzes.batch, "grade_submission", flaky)
    folder = tmp_path / "subs"
    folder.mkdir()
    for who in ("ada", "bob", "cy"):
        (folder / f"{who}.json").write_text(json.dumps(good(banks, sources, who)))
    with Gradebook(tmp_path / "gb.sqlite") as book:
        report = grade_folder(folder, banks, book, issuer)
    assert report.graded == 2
    assert report.rejected == [("bob.json", "could not be graded (ZeroDivisionError: float "
                                            "division by zero); skipped")]


def test_a_row_the_gradebook_cannot_store_is_rejected_and_the_batch_is_kept(
        tmp_path, banks, sources):
    bank = banks["02-sbatch"]
    rows = []
    for who in ("ada", "bob", "cy"):
        sub = parse_submission(json.dumps(good(banks, sources, who)), banks)
        if who == "bob":  # bypasses parse_submission's bound: SQLite INTEGER overflows
            sub = replace(sub, started_at=10**30)
        rows.append((sub, bank, grade_submission(bank, sub), f"{who}.json"))
    with Gradebook(tmp_path / "gb.sqlite") as book:
        results = list(book.record_many(rows))
        assert book.counts()["attempts"] == 2
    assert [r.status for r in results] == ["graded", "rejected", "graded"]
    assert "OverflowError" in results[1].problem


def test_the_service_answers_400_not_500(tmp_path, banks, sources):
    from quizzes.serve import QuizService

    svc = QuizService(banks, str(tmp_path / "gb.sqlite"),
                      load_private(generate(tmp_path / "k")[0]))
    code, reply = svc.submit(json.dumps({**good(banks, sources, "ada"),
                                         "started_at": 10**30}).encode())
    assert code == 400 and "'started_at' is out of range" in reply["error"]
    crash = good(banks, sources, "bob")
    crash["answers"]["nodes-and-tasks"]["response"] = CRASHER
    code, reply = svc.submit(json.dumps(crash).encode())
    scores = {row["item_id"]: row["score"] for row in reply["items"]}
    assert code == 200 and scores["nodes-and-tasks"] == 0


def test_the_service_answers_400_when_recording_fails(tmp_path, banks, sources, monkeypatch):
    import quizzes.gradebook
    from quizzes.serve import QuizService

    svc = QuizService(banks, str(tmp_path / "gb.sqlite"),
                      load_private(generate(tmp_path / "k")[0]))
    monkeypatch.setattr(quizzes.gradebook.time, "time", lambda: 10**30)  # graded_at overflows
    code, reply = svc.submit(json.dumps(good(banks, sources, "ada")).encode())
    assert code == 400 and "OverflowError" in reply["error"]
    with Gradebook(svc.db) as book:
        assert book.counts()["attempts"] == 0


def test_a_negative_content_length_is_a_bad_request(tmp_path, banks):
    import http.client

    from quizzes.serve import QuizService, make_server, serve_in_thread

    svc = QuizService(banks, str(tmp_path / "gb.sqlite"),
                      load_private(generate(tmp_path / "k")[0]))
    server = make_server(svc, "127.0.0.1", 0)
    thread = serve_in_thread(server, poll_interval=0.02)
    try:
        conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=10)
        conn.putrequest("POST", "/submit")
        conn.putheader("Content-Length", "-5")
        conn.endheaders()
        resp = conn.getresponse()
        assert resp.status == 400
        assert json.loads(resp.read())["error"] == "Content-Length must not be negative (got -5)"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


# --- 4. the session and the widget ----------------------------------------------------------

def test_check_with_no_answer_is_a_hint_and_does_not_lock_the_item(banks, sources):
    bank = banks["03-gres-gpus"]
    s = QuizSession(bank, "ada", clock=lambda: EPOCH)
    multiple = next(i for i, p in zip(bank.items, s.items(), strict=True)
                    if p.type == "multiple")
    no_answers: tuple[object, ...] = (None, "", "   ", [])
    for empty in no_answers:
        with pytest.raises(NoAnswer, match="has no answer yet"):
            s.answer(multiple.common.id, empty)
    assert s.results == {} and s.answers == {}
    src = {i["id"]: i for i in sources[bank.quiz_id]["items"]}
    right = model_answer(src[multiple.common.id], item_variant(bank, "ada",
                                                                multiple.common.id)[0])
    assert s.answer(multiple.common.id, right).correct  # still answerable


def test_a_grader_crash_is_a_message_and_the_item_stays_open(banks, monkeypatch):
    import quizzes.session

    bank = banks["01-what-is-slurm"]
    s = QuizSession(bank, "ada", clock=lambda: EPOCH)
    real = quizzes.session.grade_response
    monkeypatch.setattr(quizzes.session, "grade_response",
                        lambda *a: (_ for _ in ()).throw(OverflowError("too big")))
    with pytest.raises(QuizError, match="could not be graded \\(OverflowError: too big\\)"):
        s.answer("queue-command", "squeue")
    monkeypatch.setattr(quizzes.session, "grade_response", real)
    assert s.answer("queue-command", "squeue").correct


def test_the_widget_shows_a_hint_or_an_error_instead_of_raising(banks, tmp_path, monkeypatch):
    pytest.importorskip("ipywidgets")
    from quizzes.widget import QuizWidget

    s = QuizSession(banks["01-what-is-slurm"], "ada", clock=lambda: EPOCH)
    w = QuizWidget(s, mode="all", folder=tmp_path)
    card = next(c for c, i in zip(w.cards, w.items, strict=True) if i.type == "text")
    _prompt, box, check, out = card.children
    check.click()  # nothing typed yet
    assert "has no answer yet" in out.value and not check.disabled and not s.results
    monkeypatch.setattr(s, "answer", lambda *a: (_ for _ in ()).throw(RuntimeError("boom")))
    box.value = "squeue"
    check.click()
    assert "could not be checked: RuntimeError: boom" in out.value and not check.disabled


# --- 5. units --------------------------------------------------------------------------------

def test_hyphenated_units_are_read_in_any_case(banks):
    from quizzes.items.units import parse_quantity

    for text in ("9216 GPU-hours", "9216 gpu-hours", "9,216 GPU hours", "9216 GPU-Hour"):
        assert parse_quantity(text, "GPU-hours") == 9216, text
    bank = banks["08-frontier-scale"]
    params, _, _ = item_variant(bank, "ada", "gpu-hours")
    src = {i["id"]: i for i in load_sources()[bank.quiz_id]["items"]}
    answer = model_answer(src["gpu-hours"], params)
    assert grade_response(bank, "ada", "gpu-hours", f"{answer:g} GPU-hours").correct


def test_an_ambiguous_comma_is_refused_with_a_clear_message():
    from quiz_helpers import bank_of

    from quizzes.items.units import parse_quantity

    for text in ("0,5", "12,34", "1,000,00", "1,5 GB"):
        assert parse_quantity(text, "GB") is None, text
    assert parse_quantity("1,048,576", "MB") == 1048576
    bank = bank_of({"id": "n", "type": "numeric", "answer": 0.5, "tolerance": {"abs": 0.01}})
    outcome = grade_response(bank, "ada", "n", "0,5")
    assert outcome.score == 0 and outcome.feedback == (
        "Cannot read this number: write decimals with a point (0.5, not 0,5); a comma is "
        "read only between groups of three digits (9,216).")
    assert grade_response(bank, "ada", "n", "0.5").correct


# --- 6. reporting ----------------------------------------------------------------------------

@pytest.mark.parametrize("argv, message", [
    (["grade", "subs", "--key", "k.key", "--timeout", "-1"],
     "quizzes: error: argument --timeout: must be a number of seconds greater than 0, not '-1'"),
    (["grade", "subs", "--key", "k.key", "--timeout", "nan"],
     "quizzes: error: argument --timeout: must be a number of seconds greater than 0"),
    (["serve", "--key", "k.key", "--port", "70000"],
     "quizzes: error: argument --port: port must be 0 to 65535, not 70000"),
    (["serve", "--key", "k.key", "--port", "http"],
     "quizzes: error: argument --port: invalid port number: 'http'"),
])
def test_bad_option_values_are_clear_usage_errors(argv, message, capsys):
    assert main(argv) == 2
    assert capsys.readouterr().err.startswith(message)


def test_a_rerun_issues_no_new_certificates(tmp_path, banks, sources, issuer):
    folder = tmp_path / "subs"
    folder.mkdir()
    for who in ("ada", "bob"):
        (folder / f"{who}.json").write_text(json.dumps(good(banks, sources, who)))
    with Gradebook(tmp_path / "gb.sqlite") as book:
        first = grade_folder(folder, banks, book, issuer)
        again = grade_folder(folder, banks, book, issuer)
        retry = good(banks, sources, "ada", started_at=EPOCH + 999)  # passes again
        (folder / "ada-2.json").write_text(json.dumps(retry))
        third = grade_folder(folder, banks, book, issuer)
    assert len(first.certificates) == 2
    assert again.certificates == [] and again.duplicates == 2
    assert third.graded == 1 and third.certificates == []


def test_an_oversized_file_is_reported_as_larger_than_the_limit(tmp_path, banks, issuer):
    folder = tmp_path / "subs"
    folder.mkdir()
    (folder / "huge.json").write_text("x" * 1_000_000)
    with Gradebook(tmp_path / "gb.sqlite") as book:
        report = grade_folder(folder, banks, book, issuer)
    assert report.rejected == [("huge.json", "huge.json: too large (larger than 262144 "
                                             "bytes, the limit)")]


# --- 7. verification reads the gradebook read-only ----------------------------------------

@pytest.fixture()
def graded(tmp_path, banks, sources, issuer):
    folder = tmp_path / "subs"
    folder.mkdir()
    (folder / "ada.json").write_text(json.dumps(good(banks, sources, "ada")))
    db = tmp_path / "gb.sqlite"
    with Gradebook(db) as book:
        cid = grade_folder(folder, banks, book, issuer).certificates[0]
    return db, cid, issuer.private.public_key()


def test_lookup_does_not_wait_behind_a_grader(graded):
    db, cid, public = graded
    grader = sqlite3.connect(db, isolation_level=None)
    grader.execute("BEGIN IMMEDIATE")  # a grader is recording right now
    grader.execute("INSERT INTO learners VALUES ('zed', 'Zed')")
    try:
        t = time.perf_counter()
        result = Lookup(public, db=str(db)).check_id(cid)
        assert result.ok and time.perf_counter() - t < 2.0
    finally:
        grader.execute("ROLLBACK")
        grader.close()


def test_lookup_writes_nothing_to_the_gradebook(graded):
    db, cid, public = graded
    with sqlite3.connect(db) as con:  # an older gradebook: no item_responses table yet
        con.execute("DROP TABLE item_responses")
    before = Path(db).read_bytes()
    assert Lookup(public, db=str(db)).check_id(cid).ok
    with sqlite3.connect(db) as con:
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master")}
    assert "item_responses" not in tables  # the schema was not re-created
    assert Path(db).read_bytes() == before


def test_verify_says_when_no_revocation_list_was_checked(graded, tmp_path, capsys):
    db, cid, _public = graded
    pub = tmp_path / "issuer.pub"  # written by the issuer fixture's generate()
    assert main(["verify", cid, "--pub", str(pub), "--db", str(db),
                 "--revocations", str(tmp_path / "missing.json")]) == 0
    assert capsys.readouterr().out.rstrip().endswith("(no revocation list checked)")
    from quizzes.certify import revoke
    revoke(tmp_path / "rl.json", "0000-0000-0000-0", "test", load_private(tmp_path / "issuer.key"))
    assert main(["verify", cid, "--pub", str(pub), "--db", str(db),
                 "--revocations", str(tmp_path / "rl.json")]) == 0
    assert "revocation" not in capsys.readouterr().out


# --- 9. CSV formula injection ---------------------------------------------------------------

def test_csv_cells_that_look_like_formulas_are_defused(tmp_path, banks, sources, issuer):
    folder = tmp_path / "subs"
    folder.mkdir()
    evil = {**good(banks, sources, "-2+3"), "learner_name": "=HYPERLINK(\"http://x\")"}
    (folder / "evil.json").write_text(json.dumps(evil))
    (folder / "at.json").write_text(json.dumps({**good(banks, sources, "@sum"),
                                                "learner_name": "Ada +Lovelace"}))
    with Gradebook(tmp_path / "gb.sqlite") as book:
        grade_folder(folder, banks, book, issuer)
        plain = list(csv.reader(io.StringIO(export_csv(book, "plain"))))
        moodle = list(csv.reader(io.StringIO(export_csv(book, "moodle"))))
    assert plain[1][:2] == ["'-2+3", "'=HYPERLINK(\"http://x\")"]
    assert plain[2][:2] == ["'@sum", "Ada +Lovelace"]  # only a leading sign is a formula
    assert moodle[2][:3] == ["'@sum", "Ada", "'+Lovelace"]
    assert all(not cell.startswith(("=", "+", "-", "@")) for row in plain + moodle
               for cell in row)
