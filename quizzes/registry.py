"""Resolving a certificate ID to its signed record, and checking it.

An ID resolves through the gradebook (``certificates`` table) or a folder of
certificate files (``<ID>.json``); either way the record is then verified with
the issuer's public key alone (:func:`quizzes.certify.verify`), so the place it
came from needs no trust.  The gradebook is opened read-only
(:meth:`Gradebook.read_only`): verifying never writes to it and never waits for a
grader that is recording.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from quizzes import ids
from quizzes.certify import Verification, revocation_entries, verify_bytes
from quizzes.errors import QuizError
from quizzes.gradebook import Gradebook
from quizzes.keys import key_id

_REVOKED: dict[tuple[object, ...], dict[str, str]] = {}
"""Verified revocation lists by (path, mtime, size, inode, key id): verify a list once."""


@dataclass(frozen=True, slots=True)
class Lookup:
    """Where to find certificates and the revocation list."""

    public: Ed25519PublicKey
    db: str | None = None
    certs_dir: str | None = None
    revocations: str | None = None

    def document(self, printed_id: str) -> str | None:
        """The certificate file text of a printed ID, or None (raises QuizError when
        the gradebook cannot be read).  The gradebook is opened read-only."""
        if self.db and Path(self.db).exists():
            with Gradebook.read_only(self.db) as book:
                try:
                    doc = book.certificate(printed_id)
                except sqlite3.Error as exc:
                    raise QuizError(f"{self.db}: cannot read certificates ({exc})") from None
            if doc is not None:
                return doc
        if self.certs_dir:
            path = Path(self.certs_dir) / f"{printed_id}.json"
            if path.is_file():
                return path.read_text(encoding="utf-8")
        return None

    def revoked(self) -> dict[str, str]:
        """The signed revocation list's entries (re-read only when the file changed)."""
        if not self.revocations:
            return {}
        try:
            st = os.stat(self.revocations)
        except OSError:
            return revocation_entries(self.revocations, self.public)  # missing: nothing
        stamp = (self.revocations, st.st_mtime_ns, st.st_size, st.st_ino, key_id(self.public))
        cached = _REVOKED.get(stamp)
        if cached is None:
            cached = revocation_entries(self.revocations, self.public)
            if len(_REVOKED) > 16:
                _REVOKED.clear()
            _REVOKED[stamp] = cached
        return dict(cached)

    @property
    def revocations_checked(self) -> bool:
        """Whether a revocation list exists to check against."""
        return bool(self.revocations) and Path(str(self.revocations)).is_file()

    def check_id(self, typed: str) -> Verification:
        """valid / invalid / revoked for a typed ID."""
        try:
            printed = ids.normalise(typed)
        except ids.IdError as exc:
            return Verification("invalid", f"malformed ID: {exc}")
        try:
            doc = self.document(printed)
        except QuizError as exc:
            return Verification("invalid", exc.message.removeprefix("quizzes: error: "))
        if doc is None:
            return Verification("invalid", f"no certificate with ID {printed} is known "
                                           "to this issuer")
        return verify_bytes(doc, self.public, self.revoked(), source=printed)

    def check_file(self, path: str | Path) -> Verification:
        try:
            data = Path(path).read_bytes()
        except OSError as exc:
            return Verification("invalid", f"{path}: cannot read: {exc.strerror}")
        return verify_bytes(data, self.public, self.revoked(), source=str(path))
