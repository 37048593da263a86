"""Pure formatters for ``sprio`` and ``sshare`` (their 22.05 default layouts).

``format_sprio`` mirrors ``src/sprio/sprio.c`` (the default format strings) and
``src/sprio/print.c`` (``_print_str``: a ``%.N`` field is right-justified and cut to N,
a ``%N`` field is cut and padded on the right; weighted factors print with ``%.0f``,
normalised ones with ``%.7lf``, the normalised priority with ``%16.14f``).

``format_sshare`` mirrors ``src/sshare/process.c`` (the field table and the default
field lists with and without ``-l``) and ``src/common/print_fields.c``
(``print_fields_header``: names justified like their column and a dash line;
``print_fields_double``: ``%*f``, scientific notation when that does not fit; blank
for unset values; ``-p``/``-P`` parsable output).  The account column indents one
space per tree level (``slurmdb_tree_name_get``); a user row shows its account,
indented one more (``-U`` prints it bare).

Where the man pages and the source we could read disagree with a real 22.05.8, the
real output wins: tests/minislurm/priority/test_sprio_sshare_realslurm.py compares these functions
with sprio/sshare captured from the real-Slurm harness, byte for byte.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence

from minislurm.common.accounts import AssocKey
from minislurm.priority.factors import MAX_PRIORITY, TRES_ORDER, PriorityFactors, PriorityWeights
from minislurm.priority.fairshare import ShareRow

# ---------------------------------------------------------------------- sprio

#: ``sprio -l`` in 22.05.
SPRIO_LONG_FORMAT = "%.15i %9r %.8u %.10Y %.10S %.10A %.10B %.10F %.10J %.10P %.10Q %.11N %.20T"
#: ``sprio -n -l`` in 22.05 (measured: no SITE and no NICE column).
SPRIO_NORM_LONG_FORMAT = "%.15i %9r %.8u %10y %10a %10b %10f %10j %10p %10q %20t"


def sprio_default_format(
    weights: PriorityWeights, *, long: bool = False, norm: bool = False, users: bool = False
) -> str:
    """The format sprio builds: every factor whose weight is non-zero.

    As measured on 22.05.8: the weighted default always has SITE and right-justifies
    TRES (``%.20T``, not the ``%20T`` of the man page); ``-n`` has no SITE column.
    """
    if long:
        return SPRIO_NORM_LONG_FORMAT if norm else SPRIO_LONG_FORMAT
    parts = ["%.15i", "%9r"]
    if users:
        parts.append("%.8u")
    pairs = [
        (True, "%10y", "%.10Y"),
        (not norm, "", "%.10S"),
        (weights.age, "%10a", "%.10A"),
        (weights.assoc, "%10b", "%.10B"),
        (weights.fairshare, "%10f", "%.10F"),
        (weights.job_size, "%10j", "%.10J"),
        (weights.partition, "%10p", "%.10P"),
        (weights.qos, "%10q", "%.10Q"),
        (bool(weights.tres), "%20t", "%.20T"),
    ]
    parts.extend(n if norm else w for cond, n, w in pairs if cond)
    return " ".join(parts)


def _int(v: float) -> str:
    return f"{v:.0f}"


def _norm(v: float) -> str:
    return f"{v:.7f}"


def _weight_factor(attr: str, weight: str) -> tuple[Callable[..., str], Callable[..., str]]:
    def weighted(f: PriorityFactors) -> str:
        return _int(getattr(f, f"weighted_{attr}"))

    def normalized(f: PriorityFactors) -> str:
        return _norm(getattr(f, attr) if getattr(f.weights, weight) else 0.0)

    return weighted, normalized


def _tres_weighted(f: PriorityFactors) -> str:
    return ",".join(f"{n}={v:.0f}" for n, v in f.weighted_tres if v)


def _tres_norm(f: PriorityFactors) -> str:
    pairs = zip(f.tres, f.weighted_tres, strict=True)
    return ",".join(f"{n}={v:.2f}" for (n, v), (_, wv) in pairs if wv)


def _prio_norm(f: PriorityFactors) -> str:
    return f"{f.priority / MAX_PRIORITY:16.14f}"


_AGE = _weight_factor("age", "age")
_ASSOC = _weight_factor("assoc", "assoc")
_FS = _weight_factor("fairshare", "fairshare")
_JS = _weight_factor("job_size", "job_size")
_PART = _weight_factor("part", "partition")
_QOS = _weight_factor("qos", "qos")

#: letter -> (header, value of a row, value on the ``-w`` weights line)
_SPRIO_FIELDS: dict[str, tuple[str, Callable[[PriorityFactors], str], str]] = {
    "i": ("JOBID", lambda f: str(f.job_id), "Weights"),
    "r": ("PARTITION", lambda f: f.partition, ""),
    "u": ("USER", lambda f: f.user, ""),
    "o": ("ACCOUNT", lambda f: f.account, ""),
    "Y": ("PRIORITY", lambda f: str(f.priority), ""),
    "y": ("PRIORITY", _prio_norm, ""),
    "S": ("SITE", lambda f: str(f.site), "1"),
    "s": ("SITE", lambda f: str(f.site), "1"),
    "A": ("AGE", _AGE[0], "age"),
    "a": ("AGE", _AGE[1], "age"),
    "B": ("ASSOC", _ASSOC[0], "assoc"),
    "b": ("ASSOC", _ASSOC[1], "assoc"),
    "F": ("FAIRSHARE", _FS[0], "fairshare"),
    "f": ("FAIRSHARE", _FS[1], "fairshare"),
    "J": ("JOBSIZE", _JS[0], "job_size"),
    "j": ("JOBSIZE", _JS[1], "job_size"),
    "P": ("PARTITION", _PART[0], "partition"),
    "p": ("PARTITION", _PART[1], "partition"),
    "Q": ("QOS", _QOS[0], "qos"),
    "q": ("QOS", _QOS[1], "qos"),
    "N": ("NICE", lambda f: str(f.nice), ""),
    "T": ("TRES", _tres_weighted, "tres"),
    "t": ("TRES", _tres_norm, "tres"),
}

_TOKEN = re.compile(r"%(\.)?(\d*)([A-Za-z])")


def _cell(text: str, width: int, right: bool) -> str:
    """``_print_str`` with ``cut_output``: cut to ``width``, justify, pad."""
    if width == 0:
        return text
    text = text[:width]
    return text.rjust(width) if right else text.ljust(width)


def _parse_format(fmt: str) -> tuple[str, list[tuple[str, int, bool, str]]]:
    prefix_end = fmt.find("%")
    prefix = fmt if prefix_end < 0 else fmt[:prefix_end]
    tokens: list[tuple[str, int, bool, str]] = []
    matches = list(_TOKEN.finditer(fmt))
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(fmt)
        letter = m.group(3)
        if letter not in _SPRIO_FIELDS:
            raise ValueError(f"Invalid job format specification: {letter}")
        tokens.append((letter, int(m.group(2) or 0), bool(m.group(1)), fmt[m.end() : end]))
    return prefix, tokens


def _weight_value(kind: str, weights: PriorityWeights, tres_spec: str) -> str:
    if kind == "tres":
        return tres_spec
    if kind in ("", "Weights", "1"):
        return kind
    return _int(getattr(weights, kind))


def format_sprio(
    rows: Iterable[PriorityFactors],
    *,
    weights: PriorityWeights | None = None,
    fmt: str | None = None,
    long: bool = False,
    norm: bool = False,
    users: bool = False,
    noheader: bool = False,
    show_weights: bool = False,
    tres_weights_spec: str = "",
) -> str:
    """The text ``sprio`` prints for ``rows`` (already filtered and sorted).

    ``show_weights`` prints the ``sprio -w`` line instead of the jobs; its TRES cell is
    ``tres_weights_spec`` (the ``PriorityWeightTRES`` string as configured).
    """
    rows = list(rows)
    w = weights or (rows[0].weights if rows else PriorityWeights())
    fmt = fmt or sprio_default_format(w, long=long, norm=norm, users=users)
    prefix, tokens = _parse_format(fmt)
    lines = []

    def line(cells: Callable[[str], str]) -> str:
        out = [prefix]
        for letter, width, right, suffix in tokens:
            out.append(_cell(cells(letter), width, right))
            out.append(suffix)
        return "".join(out)

    if not noheader:
        lines.append(line(lambda c: _SPRIO_FIELDS[c][0]))
    if show_weights:
        lines.append(line(lambda c: _weight_value(_SPRIO_FIELDS[c][2], w, tres_weights_spec)))
    else:
        for r in rows:
            lines.append(line(_row_cells(r)))
    return "".join(f"{ln}\n" for ln in lines)


def _row_cells(r: PriorityFactors) -> Callable[[str], str]:
    def cells(letter: str) -> str:
        return _SPRIO_FIELDS[letter][1](r)

    return cells


def sort_sprio_rows(rows: Iterable[PriorityFactors]) -> list[PriorityFactors]:
    """sprio's default order: by job id, then partition."""
    return sorted(rows, key=lambda f: (f.job_id, f.partition))


