"""A job's snapshots follow every change of what they are computed from (``ReqTRES``, the
cached plain snapshot), and never share a dict with a caller that may change it."""

from __future__ import annotations

from dataclasses import replace

from minislurm.common.billing import TresWeights, billable_tres, parse_tres_weights
from minislurm.ctld.job_mgr import Job
from minislurm.job import Allocation, NodeAlloc
from minislurm.states import JobState


def test_req_tres_follows_each_input_after_a_first_call() -> None:
    job = Job(1, "j", 0)
    job.num_cpus, job.mem_per_cpu = 4, 100
    assert job.tres_req() == {"cpu": 4, "mem": 400, "node": 1, "billing": 4}
    job.num_cpus = 6  # scontrol update NumCPUs=
    assert job.tres_req() == {"cpu": 6, "mem": 600, "node": 1, "billing": 6}
    job.min_memory_mb = 1000  # --mem wins over --mem-per-cpu
    assert job.tres_req()["mem"] == 1000
    job.request = replace(job.request, min_nodes=2)  # node= is the asked node count
    assert job.tres_req()["node"] == 2 and job.tres_req()["mem"] == 2000
    job.gpus_total = 3
    assert job.tres_req()["gres/gpu"] == 3
    job.billing_weights = parse_tres_weights("CPU=2.0", ("cpu", "mem", "node"))
    assert job.tres_req()["billing"] == 12


def test_req_tres_is_a_fresh_dict_each_call() -> None:
    job = Job(1, "j", 0)
    first = job.tres_req()
    first["cpu"] = 99
    assert job.tres_req()["cpu"] == 1
    assert job.snapshot(accounting=True).tres_req["cpu"] == 1


def test_an_unchanged_job_gives_the_same_plain_snapshot_from_the_first_call() -> None:
    """The cache key is taken after a build, once the build filled its own caches."""
    job = Job(1, "j", 0)
    job.state, job.start_time = JobState.RUNNING, 10
    job.allocation = Allocation((NodeAlloc("n1", 2, 100), NodeAlloc("n2", 2, 100)))
    first = job.snapshot()
    assert job.snapshot() is first
    assert (first.nodelist, first.tres_alloc["cpu"]) == ("n[1-2]", 4)
    job.comment = "changed"
    second = job.snapshot()
    assert second is not first and second.comment == "changed"


def test_a_record_built_slot_by_slot_is_the_dataclass_record() -> None:
    """`_new_record` skips ``JobRecord.__init__``: only right while the record computes
    nothing at construction (no ``__post_init__``, no field left out of ``__init__``)."""
    import dataclasses

    from minislurm.ctld import job_mgr
    from minislurm.job import JobRecord

    assert not hasattr(JobRecord, "__post_init__")
    assert all(f.init for f in dataclasses.fields(JobRecord))
    job = Job(1, "j", 0)
    job.state, job.start_time, job.end_time = JobState.NODE_FAIL, 10, 20
    job.allocation = Allocation((NodeAlloc("n1", 2, 100), NodeAlloc("n2", 2, 100)))
    names = (*job_mgr.SAME_FIELDS, *job_mgr._OTHER_FIELDS)
    assert sorted(names) == sorted(f.name for f in dataclasses.fields(JobRecord))
    for record in (job.snapshot(), job.snapshot(accounting=True)):
        fields = {f.name: getattr(record, f.name) for f in dataclasses.fields(JobRecord)}
        built = job_mgr._new_record(tuple(fields[name] for name in names))
        assert built == JobRecord(**fields) == record
        assert all(getattr(built, k) is v for k, v in fields.items())


def test_the_nodelist_follows_the_allocation() -> None:
    """The NodeList is cached per tuple of names (`job_mgr._nodelist`): a new
    allocation of other nodes shows its own."""
    job = Job(1, "j", 0)
    job.state, job.start_time = JobState.RUNNING, 10
    job.allocation = Allocation((NodeAlloc("n1", 2, 100), NodeAlloc("n2", 2, 100)))
    assert job.snapshot(accounting=True).nodelist == "n[1-2]"
    job.allocation = Allocation((NodeAlloc("n1", 2, 100), NodeAlloc("n3", 2, 100)))
    assert job.snapshot(accounting=True).nodelist == "n[1,3]"
    job.allocation = Allocation((NodeAlloc("n1", 2, 100), NodeAlloc("n2", 2, 100)))
    assert job.snapshot(accounting=True).nodelist == "n[1-2]"


