"""`quizzes serve` over a real socket on 127.0.0.1: submit, get a score and an ID, verify."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from quizzes.author import load_sources
from quizzes.bank import load_banks
from quizzes.certify import revoke
from quizzes.demo import model_submission
from quizzes.gradebook import Gradebook
from quizzes.keys import generate, load_private
from quizzes.serve import QuizService, make_server, serve_in_thread
from quizzes.session import QuizSession


@pytest.fixture()
def service(tmp_path):
    private = load_private(generate(tmp_path / "issuer")[0])
    svc = QuizService(load_banks(), str(tmp_path / "gb.sqlite"), private,
                      revocations=str(tmp_path / "revocations.json"))
    server = make_server(svc, "127.0.0.1", 0)
    thread = serve_in_thread(server, poll_interval=0.02)
    yield svc
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


def post(url: str, body: bytes):
    req = urllib.request.Request(url + "/submit", data=body,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=20) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def get(url: str):
    try:
        with urllib.request.urlopen(url, timeout=20) as resp:
            return resp.status, resp.headers["Content-Type"], resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers["Content-Type"], exc.read()


def submission(learner="ada", correct=True):
    bank = load_banks()["01-what-is-slurm"]
    return model_submission(bank, load_sources()["01-what-is-slurm"], learner, "Ada Lovelace",
                            correct=correct)


def test_it_listens_on_localhost(service):
    assert service.base_url.startswith("http://127.0.0.1:")
    assert get(service.base_url + "/healthz")[0] == 200


def test_submit_returns_score_feedback_and_a_certificate_id(service):
    code, reply = post(service.base_url, json.dumps(submission()).encode())
    assert code == 200
    assert (reply["status"], reply["score"], reply["passed"]) == ("graded", 1.0, True)
    assert len(reply["items"]) == len(load_banks()["01-what-is-slurm"].items)
    assert all(i["explanation"] for i in reply["items"])
    cid = reply["certificate_id"]
    assert reply["verify_url"] == f"{service.base_url}/verify/{cid}"
    code, ctype, page = get(reply["verify_url"])
    assert code == 200 and ctype.startswith("text/html")
    assert b"VALID" in page and b"Ada Lovelace" in page
    code, _, body = get(f"{service.base_url}/verify/{cid.lower()}.json")
    assert json.loads(body)["status"] == "valid"
    assert get(f"{service.base_url}/certificate/{cid}.pdf")[2].startswith(b"%PDF")
    badge = json.loads(get(f"{service.base_url}/badge/{cid}.json")[2])
    assert "OpenBadgeCredential" in badge["type"]
    again = post(service.base_url, json.dumps(submission()).encode())[1]
    assert (again["status"], again["certificate_id"]) == ("duplicate", cid)


def test_a_failing_submission_gets_no_certificate(service):
    code, reply = post(service.base_url, json.dumps(submission("bob", False)).encode())
    assert code == 200 and reply["passed"] is False and reply["certificate_id"] is None


def test_the_widget_session_submits_to_the_service(service):
    bank = load_banks()["01-what-is-slurm"]
    session = QuizSession(bank, "cy", "Cy")
    session.answer("slurm-purpose", "a")
    reply = session.send(service.base_url)
    assert reply["points"] == 1.0 and reply["certificate_id"] is None


@pytest.mark.parametrize("body, code, message", [
    (b"{nope", 400, "submission: not valid JSON"),
    (json.dumps({**submission(), "quiz_id": "nope"}).encode(), 400,
     "submission: unknown quiz 'nope'"),
    (json.dumps({**submission(), "bank_version": "0" * 16}).encode(), 400,
     "submission: bank version 0000000000000000 of quiz '01-what-is-slurm' is outdated"),
    (b" " * 300_000, 413, "submission: too large"),
])
def test_malformed_submissions_are_refused_and_change_nothing(service, body, code, message):
    with Gradebook(service.db) as book:
        before = book.counts()
    got, reply = post(service.base_url, body)
    assert got == code and reply["error"].startswith(message)
    with Gradebook(service.db) as book:
        assert book.counts() == before


def test_verify_page_for_unknown_malformed_and_revoked_ids(service):
    code, _, page = get(f"{service.base_url}/verify/0000-0000-0000-0")
    assert code == 404 and b"no certificate with ID 0000-0000-0000-0" in page
    code, _, page = get(f"{service.base_url}/verify/hello")
    assert code == 404 and b"malformed ID" in page
    cid = post(service.base_url, json.dumps(submission("dee")).encode())[1]["certificate_id"]
    revoke(service.lookup.revocations, cid, "plagiarism", service.private)
    code, _, page = get(f"{service.base_url}/verify/{cid}")
    assert code == 200 and b"REVOKED" in page and b"plagiarism" in page


def test_unknown_endpoints(service):
    assert get(service.base_url + "/nothing")[0] == 404
    req = urllib.request.Request(service.base_url + "/other", data=b"{}")
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(req, timeout=10)
    assert err.value.code == 404
