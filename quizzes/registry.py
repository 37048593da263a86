"""Resolving a certificate ID to its signed record, and checking it.

An ID resolves through the gradebook (``certificates`` table) or a folder of
certificate files (``<ID>.json``); either way the record is then verified with
the issuer's public key alone (:func:`quizzes.certify.verify`), so the place it
came from needs no trust.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from quizzes import ids
from quizzes.certify import Verification, revocation_entries, verify_bytes
from quizzes.gradebook import Gradebook


@dataclass(frozen=True, slots=True)
class Lookup:
    """Where to find certificates and the revocation list."""

    public: Ed25519PublicKey
    db: str | None = None
    certs_dir: str | None = None
    revocations: str | None = None

    def document(self, printed_id: str) -> str | None:
        if self.db and Path(self.db).exists():
            with Gradebook(self.db) as book:
                doc = book.certificate(printed_id)
            if doc is not None:
                return doc
        if self.certs_dir:
            path = Path(self.certs_dir) / f"{printed_id}.json"
            if path.is_file():
                return path.read_text(encoding="utf-8")
        return None

    def revoked(self) -> dict[str, str]:
        return revocation_entries(self.revocations, self.public) if self.revocations else {}

    def check_id(self, typed: str) -> Verification:
        """valid / invalid / revoked for a typed ID."""
        try:
            printed = ids.normalise(typed)
        except ids.IdError as exc:
            return Verification("invalid", f"malformed ID: {exc}")
        doc = self.document(printed)
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
