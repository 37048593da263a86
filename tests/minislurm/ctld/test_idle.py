"""A controller whose pending jobs can never start without an outside change stops
ticking, so ``env.run()`` returns (Slurm's own clock would tick forever); an outside
change (a user or an admin) wakes it.
"""

from __future__ import annotations

from ctld_helpers import ref_controller, sub

from minislurm.states import JobState, Reason

MULTIFACTOR = (
    "PriorityType=priority/multifactor\nPriorityWeightAge=1000\n"
    "AccountingStorageType=accounting_storage/slurmdbd\n"
)


def test_a_job_that_can_never_start_lets_the_clock_stop() -> None:
    ctl = ref_controller(MULTIFACTOR)
    done = sub(ctl, 30)
    never = sub(ctl, 10, partition="short", time_limit=10)  # over MaxTime, EnforcePartLimits=NO
    ctl.run()  # returns: nothing can change without a user or an admin
    assert ctl.job(done).state is JobState.COMPLETED
    assert ctl.job(never).state is JobState.PENDING
    assert ctl.job(never).reason is Reason.PARTITION_TIME_LIMIT
    assert ctl.idle


def test_idle_is_false_while_a_job_runs_or_waits_for_its_begin_time() -> None:
    ctl = ref_controller(MULTIFACTOR)
    assert ctl.idle
    sub(ctl, 100)
    ctl.run_for(1)
    assert not ctl.idle  # a job runs
    ctl.run_for(200)
    assert ctl.idle
    later = sub(ctl, 10, begin=ctl.now + 3600)
    ctl.run_for(10)
    assert not ctl.idle  # its BeginTime will come
    ctl.run()
    assert ctl.job(later).state is JobState.COMPLETED
    assert ctl.idle


def test_an_outside_change_wakes_an_idle_controller() -> None:
    ctl = ref_controller(MULTIFACTOR)
    never = sub(ctl, 10, partition="short", time_limit=10)
    ctl.run()
    assert ctl.idle and ctl.job(never).state is JobState.PENDING
    ctl.update_partition("short", "DOWN")
    assert not ctl.idle  # a scheduler pass is due
    ctl.run()
    assert ctl.idle
