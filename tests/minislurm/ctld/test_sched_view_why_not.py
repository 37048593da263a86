"""``SchedView._why_not``'s common answer against its rules (``_why_not_by_rules``).

A job that does not fit now gets the reason 22.05.8's select_nodes gives; with no
``-w`` nodes, no reservation and every node usable none of the node rules applies and
the answer is ``Resources`` at once.  On a busy cluster, every pending job's reason
(and reason detail) is compared both ways: with all nodes up, with a node drained and
one down, and with a reservation.
"""

from __future__ import annotations

from ctld_helpers import gpu_cluster, sub

from minislurm.ctld import Controller
from minislurm.states import Reason


def _compare(ctl: Controller) -> list[Reason]:
    out = []
    for job in list(ctl.pending_in_order()):
        fast = ctl.view._why_not(job)
        fast_detail = job.reason_detail
        ruled = ctl.view._why_not_by_rules(job)
        assert (fast, fast_detail) == (ruled, job.reason_detail), job.job_id
        out.append(fast)
    return out


def _busy() -> Controller:
    ctl = gpu_cluster(nodes=4, gpus=8, cpus=32)
    for i in range(6):
        sub(ctl, 3600, name=f"w{i}", gres="gpu:8", nodes_min=1, time_limit=90)
    sub(ctl, 3600, name="wide", gres="gpu:8", nodes_min=3, time_limit=90)
    sub(ctl, 3600, name="pinned", nodelist="g2", gres="gpu:2", time_limit=90)
    sub(ctl, 3600, name="spread", ntasks=40, time_limit=90)
    ctl.run_for(1)
    return ctl


def test_common_answer_is_the_rules_answer() -> None:
    ctl = _busy()
    reasons = _compare(ctl)
    assert reasons and set(reasons) <= {Reason.RESOURCES, Reason.REQ_NODE_NOT_AVAIL}


def test_with_nodes_out_and_a_reservation() -> None:
    ctl = _busy()
    names = list(ctl.table.names)
    ctl.update_node(names[1], "drain", "test")
    ctl.update_node(names[3], "down", "test")
    ctl.run_for(1)
    seen = set(_compare(ctl))
    ctl.update_node(names[1], "resume")
    ctl.update_node(names[3], "resume")
    ctl.create_reservation("r", ctl.now, 60, names[0], flags=["IGNORE_JOBS"])
    ctl.run_for(1)
    seen |= set(_compare(ctl))
    assert len(seen) >= 2  # node rules gave other reasons than Resources
