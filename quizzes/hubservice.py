"""``quizzes serve --hub``: the quiz service as a JupyterHub service (``/services/quizzes/``).

Identity is the hub's: a request is authenticated by hub OAuth (the browser's
cookie after ``/hub/api/oauth2/authorize``) or by a hub API token in the
``Authorization: token ...`` header (the learner's kernel has one in
``$JUPYTERHUB_API_TOKEN``).  The learner id is the hub user's name, never a field
of the request: a body naming another learner is refused with 403.

Routes under the service prefix (JSON unless stated; the API is described in
``docs/classroom.md``; the notebook's client is :mod:`quizzes.examclient`):

learners
  ``GET api/me``, ``GET api/quizzes[?lang=]``, ``POST api/attempts`` ``{"quiz_id",
  "lang"?}``, ``POST api/attempts/<id>/answers`` ``{"item_id", "response", "lang"?}``,
  ``POST api/attempts/<id>/submit``, ``GET exam/<quiz>[?lang=]`` (an HTML exam page),
  ``GET`` the index page; ``POST submit`` (a ``quizzes-submission/1`` document)
  is refused: in a class only exam mode grades.
instructors (members of the hub group, default ``instructors``)
  ``GET api/gradebook``, ``GET export/<canvas|moodle|plain>.csv``,
  ``GET analysis/<quiz>.json`` / ``.html``, ``POST api/revoke`` ``{"id", "reason"}``.
public
  ``GET verify/<ID>`` (HTML) / ``verify/<ID>.json``, ``certificate/<ID>.pdf``,
  ``badge/<ID>.json``, ``healthz``.

Bodies: at most :data:`quizzes.submission.MAX_BYTES` (413 above, 411 without a
length), JSON objects only (400 otherwise).  Every refusal is a 4xx with
``{"error": ...}`` and changes nothing stored.  ``lang`` is the learner's language
(``en``, ``pt-BR``; English when absent): the items and the feedback are given in
it, the gradebook stays language-free (:mod:`quizzes.exam`).
"""

from __future__ import annotations

import argparse
import html
import json
import os
import signal
import sys
import time
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from jupyterhub.services.auth import (
    HubOAuth,
    HubOAuthCallbackHandler,
    HubOAuthenticated,
    UserNotAllowed,
)
from tornado import ioloop, web

from quizzes.bank import Bank, load_banks
from quizzes.certify import revoke
from quizzes.errors import ExamError, QuizError
from quizzes.exam import ExamDesk, exam_language
from quizzes.export import FORMATS, export_csv
from quizzes.gradebook import Gradebook
from quizzes.i18n import DEFAULT_LANG, tr
from quizzes.keys import load_private
from quizzes.serve import QuizService
from quizzes.submission import MAX_BYTES

SERVICE_NAME = "quizzes"
#: How long the identity of a token is remembered before asking the hub again (seconds):
#: a token revoked at the hub is still accepted that long.  JupyterHub's default is 300.
#: Shorter costs the hub a token check per learner per period, serialised in its one
#: process (~20 ms each here): with 5 s, 300 learners answering together kept the hub
#: busy re-checking tokens and their first requests queued behind those checks.
TOKEN_CACHE_SECONDS = 30
#: Bodies up to this size are read (and refused with 413 above MAX_BYTES).
READ_LIMIT = 64 * 1024 * 1024


def _bearer(header: str) -> bool:
    return header.split(" ", 1)[0].lower() in ("token", "bearer")


class Instructors:
    """Who is in the instructors' hub group (asked with the service's token, cached)."""

    def __init__(self, api_url: str, token: str, group: str, *, max_age: float = 5.0) -> None:
        self.url = f"{api_url.rstrip('/')}/groups/{group}"
        self.token = token
        self.group = group
        self.max_age = max_age
        self._members: frozenset[str] = frozenset()
        self._at = -1e9

    def members(self) -> frozenset[str]:
        if time.monotonic() - self._at > self.max_age:
            req = urllib.request.Request(self.url,
                                         headers={"Authorization": f"token {self.token}"})
            try:
                with urllib.request.urlopen(req, timeout=10) as resp:
                    self._members = frozenset(json.loads(resp.read()).get("users", []))
            except OSError:  # the hub is away: keep the last answer
                return self._members
            self._at = time.monotonic()
        return self._members


