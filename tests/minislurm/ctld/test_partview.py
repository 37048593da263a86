"""``PartView.size`` (the partition's node count, counted once) follows its mask,
also through ``dataclasses.replace`` (``scontrol update partition State=``)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from minislurm.ctld.submit import PartView


def test_size_is_the_member_count_and_follows_replace() -> None:
    view = PartView("p", np.array([True, False, True, True]), None, None, None, 1, "UP")
    assert view.size == 3
    assert not view.outside_nodes(3) and view.outside_nodes(4)  # above the partition's size
    down = replace(view, state="DOWN")
    assert down.size == 3 and down.state == "DOWN"
    other = replace(view, mask=np.array([True, False, False, False]))
    assert other.size == 1 and other.outside_nodes(2)
