"""Hostlist expressions: ``n[1-3,7]`` <-> ``n1 n2 n3 n7``.

A faithful port of the one-dimensional part of Slurm's
``src/common/hostlist.c`` (what ``scontrol show hostnames``,
``scontrol show hostlist`` and ``scontrol show hostlistsorted`` use):

* :func:`expand` is ``scontrol show hostnames EXPR``: order and duplicates are
  kept, zero padding is kept (``gpu[01-03]``), ranges may sit in the middle of
  a name (``rack[1-2]-n[1-2]``), tokens are separated by commas, spaces or tabs.
* :func:`compress` is ``scontrol show hostlist``: each host is parsed into a
  prefix and a numeric suffix and appended to the list; a host extends the
  previous range only when it is the next number with the same prefix and an
  equivalent zero padding, so ``n3,n1,n2,n2,n10`` gives ``n[3,1-2,2,10]``.
* ``compress(..., sort=True)`` is ``scontrol show hostlistsorted``: Slurm's
  ``hostlist_sort()`` sorts the ranges (prefixes in natural order), splits
  overlapping ranges and joins adjacent ones -- it does *not* drop duplicates
  (``n[1-2,2-3,10]`` for the list above).  ``uniq=True`` is
  ``hostlist_uniq()`` (sort and drop duplicates), which Slurm uses for node sets.
* :func:`ranged` is ``scontrol show hostlist EXPR`` for an expression, keeping
  the ranges exactly as written (``n1[1-2]`` stays ``n1[1-2]``).

Bad expressions raise :class:`HostlistError`; its message is what scontrol
prints, without the ``scontrol: `` prefix of the logged line, e.g.::

    error: _parse_single_range: Invalid range: `3-1'
    Invalid hostlist: n[3-1]

Every behaviour here was checked against the real ``scontrol`` of Slurm 22.05.8
(odd corners included: ``n[1`` gives ``n]``, ``n[ 1]`` gives ``n01``).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from minislurm.errors import HostlistError

__all__ = ["HostlistError", "compress", "expand", "natcmp", "ranged"]

MAX_RANGE = 64 * 1024  # hostlist.c: "max host range: anything larger will be assumed an error"
MAX_RANGES = 64 * 1024  # max number of ranges between brackets
MAX_PREFIX_CNT = 64 * 1024  # hostlist.h: guards "a[0-999999999].b[0-9]"
_ULONG_MAX = 2**64 - 1
_SEPARATORS = "\t, "
_C_SPACE = " \t\n\v\f\r"
_DIGITS = "0123456789"


class _Invalid(Exception):
    """Internal: the expression is not a valid hostlist; ``args`` = Slurm's log lines."""


@dataclass(slots=True)
class _Range:
    """``struct hostrange_components``: prefix + [lo, hi] printed with ``width`` digits.

    ``single`` marks a host without a numeric suffix (``prefix`` is the whole name).
    Mutable on purpose: Slurm's algorithms adjust ranges in place.
    """

    prefix: str
    lo: int
    hi: int
    width: int
    single: bool = False

    def count(self) -> int:
        return 1 if self.single else self.hi - self.lo + 1

    def hosts(self) -> Iterator[str]:
        if self.single:
            yield self.prefix
        else:
            for num in range(self.lo, self.hi + 1):
                yield f"{self.prefix}{num:0{self.width}d}"

    def numstr(self) -> str:
        """``hostrange_numstr``: ``lo`` or ``lo-hi``, zero padded to ``width``."""
        if self.single:
            return ""
        text = f"{self.lo:0{self.width}d}"
        if self.lo < self.hi:
            text += f"-{self.hi:0{self.width}d}"
        return text


# ---- helpers mirroring hostlist.c / strnatcmp.c -------------------------------------------


def _zero_padded(num: int, width: int) -> int:
    """Number of zeros needed to pad ``num`` to ``width``."""
    return max(width - len(str(num)), 0)


