"""The job queue drops the entries of jobs that left it before a walk, keeping the order.

Every scheduler pass walks the whole order list (``JobQueue.walk``), so the entries of
started jobs must not pile up between full sorts: once they are more than a quarter
of the pending jobs (plus 8), the walk first compacts the list.  The walk still
yields exactly the pending jobs in ``sort_job_queue2``'s order.
"""

from __future__ import annotations

from ctld_helpers import ref_controller, sub


def test_walk_compacts_and_keeps_the_order() -> None:
    ctl = ref_controller()
    queue = ctl.queue
    for i in range(60):
        sub(ctl, 30 + 7 * (i % 5), name=f"j{i}", nice=(i * 37) % 11, time_limit=5)
    longest = 0
    for _ in range(40):
        ctl.run_for(13)
        pending = list(queue._pending.values())
        walked = list(queue.walk())
        assert walked == sorted(pending, key=queue.key)
        assert len(queue._order) <= len(pending) + len(pending) // 4 + 8
        assert queue._keys == [queue.key(j) for j in queue._order]
        longest = max(longest, len(pending))
    assert longest > 20 and not queue._pending  # a queue formed, and drained
