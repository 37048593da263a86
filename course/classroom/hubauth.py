"""A JupyterHub authenticator over the class's hashed password file (:mod:`.passwords`).

``c.JupyterHub.authenticator_class = "course.classroom.hubauth.PasswordFileAuthenticator"``
and ``c.PasswordFileAuthenticator.password_file = "/srv/class/passwords"``.  The
file is read again whenever it changes, so ``python -m course class passwd`` takes
effect without restarting the hub.  It implements JupyterHub's documented
``Authenticator.authenticate(handler, data)``; for a site's own identity provider
swap it for LTI 1.3, OAuth or LDAP (docs/classroom.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jupyterhub.auth import Authenticator
from traitlets import Unicode

from course.classroom import passwords
from course.classroom.errors import ClassError


class PasswordFileAuthenticator(Authenticator):
    """Log in with a name and a password checked against scrypt hashes."""

    password_file = Unicode(help="the class's password file (user:scrypt hash lines)"
                            ).tag(config=True)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._cache: tuple[float, dict[str, str]] = (-1.0, {})

    def _entries(self) -> dict[str, str]:
        path = Path(self.password_file)
        try:
            mtime = path.stat().st_mtime
        except OSError:
            self.log.error("password file %s cannot be read", path)
            return {}
        if mtime != self._cache[0]:
            try:
                self._cache = (mtime, passwords.read(path))
            except ClassError as exc:
                self.log.error("%s", exc.message)
                return self._cache[1]
        return self._cache[1]

    async def authenticate(self, handler: Any, data: dict[str, str]) -> str | None:
        name = self.normalize_username(str(data.get("username", "")))
        stored = self._entries().get(name)
        if stored is None or not passwords.check(str(data.get("password", "")), stored):
            self.log.warning("failed login for %r", name)
            return None
        return name
