"""``scontrol update PartitionName=...`` (src/scontrol/update_part.c
``scontrol_update_part``)."""

from __future__ import annotations

from minislurm.cli.scontrol.session import (
    PROG,
    Session,
    require_operator,
    tag_is,
)
from minislurm.errors import SlurmError


def update_partition(s: Session, pairs: list[tuple[str, str]]) -> None:
    """``scontrol_update_part``: ``PartitionName=`` + ``State=UP|DOWN|DRAIN|INACTIVE``."""
    name = state = ""
    for tag, val in pairs:
        if tag_is(tag, "PartitionName", 3):
            name = val
        elif tag_is(tag, "State", 2):
            state = next((x for x in ("INACTIVE", "DOWN", "UP", "DRAIN")
                          if val and tag_is(val, x, 1)), "")
            if not state:
                s.error(f"{PROG}: error: Invalid input: {tag}={val}\n"
                        f"{PROG}: error: Acceptable State values are UP, DOWN, DRAIN and "
                        "INACTIVE")
                return
        else:
            s.error(f"{PROG}: error: minislurm: updating partition {tag} is not supported")
            return
    ctl = s.controller("slurm_update error")
    if not require_operator(s, ctl, "slurm_update error: "):
        return
    try:
        ctl.update_partition(name, state)
    except SlurmError as exc:
        s.error(exc.message)