def _width_equiv(a: _Range, b: _Range) -> bool:
    """``hostrange_width_combine`` / ``_width_equiv``: may adjust one of the widths."""
    if a.width == b.width:
        return True
    npad, nmpad = _zero_padded(a.lo, a.width), _zero_padded(a.lo, b.width)
    mpad, mnpad = _zero_padded(b.lo, b.width), _zero_padded(b.lo, a.width)
    if npad != nmpad and mpad != mnpad:
        return False
    if npad != nmpad:
        b.width = a.width
    else:
        a.width = b.width
    return True


def natcmp(a: str, b: str) -> int:
    """Slurm's ``strnatcmp`` (Martin Pool's natural order): ``rack2`` < ``rack10``.

    Digit runs compare by value, except that a run starting with ``0`` compares
    digit by digit (``n09`` < ``n9``).  slurmctld orders its node table this way.
    """
    ai = bi = 0
    la, lb = len(a), len(b)

    def at(s: str, i: int, n: int) -> str:
        return s[i] if i < n else ""

    while True:
        ca, cb = at(a, ai, la), at(b, bi, lb)
        while ca and ca in _C_SPACE:
            ai += 1
            ca = at(a, ai, la)
        while cb and cb in _C_SPACE:
            bi += 1
            cb = at(b, bi, lb)
        if ca and cb and ca in _DIGITS and cb in _DIGITS:
            i, j = ai, bi
            fractional = ca == "0" or cb == "0"
            bias = 0
            while True:
                da, db = at(a, i, la), at(b, j, lb)
                a_dig, b_dig = bool(da) and da in _DIGITS, bool(db) and db in _DIGITS
                if not a_dig and not b_dig:
                    result = 0 if fractional else bias
                    break
                if not a_dig:
                    result = -1
                    break
                if not b_dig:
                    result = 1
                    break
                if da != db:
                    if fractional:
                        result = -1 if da < db else 1
                        break
                    if not bias:
                        bias = -1 if da < db else 1
                i += 1
                j += 1
            if result:
                return result
        if not ca and not cb:
            return 0
        if ca != cb:
            return -1 if ca < cb else 1
        ai += 1
        bi += 1


def _prefix_cmp(a: _Range, b: _Range) -> int:
    """``hostrange_prefix_cmp``: natural order of prefixes, single hosts first."""
    result = 0 if a.prefix == b.prefix else natcmp(a.prefix, b.prefix)
    return result if result else int(b.single) - int(a.single)


def _range_cmp(a: _Range, b: _Range) -> int:
    """``hostrange_cmp``: prefix, then lowest suffix (or width when widths differ)."""
    result = _prefix_cmp(a, b)
    if result == 0:
        diff = a.lo - b.lo if _width_equiv(a, b) else a.width - b.width
        result = (diff > 0) - (diff < 0)
    return result


def _within_range(a: _Range, b: _Range | None) -> bool:
    """``hostrange_within_range``: would ``a`` and ``b`` share one bracket?"""
    if b is None or _prefix_cmp(a, b) != 0:
        return False
    return not (a.single or b.single)


def _strtoul(text: str) -> tuple[int, int]:
    """C ``strtoul(text, &end, 10)``: returns (value, index of the first unparsed char)."""
    i = 0
    while i < len(text) and text[i] in _C_SPACE:
        i += 1
    negative = False
    if i < len(text) and text[i] in "+-":
        negative = text[i] == "-"
        i += 1
    start = i
    while i < len(text) and text[i] in _DIGITS:
        i += 1
    if i == start:
        return 0, 0
    value = min(int(text[start:i]), _ULONG_MAX)
    if negative and value:
        value = 2**64 - value
    return value, i


# ---- parsing (hostlist_create) --------------------------------------------------------------


