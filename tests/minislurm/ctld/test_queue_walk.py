"""A walk of the job queue sees the order as it was when it began, and is counted while
it is alive (``JobQueue.readers``): a job queued meanwhile goes into a new list.

The walk is a generator started by ``JobQueue.walk``; it stops counting when it is
exhausted, closed or collected, whether or not the caller took a job from it.
"""

from __future__ import annotations

import gc

from ctld_helpers import ref_controller, sub


def test_a_walk_keeps_its_list_and_is_counted_until_it_ends() -> None:
    ctl = ref_controller()
    queue = ctl.queue
    for i in range(8):
        sub(ctl, 600, name=f"j{i}", nodes_min=4, exclusive="exclusive", time_limit=20)
    ctl.run_for(0)
    before = sorted(queue._pending.values(), key=queue.key)
    assert len(before) >= 3  # the first jobs run, the others wait
    walk = queue.walk()
    assert queue.readers == 1  # counted from the call, before the first job
    first = next(walk)
    sub(ctl, 600, name="late", nodes_min=4, exclusive="exclusive", time_limit=20,
        nice=-100)  # heads the queue
    assert [first, *walk] == before  # the list as it was when the walk began
    assert queue.readers == 0  # exhausted
    walked = list(queue.walk())
    assert walked[0].name == "late"
    assert queue.readers == 0

    untouched = queue.walk()  # never advanced
    half = queue.walk()
    next(half)
    assert queue.readers == 2
    del untouched, half
    gc.collect()
    assert queue.readers == 0  # collected

    closed = queue.walk()
    closed.close()  # type: ignore[attr-defined]
    assert queue.readers == 0
