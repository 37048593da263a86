"""What scontrol's sources share (scontrol.h): its globals (`Session`), the
keyword matching (``xstrncasecmp``), the operator check, job id and ``tag=value``
parsing."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from minislurm.cli.common import Context
from minislurm.common.rpc import CONNECT_HINT
from minislurm.errors import ControllerUnavailable, Errno

if TYPE_CHECKING:
    from minislurm.ctld.controller import Controller


PROG = "scontrol"
INVALID_JOB_ID = Errno.ESLURM_INVALID_JOB_ID


def tag_is(tag: str, name: str, minimum: int) -> bool:
    """``xstrncasecmp(tag, name, MAX(strlen(tag), minimum)) == 0``."""
    n = max(len(tag), minimum)
    return tag.lower()[:n] == name.lower()[:n] and (len(tag) >= minimum or len(tag) == len(name))


@dataclass
class Session:
    """scontrol's globals: flags, exit code, where to print, the controller."""

    ctx: Context
    oneliner: bool = False
    details: bool = False
    quiet: bool = False
    exit_code: int = 0

    def error(self, text: str, code: int = 1) -> None:
        """Print ``text`` to stderr (not with ``-Q``) and remember the failure."""
        self.exit_code = code or self.exit_code
        if not self.quiet:
            self.ctx.err(text)

    def controller(self, down: str) -> Controller:
        """The controller, or `ControllerUnavailable` worded ``down: Unable to contact...``."""
        try:
            return self.ctx.controller()
        except ControllerUnavailable:
            raise ControllerUnavailable(
                f"{down}: {Errno.SLURMCTLD_COMMUNICATIONS_CONNECTION_ERROR}\n{CONNECT_HINT}",
                1) from None


def require_operator(s: Session, ctl: Controller, *prefixes: str) -> bool:
    """slurmctld's ``validate_super_user`` (`minislurm.ctld.auth`): False after printing
    ``<prefix>Invalid user id`` once per prefix (exit 1) when the caller may not."""
    if ctl.is_operator(s.ctx.uid):
        return True
    for prefix in prefixes:
        s.error(prefix + Errno.ESLURM_USER_ID_MISSING)
    return False


def split_job_id(text: str) -> tuple[int, int | None] | None:
    head, _, task = text.partition("_")
    if not head.isdigit() or (task and not task.isdigit()):
        return None
    return int(head), int(task) if task else None


def pairs_of(s: Session, args: Sequence[str]) -> list[tuple[str, str]] | None:
    """``tag=value`` arguments; anything else is ``Invalid input`` (request aborted)."""
    out = []
    for arg in args:
        tag, eq, val = arg.partition("=")
        if not eq:
            s.error(f"Invalid input: {arg}\nRequest aborted")
            return None
        out.append((tag, val))
    return out
