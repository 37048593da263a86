"""Workloads for experiments: a seeded AI-cluster generator and the Standard Workload
Format (SWF) of the Parallel Workloads Archive."""

from __future__ import annotations

from minislurm.sim.workload.generator import (
    JobKind,
    Member,
    WorkloadJob,
    WorkloadSpec,
    default_kinds,
    generate,
)
from minislurm.sim.workload.swf import (
    SWFFormatError,
    SWFRecord,
    SWFWorkload,
    format_swf,
    from_job_records,
    from_workload,
    parse_swf,
    read_swf,
    to_workload,
    write_swf,
)

__all__ = [
    "JobKind",
    "Member",
    "SWFFormatError",
    "SWFRecord",
    "SWFWorkload",
    "WorkloadJob",
    "WorkloadSpec",
    "default_kinds",
    "format_swf",
    "from_job_records",
    "from_workload",
    "generate",
    "parse_swf",
    "read_swf",
    "to_workload",
    "write_swf",
]
