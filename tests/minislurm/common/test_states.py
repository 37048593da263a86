"""The names Slurm prints for job states, node states and reasons (minislurm.states)."""

from __future__ import annotations

import pytest

from minislurm.states import JobState, NodeBase, NodeFlag, NodeState, Reason


def test_job_state_short_codes_are_squeues() -> None:
    assert JobState.PENDING.short == "PD"
    assert JobState.RUNNING.short == "R"
    assert JobState.COMPLETING.short == "CG"
    assert JobState.COMPLETED.short == "CD"
    assert JobState.FAILED.short == "F"
    assert JobState.CANCELLED.short == "CA"
    assert JobState.TIMEOUT.short == "TO"
    assert JobState.NODE_FAIL.short == "NF"
    assert JobState.PREEMPTED.short == "PR"
    assert JobState.OUT_OF_MEMORY.short == "OOM"
    assert JobState.REQUEUED.short == "RQ"


def test_terminal_and_active_states() -> None:
    assert JobState.TIMEOUT.is_terminal and JobState.NODE_FAIL.is_terminal
    assert not JobState.PENDING.is_terminal and not JobState.COMPLETING.is_terminal
    assert JobState.COMPLETING.is_active and not JobState.PENDING.is_active


@pytest.mark.parametrize(
    ("base", "flags", "short", "long", "scontrol"),
    [
        (NodeBase.IDLE, NodeFlag.NONE, "idle", "idle", "IDLE"),
        (NodeBase.MIXED, NodeFlag.NONE, "mix", "mixed", "MIXED"),
        (NodeBase.ALLOCATED, NodeFlag.NONE, "alloc", "allocated", "ALLOCATED"),
        # capture c2 11_sinfo_node_long / 17_scontrol_show_node: n4 drained while busy
        (NodeBase.ALLOCATED, NodeFlag.DRAIN, "drng", "draining", "ALLOCATED+DRAIN"),
        (NodeBase.MIXED, NodeFlag.DRAIN, "drng", "draining", "MIXED+DRAIN"),
        (NodeBase.IDLE, NodeFlag.DRAIN, "drain", "drained", "IDLE+DRAIN"),
        (NodeBase.DOWN, NodeFlag.NONE, "down", "down", "DOWN"),
        (NodeBase.DOWN, NodeFlag.NOT_RESPONDING, "down*", "down*", "DOWN+NOT_RESPONDING"),
        (NodeBase.IDLE, NodeFlag.COMPLETING, "comp", "completing", "IDLE+COMPLETING"),
    ],
)
def test_node_state_printers(
    base: NodeBase, flags: NodeFlag, short: str, long: str, scontrol: str
) -> None:
    state = NodeState(base, flags)
    assert (state.short, state.long, state.scontrol) == (short, long, scontrol)


def test_reasons_print_as_squeue_and_scontrol() -> None:
    assert Reason.RESOURCES.value == "Resources"
    assert Reason.JOB_ARRAY_TASK_LIMIT.value == "JobArrayTaskLimit"
    long = Reason.NODES_DOWN_DRAINED
    assert long.value == (
        "Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority "
        "partitions"
    )
    # capture c2 15_scontrol_show_job_pending prints it with '_' for blanks
    assert long.scontrol == (
        "Nodes_required_for_job_are_DOWN,_DRAINED_or_reserved_for_jobs_in_higher_priority_"
        "partitions"
    )
