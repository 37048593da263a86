"""``check_request`` keeps a request's outcome per node table: it gives what the checks
(``check_job_request``) give, raises their errors again, and does not serve an entry
to a new partition view (``scontrol update``) or a new node table."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np
import pytest

from minislurm.ctld import submit
from minislurm.ctld.submit import Checked, PartView, check_job_request, check_request
from minislurm.errors import SubmitError
from minislurm.options import JobOptions
from minislurm.select.table import NodeShape, NodeTable
from minislurm.states import Reason


def _table() -> NodeTable:
    return NodeTable([NodeShape(f"n{i}", 4, 8000, (("a100", 2),) if i < 2 else ())
                      for i in range(1, 5)])


REQUESTS = [
    JobOptions(),
    JobOptions(nodes_min=2, nodes_max=2, ntasks_per_node=1, time_limit=30,
               time_limit_set=True),
    JobOptions(ntasks=6, cpus_per_task=1),
    JobOptions(nodes_min=1, nodes_max=1, gres="gpu:a100:2", mem_mb=1000),
    JobOptions(nodes_min=2, nodes_max=2, exclusive="exclusive"),
    JobOptions(nodelist="n[1-2]", time_limit=90, time_limit_set=True),
    JobOptions(gpus="a100:3", time_limit=5, time_limit_set=True),
    JobOptions(ntasks=1, cpus_per_task=5),  # rejected: no node has 5 CPUs
    JobOptions(nodelist="n9"),  # rejected: no such node
    JobOptions(nodes_min=9, nodes_max=9),  # pending: PartitionNodeLimit
]


def _check(fn: Callable[..., Checked], opts: JobOptions, part: PartView, table: NodeTable,
           enforce: str = "NO") -> object:
    try:
        return fn(opts, part, table, def_mem_per_cpu=1000, enforce_part_limits=enforce)
    except SubmitError as err:
        return ("rejected", str(err))


@pytest.mark.parametrize("enforce", ["NO", "ALL"])
def test_the_memo_gives_what_the_checks_give(enforce: str) -> None:
    table = _table()
    part = PartView("p", np.ones(4, np.bool_), 60, None, None, 1, "UP")
    for _ in range(3):  # first the checks, then the memo (twice)
        for opts in REQUESTS:
            assert _check(check_request, opts, part, table, enforce) == _check(
                check_job_request, opts, part, table, enforce)


def test_a_new_partition_view_or_table_is_checked_again() -> None:
    table = _table()
    opts = JobOptions(time_limit=90, time_limit_set=True)
    part = PartView("p", np.ones(4, np.bool_), None, None, None, 1, "UP")
    first = check_request(opts, part, table, def_mem_per_cpu=None, enforce_part_limits="NO")
    assert first.static_reason is None
    assert check_request(opts, part, table, def_mem_per_cpu=None,
                         enforce_part_limits="NO") is first
    shorter = replace(part, max_time=60)  # scontrol update PartitionName=p MaxTime=60
    again = check_request(opts, shorter, table, def_mem_per_cpu=None, enforce_part_limits="NO")
    assert again.static_reason is Reason.PARTITION_TIME_LIMIT
    small = replace(shorter, mask=np.array([True, False, False, False]))
    two = JobOptions(nodes_min=2, nodes_max=2, time_limit=30, time_limit_set=True)
    assert check_request(two, shorter, table, def_mem_per_cpu=None,
                         enforce_part_limits="NO").static_reason is None
    assert check_request(two, small, table, def_mem_per_cpu=None,
                         enforce_part_limits="NO").static_reason is Reason.PARTITION_NODE_LIMIT
    other = NodeTable([NodeShape(f"n{i}", 2, 8000) for i in range(1, 5)])
    wide = JobOptions(ntasks=1, cpus_per_task=4)
    assert check_request(wide, part, table, def_mem_per_cpu=None,
                         enforce_part_limits="NO").num_cpus == 4
    with pytest.raises(SubmitError):  # the same options on 2-CPU nodes
        check_request(wide, part, other, def_mem_per_cpu=None, enforce_part_limits="NO")


def test_the_memo_starts_over_when_full(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(submit, "_CHECKED_MAX", 2)
    table = _table()
    part = PartView("p", np.ones(4, np.bool_), None, None, None, 1, "UP")
    for minutes in range(1, 6):
        opts = JobOptions(time_limit=minutes, time_limit_set=True)
        assert check_request(opts, part, table, def_mem_per_cpu=None,
                             enforce_part_limits="NO").time_limit == minutes
    assert len(submit._CHECKED[table]) <= 2
