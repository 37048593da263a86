"""``sshare``: fair-share data of associations (src/sshare/sshare.c, process.c).

Options (``-a -A -e -l -n/-h -o -p -P -u -U -v -V``) -> a shares request (a
user list -- the caller alone unless ``-a`` or ``-u`` -- and an account
list) -> the priority plugin's fair-share rows -> `format_sshare`.  As in
``process.c``, account rows are always listed (within ``-A``), user rows only
for the requested users; ``-U`` keeps only user rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from minislurm.cli.common import (
    Context,
    connect,
    fail,
    info_table,
    option_table,
    parse_or_exit,
    parse_permuted,
    unreachable,
)
from minislurm.cli.transport import run_command
from minislurm.errors import SlurmError
from minislurm.options.getopt import HasArg
from minislurm.priority.fairshare import ShareRow
from minislurm.priority.multifactor import MultifactorPriority
from minislurm.priority.report import SSHARE_FIELDS, format_sshare

PROG = "sshare"

SHORTS, LONGS = option_table("aA:ehlM:no:pPqUu:t:vVm", [
    ("accounts", HasArg.REQUIRED, "A"), ("all", HasArg.NO, "a"),
    ("helpformat", HasArg.NO, "e"), ("long", HasArg.NO, "l"), ("partition", HasArg.NO, "m"),
    ("cluster", HasArg.REQUIRED, "M"), ("clusters", HasArg.REQUIRED, "M"),
    ("noheader", HasArg.NO, "n"), ("format", HasArg.REQUIRED, "o"),
    ("parsable", HasArg.NO, "p"), ("parsable2", HasArg.NO, "P"),
    ("users", HasArg.REQUIRED, "u"), ("Users", HasArg.NO, "U"),
    ("verbose", HasArg.NO, "v"), ("version", HasArg.NO, "V"),
    ("help", HasArg.NO, "help"), ("usage", HasArg.NO, "help"),
])

#: ``_usage``: every line padded with blanks to 75 columns, as sshare.c prints it.
_USAGE_LINES = (
    'Usage:  sshare [OPTION]',
    '  Valid OPTIONs are:',
    '    -a or --all            list all users',
    '    -A or --accounts=      display specific accounts (comma separated list)',
    '    -e or --helpformat     Print a list of fields that can be specified',
    "                           with the '--format' option",
    '    -l or --long           include normalized usage in output',
    '    -m or --partition      print the partition part of the association',
    '    -M or --cluster=names  clusters to issue commands to.',
    '                           NOTE: SlurmDBD must be up.',
    '    -n or --noheader       omit header from output',
    '    -o or --format=        Comma separated list of fields (use',
    '                           "--helpformat" for a list of available fields).',
    "    -p or --parsable       '|' delimited output with a trailing '|'",
    "    -P or --parsable2      '|' delimited output without a trailing '|'",
    '    -u or --users=         display specific users (comma separated list)',
    '    -U or --Users          display only user information',
    '    -v or --verbose        display more information',
    '    -V or --version        display tool version number',
    '          --help           display this usage description',
    '          --usage          display this usage description',
)
USAGE = "".join(f"{ln:<75}\n" for ln in _USAGE_LINES) + " " * 75 + "\n\n"

#: ``--help`` and ``--usage`` both print the usage (getopt key ``help``); ``-V`` the version.
INFO = info_table(USAGE, USAGE)


@dataclass(frozen=True, slots=True)
class SshareOptions:
    """sshare's request and print flags."""

    all_users: bool = False
    users: tuple[str, ...] | None = None
    accounts: tuple[str, ...] | None = None
    users_only: bool = False
    long: bool = False
    noheader: bool = False
    parsable: bool = False
    parsable2: bool = False
    fields: tuple[str, ...] | None = None
    info: str | None = None


def help_format() -> str:
    """``_help_format_msg``: field names in 17 columns, four per line."""
    out = []
    for i, name in enumerate(SSHARE_FIELDS):
        if i & 3:
            out.append(" ")
        elif i:
            out.append("\n")
        out.append(f"{name:<17}")
    return "".join(out) + "\n"