class App:
    """What the handlers share: the banks, the exam desk, the grading service, the group."""

    def __init__(self, banks: Mapping[str, Bank], db: str, key: str, revocations: str,
                 instructors: Instructors, prefix: str, public_url: str,
                 issuer: str = "minislurm course") -> None:
        private = load_private(key)
        self.banks = banks
        self.db = db
        self.private = private
        self.revocations = revocations
        self.prefix = prefix
        self.desk = ExamDesk(banks, db, private, issuer=issuer)
        self.service = QuizService(banks, db, private, issuer=issuer, revocations=revocations,
                                   base_url=public_url.rstrip("/") + prefix.rstrip("/"))
        self.instructors = instructors


@web.stream_request_body
class Base(HubOAuthenticated, web.RequestHandler):
    """JSON replies, hub identity, bounded JSON bodies.

    Bodies are streamed: at most :data:`MAX_BYTES` of a body is kept, the rest is
    read and dropped, and the request is refused with 413 once it is all in (refusing
    before the body is read would reset the proxy's upload and turn into its 503).
    Bodies above ``READ_LIMIT`` are cut by tornado (the connection is closed).
    """

    app: App

    def initialize(self, app: App) -> None:
        self.app = app
        self._chunks: list[bytes] = []
        self._size = 0

    async def prepare(self) -> None:
        # every hub call awaited on this loop: HubAuth's blocking mode runs them on a
        # thread of its own, and the two must not share its HTTP client
        await self._identify()
        if self.request.method not in ("GET", "HEAD", "OPTIONS") \
                and not getattr(self, "_token_authenticated", False):
            HubOAuthenticated.check_xsrf_cookie(self)
        if self.request.method != "POST":
            return
        length = self.request.headers.get("Content-Length")
        if length is None and "chunked" not in self.request.headers.get("Transfer-Encoding",
                                                                         ""):
            raise web.HTTPError(411, "Content-Length is required")

    def data_received(self, chunk: bytes) -> None:
        self._size += len(chunk)
        if self._size <= MAX_BYTES:
            self._chunks.append(chunk)

    @property
    def hub_scopes(self) -> set[str]:
        return {f"access:services!service={SERVICE_NAME}"}

    def check_xsrf_cookie(self) -> None:
        """Checked in :meth:`prepare` instead, once the hub has said who this is: a request
        carrying a hub API token needs no XSRF token (a browser cannot add that header
        cross-site, and a bad token is not rescued by a cookie); a cookie-borne one does."""

    async def _identify(self) -> None:
        """Ask the hub who this is without blocking the loop (the default blocks)."""
        if hasattr(self, "_hub_auth_user_cache"):
            return
        model = await self.hub_auth.get_user(self, sync=False)
        if model and _bearer(self.request.headers.get("Authorization", "")) \
                and not getattr(self, "_token_authenticated", False):
            model = None  # a bad token with a good cookie stays a bad token
        try:
            self._hub_auth_user_cache = self.check_hub_user(model) if model else None
        except UserNotAllowed:
            self._hub_auth_user_cache = None

    def reply(self, code: int, obj: Any) -> None:
        self.set_status(code)
        self.set_header("Content-Type", "application/json")
        self.set_header("Cache-Control", "no-store")
        self.finish(json.dumps(obj))

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        reason = self._reason
        exc = kwargs.get("exc_info", (None, None, None))[1]
        if isinstance(exc, web.HTTPError) and exc.log_message:
            reason = exc.log_message % exc.args if exc.args else exc.log_message
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps({"error": reason}))

    def learner(self) -> str:
        """The hub user's name; 403 for a missing or refused identity."""
        user = self.current_user
        if not user:
            raise web.HTTPError(403, "not authenticated: log in to the hub or send "
                                     "'Authorization: token <hub API token>'")
        if user.get("kind", "user") != "user":
            raise web.HTTPError(403, f"{user.get('kind')} '{user.get('name')}' is not a learner")
        return str(user["name"])

    def instructor(self) -> str:
        name = self.learner()
        if name not in self.app.instructors.members():
            raise web.HTTPError(403, f"'{name}' is not in the hub group "
                                     f"'{self.app.instructors.group}' (instructors only)")
        return name

    def body(self) -> dict[str, Any]:
        """The JSON object of the request (naming no other learner)."""
        raw = b"".join(self._chunks)
        if self._size > MAX_BYTES:
            raise web.HTTPError(413, f"body too large ({self._size} bytes; the limit is "
                                     f"{MAX_BYTES})")
        if not raw.strip():
            return {}
        try:
            obj = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise web.HTTPError(400, f"not valid JSON: {exc}") from None
        if not isinstance(obj, dict):
            raise web.HTTPError(400, "the body must be a JSON object")
        claimed = obj.get("learner_id")
        if claimed is not None and claimed != self.learner():
            raise web.HTTPError(403, f"you are '{self.learner()}': requests for another "
                                     f"learner ('{claimed}') are refused")
        return obj

    def exam(self, call: Any, *args: Any) -> None:
        try:
            self.reply(200, call(*args))
        except ExamError as exc:
            refused: dict[str, Any] = {"error": exc.reason}
            if exc.unreadable:  # a hint: the item stays open
                refused["unreadable"] = True
            self.reply(exc.status, refused)


