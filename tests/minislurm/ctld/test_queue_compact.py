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


def test_a_full_sort_keys_each_job_by_its_own_partitions_tier() -> None:
    ctl = ref_controller("PartitionName=hi Nodes=n[1-4] PriorityTier=5 MaxTime=01:00:00 "
                         "State=UP\nPartitionName=lo Nodes=n[1-4] PriorityTier=2 "
                         "MaxTime=01:00:00 State=UP\n")
    queue = ctl.queue
    for i in range(30):
        sub(ctl, 600, name=f"j{i}", partition=("debug", "hi", "lo")[i % 3], nodes_min=4,
            nice=(i * 37) % 11, time_limit=20)
    for k in range(3):
        queue.resort()  # the sort a PriorityCalcPeriod pass asks for
        walked = list(queue.walk())
        assert walked == sorted(queue._pending.values(), key=queue.key)
        assert queue._keys == [queue.key(j) for j in queue._order]
        order = [j.partition for j in walked]
        assert order == sorted(order, key=("hi", "lo", "debug").index)  # tier 5, 2, 1
        assert len(set(order)) == 3 or k  # all three tiers wait at first
        ctl.run_for(700)
