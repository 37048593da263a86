"""Units a numeric answer may carry, converted to the item's unit.

Memory follows Slurm's ``--mem`` suffixes (K, M, G, T are powers of 1024, the
default unit is megabytes); ``KB/MB/GB/TB`` and ``KiB/MiB/GiB/TiB`` are read the
same way because Slurm itself means binary units.  Time accepts seconds, minutes,
hours and days.  Any other unit (``GPUs``, ``tasks``, ``GPU-hours``) is a
counting word: the learner may write it or leave it out, in any case, with a
hyphen or a space (``9216 gpu hours`` = ``9216 GPU-hours``), singular or plural.

Numbers: ``_`` is ignored and a comma is read only as a thousands separator in
groups of three (``9,216``, ``1,048,576``); any other comma (``0,5``, ``12,34``)
is ambiguous (a decimal comma?) and the answer is refused with
:data:`AMBIGUOUS_COMMA` rather than guessed.  That is the English reading;
:func:`delocalise` first reads a number in the learner's language (``pt-BR``:
``0,125`` = 0.125, ``1.234,5`` = 1234.5) and refuses what is ambiguous there
(``9.216``: thousands or a decimal point?) with :class:`Unreadable`.
Portuguese unit words (``horas``, ``minutos``, ``GPU-horas``) are read too.
"""

from __future__ import annotations

import re

MEMORY_MB = {
    "k": 1 / 1024, "kb": 1 / 1024, "kib": 1 / 1024,
    "m": 1.0, "mb": 1.0, "mib": 1.0,
    "g": 1024.0, "gb": 1024.0, "gib": 1024.0,
    "t": 1024.0**2, "tb": 1024.0**2, "tib": 1024.0**2,
}
TIME_MIN = {
    "s": 1 / 60, "sec": 1 / 60, "secs": 1 / 60, "second": 1 / 60, "seconds": 1 / 60,
    "min": 1.0, "mins": 1.0, "minute": 1.0, "minutes": 1.0,
    "h": 60.0, "hr": 60.0, "hrs": 60.0, "hour": 60.0, "hours": 60.0,
    "d": 1440.0, "day": 1440.0, "days": 1440.0,
    # Portuguese (pt-BR) spellings of the same units
    "segundo": 1 / 60, "segundos": 1 / 60, "minuto": 1.0, "minutos": 1.0,
    "hora": 60.0, "horas": 60.0, "dia": 1440.0, "dias": 1440.0,
}
#: Portuguese words inside counting units, read as their English unit (GPU-horas).
_WORDS_PT = {"horas": "hours", "hora": "hour", "minutos": "minutes", "minuto": "minute",
             "dias": "days", "dia": "day", "segundos": "seconds", "segundo": "second",
             "tarefas": "tasks", "tarefa": "task", "nós": "nodes", "nó": "node"}
DEFAULT_LANG = "en"
#: Languages a number may be written in: (decimal mark, thousands separator).
LANGS = {"en": (".", ","), "pt-BR": (",", ".")}
_TOKEN = re.compile(r"^\s*([-+]?)([0-9.,_]*[0-9][0-9.,_]*)((?:[eE][-+]?\d+)?)(.*)$", re.S)

_NUMBER = re.compile(r"^\s*([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-z%/ -]*?)\s*$")
_THOUSANDS = re.compile(r"^\s*[-+]?\d{1,3}(?:,\d{3})+(?![\d,])")
AMBIGUOUS_COMMA = ("write decimals with a point (0.5, not 0,5); a comma is read only between "
                   "groups of three digits (9,216)")


AMBIGUOUS_DOT = ("número ambíguo: em português o ponto separa milhares (9.216 = 9216) e a "
                 "vírgula separa decimais (9,216); escreva 9216 ou 9,216")
MIXED = {"en": "in English write 1,234.5 (a point for decimals, commas between thousands) "
               "or 1234.5",
         "pt-BR": "em português escreva 1.234,5 (vírgula para decimais, ponto entre milhares) "
                  "ou 1234,5"}


