"""A job's fields have one definition: ``JobRecord``; the snapshot copies or derives each."""

from __future__ import annotations

import dataclasses

from minislurm.ctld.job_mgr import DERIVED_FIELDS, SAME_FIELDS, UNMODELLED_FIELDS, Job
from minislurm.job import JobRecord


def test_every_record_field_is_copied_derived_or_unmodelled_exactly_once() -> None:
    names = [f.name for f in dataclasses.fields(JobRecord)]
    groups = (set(SAME_FIELDS), DERIVED_FIELDS, UNMODELLED_FIELDS)
    for name in names:
        assert sum(name in g for g in groups) == 1, name
    assert set().union(*groups) == set(names)


def test_a_new_job_starts_with_the_records_defaults() -> None:
    job = Job(7, "j", 100)
    for f in dataclasses.fields(JobRecord):
        if f.name not in SAME_FIELDS or f.default is dataclasses.MISSING:
            continue
        assert getattr(job, f.name) == f.default, f.name


def test_the_snapshot_copies_the_same_fields() -> None:
    job = Job(7, "j", 100)
    job.comment, job.std_out, job.exit_code = "note", "/tmp/o", 3
    rec = job.snapshot()
    assert all(getattr(rec, n) == getattr(job, n) for n in SAME_FIELDS)
    assert (rec.comment, rec.std_out, rec.exit_code) == ("note", "/tmp/o", 3)
