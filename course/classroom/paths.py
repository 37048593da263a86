"""Where a class keeps its files (all under ``class.yaml``'s ``dir``).

``private/`` (mode 0700, the hub's Unix user only) holds what learners must never
read: the issuer key, the gradebook, the banks with their hashed keys, the hub's
secrets.  ``image/`` is what learners' servers run (the course without answer
material, :mod:`course.classroom.image`); ``home/<user>`` their homes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class ClassPaths:
    root: Path

    @property
    def private(self) -> Path:
        return self.root / "private"

    @property
    def key(self) -> Path:
        return self.private / "issuer.key"

    @property
    def gradebook(self) -> Path:
        return self.private / "gradebook.sqlite"

    @property
    def revocations(self) -> Path:
        return self.root / "public" / "revocations.json"

    @property
    def banks(self) -> Path:
        return self.private / "banks"

    @property
    def hub_db(self) -> Path:
        return self.private / "jupyterhub.sqlite"

    @property
    def cookie_secret(self) -> Path:
        return self.private / "jupyterhub_cookie_secret"

    @property
    def proxy_token(self) -> Path:
        return self.private / "proxy.token"

    @property
    def admin_token(self) -> Path:
        """The API token of the ``course-admin`` service (status, down, tests)."""
        return self.private / "admin.token"

    @property
    def hub_config(self) -> Path:
        return self.private / "jupyterhub_config.py"

    @property
    def hub_pid(self) -> Path:
        return self.private / "jupyterhub.pid"

    @property
    def hub_log(self) -> Path:
        return self.root / "logs" / "jupyterhub.log"

    @property
    def image(self) -> Path:
        return self.root / "image"

    @property
    def homes(self) -> Path:
        return self.root / "home"

    def home(self, user: str) -> Path:
        return self.homes / user
