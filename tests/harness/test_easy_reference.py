"""The textbook EASY reference (tests/easy_reference.py) on hand-made cases."""

from __future__ import annotations

from easy_reference import (
    RefJob,
    easy_schedule,
    mean_bounded_slowdown,
    mean_wait,
    shadow_and_extra,
)
from hypothesis import given, settings
from hypothesis import strategies as st


def starts(jobs: list[RefJob], procs: int) -> dict[int, int]:
    return {o.job.number: o.start for o in easy_schedule(jobs, procs)}


def test_fcfs_head_waits_for_processors() -> None:
    jobs = [RefJob(1, 0, 4, 10, 10), RefJob(2, 1, 2, 5, 5), RefJob(3, 2, 2, 5, 5)]
    assert starts(jobs, 4) == {1: 0, 2: 10, 3: 10}


def test_backfill_that_ends_by_the_shadow_time_starts_now() -> None:
    # job 1 holds 3 of 4 processors until 100: the head (job 2, 4 processors) is reserved
    # at 100 with no extra processor; job 3 (1 processor) ends at 2 + 98 = 100: backfilled
    jobs = [RefJob(1, 0, 3, 100, 100), RefJob(2, 1, 4, 10, 10), RefJob(3, 2, 1, 98, 98)]
    assert starts(jobs, 4) == {1: 0, 2: 100, 3: 2}
    # one second longer would delay the head: it waits for the head to end
    jobs[2] = RefJob(3, 2, 1, 99, 99)
    assert starts(jobs, 4) == {1: 0, 2: 100, 3: 110}


def test_backfill_on_extra_processors_may_run_past_the_shadow_time() -> None:
    # job 1: 2 of 4 until 100; head job 2 needs 3: shadow 100, extra 4 - 3 = 1
    jobs = [
        RefJob(1, 0, 2, 100, 100),
        RefJob(2, 1, 3, 50, 50),
        RefJob(3, 2, 1, 1000, 1000),  # uses the extra processor: starts now
        RefJob(4, 3, 1, 1000, 1000),  # fits now, but the extra is used up and 3+1000 > 100
    ]
    assert starts(jobs, 4) == {1: 0, 2: 100, 3: 2, 4: 150}


def test_a_long_job_that_fits_now_never_delays_the_head() -> None:
    jobs = [RefJob(1, 0, 2, 100, 100), RefJob(2, 1, 4, 10, 10), RefJob(3, 2, 2, 200, 200)]
    assert starts(jobs, 4) == {1: 0, 2: 100, 3: 110}


def test_reservations_use_requested_times_and_early_ends_start_the_head() -> None:
    # job 1 asks for 100 s and ends at 10: the head starts at 10, at the completion event
    jobs = [RefJob(1, 0, 4, 10, 100), RefJob(2, 1, 4, 10, 10), RefJob(3, 2, 1, 20, 20)]
    # job 3: shadow is 100 (requested end of job 1), 2 + 20 <= 100 but nothing is free
    assert starts(jobs, 4) == {1: 0, 2: 10, 3: 20}
    assert shadow_and_extra(2, 0, 4, [(100, 4)]) == (100, 0)
    assert shadow_and_extra(2, 1, 3, [(300, 2), (100, 1)]) == (300, 1)
    assert shadow_and_extra(2, 3, 3, []) == (2, 0)


def test_jobs_are_killed_at_their_requested_time() -> None:
    (o,) = easy_schedule([RefJob(1, 5, 1, 50, 20)], 1)
    assert (o.start, o.end) == (5, 25)


def test_completions_come_before_arrivals_at_the_same_second() -> None:
    jobs = [RefJob(1, 0, 4, 10, 10), RefJob(2, 10, 4, 5, 5)]
    assert starts(jobs, 4) == {1: 0, 2: 10}


def test_too_big_jobs_are_dropped_and_metrics_follow_the_definitions() -> None:
    jobs = [RefJob(1, 0, 2, 5, 5), RefJob(2, 0, 9, 5, 5), RefJob(3, 0, 2, 100, 100)]
    out = easy_schedule(jobs, 2)
    assert [(o.job.number, o.start, o.end) for o in out] == [(1, 0, 5), (3, 5, 105)]
    assert mean_wait(out) == 2.5
    # job 1: max(1, 5 / max(5, 10)) = 1; job 3: (5 + 100) / 100 = 1.05
    assert mean_bounded_slowdown(out) == (1 + 1.05) / 2


job = st.tuples(
    st.integers(0, 200), st.integers(1, 8), st.integers(1, 100), st.integers(0, 100)
)


@settings(max_examples=150, deadline=None)
@given(st.lists(job, min_size=1, max_size=25))
def test_capacity_holds_and_the_head_starts_as_soon_as_it_fits(
    raw: list[tuple[int, int, int, int]],
) -> None:
    jobs = [RefJob(n, t, s, r, r + extra) for n, (t, s, r, extra) in enumerate(raw, 1)]
    out = easy_schedule(jobs, 8)
    assert len(out) == len(jobs)
    times = sorted({o.start for o in out} | {o.end for o in out} | {j.submit for j in jobs})

    def free(t: int) -> int:
        return 8 - sum(o.job.size for o in out if o.start <= t < o.end)

    assert all(free(t) >= 0 for t in times)
    for o in out:
        assert o.start >= o.job.submit
        assert o.end - o.start == min(o.job.runtime, o.job.requested)
    # at every event while a job is the head of the FCFS queue (everything that
    # arrived before it has started), it does not fit, or it would have started then
    order = sorted(out, key=lambda o: (o.job.submit, o.job.number))
    for k, o in enumerate(order):
        for t in times:
            if o.job.submit <= t < o.start and all(p.start <= t for p in order[:k]):
                assert free(t) < o.job.size, (o, t)


def test_slurm_knobs_minute_limits_and_a_delayed_backfill_pass() -> None:
    # the 3-processor head is reserved at job 1's requested end; job 3 asks for 40 s
    jobs = [RefJob(1, 0, 3, 100, 100), RefJob(2, 1, 4, 10, 10), RefJob(3, 2, 1, 40, 40)]
    assert starts(jobs, 4) == {1: 0, 2: 100, 3: 2}
    # whole minutes: job 1 holds its processors until 120 in the plan, job 3 (60 s) still
    # ends by then; a 100 s job would have ended by the textbook's shadow (2 + 98 <= 100)
    # but not once the limits are minutes (2 + 120 > 120)
    out = easy_schedule(jobs, 4, limit_unit=60)
    assert {o.job.number: o.start for o in out} == {1: 0, 2: 100, 3: 2}
    jobs[2] = RefJob(3, 2, 1, 98, 98)
    assert starts(jobs, 4)[3] == 2
    assert {o.job.number: o.start for o in easy_schedule(jobs, 4, limit_unit=60)}[3] == 110
    # a pass one second after the arrival backfills job 3 at 6, not at 5
    jobs[2] = RefJob(3, 5, 1, 40, 40)
    assert starts(jobs, 4)[3] == 5
    delayed = easy_schedule(jobs, 4, backfill_delay=1)
    assert {o.job.number: o.start for o in delayed} == {1: 0, 2: 100, 3: 6}
    # but the head still starts at the completion itself
    jobs = [RefJob(1, 0, 4, 10, 10), RefJob(2, 1, 4, 10, 10)]
    assert {o.job.number: o.start for o in easy_schedule(jobs, 4, backfill_delay=1)} == {
        1: 0,
        2: 10,
    }
