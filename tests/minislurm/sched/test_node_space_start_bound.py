"""``NodeSpaceMap.start_bound`` against its rule, and as the bound it promises.

The rule: in the map of releases only (before any reservation), each allowed node has
a first slot from which one share of the request fits (resources only come back
there, so it fits from then on); ``horizon`` for a node where it never fits inside
the window.  The bound is the ``count``-th smallest of those starts (``horizon`` when
fewer than ``count`` nodes are allowed, ``now`` for no node); the map reads each node's
first fit off its kept release events, here it is read off the map's slots.
Reservations made after the map was built do not change it, and no reservation of
``count`` nodes found by ``earliest`` then starts before it.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from test_node_space_starts_now import WINDOW, Case, _map, _mostly, _table, cases, requests

from minislurm.sched.node_space import NodeSpaceMap, fit_cells, fit_key
from minislurm.select.request import ResourceRequest
from minislurm.select.table import BoolArray


def _rule(space: NodeSpaceMap, req: ResourceRequest, allowed: BoolArray, count: int) -> int:
    """The count-th smallest first-fit start of the allowed nodes, off the slots."""
    if count <= 0:
        return space.now
    fit = fit_cells(space.table, fit_key(req), space.cpu, space.mem, space.gpu, slice(None))
    firsts = []
    for node in np.flatnonzero(allowed).tolist():
        rows = np.flatnonzero(fit[:, node])
        firsts.append(space.times[int(rows[0])] if len(rows) else space.horizon)
    if len(firsts) < count:
        return space.horizon
    return sorted(firsts)[count - 1]


@settings(max_examples=300, deadline=None)
@given(cases(), requests, st.data(), st.integers(0, 12),
       st.sampled_from([1, 60, 600, 2000, WINDOW]))
def test_start_bound_is_the_count_th_first_fit(
        case: Case, req: ResourceRequest, data: st.DataObject, count: int,
        duration: int) -> None:  # fmt: skip
    table, releases = _table(case)
    n = len(table)
    allowed = np.array(data.draw(st.lists(_mostly(True), min_size=n, max_size=n)),
                       dtype=np.bool_)
    released = _map(replace(case, reserved=()), table, releases)  # releases only
    want = _rule(released, req, allowed, count)
    assert released.start_bound(req, allowed, count) == want
    space = _map(case, table, releases)  # the same releases, then reservations
    assert space.start_bound(req, allowed, count) == want
    found = space.earliest(req, allowed, count, duration) if count else None
    if found is not None:
        assert found[0] >= want
