"""The class's password file: one ``user:scrypt$N$r$p$salt$hash`` line per person.

Passwords are stored as scrypt hashes (RFC 7914, ``hashlib.scrypt``), never in
clear; :func:`check` compares in constant time.  Blank lines and ``#`` comments
are ignored.  User names follow JupyterHub's rules for the local spawner: lower
case letters, digits, ``-``, ``_`` and ``.``, starting with a letter, at most 32.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import re
import secrets
from collections.abc import Mapping
from pathlib import Path

from course.classroom.errors import ClassError

N, R, P = 2**14, 8, 1
NAME = re.compile(r"[a-z][a-z0-9._-]{0,31}")


def check_name(name: str) -> str:
    """A valid user name, or ClassError saying why not."""
    if not NAME.fullmatch(name):
        raise ClassError(f"invalid user name '{name}': lower case letters, digits, '.', '_' "
                         "and '-', starting with a letter, at most 32 characters")
    return name


def hash_password(password: str, *, salt: bytes | None = None) -> str:
    """``scrypt$N$r$p$salt$hash`` (base64) of a password."""
    if not password:
        raise ClassError("a password must not be empty")
    salt = os.urandom(16) if salt is None else salt
    digest = hashlib.scrypt(password.encode("utf-8"), salt=salt, n=N, r=R, p=P, dklen=32)
    b64 = base64.b64encode
    return f"scrypt${N}${R}${P}${b64(salt).decode()}${b64(digest).decode()}"


def check(password: str, stored: str) -> bool:
    """Whether ``password`` matches a stored hash (False for a malformed hash)."""
    try:
        kind, n, r, p, salt, digest = stored.split("$")
        if kind != "scrypt":
            return False
        want = base64.b64decode(digest, validate=True)
        got = hashlib.scrypt(password.encode("utf-8"), salt=base64.b64decode(salt), n=int(n),
                             r=int(r), p=int(p), dklen=len(want))
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(got, want)


def read(path: str | Path) -> dict[str, str]:
    """user -> stored hash; ClassError naming the line for anything malformed."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ClassError(f"{p}: cannot read the password file ({exc.strerror})") from None
    out: dict[str, str] = {}
    for no, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, stored = line.partition(":")
        if not sep or not stored.startswith("scrypt$") or stored.count("$") != 5:
            raise ClassError(f"{p}:{no}: expected 'user:scrypt$N$r$p$salt$hash'")
        try:
            check_name(name)
        except ClassError as exc:
            raise ClassError(f"{p}:{no}: {exc.message}") from None
        out[name] = stored
    return out


def write(path: str | Path, entries: Mapping[str, str]) -> None:
    """Write the file (mode 0600) atomically."""
    p = Path(path)
    tmp = p.with_name(p.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write("# class passwords: user:scrypt hash (python -m course class passwd USER)\n")
        for name in sorted(entries):
            fh.write(f"{name}:{entries[name]}\n")
    tmp.replace(p)


def set_password(path: str | Path, user: str, password: str) -> None:
    """Add or change one user's password in the file (created if missing)."""
    p = Path(path)
    entries = read(p) if p.exists() else {}
    entries[check_name(user)] = hash_password(password)
    write(p, entries)


def new_password() -> str:
    """A random password easy to read aloud (four groups of four)."""
    alphabet = "abcdefghjkmnpqrstuvwxyz23456789"
    return "-".join("".join(secrets.choice(alphabet) for _ in range(4)) for _ in range(4))