# ---------------------------------------------------------------------- sshare

#: name -> (width, kind); negative width = left-justified (``print_field_t.len``).
SSHARE_FIELDS: dict[str, tuple[int, str]] = {
    "Account": (-20, "str"),
    "Cluster": (10, "str"),
    "EffectvUsage": (13, "double"),
    "FairShare": (10, "double"),
    "LevelFS": (10, "double"),
    "ID": (6, "uint"),
    "NormShares": (11, "double"),
    "NormUsage": (11, "double"),
    "Partition": (12, "str"),
    "RawShares": (10, "uint"),
    "RawUsage": (11, "uint"),
    "User": (10, "str"),
    "GrpTRESMins": (30, "str"),
    "TRESRunMins": (30, "str"),
}

_SSHARE_DEFAULT = ("Account", "User", "RawShares", "NormShares", "RawUsage", "EffectvUsage",
                   "FairShare")  # fmt: skip
_SSHARE_LONG = ("Account", "User", "RawShares", "NormShares", "RawUsage", "NormUsage",
                "EffectvUsage", "FairShare")  # fmt: skip


def sshare_fields(*, long: bool = False, fair_tree: bool = True) -> tuple[str, ...]:
    """The default field list of ``sshare`` / ``sshare -l`` (LevelFS only with Fair Tree)."""
    if not long:
        return _SSHARE_DEFAULT
    extra = ("LevelFS",) if fair_tree else ()
    return (*_SSHARE_LONG, *extra, "GrpTRESMins", "TRESRunMins")


