"""A job's fields have one definition: ``JobRecord``; the snapshot copies or derives each,
and a new ``Job`` starts from the record's defaults."""

from __future__ import annotations

import dataclasses

from minislurm.ctld.job_mgr import (
    DERIVED_FIELDS,
    KEPT_FIELDS,
    RECORD_DEFAULTS,
    SAME_FIELDS,
    UNMODELLED_FIELDS,
    Job,
)
from minislurm.job import JobRecord, StepRecord
from minislurm.states import JobState


def test_every_record_field_is_copied_derived_or_unmodelled_exactly_once() -> None:
    names = [f.name for f in dataclasses.fields(JobRecord)]
    groups = (set(SAME_FIELDS), DERIVED_FIELDS, UNMODELLED_FIELDS)
    for name in names:
        assert sum(name in g for g in groups) == 1, name
    assert set().union(*groups) == set(names)


def test_a_new_job_starts_with_the_records_defaults() -> None:
    job = Job(7, "j", 100)
    checked = 0
    for f in dataclasses.fields(JobRecord):
        if f.name not in KEPT_FIELDS or f.default is dataclasses.MISSING:
            continue
        assert getattr(job, f.name) == f.default, f.name
        checked += 1
    assert checked == len(RECORD_DEFAULTS) > 40
    # a default's value is not restated in Job.__init__: change the mapping, the job follows
    assert set(RECORD_DEFAULTS) <= set(vars(job))


def test_the_record_defaults_are_plain_attributes_of_a_job() -> None:
    """Copied into the instance's ``__dict__``, so none may be a property or method of
    ``Job`` (a property would hide the copied value, a method would be shadowed)."""
    for name in RECORD_DEFAULTS:
        assert not hasattr(Job, name), name


def test_jobs_declared_field_types_are_the_records() -> None:
    """The annotations that declare the kept fields to mypy say what ``JobRecord`` says."""
    record = JobRecord.__annotations__
    declared = Job.__annotations__
    assert set(declared) <= set(KEPT_FIELDS)
    for name, kind in declared.items():
        assert kind == record[name], name


def test_the_snapshot_copies_the_same_fields() -> None:
    job = Job(7, "j", 100)
    job.comment, job.std_out, job.exit_code = "note", "/tmp/o", 3
    rec = job.snapshot()
    assert all(getattr(rec, n) == getattr(job, n) for n in SAME_FIELDS)
    assert (rec.comment, rec.std_out, rec.exit_code) == ("note", "/tmp/o", 3)


def test_two_jobs_do_not_share_mutable_state() -> None:
    a, b = Job(1, "a", 0), Job(2, "b", 0)
    a.steps.append(StepRecord("batch", "batch", JobState.RUNNING, "n1", 1, 1, 1, 0, None))
    a.array_pending.append(3)
    assert b.steps == [] and b.array_pending == []