class Me(Base):
    def get(self) -> None:
        name = self.learner()
        self.reply(200, {"name": name,
                         "instructor": name in self.app.instructors.members(),
                         "quizzes": sorted(self.app.banks)})


class Quizzes(Base):
    def get(self) -> None:
        name = self.learner()
        lang = self.get_argument("lang", None)
        try:
            self.reply(200, [self.app.desk.attempts(name, q, lang)
                             for q in sorted(self.app.banks)])
        except ExamError as exc:
            self.reply(exc.status, {"error": exc.reason})


class Attempts(Base):
    def post(self) -> None:
        name = self.learner()
        obj = self.body()
        self.exam(self.app.desk.start, name, name, obj.get("quiz_id"), obj.get("lang"))


class Answers(Base):
    def post(self, attempt_id: str) -> None:
        name = self.learner()
        obj = self.body()
        if "item_id" not in obj or "response" not in obj:
            raise web.HTTPError(400, tr(_said_language(obj), "the body needs 'item_id' and "
                                                             "'response'"))
        self.exam(self.app.desk.answer, name, attempt_id, obj["item_id"], obj["response"],
                  obj.get("lang"))


class Submit(Base):
    def post(self, attempt_id: str) -> None:
        name = self.learner()
        obj = self.body()
        self.exam(self.app.desk.submit, name, attempt_id, obj.get("lang"))


def _said_language(obj: Mapping[str, Any]) -> str:
    """The language a request body names, for the words of a refusal (English when it
    names none or one the service does not know: that refusal comes from the desk)."""
    try:
        return exam_language(obj.get("lang"))
    except ExamError:
        return DEFAULT_LANG


class SelfGraded(Base):
    """``POST submit``: a document made by the learner's notebook is not accepted here."""

    def post(self) -> None:
        name = self.learner()
        obj = self.body()
        if obj.get("learner_id") is None:
            raise web.HTTPError(400, "a submission names its 'learner_id'")
        raise web.HTTPError(403, f"'{name}': this class grades in exam mode only; take the "
                                 "quiz through api/attempts (self-graded documents are not "
                                 "accepted)")


class GradebookView(Base):
    def get(self) -> None:
        self.instructor()
        with Gradebook.read_only(self.app.db) as book:
            rows = book.scores()
            certs = book.db.execute("SELECT learner_id, quiz_id, cert_id FROM certificates"
                                    ).fetchall()
            attempts = book.db.execute("SELECT learner_id, quiz_id, source, raw_points,"
                                       " max_points, submitted_at FROM attempts ORDER BY"
                                       " attempt_id").fetchall()
        cert = {(a, b): c for a, b, c in certs}
        self.reply(200, {
            "scores": [{"learner_id": a, "name": b, "quiz_id": c, "score": d, "passed": e,
                        "attempts": f, "certificate_id": cert.get((a, c))}
                       for a, b, c, d, e, f in rows],
            "attempts": [{"learner_id": a, "quiz_id": b, "source": c, "points": d,
                          "max_points": e, "submitted_at": f} for a, b, c, d, e, f in attempts]})


