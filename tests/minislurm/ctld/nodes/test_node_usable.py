"""``NodeManager.refresh_usable(i)`` (one node after its own change) against the full
sweep over every node: after any sequence of scontrol updates, failures and repairs,
the nodes accepting jobs are the same."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minislurm.conf import parse_config
from minislurm.ctld.node_mgr import NodeManager
from minislurm.ctld.state import _build_nodes
from minislurm.errors import SlurmError

CONF = """ClusterName=t
SlurmctldHost=localhost
NodeName=n[1-3] CPUs=4 RealMemory=1000
NodeName=n4 CPUs=4 RealMemory=1000 State=DRAIN
NodeName=n5 CPUs=4 RealMemory=1000 State=DOWN
PartitionName=p Nodes=n[1-5] Default=YES
"""


def _mgr() -> NodeManager:
    return _build_nodes(parse_config(CONF, "<t>"), 0)[4]


def _swept(mgr: NodeManager) -> np.ndarray:
    before = mgr.table.usable.copy()
    mgr.refresh_usable()
    after = mgr.table.usable.copy()
    mgr.table.usable[:] = before
    return after


def test_configured_states() -> None:
    assert _mgr().table.usable.tolist() == [True, True, True, False, False]


_OP = st.tuples(st.sampled_from(["DOWN", "DRAIN", "FAIL", "RESUME", "IDLE", "UNDRAIN",
                                 "fail", "repair"]), st.integers(0, 4))


@settings(max_examples=300, deadline=None)
@given(st.lists(_OP, max_size=25))
def test_one_node_refresh_is_the_full_sweep(ops: list[tuple[str, int]]) -> None:
    mgr = _mgr()
    for k, (op, i) in enumerate(ops):
        if op == "fail":
            mgr.fail(i, k)
        elif op == "repair":
            mgr.repair(i, k, 1)
        else:
            with contextlib.suppress(SlurmError):
                mgr.set_state(i, op, "why", "root", k)
        assert mgr.table.usable.tolist() == _swept(mgr).tolist()


@pytest.mark.parametrize("state", ["DOWN", "DRAIN", "FAIL"])
def test_a_node_taken_out_and_resumed(state: str) -> None:
    mgr = _mgr()
    mgr.set_state(1, state, "x", "root", 1)
    assert not mgr.table.usable[1]
    mgr.set_state(1, "RESUME", "", "root", 2)
    assert mgr.table.usable[1]


def test_flags_on_their_bits_are_the_flag_operators() -> None:
    """`node_mgr._with_bits` and `_accepts_jobs` work on the flags' integer value: every
    combination of flags gives what ``|``, ``& ~`` and ``&`` of the flags give."""
    from minislurm.ctld.node_mgr import _NOT_FOR_JOBS, _accepts_jobs, _with_bits
    from minislurm.states import NodeFlag

    mgr = _mgr()
    info = mgr.infos[0]
    singles = [f for f in NodeFlag if f.value]
    for k in range(1 << 7):
        flags = NodeFlag.NONE
        for bit, f in enumerate([*singles[:6], NodeFlag.NOT_RESPONDING]):
            if k >> bit & 1:
                flags |= f
        for f in singles:
            assert _with_bits(flags, add=f.value) is flags | f
            assert _with_bits(flags, clear=f.value) is flags & ~f
        for down in (False, True):
            info.flags, info.down = flags, down
            assert _accepts_jobs(info) is not (down or bool(flags & _NOT_FOR_JOBS))