def _fmt_double(value: float, width: int) -> str:
    """``print_fields_double`` without -p: ``%*f``, or ``%*.*e`` when too wide."""
    abs_len = abs(width)
    text = f"{value:{abs_len}f}"
    if len(text) > abs_len:
        w = abs_len
        e = f"{value:{w}.{w}e}"
        if len(e) > w:
            w -= len(e) - w
        return f"{value:>{w}.{w}e}" if width > 0 else f"{value:<{w}.{w}e}"
    return text if width > 0 else text.ljust(abs_len)


def _tres_string(names: Sequence[str], counts: Mapping[str, int]) -> str:
    """``slurmdb_make_tres_string_from_arrays``: every TRES with its count."""
    return ",".join(f"{n}={int(counts.get(n, 0))}" for n in names)


def _share_values(row: ShareRow, tree_name: str, cluster: str) -> dict[str, object]:
    return {
        "Account": tree_name,
        "Cluster": cluster,
        "EffectvUsage": row.effective_usage,
        "FairShare": row.fairshare,
        "LevelFS": None if row.raw_shares is None else row.level_fs,
        "ID": None,
        "NormShares": row.norm_shares,
        "NormUsage": row.norm_usage,
        "Partition": None,
        "RawShares": "parent" if row.raw_shares is None and row.depth > 0 else row.raw_shares,
        "RawUsage": int(row.raw_usage),
        "User": row.user,
        "GrpTRESMins": None,
        "TRESRunMins": None,
    }


