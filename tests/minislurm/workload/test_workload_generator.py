"""The seeded AI-cluster workload generator."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from functools import cache

import pytest

from minislurm.sim.workload import (
    JobKind,
    Member,
    WorkloadJob,
    WorkloadSpec,
    default_kinds,
    generate,
)
from minislurm.sim.workload.generator import DEFAULT_START, total_gpu_hours


@cache
def _week(seed: int) -> tuple[WorkloadJob, ...]:
    return tuple(generate(WorkloadSpec(seed=seed, days=7)))


def week(seed: int = 7) -> list[WorkloadJob]:
    return list(_week(seed))


def test_same_seed_same_jobs_and_another_seed_others() -> None:
    assert week(7) == week(7)
    assert week(7) != week(8)


def test_jobs_come_in_submission_order_with_ids_from_one() -> None:
    jobs = week()
    assert [j.job_id for j in jobs] == list(range(1, len(jobs) + 1))
    times = [j.submit_time for j in jobs]
    assert times == sorted(times)
    assert times[0] >= DEFAULT_START and times[-1] < DEFAULT_START + 7 * 86400


def test_the_mix_has_all_four_kinds_in_plausible_numbers() -> None:
    counts = Counter(j.kind for j in week())
    # per day: 3 train, 40 eval, 25 debug, 2 sweeps (Poisson, thinned by the day cycle)
    assert 7 <= counts["train"] <= 40
    assert 150 <= counts["eval"] <= 400
    assert 90 <= counts["debug"] <= 260
    assert 3 <= counts["sweep"] <= 30


def test_each_kind_has_its_shape() -> None:
    jobs = week()
    train = [j for j in jobs if j.kind == "train"]
    assert all(j.nodes >= 2 and j.gpus_per_node == 8 for j in train)
    assert all(24 * 60 <= j.time_limit <= 3 * 24 * 60 for j in train)
    assert any(j.times_out for j in train) and any(j.exit_code == 1 for j in train)
    evals = [j for j in jobs if j.kind == "eval"]
    assert all(j.nodes == 1 and j.time_limit <= 60 and not j.times_out for j in evals)
    debug = [j for j in jobs if j.kind == "debug"]
    assert {j.partition for j in debug} == {"debug"} and all(j.gpus <= 2 for j in debug)
    sweeps = [j for j in jobs if j.kind == "sweep"]
    assert all(j.array_size is not None and 4 <= j.array_size <= 32 for j in sweeps)
    assert all(j.array_size is None for j in jobs if j.kind != "sweep")


def test_run_times_respect_the_declared_outcome() -> None:
    for j in week():
        assert j.run_time >= 1
        if j.exit_code == 1:
            assert not j.times_out
        assert j.cpus == j.nodes * max(1, j.gpus_per_node) * (8 if j.kind != "debug" else 4)


def test_training_fits_the_cluster_size() -> None:
    kinds = default_kinds(max_nodes=2, gpus_per_node=4)
    jobs = list(generate(WorkloadSpec(seed=1, days=5, kinds=kinds)))
    assert {j.nodes for j in jobs if j.kind == "train"} == {2}
    assert max(j.gpus_per_node for j in jobs) == 4


def test_more_submissions_by_day_than_by_night() -> None:
    jobs = list(generate(WorkloadSpec(seed=3, days=20, diurnal=0.9)))
    hours = Counter(((j.submit_time % 86400) // 3600) for j in jobs)
    assert sum(hours[h] for h in range(11, 17)) > 2 * sum(hours[h] for h in range(23, 24))


def test_members_and_custom_kinds() -> None:
    only = JobKind("tiny", 100.0, "cpu", (1,), (0,), 2, (5, 5), (0.5, 0.5))
    spec = WorkloadSpec(seed=0, days=1, kinds=(only,), members=(Member("zoe", "lab"),))
    jobs = list(generate(spec))
    assert jobs and {(j.user, j.account, j.partition, j.cpus) for j in jobs} == {
        ("zoe", "lab", "cpu", 2)
    }
    assert all(j.run_time == 150 and j.time_limit == 5 for j in jobs)
    assert total_gpu_hours(jobs) == 0.0


def test_gpu_hours_count_array_tasks_and_cap_at_the_limit() -> None:
    j = next(iter(generate(WorkloadSpec(seed=0))))
    j2 = replace(j, nodes=2, gpus_per_node=4, run_time=7200, time_limit=60, array_size=3)
    assert total_gpu_hours([j2]) == 8 * 3 * 1.0


def test_empty_members_are_refused() -> None:
    with pytest.raises(ValueError, match="member"):
        list(generate(WorkloadSpec(members=())))