def test_req_tres_follows_mem_per_cpu_and_a_new_request_after_a_first_call() -> None:
    """`Job.tres_req` is cached on its inputs: --mem-per-cpu and a request replaced by an
    equal one (scontrol update) both keep it right."""
    job = Job(1, "j", 0)
    job.num_cpus, job.mem_per_cpu = 4, 100
    assert job.tres_req()["mem"] == 400
    job.mem_per_cpu = 250
    assert job.tres_req()["mem"] == 1000
    job.request = replace(job.request)
    assert job.tres_req() == {"cpu": 4, "mem": 1000, "node": 1, "billing": 4}
    job.request = replace(job.request, min_nodes=3)
    assert job.tres_req()["node"] == 3


def _readable_tres(cpu: int, mem: int, node: int, gpus: int, weights: TresWeights | None
                   ) -> tuple[dict[str, int], float]:
    """The TRES counts and billing value as the rule states them, built anew (no cache)."""
    tres = {"cpu": cpu, "mem": mem, "node": node}
    if gpus:
        tres["gres/gpu"] = gpus
    billable = billable_tres(tres, weights)
    return {"cpu": cpu, "mem": mem, "node": node, "billing": int(billable),
            **({"gres/gpu": gpus} if gpus else {})}, billable


def test_tres_counts_shared_by_jobs_of_one_shape_follow_each_input() -> None:
    """`job_mgr._tres_counts` is cached on every value it reads (the counts and the
    ``TRESBillingWeights``): jobs of one shape share it, and a job whose weights or
    allocation change gets the counts of the new values, the same as computed anew."""
    from minislurm.ctld import job_mgr

    w2 = parse_tres_weights("CPU=2.0,GRES/gpu=4.0", ("cpu", "mem", "node", "gres/gpu"))
    w3 = parse_tres_weights("CPU=5.0", ("cpu", "mem", "node", "gres/gpu"))
    jobs = []
    for k in range(3):
        job = Job(k + 1, "j", 0)
        job.num_cpus, job.gpus_total, job.min_memory_mb = 8, 2, 1000
        job.state, job.start_time = JobState.RUNNING, 10
        job.allocation = Allocation((NodeAlloc("n1", 8, 1000, (("a100", 0), ("a100", 1))),))
        jobs.append(job)
    for weights in (None, w2, w3, None):
        for job in jobs:
            job.billing_weights = weights
            want, billable = _readable_tres(8, 1000, 1, 2, weights)
            assert job.tres_req() == want == job.tres_alloc()
            rec = job.snapshot(accounting=True)
            assert rec.tres_req == want == rec.tres_alloc
            assert list(rec.tres_alloc) == ["cpu", "mem", "node", "billing", "gres/gpu"]
            assert rec.billable_tres == billable
    assert [_readable_tres(8, 1000, 1, 2, w)[1] for w in (None, w2, w3)] == [8.0, 24.0, 40.0]
    job = jobs[0]
    job.allocation = Allocation((NodeAlloc("n1", 4, 500), NodeAlloc("n2", 4, 500)))
    assert job.tres_alloc() == _readable_tres(8, 1000, 2, 0, None)[0]
    job_mgr._tres_counts.cache_clear()  # differential: the same without the cache
    assert job.snapshot(accounting=True).tres_alloc == _readable_tres(8, 1000, 2, 0, None)[0]


def test_tres_counts_shared_dict_never_reaches_a_caller() -> None:
    """The dict `job_mgr._tres_counts` keeps is shared by every job of its shape: a
    caller changing the dict it got changes no other job's counts."""
    jobs = []
    for k in range(2):
        job = Job(k + 1, "j", 0)
        job.num_cpus = 4
        job.state, job.start_time = JobState.RUNNING, 10
        job.allocation = Allocation((NodeAlloc("n1", 4, 100),))
        jobs.append(job)
    jobs[0].tres_alloc()["cpu"] = 99
    jobs[0].tres_req()["cpu"] = 99
    jobs[0].snapshot(accounting=True).tres_alloc["cpu"] = 99
    jobs[0].snapshot(accounting=True).tres_req["cpu"] = 99
    for job in jobs:
        assert job.tres_alloc()["cpu"] == 4 == job.tres_req()["cpu"]
        assert job.snapshot(accounting=True).tres_alloc["cpu"] == 4
        assert job.snapshot(accounting=True).tres_req["cpu"] == 4