class Export(Base):
    @web.authenticated
    def get(self, fmt: str) -> None:
        self.instructor()
        if fmt not in FORMATS:
            raise web.HTTPError(404, f"unknown export format '{fmt}' (one of "
                                     f"{', '.join(FORMATS)})")
        with Gradebook.read_only(self.app.db) as book:
            text = export_csv(book, fmt)
        self.set_header("Content-Type", "text/csv; charset=utf-8")
        self.set_header("Content-Disposition", f'attachment; filename="gradebook-{fmt}.csv"')
        self.finish(text.encode("utf-8"))


class Analysis(Base):
    @web.authenticated
    def get(self, quiz_id: str, kind: str) -> None:
        from quizzes.analysis import analyse, chart

        self.instructor()
        bank = self.app.banks.get(quiz_id)
        if bank is None:
            raise web.HTTPError(404, f"unknown quiz '{quiz_id}'")
        with Gradebook.read_only(self.app.db) as book:
            stats = analyse(book, bank)
        if kind == "json":
            self.reply(200, {"quiz_id": stats.quiz_id, "learners": stats.learners,
                             "alpha": stats.alpha, "table": stats.table(),
                             "items": [{"item_id": i.item_id, "n": i.n,
                                        "facility": i.facility,
                                        "discrimination": i.discrimination}
                                       for i in stats.items]})
            return
        page = chart(stats).to_html(include_plotlyjs=True, full_html=True)
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.finish(page)


class Revoke(Base):
    def post(self) -> None:
        name = self.instructor()
        obj = self.body()
        cert_id = obj.get("id")
        if not isinstance(cert_id, str):
            raise web.HTTPError(400, "the body needs the certificate 'id'")
        reason = obj.get("reason") or f"revoked by {name}"
        if not isinstance(reason, str) or len(reason) > 500:
            raise web.HTTPError(400, "'reason' must be text of at most 500 characters")
        try:
            printed = revoke(self.app.revocations, cert_id, reason, self.app.private)
        except QuizError as exc:
            raise web.HTTPError(400, exc.message.removeprefix("quizzes: error: ")) from None
        self.reply(200, {"revoked": printed, "reason": reason})


class Public(web.RequestHandler):
    """Verification pages, certificate files, health: no login."""

    app: App

    def initialize(self, app: App) -> None:
        self.app = app

    def get(self, path: str) -> None:
        from quizzes.badges import open_badge
        from quizzes.render import certificate_pdf

        service = self.app.service
        if path == "healthz":
            self.finish({"ok": True})
        elif path.startswith("verify/"):
            typed = path.removeprefix("verify/")
            code, ctype, body = service.verify_page(typed.removesuffix(".json"),
                                                    typed.endswith(".json"))
            self.set_status(code)
            self.set_header("Content-Type", ctype)
            self.finish(body)
        elif path.startswith("certificate/") and path.endswith(".pdf"):
            cert = service.document(path[len("certificate/"):-4])
            if cert is None:
                raise web.HTTPError(404, "no such certificate")
            self.set_header("Content-Type", "application/pdf")
            self.finish(certificate_pdf(cert))
        elif path.startswith("badge/") and path.endswith(".json"):
            cert = service.document(path[len("badge/"):-5])
            if cert is None:
                raise web.HTTPError(404, "no such certificate")
            self.finish(open_badge(cert, self.app.private))
        else:
            raise web.HTTPError(404, f"no such page: {path}")


class Index(Base):
    @web.authenticated
    def get(self) -> None:
        """The quizzes of the class; ``?lang=pt-BR``: the learner's words, titles and
        policies in that language, and links to the exam pages in it."""
        name = self.learner()
        try:
            lang = exam_language(self.get_argument("lang", None))
        except ExamError as exc:
            raise web.HTTPError(400, exc.reason) from None
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.finish(index_page(self.app.prefix, self.app.banks, self.app.desk.title, name,
                               name in self.app.instructors.members(), lang))