def _host_range(name: str) -> _Range:
    """``hostname_create`` + ``hostlist_push_host``: split a host into prefix and number."""
    idx = len(name) - 1
    while idx >= 0 and name[idx] in _DIGITS:
        idx -= 1
    if idx == len(name) - 1:
        return _Range(name, 0, 0, 0, single=True)
    suffix = name[idx + 1 :]
    num = min(int(suffix), _ULONG_MAX)
    return _Range(name[: idx + 1], num, num, len(suffix))


def _push(ranges: list[_Range], new: _Range) -> None:
    """``hostlist_push_range``: extend the last range when ``new`` continues it."""
    if ranges:
        tail = ranges[-1]
        if (
            not tail.single
            and not new.single
            and tail.hi == new.lo - 1
            and _prefix_cmp(tail, new) == 0
            and _width_equiv(tail, new)
        ):
            tail.hi = new.hi
            return
    ranges.append(_Range(new.prefix, new.lo, new.hi, new.width, new.single))


def _next_token(text: str, pos: int) -> tuple[str | None, int]:
    """``_next_tok``: the next token; brackets may contain separators."""
    n = len(text)
    while pos < n and text[pos] in _SEPARATORS:
        pos += 1
    if pos >= n:
        return None, pos
    start = parse = end = pos
    while True:
        while end < n and text[end] not in _SEPARATORS:
            end += 1
        while True:  # the "bracket:" label
            open_b = text.find("[", parse)
            if open_b < 0 or open_b > end:
                return text[start:end], end
            close_b = text.find("]", parse)
            if close_b < 0 or close_b < open_b:
                return text[start:end], end
            if close_b < end:
                parse = close_b + 1
                continue
            end = close_b
            break


def _parse_single_range(item: str) -> tuple[int, int, int]:
    """``_parse_single_range``: ``"3"``, ``"01-10"`` -> (lo, hi, width)."""
    invalid = _Invalid(f"_parse_single_range: Invalid range: `{item}'")
    if "x" in item:
        raise invalid  # boxes are for multi-dimensional systems only
    lo_text, dash, hi_text = item.partition("-")
    if dash and hi_text.startswith("-"):
        raise invalid  # no negative numbers
    lo, lo_end = _strtoul(lo_text)
    if lo_end == 0:
        raise invalid
    if hi_text:
        hi, hi_end = _strtoul(hi_text)
        if hi_end == 0 or hi_end != len(hi_text):
            raise invalid
    else:
        hi = lo
        if lo_end != len(lo_text):
            raise invalid
    if lo > hi:
        raise invalid
    if hi - lo + 1 > MAX_RANGE:
        raise _Invalid(f"_parse_single_range: Too many hosts in range `{item}'")
    return lo, hi, len(lo_text)


def _parse_range_list(text: str) -> list[tuple[int, int, int]]:
    """``_parse_range_list``: the inside of one pair of brackets."""
    items = text.split(",")
    if len(items) > MAX_RANGES:
        raise _Invalid("_parse_range_list: Too many ranges, can't process entire list")
    return [_parse_single_range(item) for item in items]


def _push_range_list(
    ranges: list[_Range], prefix: str, numbers: list[tuple[int, int, int]]
) -> None:
    """``_push_range_list``: a prefix may itself hold one range (``rack[1-2]-n``)."""
    open_b = prefix.rfind("[")
    close_b = prefix.rfind("]", open_b + 1) if open_b >= 0 else -1
    if open_b >= 0 and close_b >= 0:
        head, inner, tail = prefix[:open_b], prefix[open_b + 1 : close_b], prefix[close_b + 1 :]
        recurse = "[" in head
        prefix_cnt = 0
        for lo, hi, width in _parse_range_list(inner):
            prefix_cnt += hi - lo + 1
            if prefix_cnt > MAX_PREFIX_CNT:
                raise _Invalid
            for num in range(lo, hi + 1):
                new_prefix = f"{head}{num:0{width}d}{tail}"
                if not recurse:
                    for n_lo, n_hi, n_width in numbers:
                        _push(ranges, _Range(new_prefix, n_lo, n_hi, n_width))
                    continue
                # Slurm keeps MAX(rc, rc1) of the recursive calls, i.e. it silently
                # drops the hosts of an inner prefix that fails to parse.
                with contextlib.suppress(_Invalid):
                    _push_range_list(ranges, new_prefix, numbers)
        return
    for lo, hi, width in numbers:
        _push(ranges, _Range(prefix, lo, hi, width))