class Unreadable(ValueError):
    """A number that cannot be read unambiguously in the learner's language."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def language(lang: str | None) -> str:
    """The supported language a tag names (``pt_BR``, ``pt-br``, ``pt`` -> ``pt-BR``;
    ``en_US`` -> ``en``); ValueError for a language numbers cannot be read in."""
    tag = (lang or DEFAULT_LANG).strip().replace("_", "-").split(".")[0].lower()
    if tag in ("en", "c", "posix") or tag.startswith("en-"):
        return "en"
    if tag in ("pt", "pt-br") or tag.startswith("pt-"):
        return "pt-BR"
    raise ValueError(f"numbers cannot be read in language '{lang}' (known: "
                     f"{', '.join(LANGS)})")


def _grouped(text: str, sep: str) -> bool:
    """``text`` is digits in thousands groups (``9,216``, ``1.048.576``): a first group of
    1-3 digits not starting with 0, then groups of exactly three."""
    parts = text.split(sep)
    return (len(parts) > 1 and 1 <= len(parts[0]) <= 3 and parts[0].isdigit()
            and not parts[0].startswith("0") and all(len(p) == 3 and p.isdigit()
                                                     for p in parts[1:]))


def delocalise(text: str, lang: str = DEFAULT_LANG) -> str:
    """``text`` with its leading number rewritten the way :func:`parse_quantity` reads it
    (a point for decimals, no separators), read in ``lang``; the unit after it is
    kept.  Raises :class:`Unreadable` with the reason when the number is ambiguous.

    >>> delocalise("1.234,5 horas", "pt-BR")
    '1234.5 horas'
    >>> delocalise("9,216 GPU-hours", "en")
    '9216 GPU-hours'
    """
    lang = language(lang)
    match = _TOKEN.match(text.replace("_", ""))
    if not match:
        return text
    sign, number, exponent, rest = match.groups()
    decimal, group = LANGS[lang]
    if decimal in number and group in number:
        head, _, tail = number.rpartition(decimal)
        if group in tail or not tail.isdigit() or not (_grouped(head, group) or head.isdigit()):
            raise Unreadable(MIXED[lang])
        plain = head.replace(group, "") + "." + tail
    elif lang == "en":
        if "," in number:
            if not _grouped(number, ","):
                raise Unreadable(AMBIGUOUS_COMMA)
            plain = number.replace(",", "")
        else:
            plain = number
    else:  # pt-BR: a comma is the decimal mark, a point groups thousands
        if number.count(",") > 1:
            raise Unreadable(MIXED[lang])
        if "." in number:
            if _grouped(number, "."):
                raise Unreadable(AMBIGUOUS_DOT)
            if number.count(".") > 1:
                raise Unreadable(MIXED[lang])
            plain = number  # 1.5, 0.125: a decimal point, as code and calculators write it
        else:
            plain = number.replace(",", ".")
    if plain.count(".") > 1 or plain in (".", ""):
        raise Unreadable(MIXED[lang])
    return f"{sign}{plain}{exponent}{rest}"


def comma_problem(text: str) -> str | None:
    """:data:`AMBIGUOUS_COMMA` if ``text`` has a comma that is not a thousands separator."""
    cleaned = text.replace("_", "")
    if "," not in cleaned:
        return None
    match = _THOUSANDS.match(cleaned)
    if match and "," not in cleaned[match.end():]:
        return None
    return AMBIGUOUS_COMMA


def _word(unit: str) -> str:
    """A counting word compared loosely: case, hyphens and spaces do not matter, and
    Portuguese words read as their English unit (``GPU-horas`` = ``GPU-hours``)."""
    parts = re.split(r"[\s-]+", unit.strip().lower())
    return "-".join(_WORDS_PT.get(p, p) for p in parts if p)


def family(unit: str) -> dict[str, float] | None:
    """The conversion table a unit belongs to, or None for a counting word."""
    u = unit.lower()
    if u in MEMORY_MB:
        return MEMORY_MB
    if u in TIME_MIN:
        return TIME_MIN
    return None


def parse_quantity(text: str, unit: str) -> float | None:
    """The value of ``text`` expressed in ``unit``; None if it cannot be read.

    >>> parse_quantity("64G", "MB")
    65536.0
    >>> parse_quantity("90 s", "minutes")
    1.5
    >>> parse_quantity("9,216 gpu-hours", "GPU-hours")
    9216.0
    >>> parse_quantity("0,5", "") is None  # ambiguous: see comma_problem()
    True
    """
    if comma_problem(text):
        return None
    match = _NUMBER.match(text.replace(",", "").replace("_", ""))
    if not match:
        return None
    value = float(match.group(1))
    given = match.group(2).strip().lower()
    if not given or not unit:
        return value if not given else None
    table = family(unit)
    if table is None:
        word = _word(unit)
        return value if _word(given) in {word, word.rstrip("s")} else None
    if given not in table:
        return None
    return value * table[given] / table[unit.lower()]