def index_page(prefix: str, banks: Mapping[str, Bank], title: Callable[[Bank, str], str],
               name: str, instructor: bool, lang: str) -> str:
    """The service's index page for ``name``: each quiz's title and policy in ``lang`` and
    a link to its exam page in that language; an instructor's exports (English)."""
    p = prefix
    tail = "" if lang == DEFAULT_LANG else "?lang=" + lang
    rows = "".join(
        f'<li><a id="quiz-{html.escape(q)}" href="{p}exam/{html.escape(q)}{tail}">'
        f"{html.escape(title(b, lang))}</a> ({html.escape(b.policy.describe(lang))})</li>"
        for q, b in sorted(banks.items()))
    teach = ""
    if instructor:
        teach = ("<h2>Instructor</h2><ul>"
                 + "".join(f'<li><a id="export-{f}" href="{p}export/{f}.csv">'
                           f"Export gradebook ({f} CSV)</a></li>" for f in FORMATS)
                 + f'<li><a href="{p}api/gradebook">Gradebook (JSON)</a></li></ul>')
    quizzes = html.escape(tr(lang, "Quizzes"))
    whoami = tr(lang, "Signed in as {name} (exam mode: the service grades)").format(
        name=f"<b>{html.escape(name)}</b>")
    return (f"<!DOCTYPE html><html lang=\"{lang}\"><head><meta charset=\"utf-8\">"
            f"<title>{quizzes}</title></head><body><h1>{quizzes}</h1>"
            f"<p id=\"whoami\">{whoami}</p><ul>{rows}</ul>{teach}</body></html>")


class ExamPage(Base):
    @web.authenticated
    def get(self, quiz_id: str) -> None:
        self.learner()
        if quiz_id not in self.app.banks:
            raise web.HTTPError(404, f"unknown quiz '{quiz_id}'")
        try:  # ``?lang=pt-BR``: the items and the feedback in that language
            lang = exam_language(self.get_argument("lang", None))
        except ExamError as exc:
            raise web.HTTPError(400, exc.reason) from None
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.finish(exam_page(self.app.prefix, quiz_id, self.xsrf_token.decode("ascii"), lang))


EXAM_PAGE = (Path(__file__).parent / "exam_page.html").read_text(encoding="utf-8")


def exam_words(lang: str) -> dict[str, str]:
    """The exam page's own words in ``lang`` (``{n}``-style fields filled by the page)."""
    return {"quiz": tr(lang, "Quiz"), "submit": tr(lang, "Submit the attempt"),
            "attempt": tr(lang, "Attempt {n} ({policy})"), "check": tr(lang, "Check"),
            "score": tr(lang, "Score {score}% (quiz {quiz}%): {verdict}"),
            "passed": tr(lang, "passed"), "not_passed": tr(lang, "not passed"),
            "certificate": tr(lang, "Certificate {id}")}


def exam_page(prefix: str, quiz_id: str, xsrf: str, lang: str) -> str:
    """The exam page of one quiz for one learner, its words in ``lang`` (the items, the
    feedback and the policy come from the API in the same language)."""
    words = exam_words(lang)
    # JSON inside <script>: "</" could close the element, so it is escaped
    said = json.dumps(words, ensure_ascii=False).replace("</", "<\\/")
    return EXAM_PAGE.replace("__W_QUIZ__", html.escape(words["quiz"])) \
        .replace("__W_SUBMIT__", html.escape(words["submit"])) \
        .replace("__PREFIX__", json.dumps(prefix)) \
        .replace("__QUIZ__", json.dumps(quiz_id)) \
        .replace("__XSRF__", json.dumps(xsrf)) \
        .replace("__LANG__", json.dumps(lang)) \
        .replace("__WORDS__", said)