def _create(expr: str) -> list[_Range]:
    """``hostlist_create`` (``_hostlist_create_bracketed``) for a 1-D cluster."""
    ranges: list[_Range] = []
    pos = 0
    while True:
        token, pos = _next_token(expr, pos)
        if token is None:
            return ranges
        open_b = token.rfind("[")
        if open_b < 0:
            _push(ranges, _host_range(token))
            continue
        prefix, rest = token[:open_b], token[open_b + 1 :]
        close_b = rest.find("]")
        if close_b < 0:
            # "The hostname itself contains a '[' (no ']' found)": Slurm 22.05 keeps
            # the prefix and tacks a ']' on (``n[1`` -> ``n]``), or keeps the rest.
            _push(ranges, _host_range(prefix + "]" if prefix else rest))
            continue
        if close_b + 1 < len(rest) and rest[close_b + 1] != ",":
            raise _Invalid  # text after the closing bracket (``n[1-2]x``)
        _push_range_list(ranges, prefix, _parse_range_list(rest[:close_b]))


def _parse(expr: str) -> list[_Range]:
    try:
        return _create(expr)
    except _Invalid as exc:
        logged = [f"error: {line}" for line in exc.args]
        raise HostlistError("\n".join([*logged, f"Invalid hostlist: {expr}"])) from None


# ---- sorting (hostlist_sort / hostlist_uniq) ----------------------------------------------


def _intersect(a: _Range, b: _Range) -> _Range | None:
    """``hostrange_intersect`` (assumes a <= b)."""
    if a.single or b.single:
        return None
    if a.hi > b.lo and _prefix_cmp(a, b) == 0 and _width_equiv(a, b):
        return _Range(a.prefix, b.lo, min(a.hi, b.hi), a.width)
    return None


def _coalesce(ranges: list[_Range]) -> None:
    """``hostlist_coalesce``: split overlapping ranges (keeping every host)."""
    i = len(ranges) - 1
    while i > 0:
        common = _intersect(ranges[i - 1], ranges[i])
        if common is not None:
            prev, nxt = ranges[i - 1], ranges[i]
            j = i
            if common.hi < prev.hi:
                nxt.hi = prev.hi
            prev.hi = common.lo
            nxt.lo = common.hi
            while common.lo <= common.hi:
                one = _Range(common.prefix, common.lo, common.lo, common.width)
                if common.lo > prev.hi:
                    ranges.insert(j, _Range(one.prefix, one.lo, one.hi, one.width))
                    j += 1
                if common.lo < nxt.lo:
                    ranges.insert(j, _Range(one.prefix, one.lo, one.hi, one.width))
                    j += 1
                common.lo += 1
            i = len(ranges)
        i -= 1
    _collapse(ranges)


def _collapse(ranges: list[_Range]) -> None:
    """``hostlist_collapse``: join ranges that meet exactly (``[1-2],[3]`` -> ``[1-3]``)."""
    for i in range(len(ranges) - 1, 0, -1):
        prev, nxt = ranges[i - 1], ranges[i]
        if (
            not prev.single
            and not nxt.single
            and prev.hi == nxt.lo - 1
            and _prefix_cmp(prev, nxt) == 0
            and _width_equiv(prev, nxt)
        ):
            prev.hi = nxt.hi
            del ranges[i]


