"""The notebook's side of exam mode: the quiz service holds the bank, the kernel asks it.

In a class the learner's server has no bank (:mod:`course.classroom.image`).  The
quiz widget then talks to the hub's ``quizzes`` service (:mod:`quizzes.hubservice`)
over HTTP, through the hub's proxy, as the hub user who owns the server:

* the service's URL is ``$COURSE_QUIZ_SERVICE`` (set by the class's spawner);
* the credential is the server's own hub API token, ``$JUPYTERHUB_API_TOKEN``, which
  the hub gives every single-user server and its kernels inherit.  The class's hub
  config grants it ``access:services!service=quizzes`` (``Spawner.server_token_scopes``
  and the ``user`` role), so the service learns who the learner is from the hub, not
  from anything the notebook says.

:class:`ExamClient` is the three calls of the exam API (``api/attempts``,
``.../answers``, ``.../submit``) plus ``api/quizzes``; :class:`ExamSession` wraps one
attempt with the interface of :class:`quizzes.session.QuizSession` that the widget
uses (items, answer, score, attempts left, time left), so the widget's cards are the
same in both modes.  Nothing here grades: every verdict, the attempt count and the
time limit come from the service.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlencode

from quizzes.errors import ExamError
from quizzes.i18n import DEFAULT_LANG, tr
from quizzes.items.base import Presented
from quizzes.session import Feedback, NoAnswer, _empty

#: Set in a learner's server by a class (course/classroom): the quiz service's URL.
SERVICE_ENV = "COURSE_QUIZ_SERVICE"
#: The single-user server's hub API token (JupyterHub sets it; kernels inherit it).
TOKEN_ENV = "JUPYTERHUB_API_TOKEN"
TIMEOUT = 30.0


class ExamApi(Protocol):
    """What exam mode asks of the quiz service (:class:`ExamClient` over HTTP; the tests'
    client answered by an :class:`quizzes.exam.ExamDesk` in-process)."""

    #: The service's base URL (the certificate's verification link starts there).
    @property
    def service_url(self) -> str: ...

    def status(self, quiz_id: str, lang: str = DEFAULT_LANG) -> dict[str, Any]: ...

    def start(self, quiz_id: str, lang: str = DEFAULT_LANG) -> dict[str, Any]: ...

    def answer(self, attempt_id: str, item_id: str, response: Any,
               lang: str = DEFAULT_LANG) -> dict[str, Any]: ...

    def submit(self, attempt_id: str, lang: str | None = None) -> dict[str, Any]: ...


@dataclass(frozen=True, slots=True)
class ExamClient:
    """The exam API of one quiz service, called with one hub API token."""

    service_url: str
    token: str
    timeout: float = TIMEOUT

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> ExamClient | None:
        """The client of a class's learner server, or None outside one."""
        url, token = env.get(SERVICE_ENV, ""), env.get(TOKEN_ENV, "")
        return cls(url, token) if url and token else None

    def call(self, method: str, path: str, body: Mapping[str, Any] | None = None,
             lang: str = DEFAULT_LANG) -> Any:
        """One request; the reply's JSON, or :class:`ExamError` with the service's words
        (a service that cannot be reached is said in ``lang``)."""
        data = None if body is None and method == "GET" else json.dumps(body or {}).encode()
        req = urllib.request.Request(
            self.service_url.rstrip("/") + "/" + path.lstrip("/"), data=data, method=method,
            headers={"Authorization": f"token {self.token}",
                     "Content-Type": "application/json", "Accept": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                return json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            raw = exc.read()
            unreadable = False
            try:
                said = json.loads(raw)
                reason = str(said.get("error") or exc.reason)
                unreadable = said.get("unreadable") is True
            except (ValueError, AttributeError):
                reason = str(exc.reason)
            raise ExamError(exc.code, reason, unreadable=unreadable) from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise ExamError(0, tr(lang, "cannot reach the quiz service at {url}: {why}").format(
                url=self.service_url, why=getattr(exc, "reason", exc))) from None

    def quizzes(self, lang: str = DEFAULT_LANG) -> list[dict[str, Any]]:
        """Per quiz: its title in ``lang``, attempts used, allowed and left, the time
        limit, the attempt open now (``open``), the policy, the number of items.
        Opens nothing."""
        return list(self.call("GET", f"api/quizzes?{urlencode({'lang': lang})}", lang=lang))

    def status(self, quiz_id: str, lang: str = DEFAULT_LANG) -> dict[str, Any]:
        """:meth:`quizzes`'s entry for one quiz (404 when the service has no such quiz)."""
        for entry in self.quizzes(lang):
            if entry.get("quiz_id") == quiz_id:
                return dict(entry)
        raise ExamError(404, tr(lang, "unknown quiz '{quiz}'").format(quiz=quiz_id))

    def start(self, quiz_id: str, lang: str = DEFAULT_LANG) -> dict[str, Any]:
        """Open (or resume) this learner's attempt: items as shown (in ``lang``),
        answered feedback."""
        return dict(self.call("POST", "api/attempts", {"quiz_id": quiz_id, "lang": lang},
                              lang))

    def answer(self, attempt_id: str, item_id: str, response: Any,
               lang: str = DEFAULT_LANG) -> dict[str, Any]:
        return dict(self.call("POST", f"api/attempts/{attempt_id}/answers",
                              {"item_id": item_id, "response": response, "lang": lang}, lang))

    def submit(self, attempt_id: str, lang: str | None = None) -> dict[str, Any]:
        """Hand an attempt in (a refusal in ``lang``, else in the attempt's language)."""
        body = None if lang is None else {"lang": lang}
        return dict(self.call("POST", f"api/attempts/{attempt_id}/submit", body,
                              lang or DEFAULT_LANG))


def presented(obj: Mapping[str, Any]) -> Presented:
    """An item of the service's attempt reply as the widget's :class:`Presented`."""
    return Presented(item_id=str(obj["item_id"]), type=str(obj["type"]),
                     prompt=str(obj["prompt"]),
                     options=tuple((str(o), str(t)) for o, t in obj.get("options", ())),
                     multiple=bool(obj.get("multiple", False)), unit=str(obj.get("unit", "")),
                     points=float(obj.get("points", 1.0)), exhibit=str(obj.get("exhibit", "")))


def feedback(obj: Mapping[str, Any]) -> Feedback:
    return Feedback(str(obj["item_id"]), bool(obj["correct"]), float(obj["score"]),
                    str(obj["feedback"]), str(obj.get("explanation", "")),
                    tuple(str(d) for d in obj.get("details", ())))


class ExamSession:
    """One exam attempt held by the service, with the widget's session interface."""

    def __init__(self, client: ExamApi, reply: Mapping[str, Any],
                 lang: str = DEFAULT_LANG) -> None:
        self.client, self.lang = client, lang
        self.attempt_id = str(reply["attempt_id"])
        self.quiz_id = str(reply["quiz_id"])
        self.title = str(reply["title"])
        self.attempt = int(reply["attempt"])
        self.allowed: int | None = reply.get("attempts_allowed")
        self.policy = str(reply.get("policy", ""))
        self._remaining: int | None = reply.get("remaining_seconds")
        self.shown = [presented(i) for i in reply["items"]]
        self.results: dict[str, Feedback] = {k: feedback(v)
                                             for k, v in reply.get("answered", {}).items()}
        self.submitted: dict[str, Any] | None = None

    @classmethod
    def open(cls, client: ExamApi, quiz_id: str, lang: str = DEFAULT_LANG) -> ExamSession:
        return cls(client, client.start(quiz_id, lang), lang)

    def items(self) -> list[Presented]:
        return list(self.shown)

    @property
    def max_points(self) -> float:
        return sum(i.points for i in self.shown)

    @property
    def attempts_left(self) -> int | None:
        return None if self.allowed is None else max(0, self.allowed - self.attempt)

    def remaining_seconds(self) -> int | None:
        """Time left as the service said at the last call (it enforces the limit)."""
        return self._remaining

    def _points(self, item_id: str) -> float:
        return next((i.points for i in self.shown if i.item_id == item_id), 1.0)

    def score(self) -> tuple[float, float]:
        got = sum(self._points(i) * r.score for i, r in self.results.items())
        return got, sum(self._points(i) for i in self.results)

    def answer(self, item_id: str, response: Any) -> Feedback:
        """The service's verdict on one answer (it locks the item); an empty answer is a
        hint here (:class:`NoAnswer`) and is not sent."""
        if _empty(response):
            raise NoAnswer(tr(self.lang, "'{item}' has no answer yet: choose an option or "
                                         "type an answer, then press Check").format(item=item_id))
        if isinstance(response, tuple):
            response = list(response)
        try:
            reply = self.client.answer(self.attempt_id, item_id, response, self.lang)
            fb = feedback(reply)
        except ExamError as exc:
            if exc.unreadable:  # e.g. an ambiguous number: a hint, the item stays open
                raise NoAnswer(exc.reason) from None
            raise
        self.results[item_id] = fb
        if "remaining_seconds" in reply:
            self._remaining = reply["remaining_seconds"]
        return fb

    def submit(self) -> dict[str, Any]:
        """Hand the attempt in: the service grades, records and certifies."""
        if self.submitted is None:
            self.submitted = self.client.submit(self.attempt_id)  # refusals: the attempt's language
        return self.submitted
