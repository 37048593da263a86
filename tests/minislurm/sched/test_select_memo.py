"""The main scheduler's memo of failed selects (``sched.builtin.SelectMemo``).

A failed select is answered again (reason and its detail) only for the same job, request,
partition, reservation and allowed nodes, while the fingerprint of what select reads is
the one it failed under; a job that may preempt is never answered from the memo.  The
controller-level proof (every record equal with the memo refused) is
tests/minislurm/sim/test_pass_reuse_differential.py.
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pytest
from ctld_helpers import gpu_cluster, sub

from minislurm.ctld import loops
from minislurm.ctld.state import CtldState
from minislurm.sched.builtin import SelectMemo
from minislurm.states import Reason


@dataclass
class _Job:
    request: object
    partition: str = "batch"
    reservation: str = ""
    reason_detail: str = ""
    qos: str = "normal"


def _memo(box: list[bytes], preempting: set[int] | None = None
          ) -> tuple[SelectMemo, list[int]]:
    """A memo over the fingerprint ``box[0]``, and the count of its fingerprint calls."""
    calls = [0]

    def fingerprint() -> bytes:
        calls[0] += 1
        return box[0]

    memo = SelectMemo(fingerprint, None if preempting is None
                      else lambda job: id(job) in preempting)  # fmt: skip
    return memo, calls


def test_a_failure_is_answered_again_while_nothing_changed() -> None:
    box = [b"state-1"]
    memo, calls = _memo(box)
    job, allowed = _Job(("N", 4)), np.array([True, True, False])
    memo.begin()
    assert memo.failed(job, allowed) is None
    job.reason_detail = "UnavailableNodes:n3"  # what _why_not set with the reason
    memo.remember(job, allowed, Reason.REQ_NODE_NOT_AVAIL)
    job.reason_detail = ""
    memo.begin()  # the next pass
    assert memo.failed(job, allowed) is Reason.REQ_NODE_NOT_AVAIL
    assert job.reason_detail == "UnavailableNodes:n3" and memo.hits == 1
    assert memo.failed(job, allowed.copy()) is Reason.REQ_NODE_NOT_AVAIL  # equal nodes
    assert calls[0] == 2  # once per pass


def test_what_select_reads_changing_forgets_the_failure() -> None:
    box = [b"state-1"]
    memo, _calls = _memo(box)
    job, allowed = _Job(("N", 4)), np.array([True, True, False])
    memo.begin()
    memo.remember(job, allowed, Reason.RESOURCES)
    assert memo.failed(job, np.array([True, True, True])) is None  # other nodes allowed
    assert memo.failed(_Job(("N", 4)), allowed) is None  # another job
    job.request = ("N", 2)  # scontrol update NumNodes=2
    assert memo.failed(job, allowed) is None
    job.request = ("N", 4)
    job.partition = "gpu"
    assert memo.failed(job, allowed) is None
    job.partition = "batch"
    assert memo.failed(job, allowed) is Reason.RESOURCES
    box[0] = b"state-2"  # a job ended: the nodes changed
    assert memo.failed(job, allowed) is Reason.RESOURCES  # not seen before the next look
    memo.changed()  # a job started in this pass
    assert memo.failed(job, allowed) is None
    box[0] = b"state-1"  # back to the old bytes: the old failures are gone all the same
    memo.begin()
    assert memo.failed(job, allowed) is None


def test_a_job_that_may_preempt_is_never_answered_from_the_memo() -> None:
    box = [b"s"]
    job, other = _Job(("N", 1), qos="high"), _Job(("N", 1))
    memo, _calls = _memo(box, preempting={id(job)})
    allowed = np.array([True])
    memo.begin()
    memo.remember(job, allowed, Reason.RESOURCES)
    memo.remember(other, allowed, Reason.RESOURCES)
    memo.begin()
    assert memo.failed(job, allowed) is None
    box[0] = b"t"  # its select preempted a job (the nodes changed) yet started nothing
    assert memo.failed(other, allowed) is None  # the state is looked at again


def test_a_controller_with_a_memo_is_freed() -> None:
    """The memo kept for a controller between its passes (``ctld.loops._MEMOS``) does not
    keep it alive: a widget builds a controller per move, and each must be freed."""
    ctl = gpu_cluster(nodes=1, gpus=8)
    sub(ctl, 600, partition="gpu", gres="gpu:8")
    sub(ctl, 600, partition="gpu", gres="gpu:8")  # cannot start: a failure memoised
    ctl.run(until=ctl.now + 120)
    assert ctl in loops._MEMOS and loops._MEMOS[ctl]._fails  # the memo was used
    gone = weakref.ref(ctl)
    del ctl
    gc.collect()
    assert gone() is None


def test_a_memo_with_nothing_kept_does_not_read_the_state() -> None:
    """Nothing remembered: no answer to give, so the fingerprint is not taken (a pass
    where every job fits, lesson 7's requeued job, pays nothing for the memo); the
    first failure takes it when it is remembered."""
    box = [b"s"]
    memo, calls = _memo(box)
    job, allowed = _Job(("N", 1)), np.array([True])
    memo.begin()
    assert memo.failed(job, allowed) is None and calls[0] == 0
    memo.remember(job, allowed, Reason.RESOURCES)
    assert calls[0] == 1
    memo.begin()
    assert memo.failed(job, allowed) is Reason.RESOURCES and calls[0] == 2


def test_a_pass_with_nothing_pending_is_not_walked(monkeypatch: pytest.MonkeyPatch) -> None:
    """``run_main`` with an empty queue returns at once, as ``schedule()`` does: it
    neither walks the queue nor makes the controller's memo."""
    ctl = gpu_cluster(nodes=1, gpus=8)
    walks = [0]
    walk = ctl.queue.walk

    def counted() -> Iterator[object]:
        walks[0] += 1
        return walk()

    monkeypatch.setattr(ctl.queue, "walk", counted)
    ctl.fail_node(ctl.table.names[0], repair_after=60)  # two kicks, nothing pending
    ctl.run(until=ctl.now + 120)
    assert ctl.passes["main"] >= 2 and walks[0] == 0 and ctl not in loops._MEMOS
    sub(ctl, 600, partition="gpu", gres="gpu:8")
    ctl.run(until=ctl.now + 10)
    assert walks[0] >= 1


def _state(state: CtldState) -> bytes:
    """Everything the memo's fingerprint stands for, read in full: which node table,
    its configured resources, every free count, its usable nodes and the partitions."""
    t = state.table
    arrays = [t.cpus, t.mem, t.gpus, t.weight, t.free_cpu, t.free_mem, t.free_gpu, t.njobs,
              t.usable, *(t.free_gpu_typed[k] for k in sorted(t.free_gpu_typed))]
    parts = [b"%s\0%s\0" % (name.encode(), p.state.encode()) + p.mask.tobytes()
             for name, p in state.parts.items()]
    return b"\0".join([b"%d" % id(t), *parts, *(a.tobytes() for a in arrays)])


@pytest.mark.parametrize("run", ["lesson 6 what-if", "procs trace"])
def test_the_fingerprint_names_one_state_and_each_state_has_one(
    monkeypatch: pytest.MonkeyPatch, run: str
) -> None:
    """The memo's fingerprint keeps the bytes of the free counts from one change of
    them to the next (``NodeTable.counts_bytes``, by ``version``) and leaves out what a
    table never changes.  At every main pass: one fingerprint, one state (or a failure
    would be answered in a state it was not found in), and one state, one fingerprint
    (a state the cluster comes back to, a job ending and another taking its place,
    finds the failures kept for it)."""
    from minislurm.conf import load_config
    from minislurm.sim.simulate import simulate
    from minislurm.sim.workload.lublin import LublinSpec, lublin_workload

    state_of: dict[bytes, bytes] = {}
    fp_of: dict[bytes, bytes] = {}
    versions: set[int] = set()
    real = loops._fingerprint

    def checking(state: CtldState) -> bytes:
        fp, full = real(state), _state(state)
        assert state_of.setdefault(fp, full) == full, "one fingerprint, two states"
        assert fp_of.setdefault(full, fp) == fp, "one state, two fingerprints"
        versions.add(state.table.version)
        return fp

    monkeypatch.setattr(loops, "_fingerprint", checking)
    if run == "procs trace":
        simulate(lublin_workload(LublinSpec(jobs=400, procs=64, seed=2)), procs=64,
                 scheduler="slurm")
    else:
        from course.lessons.backfill_compare import whatif_jobs

        simulate(whatif_jobs(300), load_config(None), scheduler="slurm")
    assert len(versions) > 50  # the runs change the counts between many passes
    assert len(fp_of) < len(versions)  # and come back to states seen before