def make_app(app: App) -> web.Application:
    p = app.prefix
    a = {"app": app}
    routes: list[Any] = [
        (p + "oauth_callback", HubOAuthCallbackHandler),
        (p, Index, a),
        (p + "api/me", Me, a),
        (p + "api/quizzes", Quizzes, a),
        (p + "api/attempts", Attempts, a),
        (p + r"api/attempts/([^/]+)/answers", Answers, a),
        (p + r"api/attempts/([^/]+)/submit", Submit, a),
        (p + "submit", SelfGraded, a),
        (p + "api/gradebook", GradebookView, a),
        (p + r"export/([a-z]+)\.csv", Export, a),
        (p + r"analysis/([^/]+)\.(json|html)", Analysis, a),
        (p + "api/revoke", Revoke, a),
        (p + r"exam/([^/]+)", ExamPage, a),
        (p + r"((?:verify|certificate|badge)/.+|healthz)", Public, a),
    ]
    return web.Application(routes, cookie_secret=os.urandom(32), xsrf_cookies=True,
                           login_url="/hub/login")


def main(argv: Sequence[str] | None = None) -> int:
    """Run under the hub (the hub sets ``JUPYTERHUB_*`` in the service's environment)."""
    ap = argparse.ArgumentParser(prog="quizzes serve --hub", description=__doc__)
    ap.add_argument("--key", required=True, help="issuer private key")
    ap.add_argument("--db", required=True, help="gradebook SQLite file")
    ap.add_argument("--banks", default=None, help="folder of banks (default: the package's)")
    ap.add_argument("--revocations", default="revocations.json")
    ap.add_argument("--instructors", default="instructors", help="hub group of instructors")
    ap.add_argument("--issuer", default="minislurm course")
    ap.add_argument("--public-url", default="",
                    help="the hub's public URL, for verification links")
    ap.add_argument("--token-cache", type=int, default=TOKEN_CACHE_SECONDS, metavar="SECONDS",
                    help="seconds the hub's answer about a token is reused (a revoked token "
                         f"is refused after at most that long; default {TOKEN_CACHE_SECONDS})")
    args = ap.parse_args(argv)
    env = os.environ
    missing = [v for v in ("JUPYTERHUB_SERVICE_URL", "JUPYTERHUB_API_TOKEN",
                           "JUPYTERHUB_API_URL") if not env.get(v)]
    if missing:
        print(f"quizzes serve --hub: {missing[0]} is not set: run it as a JupyterHub service",
              file=sys.stderr)
        return 1
    try:
        banks = load_banks(args.banks)
        app = App(banks, args.db, args.key, args.revocations,
                  Instructors(env["JUPYTERHUB_API_URL"], env["JUPYTERHUB_API_TOKEN"],
                              args.instructors),
                  env.get("JUPYTERHUB_SERVICE_PREFIX", f"/services/{SERVICE_NAME}/"),
                  args.public_url, issuer=args.issuer)
    except QuizError as exc:
        print(exc.message, file=sys.stderr)
        return 1
    if not 1 <= args.token_cache <= 3600:
        print("quizzes serve --hub: --token-cache must be from 1 to 3600 seconds",
              file=sys.stderr)
        return 1
    # a token revoked at the hub is refused within --token-cache seconds
    HubOAuth.instance(cache_max_age=args.token_cache)
    url = urlparse(env["JUPYTERHUB_SERVICE_URL"])
    make_app(app).listen(url.port or 80, url.hostname or "127.0.0.1",
                         max_body_size=READ_LIMIT)
    print(f"quizzes: service {SERVICE_NAME} on {url.geturl()} ({len(banks)} quizzes, "
          f"gradebook {args.db})", flush=True)
    loop = ioloop.IOLoop.current()

    def stop(signum: int, frame: Any) -> None:  # the hub stops its services with SIGINT
        loop.add_callback_from_signal(loop.stop)

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, stop)
    loop.start()
    app.desk.close()  # every transaction is committed or rolled back by now
    print(f"quizzes: service {SERVICE_NAME} stopped", flush=True)
    sys.stdout.flush()
    os._exit(0)  # HubAuth's helper thread must not keep a stopped service alive


if __name__ == "__main__":
    sys.exit(main())