def _join(a: _Range, b: _Range) -> bool:
    """``hostrange_join``: merge ``b`` into ``a`` when they touch or overlap."""
    if _prefix_cmp(a, b) != 0 or not _width_equiv(a, b):
        return False
    if a.single and b.single:
        return True
    if a.hi == b.lo - 1 or a.hi >= b.lo:
        a.hi = max(a.hi, b.hi)
        return True
    return False


def _sort(ranges: list[_Range], *, uniq: bool) -> None:
    ranges.sort(key=functools.cmp_to_key(_range_cmp))
    if not uniq:
        _coalesce(ranges)
        return
    i = 1
    while i < len(ranges):
        if _join(ranges[i - 1], ranges[i]):
            del ranges[i]
        else:
            i += 1


# ---- output (hostlist_ranged_string) ------------------------------------------------------


def _ranged_string(ranges: list[_Range]) -> str:
    """``hostlist_ranged_string`` via ``_get_bracketed_list`` for each bracket group."""
    parts: list[str] = []
    i = 0
    while i < len(ranges):
        first = ranges[i]
        following = ranges[i + 1] if i + 1 < len(ranges) else None
        bracket = first.count() > 1 or _within_range(first, following)
        nums = [first.numstr()]
        i += 1
        while i < len(ranges) and _within_range(ranges[i], ranges[i - 1]):
            nums.append(ranges[i].numstr())
            i += 1
        body = ",".join(nums)
        parts.append(f"{first.prefix}[{body}]" if bracket else f"{first.prefix}{body}")
    return ",".join(parts)


# ---- public API ---------------------------------------------------------------------------


def expand(expr: str) -> list[str]:
    """All host names of a hostlist expression, in order (``scontrol show hostnames``).

    >>> expand("gpu[01-03,10],cpu7")
    ['gpu01', 'gpu02', 'gpu03', 'gpu10', 'cpu7']
    """
    return [host for rng in _parse(expr) for host in rng.hosts()]


def compress(hosts: Iterable[str], *, sort: bool = False, uniq: bool = False) -> str:
    """The hostlist expression of host names (``scontrol show hostlist``).

    ``sort=True`` mirrors ``scontrol show hostlistsorted`` (duplicates stay),
    ``uniq=True`` sorts and drops duplicates (``hostlist_uniq``).

    >>> compress(["n3", "n1", "n2", "n2", "n10"])
    'n[3,1-2,2,10]'
    >>> compress(["n3", "n1", "n2", "n2", "n10"], sort=True)
    'n[1-2,2-3,10]'
    """
    ranges: list[_Range] = []
    tail: _Range | None = None
    for host in hosts:
        # _host_range + _push, inline (a job's NodeList is compressed as it starts):
        # a host that is the last range's prefix and then exactly ``width`` ASCII digits
        # (that prefix never ends in a digit, so those are all its trailing digits)
        # extends it or opens the next one; anything else takes the general path.
        if tail is not None and not tail.single:
            num_text = host[len(tail.prefix):]
            if (
                len(num_text) == tail.width
                and num_text.isdigit()
                and num_text.isascii()
                and host.startswith(tail.prefix)
            ):
                num = int(num_text)
                if num <= _ULONG_MAX:
                    if tail.hi == num - 1:
                        tail.hi = num
                    else:
                        tail = _Range(tail.prefix, num, num, tail.width)
                        ranges.append(tail)
                    continue
        _push(ranges, _host_range(host))
        tail = ranges[-1]
    if sort or uniq:
        _sort(ranges, uniq=uniq)
    return _ranged_string(ranges)


def ranged(expr: str, *, sort: bool = False, uniq: bool = False) -> str:
    """Re-print a hostlist expression (``scontrol show hostlist[sorted] EXPR``)."""
    ranges = _parse(expr)
    if sort or uniq:
        _sort(ranges, uniq=uniq)
    return _ranged_string(ranges)
