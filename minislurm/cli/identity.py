"""Who runs a command: this process's user and group (``getuid``/``getpwuid``).

Imports only C modules: the forwarded command's quick path (`minislurm.cli.transport`)
uses it before anything else is loaded, and `minislurm.cli.common.Context.from_process`
too (so neither imports the other).
"""

from __future__ import annotations

import os


def process_identity() -> tuple[str, int, str, int]:
    """This process's user and group, by name and number (as `Context.from_process`)."""
    import grp
    import pwd

    uid, gid = os.getuid(), os.getgid()
    try:
        user = pwd.getpwuid(uid).pw_name
    except KeyError:
        user = str(uid)
    try:
        group = grp.getgrgid(gid).gr_name
    except KeyError:
        group = str(gid)
    return user, uid, group, gid
