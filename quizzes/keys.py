"""Issuer keys: Ed25519 key pairs in PEM files, identified by a short key id.

``quizzes keygen`` writes ``<name>.key`` (PKCS#8 PEM, mode 0600; the grader keeps
it) and ``<name>.pub`` (SubjectPublicKeyInfo PEM; published to anyone who
verifies).  The key id is the first 16 hex digits of sha256 of the raw 32-byte
public key.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from quizzes.errors import CertificateError


def key_id(public: Ed25519PublicKey) -> str:
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


def raw_public(public: Ed25519PublicKey) -> bytes:
    return public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def generate(prefix: str | Path, *, overwrite: bool = False) -> tuple[Path, Path]:
    """Write a new key pair ``prefix.key`` / ``prefix.pub``; refuses to overwrite."""
    key_path, pub_path = Path(f"{prefix}.key"), Path(f"{prefix}.pub")
    for p in (key_path, pub_path):
        if p.exists() and not overwrite:
            raise CertificateError(f"{p} already exists; refusing to overwrite an issuer key")
    private = Ed25519PrivateKey.generate()
    pem = private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    try:
        fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(pem)
        pub_path.write_bytes(private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    except OSError as exc:
        raise CertificateError(f"cannot write the key pair: {exc.strerror}: {exc.filename}") \
            from exc
    return key_path, pub_path


def load_private(path: str | Path) -> Ed25519PrivateKey:
    data = _read(path)
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
        raise CertificateError(f"{path}: not a PEM private key ({exc})") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise CertificateError(f"{path}: not an Ed25519 private key")
    return key


def load_public(path: str | Path) -> Ed25519PublicKey:
    data = _read(path)
    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, UnsupportedAlgorithm) as exc:
        raise CertificateError(f"{path}: not a PEM public key ({exc})") from None
    if not isinstance(key, Ed25519PublicKey):
        raise CertificateError(f"{path}: not an Ed25519 public key")
    return key


def _read(path: str | Path) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise CertificateError(f"{path}: cannot read the key: {exc.strerror}") from None
