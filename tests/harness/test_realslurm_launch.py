"""The model of slurmstepd's buffered log writes (tests/realslurm/launch.py)."""

from __future__ import annotations

import pytest
from realslurm.launch import LOG_RING, child_log_writes, two_children_streams

LINE = (
    "slurmstepd-n1: error: couldn't chdir to `/nonexistent': No such file or directory: "
    "going to /tmp instead\n"
)


def test_a_child_cuts_its_line_at_the_end_of_the_ring() -> None:
    assert len(LINE) == 105
    assert child_log_writes(LINE, 105) == ("slurmstepd-n1: error: co", LINE[24:])
    assert child_log_writes(LINE, 0) == (LINE,)
    assert child_log_writes(LINE, LOG_RING - len(LINE)) == (LINE,)
    assert child_log_writes(LINE, LOG_RING + 105) == child_log_writes(LINE, 105)


def test_a_line_the_ring_cannot_hold_is_refused() -> None:
    with pytest.raises(ValueError, match="grow"):
        child_log_writes("x" * LOG_RING, 0)


def test_two_children_give_the_whole_lines_or_the_ci_failure() -> None:
    """Six orders of two children's two pieces each; the pieces are equal, so two
    streams. The second is what real Slurm printed in CI, and here under load (3 runs
    of 150)."""
    streams = two_children_streams(LINE, LINE)
    cut = "slurmstepd-n1: error: co"
    assert streams == {LINE * 3, LINE + cut + cut + LINE[24:] * 2}
    lines = sorted((LINE + cut + cut + LINE[24:] * 2).splitlines())
    assert lines == sorted([LINE[:-1], cut + LINE[:-1], LINE[24:-1]])


def test_the_parents_line_sets_where_each_child_cuts() -> None:
    """Both children inherit the ring as slurmstepd left it, so both cut at one place."""
    parent = "p" * 120 + "\n"
    child = "a" * 20 + "\n"
    assert child_log_writes(child, len(parent)) == ("a" * 8, "a" * 12 + "\n")
    assert two_children_streams(parent, child) == {
        parent + child * 2,
        parent + "a" * 16 + ("a" * 12 + "\n") * 2,
    }
