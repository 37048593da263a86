"""Salted answer hashes: how a learner-facing bank stores a key without showing it.

A bank carries a random ``salt``; each accepted answer is stored as
``sha256(salt | item id | variant | canonical answer)`` truncated to 96 bits.
The notebook can therefore check an answer instantly (hash the learner's
canonical answer and compare) while opening the YAML shows no answer.  This hides
answers from reading, not from brute force over a tiny answer space (trying the
four options of a choice item is no different from trying them in the widget).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

SEP = "\x1f"
DIGEST_HEX = 24


def answer_hash(salt: str, item_id: str, variant: str, canonical: str) -> str:
    """The stored form of one accepted canonical answer."""
    data = SEP.join((salt, item_id, variant, canonical)).encode("utf-8")
    return hashlib.sha256(data).hexdigest()[:DIGEST_HEX]


def variant_key(params: Mapping[str, Any]) -> str:
    """Canonical text of a variant's parameters ('' for an item without parameters)."""
    if not params:
        return ""
    return json.dumps(dict(params), sort_keys=True, separators=(",", ":"))


def canonical_json(value: Any) -> str:
    """Deterministic JSON used for hashing and signing (sorted keys, no spaces)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


SEALED = "sealed:"


def _keystream(salt: str, item_id: str, length: int) -> bytes:
    out = bytearray()
    counter = 0
    while len(out) < length:
        out += hashlib.sha256(SEP.join((salt, item_id, "explanation", str(counter)))
                              .encode("utf-8")).digest()
        counter += 1
    return bytes(out[:length])


def seal(salt: str, item_id: str, text: str) -> str:
    """Hide an explanation from a casual reader of the bank (``sealed:<base64>``).

    Explanations name the right answer, so the bank stores them sealed; the
    widget unseals one after the learner has answered.  Like the answer hashes,
    this keeps answers out of sight, not out of reach of someone running the code.
    """
    import base64

    data = text.encode("utf-8")
    mixed = bytes(a ^ b for a, b in zip(data, _keystream(salt, item_id, len(data)), strict=True))
    return SEALED + base64.b64encode(mixed).decode("ascii")


def unseal(salt: str, item_id: str, sealed: str) -> str:
    """Inverse of :func:`seal` (plain text is returned unchanged)."""
    import base64
    import binascii

    if not sealed.startswith(SEALED):
        return sealed
    try:
        data = base64.b64decode(sealed[len(SEALED):], validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("a sealed explanation is not valid base64") from None
    plain = bytes(a ^ b for a, b in zip(data, _keystream(salt, item_id, len(data)), strict=True))
    return plain.decode("utf-8", errors="replace")
