"""``--dependency`` specifications (sbatch(1) of Slurm 22.05)."""

from __future__ import annotations

import pytest

from minislurm.dependency import Dependency, DependencySpec, parse_dependency
from minislurm.errors import SubmitError


def test_each_kind() -> None:
    for kind in ("after", "afterany", "afterok", "afternotok", "aftercorr"):
        assert parse_dependency(f"{kind}:12") == DependencySpec((Dependency(kind, (12,)),))
    assert parse_dependency("singleton") == DependencySpec((Dependency("singleton"),))


def test_several_jobs_and_conditions() -> None:
    spec = parse_dependency("afterok:1:2,afterany:3")
    assert spec.items == (Dependency("afterok", (1,)), Dependency("afterok", (2,)),
                          Dependency("afterany", (3,)))
    assert not spec.any_of
    either = parse_dependency("afterok:1?afternotok:2")
    assert either.any_of and [d.kind for d in either.items] == ["afterok", "afternotok"]


def test_after_with_a_delay_and_array_tasks() -> None:
    """A delay carries over to the later ids of its list (22.05.8: ``afterok:J+5:K``
    shows ``afterok:J+5(unfulfilled),afterok:K+5(unfulfilled)``)."""
    spec = parse_dependency("after:5+10:6")
    assert spec.items == (Dependency("after", (5,), None, 10), Dependency("after", (6,), None, 10))
    tasks = parse_dependency("afterok:108_3:108_*")
    assert [d.array_task_id for d in tasks.items] == [3, -1]
    assert str(tasks) == "afterok:108_3,afterok:108_*"


def test_bare_job_ids_mean_afterany() -> None:
    """Comma separated only: ``12:13`` is refused by 22.05.8 (a ``:`` anywhere makes
    slurmctld look for a type)."""
    assert parse_dependency("12,13").items == (Dependency("afterany", (12,)),
                                               Dependency("afterany", (13,)))
    with pytest.raises(SubmitError):
        parse_dependency("12:13")


def test_case_of_the_kind_does_not_matter() -> None:
    assert parse_dependency("AfterOK:4").items[0].kind == "afterok"


def test_a_question_mark_anywhere_makes_it_any_of() -> None:
    """22.05.8 accepts ``afterok:J,afterany:K?after:J`` and lists it joined by ``?``."""
    spec = parse_dependency("afterok:1,afterany:2?afterok:3")
    assert spec.any_of and str(spec) == "afterok:1?afterany:2?afterok:3"


@pytest.mark.parametrize("text", ["foo:1", "afterok", "afterok:", "afterok:x", "afterok:1,",
                                  "", "afterok:0", "singleton:1", "afterok:1+x", "1:2",
                                  "1,afterok:2", "after:1+0", "afterok:4294967296"])
def test_job_dependency_problem(text: str) -> None:
    """Capture b_sbatch_errors/34: ``--dependency=foo:1`` -> Job dependency problem."""
    with pytest.raises(SubmitError) as e:
        parse_dependency(text)
    assert e.value.message == "Job dependency problem"
