"""When the controller acts: the main scheduler, sched/backfill and priority loops.

Scheduling is event driven (``CtldState.kick``): a submission, a job end or an update
runs the main scheduler at this instant and a backfill pass ``bf_interval`` seconds
later (at the same instant with ``bf_at_event``: simulate's textbook EASY);
``PriorityCalcPeriod`` recomputes pending priorities while something can change.
``CtldState.idle`` says when nothing can happen any more without an outside change,
so that ``env.run()`` returns (slurmctld's own timers would tick forever).

These are functions over the controller's state and the schedulers' view of it
(``sched_view.SchedView``); ``Controller`` starts the loops.  ``main_pass`` and
``backfill_pass`` are looked up here at each call (benchmarks/bench_simulate.py times
them by replacing them).
"""

from __future__ import annotations

import weakref
from collections.abc import Generator
from typing import Protocol

import simpy
from simpy.events import Timeout

from minislurm.sched.backfill import Running, backfill_pass
from minislurm.sched.builtin import SelectMemo, main_pass
from minislurm.sched.node_space import AllocCells

from .job_mgr import Job
from .lifecycle import running_end
from .sched_view import SchedView
from .state import CtldState

#: A SimPy process of the controller.
Process = Generator[simpy.Event, object, None]


class PriorityPasses(Protocol):
    """The two kinds of ``PriorityCalcPeriod`` pass (``Controller`` provides them)."""

    def recalc_priorities(self) -> None:
        """Every pending job's priority anew."""
        ...

    def decay_priorities(self) -> None:
        """A pass whose numbers the next pass replaces unread."""
        ...


def run_main(state: CtldState, view: SchedView) -> None:
    """One pass of the main scheduler (``schedule()``) now.

    With no advance reservation, the select of a job that may preempt no one is a
    function of the job, its allowed nodes and ``_fingerprint``: failed selects are
    kept between passes (``SelectMemo``).  With no job pending the pass has nothing to
    look at (``schedule()`` returns at its empty job queue), so it is not walked."""
    if not state.has_pending:
        return
    view.mark_independent()
    memo = None
    if not state.reservations_by_name:
        memo = _MEMOS.get(state)
        if memo is None:  # its callbacks hold the controller weakly (see _MEMOS)
            ref = weakref.ref(state)
            memo = _MEMOS[state] = SelectMemo(lambda: _fingerprint(_alive(ref)),
                                              lambda job: _may_preempt(_alive(ref), job))
    main_pass(view, policy=state.policy, depth=state.queue_depth, memo=memo)


def _may_preempt(state: CtldState, job: Job) -> bool:
    """True if preempt/qos may make room for ``job`` (``try_preempt`` would look at the
    running jobs: its QOS preempts another)."""
    if state.preempt_type != "preempt/qos":
        return False
    qos = state.qos.get(job.qos)
    return qos is not None and bool(qos.preempt)


#: Each controller's failed selects (``SelectMemo``), kept between its main passes. A
#: weak-key dictionary holds its values strongly, so a memo refers to its controller only
#: through a weak reference: else the entry would keep its own key, and every controller
#: (a widget's re-simulation each move), alive for good.
_MEMOS: weakref.WeakKeyDictionary[CtldState, SelectMemo] = weakref.WeakKeyDictionary()


def _alive(ref: weakref.ref[CtldState]) -> CtldState:
    """The controller a memo belongs to (alive while its memo is used: ``_MEMOS``)."""
    state = ref()
    assert state is not None, "a select memo outlived its controller"
    return state


def _fingerprint(state: CtldState) -> bytes:
    """What select and the reason of a job that does not fit read (``SchedView.try_select``,
    ``_why_not``, without reservations and preemption), as bytes: the node table (which
    one: its configured resources and weights are fixed for its life; its free counts,
    made again only when they changed: ``NodeTable.counts_bytes``), its usable nodes and
    every partition's nodes."""
    t = state.table
    parts = [b"%s\0%s\0" % (name.encode(), p.state.encode()) + p.mask.tobytes()
             for name, p in state.parts.items()]
    return b"\0".join([b"%d" % id(t), *parts, t.usable.tobytes(), t.counts_bytes()])


#: Each controller's running allocations as arrays, kept between its backfill passes.
_CELLS: weakref.WeakKeyDictionary[CtldState, AllocCells] = weakref.WeakKeyDictionary()


def _cells(state: CtldState) -> AllocCells:
    """The controller's ``AllocCells`` (a new one when its node table was replaced)."""
    cells = _CELLS.get(state)
    if cells is None or cells.table is not state.table:
        cells = _CELLS[state] = AllocCells(state.table)
    return cells


def room_for_a_start(state: CtldState) -> bool:
    """Whether some job could start now, as far as a glance can tell: False when no
    usable node has free the CPUs of one task of the least demanding pending job
    (``-c``), and a GPU when every pending job asks for GPUs.  Any start needs that
    much on one node (a backfill start never preempts), so False means that a pass
    now would start nothing; True promises nothing."""
    t = state.table
    cpus, gpu = 0, 1
    for job in state.pending_jobs():
        req = job.request
        c = req.cpus_per_task
        if not cpus or c < cpus:
            cpus = c
        if gpu and not req.job_gpus:
            gpu = 0
        if cpus == 1 and not gpu:
            break
    free = t.usable & (t.free_cpu >= max(cpus, 1))
    if gpu:
        free &= t.free_gpu >= 1
    return bool(free.any())


