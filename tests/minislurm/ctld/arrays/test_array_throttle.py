"""Job arrays with a throttle (capture f3_array): ids, JobArrayTaskLimit, the last task."""

from __future__ import annotations

from ctld_helpers import ref_controller, sub

from minislurm.states import JobState, Reason


def test_array_throttle_and_ids_like_slurm() -> None:
    ctl = ref_controller()
    arr = sub(ctl, 4, name="arr", array="0-7%2")
    ctl.run_for(1)
    pending = [j for j in ctl.jobs(expand_arrays=True) if j.state is JobState.PENDING]
    assert [j.job_id_str for j in pending] == [f"{arr}_{i}" for i in range(2, 8)]
    assert {j.reason for j in pending} == {Reason.JOB_ARRAY_TASK_LIMIT}
    meta = ctl.job(arr)
    assert meta.job_id_str == f"{arr}_[2-7%2]"
    running = [j for j in ctl.jobs() if j.state is JobState.RUNNING]
    assert [(j.job_id, j.array_task_id) for j in running] == [(arr + 1, 0), (arr + 2, 1)]
    ctl.run()
    acct = {r.array_task_id: r.job_id for r in ctl.accounting() if r.array_job_id == arr}
    assert acct[7] == arr  # the LAST task reuses the array job id
    assert acct[0] == arr + 1 and acct[6] == arr + 7
    starts = sorted((r.start_time or 0) for r in ctl.accounting() if r.array_job_id == arr)
    assert starts[0] == starts[1] and starts[2] == starts[3] > starts[1]  # two at a time


def test_cancel_one_pending_task() -> None:
    ctl = ref_controller()
    arr = sub(ctl, 100, array="0-3%1")
    ctl.run_for(1)
    ctl.cancel(arr, task=2)
    ctl.run()
    states = {r.array_task_id: r.state for r in ctl.accounting() if r.array_job_id == arr}
    assert 2 not in states  # a pending index just leaves the array (22.05.8: no record)
    assert states[0] is states[1] is states[3] is JobState.COMPLETED


def test_dependency_on_a_whole_array() -> None:
    ctl = ref_controller()
    arr = sub(ctl, 10, array="0-3")
    after = sub(ctl, 10, dependency=f"afterok:{arr}")
    ctl.run()
    ends = [r.end_time or 0 for r in ctl.accounting() if r.array_job_id == arr]
    assert (ctl.job(after).start_time or 0) >= max(ends)
