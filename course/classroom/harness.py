"""A class started for tests, benchmarks and demos: real hub, loopback only, always stopped.

``with RunningClass(folder, learners=[...]) as cls:`` writes a class.yaml and a
password file (password ``<user>-pw``, first ten users) into ``folder``, runs
``class up`` on four free consecutive ports of 127.0.0.1, and on exit runs ``class down`` and then
kills, by their pids, any process the class left (hub, proxy, service,
servers, clusters).  ``cls.token(user)`` mints a hub API token for a user through
the ``course-admin`` service; ``cls.call(...)`` sends one request through the
proxy.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from course.classroom import deploy, hubapi, passwords
from course.classroom.config import ClassConfig, load
from course.classroom.paths import ClassPaths
from quizzes.bank import Bank
from quizzes.grade import attempt_items, item_variant


def free_ports(count: int = 4, start: int = 20000, stop: int = 60000) -> int:
    """A base port such that base .. base+count-1 are all free on 127.0.0.1."""
    base = start + (os.getpid() * 37 + int(time.time() * 1000)) % (stop - start - 100)
    for _ in range(200):
        socks = []
        try:
            for k in range(count):
                s = socket.socket()
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind(("127.0.0.1", base + k))
                socks.append(s)
            return base
        except OSError:
            base = start + (base - start + count + 7) % (stop - start - 100)
        finally:
            for s in socks:
                s.close()
    raise RuntimeError("no free ports")


def correct_responses(bank: Bank, source: Mapping[str, Any], learner: str,
                      attempt_no: int = 1) -> dict[str, Any]:
    """item id -> a correct response for this learner's attempt (from the private source)."""
    from quizzes.author import model_answer

    items = {i["id"]: i for i in source["items"]}
    out = {}
    for item in attempt_items(bank, learner, attempt_no):
        cid = item.common.id
        params, _, _ = item_variant(bank, learner, cid, attempt_no)
        out[cid] = model_answer(items[cid], params)
    return out


def _pids_with(text: str) -> list[int]:
    """Pids whose command line or environment mentions ``text`` (this class's folder)."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            blob = (entry / "cmdline").read_bytes() + (entry / "environ").read_bytes()
        except OSError:
            continue
        if text.encode() in blob:
            out.append(int(entry.name))
    return out


class RunningClass:
    """A real class on 127.0.0.1 for the duration of a ``with`` block."""

    def __init__(self, folder: Path, *, learners: Sequence[str] = ("ada", "bob", "cy"),
                 instructors: Sequence[str] = ("teacher",), spawn: str = "one-user",
                 token_cache: int | None = None) -> None:
        self.folder = folder.resolve()
        self.folder.mkdir(parents=True, exist_ok=True)
        port = free_ports()
        users = [*learners, *instructors]
        # passwords for the first ten (a load test's other learners use tokens only)
        entries = {u: passwords.hash_password(f"{u}-pw") for u in users[:10]}
        passwords.write(self.folder / "passwords", entries)
        (self.folder / "class.yaml").write_text(
            f"name: test-class\ndir: state\nport: {port}\npasswords: passwords\n"
            f"instructors: {json.dumps(list(instructors))}\n"
            f"learners: {json.dumps(list(learners))}\nspawn: {spawn}\n"
            + (f"token_cache_seconds: {token_cache}\n" if token_cache else ""),
            encoding="utf-8")
        self.cfg: ClassConfig = load(self.folder / "class.yaml")
        self.paths = ClassPaths(self.cfg.dir)
        self.url = self.cfg.url
        self.service = f"{self.url}/services/quizzes/"
        self._tokens: dict[str, str] = {}

    def __enter__(self) -> RunningClass:
        try:
            deploy.up(self.cfg)
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        with contextlib.suppress(Exception):  # the kill below is the guarantee
            deploy.down(self.cfg)
        for _ in range(2):
            for pid in _pids_with(str(self.cfg.dir)):
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.2)

    @property
    def admin(self) -> str:
        return deploy.admin_token(self.paths)

    def hub(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        return hubapi.call(self.url, self.admin, method, path, body)

    def token(self, user: str) -> str:
        if user not in self._tokens:
            code, reply = self.hub("POST", f"users/{user}/tokens", {"note": "test"})
            if code != 201:
                raise RuntimeError(f"no token for {user}: {code} {reply}")
            self._tokens[user] = reply["token"]
        return self._tokens[user]

    def start_server(self, user: str, timeout: float = 120.0) -> None:
        """Start ``user``'s server through the hub's API and wait until it is ready."""
        code, reply = self.hub("POST", f"users/{user}/server")
        if code not in (201, 202, 400):  # 400: already running
            raise RuntimeError(f"{user}'s server did not start: {code} {reply}")
        self._wait_server(user, running=True, timeout=timeout)

    def stop_server(self, user: str, timeout: float = 120.0) -> None:
        code, reply = self.hub("DELETE", f"users/{user}/server")
        if code not in (202, 204):
            raise RuntimeError(f"{user}'s server did not stop: {code} {reply}")
        self._wait_server(user, running=False, timeout=timeout)

    def _wait_server(self, user: str, *, running: bool, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            _, model = self.hub("GET", f"users/{user}")
            if bool(model["server"]) == running and not model["pending"]:
                return
            time.sleep(0.5)
        raise TimeoutError(f"{user}'s server did not {'start' if running else 'stop'}")

    def server_pid(self, user: str) -> int:
        """The pid of ``user``'s jupyterhub-singleuser process."""
        for pid in _pids_with(str(self.cfg.dir)):
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
                env = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"jupyterhub.singleuser" in cmd and f"JUPYTERHUB_USER={user}".encode() in env:
                return pid
        raise LookupError(f"{user} has no running server")

    def server_env(self, user: str) -> dict[str, str]:
        """The environment of ``user``'s server: what its kernels and terminals inherit
        (the hub's API token for this server included)."""
        raw = Path(f"/proc/{self.server_pid(user)}/environ").read_bytes()
        return dict(kv.decode().split("=", 1) for kv in raw.split(b"\0") if b"=" in kv)

    def call(self, method: str, path: str, *, token: str | None = None, body: Any = None,
             raw: bytes | None = None, headers: Mapping[str, str] | None = None,
             timeout: float = 30.0) -> tuple[int, Any]:
        """One request to the quiz service through the proxy: (status, JSON or text)."""
        data = raw if raw is not None else (None if body is None
                                            else json.dumps(body).encode("utf-8"))
        hdrs = {"Content-Type": "application/json", **(headers or {})}
        if token is not None:
            hdrs["Authorization"] = f"token {token}"
        req = urllib.request.Request(self.service + path.lstrip("/"), data=data,
                                     method=method, headers=hdrs)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                status, text = int(resp.status), resp.read()
        except urllib.error.HTTPError as exc:
            status, text = exc.code, exc.read()
        try:
            return status, json.loads(text)
        except ValueError:
            return status, text.decode("utf-8", "replace")

    def wait_service(self, timeout: float = 90.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if self.call("GET", "healthz", timeout=5)[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.25)
        raise TimeoutError("the quiz service did not come back")