def run_backfill(state: CtldState, view: SchedView) -> int:
    """One sched/backfill pass now (normally every bf_interval after a change).

    When nobody reads what a pass refreshes besides its starts (``bf_estimates`` off:
    the expected starts of ``squeue --start``, and ``unobserved``: the reasons and
    ``LastSchedEval`` of the jobs it tests, a simulation's), a pass that can start
    no job (``room_for_a_start``) is not walked: the schedule is the same, and only
    ``build_job_queue``'s part, which the next passes read (eligibility), is done."""
    if not state.has_pending:
        return 0
    view.mark_independent()  # build_job_queue(true, true)
    if not state.bf_estimates and state.unobserved and not room_for_a_start(state):
        return 0
    state.passes["backfill"] += 1
    now = state.now

    def running() -> list[Running]:  # built only when the pass needs the map
        return [  # a running job's end_time (after any scontrol update TimeLimit=)
            Running(j.allocation, None if (end := running_end(j)) is None
                    else max(end, now + 1))
            for j in state.running_jobs() if j.allocation is not None
        ]  # fmt: skip

    return backfill_pass(view, state.table, running, state.bf, policy=state.policy,
                         estimates=state.bf_estimates, cells=_cells(state))


class BackfillAgent:
    """``backfill_agent``: a pass ``bf_interval`` seconds after a change, then sleep.

    Slurm's thread loops: sleep until something changed (``bf_dirty``), sleep
    ``bf_interval``, one pass, and sleep again.  Each step of that loop is here the
    callback of the event that ends the step before it: `wait` (for a change), `sleep`
    (``bf_interval``), `_pass`, `wait` ...; a SimPy process was resumed for each
    instead (lesson 7's sweep runs ~4,600 of these loops).  The events are the ones the
    process waited for, scheduled at the same points, so they come in the same order:
    `CtldState.kick` schedules the wake-up at the change's instant (a timeout of 0 s:
    in SimPy's queue as the process's wake-up event that kick succeeded, this instant
    and NORMAL priority; while the agent sleeps, ``state.bf_wake`` is its callback),
    and the ``bf_interval`` timeout is scheduled when the wake-up is processed.

    The agent starts as a process does: ``env.process`` makes its first look an URGENT
    event at this instant, before the instant's other events (a change made before it,
    a submission right after the controller was built, is seen there).

    With ``state.bf_at_event`` (the textbook EASY of ``simulate --procs``) the pass runs
    at the change's own instant instead, after the events of that instant that were
    already due and after the main scheduler (whose pass the change queued first).
    """

    def __init__(self, state: CtldState, view: SchedView) -> None:
        self.state, self.view = state, view
        state.env.process(self._start())

    def _start(self) -> Process:
        """The agent's first look, at its process's start; the loop then goes on in
        callbacks and this process waits for good (on an event never triggered)."""
        self.wait()
        yield self.state.env.event()

    def wait(self) -> None:
        """The top of the loop: sleep until a change (`CtldState.kick` wakes the agent
        at its instant), or at once if one came since the last pass."""
        if self.state.bf_dirty:
            self.sleep()
        else:
            self.state.bf_wake = self.sleep

    def sleep(self, _wake: simpy.Event | None = None) -> None:
        """Sleep ``bf_interval`` (0 with ``bf_at_event``), then `_pass`."""
        state = self.state
        delay = 0 if state.bf_at_event else max(state.bf.bf_interval, 1)
        Timeout(state.env, delay).callbacks.append(self._pass)

    def _pass(self, _timer: simpy.Event) -> None:
        self.state.bf_dirty = False
        run_backfill(self.state, self.view)
        self.wait()


def priority_loop(state: CtldState, passes: PriorityPasses) -> Process:
    """PriorityCalcPeriod (seconds): recompute the priorities of pending jobs.

    It sleeps while no job is pending or the controller is ``idle`` (no pending job
    could start before a submission, a job end or an update), so ``env.run()``
    returns once only such jobs are left, instead of ticking forever.  In a trace
    simulation (``unobserved``: no user reads a priority between events) a pass
    followed by the next one before any other event only decays the usage: its
    numbers would be overwritten unread.
    """
    env, period = state.env, state.prio_period
    while True:
        if not state.has_pending or state.idle:
            state.prio_wake = env.event()
            yield state.prio_wake
            state.prio_wake = None
            continue
        yield env.timeout(period)
        if (state.unobserved and state.has_pending and not state.idle  # it ticks again
                and env.peek() > env.now + period):
            passes.decay_priorities()  # the next pass comes first: nobody reads these
        else:
            passes.recalc_priorities()


__all__ = ["BackfillAgent", "PriorityPasses", "priority_loop", "room_for_a_start",
           "run_backfill", "run_main"]
