"""squeue at 10,000 jobs: unchanged jobs reuse their snapshot and their line.

`Job.snapshot` returns the same record while nothing of the job changed, and
`format_squeue` keeps each pending job's line per format (a started job's line is
remade: its TIME moves with the clock). These tests pin what the caches assume.
"""

from __future__ import annotations

import pytest
from ctld_helpers import ref_controller, sub

from minislurm.cli.format import squeue as fmt
from minislurm.ctld import Controller
from minislurm.states import JobState


def _queue() -> tuple[Controller, int, list[int], int]:
    ctl = ref_controller()
    # the first job fills the cluster: the others pend
    running = sub(ctl, 600, nodes_min=4, nodes_max=4, exclusive="exclusive")
    pending = [sub(ctl, 60, name=f"p{i}") for i in range(3)]
    held = sub(ctl, 60, name="held")
    ctl.hold(held)
    ctl.run_for(5)
    return ctl, running, pending, held


def test_snapshot_is_reused_until_the_job_changes() -> None:
    ctl, _running, pending, held = _queue()
    job = ctl._jobs[pending[0]]
    first = job.snapshot()
    assert job.snapshot() is first
    job.nice = 100  # any attribute
    second = job.snapshot()
    assert second is not first and second.nice == 100
    ctl.release(held)
    assert ctl._jobs[held].snapshot().hold is False


@pytest.mark.parametrize("letter", sorted(fmt._LETTERS))
def test_pending_fields_do_not_depend_on_the_clock(letter: str) -> None:
    """The line cache keeps a pending job's line across calls: no field of a pending
    job may change with ``now`` alone."""
    ctl, _running, pending, held = _queue()
    _title, value = fmt._LETTERS[letter]
    for jid in (*pending, held):
        rec = ctl.job(jid)
        assert rec.state is JobState.PENDING
        assert value(rec, ctl.now) == value(rec, ctl.now + 98765)


def test_cached_lines_equal_fresh_ones_and_follow_changes() -> None:
    ctl, running, pending, _held = _queue()
    fmt._LINE_CACHE.clear()
    first = fmt.format_squeue(ctl.jobs(), now=ctl.now)
    again = fmt.format_squeue(ctl.jobs(), now=ctl.now)
    fmt._LINE_CACHE.clear()
    assert again == first == fmt.format_squeue(ctl.jobs(), now=ctl.now)
    ctl.run_for(125)  # the running job's TIME moves; the pending lines stay
    later = fmt.format_squeue(ctl.jobs(), now=ctl.now)
    assert later != first
    fmt._LINE_CACHE.clear()
    assert later == fmt.format_squeue(ctl.jobs(), now=ctl.now)
    ctl.cancel(pending[1])
    after = fmt.format_squeue(ctl.jobs(include_done=False), now=ctl.now)
    assert f"{pending[1]} " not in after.replace(" ", "  ")
    fmt._LINE_CACHE.clear()
    assert after == fmt.format_squeue(ctl.jobs(include_done=False), now=ctl.now)
    assert running
