"""``quizzes serve``: a small grading and verification web service (stdlib http.server).

Endpoints (JSON unless stated):

* ``POST /submit``: a submission (see :mod:`quizzes.submission`) -> the attempt's
  score, per-item feedback, the learner's counted quiz score and, once passed, the
  certificate ID and its verification URL.  Bad input (including an answer the
  graders choke on, or a value the gradebook cannot store) -> 400 (413 if
  oversized, 411 without Content-Length) with ``{"error": ...}``; the gradebook
  is untouched.
* ``GET /verify/<ID>``: public HTML page saying valid / invalid / revoked and why;
  ``GET /verify/<ID>.json`` the same as JSON.
* ``GET /certificate/<ID>.pdf`` and ``GET /badge/<ID>.json`` (Open Badges 3.0).
* ``GET /healthz``.

It listens on 127.0.0.1 by default.  Each request opens its own gradebook
connection, so concurrent requests are serialised by SQLite transactions.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from minislurm.errors import SlurmError
from quizzes import ids
from quizzes.badges import open_badge
from quizzes.bank import Bank
from quizzes.batch import CertificateIssuer
from quizzes.certify import parse_certificate
from quizzes.grade import grade_submission
from quizzes.gradebook import Gradebook
from quizzes.registry import Lookup
from quizzes.render import certificate_html, certificate_pdf
from quizzes.submission import MAX_BYTES, parse_submission


class QuizService:
    """The application behind the HTTP handler (testable without a socket)."""

    def __init__(self, banks: Mapping[str, Bank], db: str, private: Ed25519PrivateKey,
                 *, issuer: str = "minislurm course", revocations: str | None = None,
                 base_url: str = "") -> None:
        self.banks = banks
        self.db = db
        self.private = private
        self.issuer = CertificateIssuer(private, issuer)
        self.lookup = Lookup(private.public_key(), db=db, revocations=revocations)
        self.base_url = base_url
        Gradebook(db).close()  # create the schema once

    def submit(self, body: bytes) -> tuple[int, dict[str, Any]]:
        try:
            sub = parse_submission(body, self.banks, source="submission")
        except SlurmError as exc:
            code = HTTPStatus.REQUEST_ENTITY_TOO_LARGE if "too large" in exc.message \
                else HTTPStatus.BAD_REQUEST
            return code, {"error": exc.message.removeprefix("quizzes: error: ")}
        bank = self.banks[sub.quiz_id]
        try:
            grade = grade_submission(bank, sub)
        except Exception as exc:  # one crafted answer must not become a 500
            return HTTPStatus.BAD_REQUEST, {
                "error": f"submission: could not be graded ({type(exc).__name__}: {exc})"}
        with Gradebook(self.db) as book:
            rec = next(book.record_many([(sub, bank, grade, "http")], self.issuer))
        if rec.status == "rejected":
            return HTTPStatus.BAD_REQUEST, {"error": f"submission: {rec.problem}"}
        reply: dict[str, Any] = {
            "status": rec.status, "quiz_id": bank.quiz_id, "attempt": rec.attempt_no,
            "counted": rec.counted, "points": grade.points, "max_points": grade.max_points,
            "score": grade.fraction, "quiz_score": rec.score, "passed": rec.passed,
            "certificate_id": rec.certificate_id,
            "items": [{"item_id": g.item_id, "score": g.score, "feedback": g.feedback,
                       "explanation": g.explanation} for g in grade.items]}
        if rec.certificate_id:
            reply["verify_url"] = f"{self.base_url}/verify/{rec.certificate_id}"
        return HTTPStatus.OK, reply

    def verify_page(self, typed: str, as_json: bool) -> tuple[int, str, bytes]:
        result = self.lookup.check_id(typed)
        if as_json:
            body = {"status": result.status, "reason": result.reason,
                    "record": dict(result.certificate.record) if result.certificate else None}
            return HTTPStatus.OK, "application/json", json.dumps(body).encode()
        if result.certificate is None:
            page = ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>"
                    "Certificate not found</title></head><body><h1>INVALID</h1><p>"
                    f"{_escape(result.reason)}</p></body></html>")
            return HTTPStatus.NOT_FOUND, "text/html; charset=utf-8", page.encode()
        page = certificate_html(result.certificate, result,
                                f"{self.base_url}/verify/{result.certificate.id}")
        return HTTPStatus.OK, "text/html; charset=utf-8", page.encode()

    def document(self, typed: str) -> Any:
        try:
            printed = ids.normalise(typed)
        except ids.IdError:
            return None
        doc = self.lookup.document(printed)
        return None if doc is None else parse_certificate(doc, printed)


def _escape(text: str) -> str:
    import html
    return html.escape(text)


class Handler(BaseHTTPRequestHandler):
    service: QuizService
    server_version = "quizzes-serve/1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet by default
        return

    def _send(self, code: int, ctype: str, body: bytes) -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _json(self, code: int, obj: Any) -> None:
        self._send(code, "application/json", json.dumps(obj).encode())

    def do_POST(self) -> None:
        if self.path != "/submit":
            self._json(HTTPStatus.NOT_FOUND, {"error": f"no such endpoint: POST {self.path}"})
            return
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            self._json(HTTPStatus.LENGTH_REQUIRED, {"error": "Content-Length is required"})
            return
        if length < 0:
            self._json(HTTPStatus.BAD_REQUEST,
                       {"error": f"Content-Length must not be negative (got {length})"})
            self.close_connection = True
            return
        if length > MAX_BYTES:
            self._json(HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                       {"error": f"submission: too large ({length} bytes; the limit is "
                                 f"{MAX_BYTES})"})
            self.close_connection = True
            return
        try:
            code, reply = self.service.submit(self.rfile.read(length))
        except Exception as exc:  # a bug must not kill the connection without an answer
            code, reply = HTTPStatus.INTERNAL_SERVER_ERROR, {
                "error": f"internal error: {type(exc).__name__}: {exc}"}
        self._json(code, reply)

    def do_GET(self) -> None:
        path = unquote(self.path.split("?", 1)[0])
        if path == "/healthz":
            self._json(HTTPStatus.OK, {"ok": True})
        elif path.startswith("/verify/"):
            typed = path.removeprefix("/verify/")
            as_json = typed.endswith(".json")
            self._send(*self.service.verify_page(typed.removesuffix(".json"), as_json))
        elif path.startswith("/certificate/") and path.endswith(".pdf"):
            cert = self.service.document(path[len("/certificate/"):-4])
            if cert is None:
                self._json(HTTPStatus.NOT_FOUND, {"error": "no such certificate"})
            else:
                self._send(HTTPStatus.OK, "application/pdf", certificate_pdf(cert))
        elif path.startswith("/badge/") and path.endswith(".json"):
            cert = self.service.document(path[len("/badge/"):-5])
            if cert is None:
                self._json(HTTPStatus.NOT_FOUND, {"error": "no such certificate"})
            else:
                self._json(HTTPStatus.OK, open_badge(cert, self.service.private))
        else:
            self._json(HTTPStatus.NOT_FOUND, {"error": f"no such page: {path}"})


def make_server(service: QuizService, host: str = "127.0.0.1", port: int = 8765
                ) -> ThreadingHTTPServer:
    """A bound server (``port=0`` picks a free port); call ``serve_forever()``."""
    handler = type("BoundHandler", (Handler,), {"service": service})
    server = ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    if not service.base_url:
        service.base_url = f"http://{host}:{server.server_address[1]}"
    return server


def serve_in_thread(server: ThreadingHTTPServer, poll_interval: float = 0.5
                    ) -> threading.Thread:
    """Serve from a daemon thread (stop with ``server.shutdown()``)."""
    thread = threading.Thread(target=server.serve_forever, args=(poll_interval,),
                              name="quizzes-serve", daemon=True)
    thread.start()
    return thread
