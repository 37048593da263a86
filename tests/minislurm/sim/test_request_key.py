"""``simulate`` makes each distinct request once: ``job_options`` reads a workload job
only through ``request_key``, so a job differing in any other field asks the same, and
one differing in a key field may not."""

from __future__ import annotations

from dataclasses import fields, replace

from minislurm.conf import load_config
from minislurm.sim.simulate import job_options, request_key
from minislurm.sim.workload.generator import WorkloadJob

JOB = WorkloadJob(job_id=1, submit_time=100, user="alice", account="ml", partition="gpu",
                  kind="train", name="j1", nodes=2, gpus_per_node=4, cpus=16,
                  time_limit=60, run_time=300, exit_code=0, array_size=4)
OTHER = {"job_id": 2, "submit_time": 7, "user": "bob", "account": "cv", "partition": "cpu",
         "kind": "eval", "name": "j2", "nodes": 3, "gpus_per_node": 1, "cpus": 9,
         "time_limit": 5, "run_time": 9, "exit_code": 1, "array_size": None, "qos": "high",
         "limit_seconds": 240}


def test_job_options_read_a_job_only_through_its_key() -> None:
    config = load_config(None)
    assert set(OTHER) == {f.name for f in fields(WorkloadJob)}
    for name, value in OTHER.items():
        other = replace(JOB, **{name: value})
        for procs in (False, True):
            if request_key(other) == request_key(JOB):
                assert job_options(other, config, procs=procs) == job_options(
                    JOB, config, procs=procs)
    changed = {n for n, v in OTHER.items()
               if request_key(replace(JOB, **{n: v})) != request_key(JOB)}
    assert changed == {"account", "partition", "nodes", "gpus_per_node", "cpus",
                       "time_limit", "array_size"}
