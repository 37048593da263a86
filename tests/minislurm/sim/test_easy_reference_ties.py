"""The textbook EASY of tests/easy_reference.py when several jobs end at the shadow time.

The extra processors are all those free at the shadow time (Mu'alem and Feitelson
2001), so every running job that ends then counts, not only the ones needed to cover
the head.  Before, only those were counted, and ``simulate --procs 256 --scheduler
easy`` (whose node-space map frees every node of that second) backfilled a few jobs
the reference held back: 1,550 / 1,010 of 10,000 Lublin starts differed on seeds 1 / 2.
(Its other hand-made cases are in tests/harness/test_easy_reference.py.)
"""

from __future__ import annotations

from easy_reference import RefJob, easy_schedule, shadow_and_extra


def test_every_job_ending_at_the_shadow_time_frees_extra_processors() -> None:
    # 3 free, the head needs 5: the first job ending at 100 covers it, the second
    # (also at 100) makes 2 extra processors
    assert shadow_and_extra(0, 3, 5, [(100, 2), (100, 2)]) == (100, 2)
    assert shadow_and_extra(0, 3, 5, [(100, 2), (101, 2)]) == (100, 0)


def test_a_long_job_backfills_on_the_extra_of_a_tie() -> None:
    # 7 processors; jobs 1 and 2 hold 2 each until 100; head job 3 needs 5 (shadow 100,
    # extra 2); job 4 (2 processors, 1,000 s) uses the extra: it starts at once
    jobs = [RefJob(1, 0, 2, 100, 100), RefJob(2, 0, 2, 100, 100),
            RefJob(3, 1, 5, 10, 10), RefJob(4, 2, 2, 1000, 1000)]  # fmt: skip
    assert {o.job.number: o.start for o in easy_schedule(jobs, 7)} == {1: 0, 2: 0, 3: 100, 4: 2}
