"""Short, human-typable certificate IDs: Crockford base32 with a check character.

An ID is 12 data symbols (60 bits of the sha256 of the signed certificate) plus
a mod-37 check symbol, printed in groups: ``7K2Q-M9XA-4TRB-E``.

Alphabets: data symbols are Crockford's ``0123456789ABCDEFGHJKMNPQRSTVWXYZ``
(values 0-31).  The check symbol is the value mod 37 written with those 32 plus
``+ @ _ . U`` for 32-36.  Crockford's own extra check symbols are ``* ~ $ = U``;
``*``, ``~``, ``$`` and ``=`` need quoting in a shell (glob, tilde expansion,
variables) and ``*`` is not allowed in Windows file names, while an ID must be
typed bare after ``quizzes verify`` and used in ``<ID>.json`` file names and
``/verify/<ID>`` URLs.  The five used here need no quoting in POSIX shells
(:func:`shlex.quote` leaves them alone) and are valid in URL paths and file
names.
Decoding follows Crockford (https://www.crockford.com/base32.html): case is
ignored, ``O`` reads as ``0``, ``I``/``L`` as ``1``, hyphens are ignored.  The
check symbol catches every single-symbol substitution and every transposition
of two adjacent symbols, because 37 is prime and larger than the alphabet.
"""

from __future__ import annotations

ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
CHECK_ALPHABET = ALPHABET + "+@_.U"  # not Crockford's "*~$=U": see the module docstring
DATA_SYMBOLS = 12
_ALIASES = {"O": "0", "I": "1", "L": "1"}


class IdError(ValueError):
    """A string that is not a well-formed certificate ID (the message says why)."""


def check_symbol(value: int) -> str:
    return CHECK_ALPHABET[value % 37]


def encode(digest: bytes) -> str:
    """The ID of a digest (its first 60 bits)."""
    value = int.from_bytes(digest[:8], "big") >> 4
    symbols = []
    for _ in range(DATA_SYMBOLS):
        symbols.append(ALPHABET[value & 31])
        value >>= 5
    data = "".join(reversed(symbols))
    full = data + check_symbol(int.from_bytes(digest[:8], "big") >> 4)
    return "-".join((full[0:4], full[4:8], full[8:12], full[12:]))


def normalise(text: str) -> str:
    """Canonical printed form of a typed ID; raises IdError with the reason."""
    raw = "".join(text.split()).replace("-", "").upper()
    if len(raw) != DATA_SYMBOLS + 1:
        raise IdError(f"a certificate ID has {DATA_SYMBOLS + 1} symbols, "
                      f"'{text}' has {len(raw)}")
    data = "".join(_ALIASES.get(c, c) for c in raw[:-1])
    check = _ALIASES.get(raw[-1], raw[-1])
    bad = [c for c in data if c not in ALPHABET]
    if bad:
        raise IdError(f"'{bad[0]}' is not a base32 symbol (allowed: {ALPHABET})")
    if check not in CHECK_ALPHABET:
        raise IdError(f"'{check}' is not a check symbol")
    value = 0
    for c in data:
        value = value * 32 + ALPHABET.index(c)
    if check_symbol(value) != check:
        raise IdError("the check symbol does not match: the ID was mistyped")
    full = data + check
    return "-".join((full[0:4], full[4:8], full[8:12], full[12:]))