def _tree_name(row: ShareRow) -> str:
    """``slurmdb_tree_name_get``: one space per level; users show their account."""
    return " " * row.depth + row.account


def _sshare_cell(name: str, value: object, parsable: bool) -> str:
    width, kind = SSHARE_FIELDS[name]
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "" if parsable else " " * abs(width)
    if parsable:
        if kind == "double" and isinstance(value, float | int):
            return f"{float(value):f}"
        return str(value)
    if kind == "double" and isinstance(value, float | int):
        return _fmt_double(float(value), width)
    text = str(value)
    if len(text) > abs(width):
        text = text[: abs(width) - 1] + "+"
    return text.rjust(width) if width > 0 else text.ljust(-width)


def format_sshare(
    rows: Sequence[ShareRow],
    long: bool = False,
    *,
    fair_tree: bool = True,
    fields: Sequence[str] | None = None,
    noheader: bool = False,
    parsable: bool = False,
    parsable2: bool = False,
    users_only: bool = False,
    cluster: str = "",
    tres_run_mins: Mapping[AssocKey, Mapping[str, int]] | None = None,
    grp_tres_mins: Mapping[AssocKey, Mapping[str, int]] | None = None,
    tres_names: Sequence[str] = (*TRES_ORDER, "gres/gpu"),
) -> str:
    """The text ``sshare`` (``-l``, ``-p``, ``-P``, ``-n``, ``-U``, ``-o``) prints for ``rows``.

    ``rows`` come in tree order (``ShareRow`` dicts keep it); under Fair Tree accounts
    have no FairShare and ``parent`` associations no LevelFS.  TRESRunMins lists every
    TRES of ``tres_names`` (running TRES-minutes, 0 by default; the default list is
    Slurm's TRES table plus ``AccountingStorageTRES=gres/gpu``); GrpTRESMins only the
    limits set.
    """
    names = list(fields or sshare_fields(long=long, fair_tree=fair_tree))
    for n in names:
        if n not in SSHARE_FIELDS:
            raise ValueError(f'Invalid field requested: "{n}"')
    sep_end = not parsable2
    p = parsable or parsable2
    out: list[str] = []

    def emit(cells: list[str]) -> None:
        if p:
            out.append("|".join(cells) + ("|" if sep_end else "") + "\n")
        else:
            out.append("".join(c + " " for c in cells) + "\n")

    if not noheader:
        if p:
            emit(names)
        else:
            emit([_hdr(n) for n in names])
            emit(["-" * abs(SSHARE_FIELDS[n][0]) for n in names])
    for row in rows:
        if users_only and row.user is None:
            continue
        # -U prints the bare account name (measured), the tree view indents it
        values = _share_values(row, row.account if users_only else _tree_name(row), cluster)
        if fair_tree and row.user is None:
            values["FairShare"] = None
        values["TRESRunMins"] = _tres_string(tres_names, (tres_run_mins or {}).get(row.key, {}))
        grp = (grp_tres_mins or {}).get(row.key)
        values["GrpTRESMins"] = _tres_string(list(grp), grp) if grp else None
        emit([_sshare_cell(n, values[n], p) for n in names])
    return "".join(out)


def _hdr(name: str) -> str:
    """``print_fields_header``: ``%*.*s`` with the field's signed width."""
    width = SSHARE_FIELDS[name][0]
    text = name[: abs(width)]
    return text.rjust(width) if width > 0 else text.ljust(-width)


__all__ = [
    "SPRIO_LONG_FORMAT",
    "SPRIO_NORM_LONG_FORMAT",
    "SSHARE_FIELDS",
    "format_sprio",
    "format_sshare",
    "sort_sprio_rows",
    "sprio_default_format",
    "sshare_fields",
]
