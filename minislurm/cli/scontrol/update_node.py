"""``scontrol update NodeName=...`` (src/scontrol/update_node.c ``scontrol_update_node``)."""

from __future__ import annotations

from minislurm.cli.scontrol.session import (
    PROG,
    Session,
    require_operator,
    tag_is,
)
from minislurm.errors import SlurmError

#: update_node.c: the ``State=`` keywords, tried before the base state names.
NODE_STATES = ("NoResp", "CANCEL_REBOOT", "DRAIN", "FAIL", "FUTURE", "RESUME", "POWER_DOWN",
               "POWER_UP", "UNDRAIN")
NODE_BASE_STATES = ("UNKNOWN", "DOWN", "IDLE", "ALLOCATED", "ERROR", "MIXED", "FUTURE")
#: The node states the controller can apply (``Controller.update_node``).
_APPLIED_NODE_STATES = ("DOWN", "DRAIN", "FAIL", "RESUME", "IDLE", "UNDRAIN")


def _node_state(val: str) -> str | None:
    """update_node.c: ``State=`` by prefix (at least 3 letters), keywords first."""
    for name in (*NODE_STATES, *NODE_BASE_STATES):
        if tag_is(val, name, 3):
            return name.upper()
    return None


def update_node(s: Session, pairs: list[tuple[str, str]]) -> None:
    """``scontrol_update_node``: ``NodeName=`` + ``State=`` [+ ``Reason=``]."""
    names = reason = ""
    state = ""
    for tag, val in pairs:
        if tag_is(tag, "NodeName", 1):
            names = val
        elif tag_is(tag, "Reason", 1):
            reason = val.strip('"')
        elif tag_is(tag, "State", 1):
            parsed = _node_state(val)
            if parsed is None:
                s.error(f"Invalid input: {tag}={val}\nRequest aborted\nValid states are: "
                        "NoResp DRAIN FAIL FUTURE RESUME POWER_DOWN POWER_UP UNDRAIN\n"
                        "Not all states are valid given a node's prior state")
                return
            state = parsed
        else:
            s.error(f"Update of this parameter is not supported: {tag}={val}\nRequest aborted")
            return
    if state in ("DOWN", "DRAIN", "FAIL") and not reason:
        s.error("You must specify a reason when DOWNING or DRAINING a node. Request denied")
        return
    if not state and not reason:
        s.error("No changes specified")
        return
    if state and state not in _APPLIED_NODE_STATES:  # "": Reason= alone (update_node)
        s.error(f"{PROG}: error: minislurm: node state {state} is not modelled")
        return
    ctl = s.controller("slurm_update error")
    if not require_operator(s, ctl, "slurm_update error: "):
        return
    try:
        ctl.update_node(names, state, reason, user=s.ctx.user)
    except SlurmError as exc:
        s.error(exc.message)
