"""``class.yaml``: what a class deployment is made of.

```yaml
name: slurm-2026            # the class (shown in status)
dir: /srv/slurm-class       # state: hub database, gradebook, keys, learners' homes, logs
port: 8000                  # the hub's public port (the proxy), on 127.0.0.1 unless ip says
ip: 127.0.0.1
passwords: passwords        # the hashed password file (relative paths: to class.yaml)
instructors: [teacher]      # the hub group 'instructors': gradebook, exports, revocation
learners: [ada, bob, cy]    # optional: default every other name in the password file
spawn: auto                 # auto | unix-users | one-user
authenticator: password-file  # or a class path (LTI 1.3, OAuth, LDAP: docs/classroom.md)
authenticator_config: {}    # traits of that class, e.g. {client_id: ..., issuer: ...}
```

``spawn: auto`` is ``unix-users`` when the hub runs as root (each learner a Unix
user of the same name, created with ``useradd`` at ``up``) and its Python can be
run by other users, else ``one-user`` (every server runs as the hub's own Unix
user).  Internal ports are ``port + 1``
(the proxy's API), ``port + 2`` (the hub) and ``port + 3`` (the quiz service).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from course.classroom import passwords
from course.classroom.errors import ClassError

SPAWN = ("auto", "unix-users", "one-user")
PASSWORD_FILE = "password-file"
FIELDS = {"name", "dir", "port", "ip", "passwords", "instructors", "learners", "spawn",
          "authenticator", "authenticator_config", "token_cache_seconds"}
#: How long the quiz service trusts the hub's answer about a token (see hubservice).
TOKEN_CACHE_SECONDS = 30


@dataclass(frozen=True, slots=True)
class ClassConfig:
    name: str
    dir: Path
    port: int = 8000
    ip: str = "127.0.0.1"
    passwords: Path | None = None
    instructors: tuple[str, ...] = ()
    learners: tuple[str, ...] = ()
    spawn: str = "auto"
    authenticator: str = PASSWORD_FILE
    authenticator_config: Mapping[str, Any] = field(default_factory=dict)
    token_cache_seconds: int = TOKEN_CACHE_SECONDS

    @property
    def url(self) -> str:
        return f"http://{self.ip}:{self.port}"

    @property
    def proxy_api_port(self) -> int:
        return self.port + 1

    @property
    def hub_port(self) -> int:
        return self.port + 2

    @property
    def service_port(self) -> int:
        return self.port + 3

    def spawn_mode(self, uid: int | None = None, *, shared: bool = True) -> str:
        """``unix-users`` or ``one-user``.  ``auto`` is ``unix-users`` when the hub runs
        as root (``uid``, default the effective uid) and its Python environment can be
        run by other Unix users (``shared``), else ``one-user``."""
        if self.spawn != "auto":
            return self.spawn
        root = (os.geteuid() if uid is None else uid) == 0
        return "unix-users" if root and shared else "one-user"

    @property
    def users(self) -> tuple[str, ...]:
        return tuple(sorted(set(self.instructors) | set(self.learners)))


def parse(raw: Any, where: str, base: Path) -> ClassConfig:
    """Validate a parsed class.yaml; relative paths are taken from ``base``."""

    def bad(name: str, problem: str) -> ClassError:
        return ClassError(f"{where}: field '{name}': {problem}")

    if not isinstance(raw, Mapping):
        raise ClassError(f"{where}: must be a mapping of fields")
    unknown = sorted(set(raw) - FIELDS)
    if unknown:
        raise bad(unknown[0], f"unknown field (known: {', '.join(sorted(FIELDS))})")
    for name in ("name", "dir"):
        if not isinstance(raw.get(name), str) or not raw[name].strip():
            raise bad(name, "is required (a non-empty string)")
    port = raw.get("port", 8000)
    if not isinstance(port, int) or isinstance(port, bool) or not 1024 <= port <= 65532:
        raise bad("port", "must be an integer from 1024 to 65532 (it and the 3 above it are "
                          "used)")
    ip = raw.get("ip", "127.0.0.1")
    if not isinstance(ip, str) or not ip:
        raise bad("ip", "must be an address such as 127.0.0.1")
    spawn = raw.get("spawn", "auto")
    if spawn not in SPAWN:
        raise bad("spawn", f"must be one of {', '.join(SPAWN)}")
    names: dict[str, tuple[str, ...]] = {}
    for key in ("instructors", "learners"):
        value = raw.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise bad(key, "must be a list of user names")
        try:
            names[key] = tuple(passwords.check_name(v) for v in value)
        except ClassError as exc:
            raise bad(key, exc.message.removeprefix("course class: error: ")) from None
    auth = raw.get("authenticator", PASSWORD_FILE)
    if not isinstance(auth, str) or not auth:
        raise bad("authenticator", f"must be '{PASSWORD_FILE}' or a class path")
    auth_conf = raw.get("authenticator_config", {})
    if not isinstance(auth_conf, Mapping):
        raise bad("authenticator_config", "must be a mapping of the authenticator's traits")
    cache = raw.get("token_cache_seconds", TOKEN_CACHE_SECONDS)
    if not isinstance(cache, int) or isinstance(cache, bool) or not 1 <= cache <= 3600:
        raise bad("token_cache_seconds", "must be an integer from 1 to 3600 (seconds a "
                                         "revoked hub token may still be accepted)")
    pw = raw.get("passwords")
    pw_path: Path | None = None
    if auth == PASSWORD_FILE:
        if not isinstance(pw, str) or not pw:
            raise bad("passwords", "is required with the password-file authenticator")
        pw_path = (base / pw).resolve()
    learners = names["learners"]
    if not learners and pw_path is not None and pw_path.exists():
        learners = tuple(n for n in sorted(passwords.read(pw_path))
                         if n not in names["instructors"])
    return ClassConfig(raw["name"].strip(), (base / raw["dir"]).resolve(), port, ip, pw_path,
                       names["instructors"], learners, spawn, auth, dict(auth_conf), cache)


def load(path: str | Path) -> ClassConfig:
    """Read class.yaml; ClassError names the file and the field."""
    p = Path(path)
    try:
        raw = yaml.safe_load(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ClassError(f"{p}: cannot read the class configuration ({exc.strerror})") \
            from None
    except yaml.YAMLError as exc:
        raise ClassError(f"{p}: not valid YAML ({exc})") from None
    return parse(raw, str(p), p.resolve().parent)