def _field_names(text: str) -> tuple[str, ...]:
    """``-o``: names matched case-insensitively (``Invalid field requested``)."""
    names = []
    for item in (t.strip() for t in text.split(",") if t.strip()):
        name = item.partition("%")[0]
        match = next((f for f in SSHARE_FIELDS if f.lower().startswith(name.lower())), None)
        if match is None:
            raise SlurmError(f'{PROG}: error: Invalid field requested: "{name}"', 1)
        names.append(match)
    return tuple(names)


def parse_sshare(argv: Sequence[str]) -> SshareOptions:
    """Parse like sshare's ``main``."""
    opts, operands = parse_permuted(argv, SHORTS, LONGS, PROG)
    got = SshareOptions()
    fields: list[str] = []
    for o in opts:
        k, arg = o.key, o.arg or ""
        if k in INFO:
            return SshareOptions(info=INFO[k])
        if k == "e":
            return SshareOptions(info=help_format())
        if k == "a":
            got = replace(got, all_users=True)
        elif k == "A":
            got = replace(got, accounts=tuple(t for t in arg.split(",") if t))
        elif k in ("h", "n"):
            got = replace(got, noheader=True)
        elif k == "l":
            got = replace(got, long=True)
        elif k == "o":
            fields.append(arg)
        elif k == "p":
            got = replace(got, parsable=True)
        elif k == "P":
            got = replace(got, parsable2=True)
        elif k == "u":
            if arg == "-1":
                got = replace(got, all_users=True)
            else:
                got = replace(got, all_users=False)
                got = replace(got, users=tuple(t for t in arg.split(",") if t))
        elif k == "U":
            got = replace(got, users_only=True)
        elif k == "m":
            raise SlurmError(f"{PROG}: error: minislurm: associations have no partition part",
                             1)
    if fields:
        got = replace(got, fields=_field_names(",".join(fields)))
    if operands:
        raise SlurmError(f"{PROG}: error: Unknown arguments: {' '.join(operands)}", 1)
    return got


def select_rows(rows: Sequence[ShareRow], o: SshareOptions, user: str) -> list[ShareRow]:
    """The associations the request selects, in tree order (assoc_mgr_get_shares:
    ``-A`` keeps the associations of those accounts, ``-u`` the users' own)."""
    wanted = None if o.all_users else (o.users if o.users is not None else (user,))
    out = []
    for row in rows:
        if o.accounts is not None and row.account not in o.accounts:
            continue
        if row.user is not None and wanted is not None and row.user not in wanted:
            continue
        out.append(row)
    return out


def run(argv: Sequence[str], ctx: Context) -> int:
    """Run ``sshare argv`` in ``ctx``; returns the exit code."""
    o = parse_or_exit(ctx, PROG, lambda: parse_sshare(argv))
    if isinstance(o, int):
        return o
    controller = connect(ctx, unreachable("Couldn't get shares from controller"))
    if isinstance(controller, int):
        return controller
    plugin = controller.priority_plugin
    if not isinstance(plugin, MultifactorPriority):
        return fail(ctx, SlurmError(  # 22.05's sshare would print shares without usage
            f"{PROG}: error: minislurm: fair-share data need "
            "PriorityType=priority/multifactor", 1))
    rows = list(plugin.share_rows(int(controller.now)).values())
    chosen = select_rows(rows, o, ctx.user)
    cluster = controller.config.cluster_name or ""
    try:
        fair_tree = plugin.params.fair_tree
        text = format_sshare(chosen, o.long, fair_tree=fair_tree,
                             fields=o.fields, noheader=o.noheader, parsable=o.parsable,
                             parsable2=o.parsable2, users_only=o.users_only, cluster=cluster)
    except ValueError as exc:
        return fail(ctx, SlurmError(f"{PROG}: error: {exc}", 1))
    ctx.stdout.write(text)
    return 0


def main(argv: Sequence[str]) -> int:
    """``python -m minislurm sshare ...``."""
    return run_command(PROG, argv)
