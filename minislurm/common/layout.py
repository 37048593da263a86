"""Task layout: which task of a step runs on which node (``-m/--distribution``).

A faithful port of Slurm 22.05's ``src/common/slurm_step_layout.c`` for the
distributions an AI cluster uses:

* ``block`` (``_task_layout_block``): Slurm first *counts* how many tasks each
  node gets by dealing them out round-robin, one per usable CPU slot and node
  per round (``cpus[i] = cpus_on_node / cpus_per_task``), and only then numbers
  the tasks consecutively node after node.  So ``-N2 -n3`` gives ``2,1`` and
  ``-N2 -n4`` on 2-CPU nodes gives tasks 0,1 on the first node and 2,3 on the
  second (capture a1: ``SLURM_GTIDS=0,1`` / ``2,3``).  When every slot is full
  the rounds continue over all nodes (overcommit).
* ``cyclic`` (``_task_layout_cyclic``): the same rounds, but tasks are numbered
  in the order they are dealt (task 0 on node 0, task 1 on node 1, ...).
* ``plane=N`` (``_task_layout_plane``): blocks of N consecutive tasks dealt
  round-robin over the nodes.

``--ntasks-per-node`` caps the slots of every node (slurmctld's step manager
never places more tasks on a node than that).

Counts such as ``SLURM_TASKS_PER_NODE`` and ``SLURM_JOB_CPUS_PER_NODE`` are
printed by :func:`tasks_per_node_string`, Slurm's ``uint16_array_to_str``:
``[2, 2]`` -> ``2(x2)``, ``[2, 1, 1]`` -> ``2,1(x2)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from minislurm.errors import OptionError

__all__ = [
    "TaskLayout",
    "default_batch_ntasks",
    "default_step_distribution",
    "distribute",
    "distribution_base",
    "tasks_per_node_string",
]

#: Node-level distributions minislurm lays out (first part of ``-m``).
DISTRIBUTIONS = ("block", "cyclic", "plane", "arbitrary")


@dataclass(frozen=True, slots=True)
class TaskLayout:
    """Where the tasks of one step (or of the batch job's notional tasks) run.

    ``nodes`` are node names in allocation order; ``task_ids[i]`` are the global
    task ids (``SLURM_PROCID``) placed on ``nodes[i]``, in local order
    (``SLURM_LOCALID`` is the position in that tuple, ``SLURM_GTIDS`` the tuple
    joined with commas).  Nodes with no task keep an empty tuple.
    """

    nodes: tuple[str, ...]
    task_ids: tuple[tuple[int, ...], ...]
    distribution: str = "block"

    @property
    def ntasks(self) -> int:
        """Number of tasks (``SLURM_STEP_NUM_TASKS``)."""
        return sum(len(t) for t in self.task_ids)

    @property
    def tasks_per_node(self) -> tuple[int, ...]:
        """Task count of each node (``SLURM_STEP_TASKS_PER_NODE`` before compression)."""
        return tuple(len(t) for t in self.task_ids)

    def node_index(self, task_id: int) -> int:
        """Index of the node that runs ``task_id`` (``SLURM_NODEID``)."""
        for i, tids in enumerate(self.task_ids):
            if task_id in tids:
                return i
        raise KeyError(task_id)

    def local_id(self, task_id: int) -> int:
        """Position of ``task_id`` among the tasks of its node (``SLURM_LOCALID``)."""
        return self.task_ids[self.node_index(task_id)].index(task_id)

    def gtids(self, node_index: int) -> str:
        """``SLURM_GTIDS`` of a node: its task ids joined with commas."""
        return ",".join(str(t) for t in self.task_ids[node_index])

    def tasks_per_node_string(self) -> str:
        """``SLURM_TASKS_PER_NODE`` / ``SLURM_STEP_TASKS_PER_NODE`` (``2(x2)``)."""
        return tasks_per_node_string(self.tasks_per_node)


def tasks_per_node_string(counts: Sequence[int]) -> str:
    """Slurm's ``uint16_array_to_str``: runs of equal values as ``value(xN)``.

    >>> tasks_per_node_string([2, 2])
    '2(x2)'
    >>> tasks_per_node_string([1, 2, 1, 1, 1, 3, 2])
    '1,2,1(x3),3,2'
    """
    parts: list[str] = []
    i = 0
    while i < len(counts):
        j = i
        while j + 1 < len(counts) and counts[j + 1] == counts[i]:
            j += 1
        reps = j - i + 1
        parts.append(f"{counts[i]}(x{reps})" if reps > 1 else str(counts[i]))
        i = j + 1
    return ",".join(parts)


def distribution_base(distribution: str | None) -> tuple[str, int | None]:
    """The node-level part of ``-m/--distribution`` and the plane size.

    ``block:cyclic`` -> ``('block', None)``, ``plane=4`` -> ``('plane', 4)``,
    ``None``/``*`` -> ``('block', None)``.  An unknown value raises Slurm's
    ``srun: error: Invalid --distribution specification`` (exit 255).
    """
    if distribution is None:
        return "block", None
    first = distribution.split(":", 1)[0].split(",", 1)[0].strip().lower()
    if first in ("", "*"):
        return "block", None
    if first.startswith("plane"):
        _, _, size = first.partition("=")
        if not size.isdigit() or int(size) < 1:
            raise OptionError("srun: error: Invalid --distribution specification")
        return "plane", int(size)
    if first not in DISTRIBUTIONS:
        raise OptionError("srun: error: Invalid --distribution specification")
    return first, None


def default_step_distribution(ntasks: int, num_nodes: int) -> str:
    """srun's distribution when ``-m`` is not given (src/srun/libsrun/launch.c).

    ``task_count <= min_nodes`` -> ``cyclic``, otherwise ``block``: capture a3
    (2 tasks on 2 nodes) shows ``SLURM_DISTRIBUTION=cyclic``, a2 (4 on 2) ``block``.
    """
    return "cyclic" if ntasks <= num_nodes else "block"


def _slots(
    cpus_per_node: Sequence[int], cpus_per_task: int, ntasks_per_node: int | None
) -> list[int]:
    """Usable task slots per node: ``cpus / cpus_per_task``, capped by --ntasks-per-node."""
    # a node with fewer CPUs than -c still takes one task (heterogeneous allocations)
    slots = [max(c // max(cpus_per_task, 1), 1) for c in cpus_per_node]
    if ntasks_per_node is not None:
        slots = [min(s, ntasks_per_node) for s in slots]
    return slots


def _deal_rounds(ntasks: int, slots: Sequence[int]) -> list[list[int]]:
    """Deal tasks round-robin, one per free slot and node per round.

    This is the loop shared by ``_task_layout_block`` (which only keeps the
    counts) and ``_task_layout_cyclic`` (which keeps the order): once no node
    has a free slot left, ``over_subscribe`` lets every node take more.
    """
    placed: list[list[int]] = [[] for _ in slots]
    task_id = 0
    over_subscribe = False
    round_no = 0
    while task_id < ntasks:
        space_remaining = False
        for i, cap in enumerate(slots):
            if task_id >= ntasks:
                break
            if round_no < cap or over_subscribe:
                placed[i].append(task_id)
                task_id += 1
                if round_no + 1 < cap:
                    space_remaining = True
        if not space_remaining:
            over_subscribe = True
        round_no += 1
    return placed


def _plane(ntasks: int, slots: Sequence[int], plane_size: int) -> list[list[int]]:
    """``_task_layout_plane``: count the tasks of every node first, one task per
    node and then up to ``plane_size`` per node and round while the node has free
    slots (``cpus - tasks != 0``; once no node has room, all may oversubscribe),
    then number them in blocks of ``plane_size`` node after node.

    Measured on 22.05.8: ``-N2 -n4 -m plane=2`` on 3+1 CPUs gives ``0,1,3`` / ``2``,
    ``-N2 -n5 -m plane=3`` on 4+1 CPUs ``0,1,2,4`` / ``3``.
    """
    num_nodes = len(slots)
    counts = [0] * num_nodes
    task_id = 0
    over_subscribe = False
    round_no = 0
    while task_id < ntasks:
        space_remaining = False
        if round_no == 0:  # one task on each node first
            for i in range(num_nodes):
                if task_id >= ntasks:
                    break
                counts[i] += 1
                task_id += 1
        for i in range(num_nodes):
            if task_id >= ntasks:
                break
            for _ in range(1 if round_no == 0 else 0, plane_size):
                if task_id >= ntasks:
                    break
                if slots[i] - counts[i] != 0 or over_subscribe:
                    counts[i] += 1
                    task_id += 1
                    if slots[i] - (counts[i] + 1) >= 0:
                        space_remaining = True
        if not space_remaining:
            over_subscribe = True
        round_no += 1
    placed: list[list[int]] = [[] for _ in range(num_nodes)]
    task_id = 0
    while task_id < ntasks:
        for i in range(num_nodes):
            k = 0
            while k < plane_size and len(placed[i]) < counts[i] and task_id < ntasks:
                placed[i].append(task_id)
                task_id += 1
                k += 1
    return placed


def distribute(
    ntasks: int,
    nodes: Sequence[str],
    cpus_per_node: Sequence[int],
    *,
    ntasks_per_node: int | None = None,
    cpus_per_task: int | None = 1,
    distribution: str | None = "block",
) -> TaskLayout:
    """Lay ``ntasks`` tasks out over ``nodes`` (``slurm_step_layout_create``).

    ``cpus_per_node`` are the CPUs the job (or step) holds on each node, in the
    order of ``nodes``; ``cpus_per_task`` is ``-c``; ``distribution`` is the
    ``-m`` text (``block``, ``cyclic``, ``plane=N``, ``block:cyclic``...).
    ``arbitrary`` (which needs a host file) is laid out like ``block``.

    >>> distribute(4, ["n1", "n2"], [2, 2]).task_ids
    ((0, 1), (2, 3))
    >>> distribute(4, ["n1", "n2"], [2, 2], distribution="cyclic").task_ids
    ((0, 2), (1, 3))
    >>> distribute(3, ["n1", "n2"], [4, 4]).tasks_per_node
    (2, 1)
    """
    if len(nodes) != len(cpus_per_node):
        raise ValueError("nodes and cpus_per_node differ in length")
    if ntasks < 0:
        raise ValueError("ntasks must not be negative")
    if not nodes:
        raise ValueError("a layout needs at least one node")
    base, plane_size = distribution_base(distribution)
    if base == "plane" and plane_size is not None:
        # the plane size is no --ntasks-per-node cap here (slurm_step_layout.c)
        placed = _plane(ntasks, _slots(cpus_per_node, cpus_per_task or 1, None), plane_size)
    else:
        slots = _slots(cpus_per_node, cpus_per_task or 1, ntasks_per_node)
        dealt = _deal_rounds(ntasks, slots)
        if base == "cyclic":
            placed = dealt
        else:  # block (and arbitrary): same counts, consecutive numbering
            placed = []
            next_id = 0
            for tids in dealt:
                placed.append(list(range(next_id, next_id + len(tids))))
                next_id += len(tids)
    return TaskLayout(
        nodes=tuple(nodes),
        task_ids=tuple(tuple(t) for t in placed),
        distribution=base,
    )


def default_batch_ntasks(
    ntasks: int | None,
    ntasks_per_node: int | None,
    cpus_per_node: Sequence[int],
    cpus_per_task: int | None,
) -> tuple[int, bool]:
    """Task count of the batch step's notional layout (``env_array_for_batch_job``).

    Returns ``(ntasks, explicit)``: ``-n`` if given; else ``--ntasks-per-node``
    times the node count (capture a2: ``-N2 --ntasks-per-node=2`` ->
    ``SLURM_NTASKS=4``); else as many tasks as the CPUs hold
    (``cpus / cpus_per_task`` summed), in which case ``explicit`` is ``False``
    and Slurm does not export ``SLURM_NTASKS``.
    """
    if ntasks is not None:
        return ntasks, True
    if ntasks_per_node is not None:
        return ntasks_per_node * len(cpus_per_node), True
    per_task = cpus_per_task or 1
    return sum(c // per_task for c in cpus_per_node), False
