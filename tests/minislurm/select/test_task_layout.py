"""Task layout (``-m block|cyclic|plane``, ``-n`` with ``-N``, ``-c``), as Slurm 22.05.

These tests document `minislurm.common.layout`, a port of src/common/slurm_step_layout.c.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minislurm.common.layout import (
    TaskLayout,
    default_batch_ntasks,
    default_step_distribution,
    distribute,
    distribution_base,
    tasks_per_node_string,
)
from minislurm.errors import OptionError

N2 = ["n1", "n2"]


def test_block_fills_each_node_before_the_next() -> None:
    """Capture a1: -N2 --ntasks-per-node=2 -> PROCID 0,1 on n1 and 2,3 on n2."""
    layout = distribute(4, N2, [2, 2], ntasks_per_node=2)
    assert layout.task_ids == ((0, 1), (2, 3))
    assert [layout.gtids(i) for i in range(2)] == ["0,1", "2,3"]
    assert [layout.local_id(t) for t in range(4)] == [0, 1, 0, 1]
    assert [layout.node_index(t) for t in range(4)] == [0, 0, 1, 1]
    assert layout.tasks_per_node_string() == "2(x2)"


def test_cyclic_deals_tasks_round_robin() -> None:
    layout = distribute(4, N2, [2, 2], distribution="cyclic")
    assert layout.task_ids == ((0, 2), (1, 3))
    assert layout.gtids(0) == "0,2"
    assert layout.local_id(2) == 1


def test_ntasks_not_a_multiple_of_nodes_puts_the_extra_tasks_first() -> None:
    """-N2 -n3: block counts tasks round-robin first (2,1), then numbers them."""
    layout = distribute(3, N2, [4, 4])
    assert layout.task_ids == ((0, 1), (2,))
    assert layout.tasks_per_node_string() == "2,1"
    assert distribute(5, ["n1", "n2", "n3"], [4, 4, 4]).tasks_per_node == (2, 2, 1)


def test_cpus_per_task_reduces_the_slots_of_a_node() -> None:
    """Capture a3: -N2 --ntasks-per-node=1 -c2 on 2 CPUs per node -> 1(x2)."""
    layout = distribute(2, N2, [2, 2], cpus_per_task=2)
    assert layout.tasks_per_node_string() == "1(x2)"
    # 4 CPUs and -c2 -> 2 slots each; 3 tasks -> 2,1
    assert distribute(3, N2, [4, 4], cpus_per_task=2).tasks_per_node == (2, 1)


def test_heterogeneous_nodes_get_tasks_as_their_cpus_allow() -> None:
    assert distribute(4, N2, [4, 1]).tasks_per_node == (3, 1)


def test_more_tasks_than_slots_overcommits_round_robin() -> None:
    assert distribute(5, N2, [2, 2]).tasks_per_node == (3, 2)
    assert distribute(5, N2, [2, 2], distribution="cyclic").task_ids == ((0, 2, 4), (1, 3))


def test_fewer_tasks_than_nodes_leaves_nodes_empty() -> None:
    layout = distribute(1, N2, [4, 4])
    assert layout.task_ids == ((0,), ())
    assert layout.tasks_per_node_string() == "1,0"


def test_ntasks_per_node_caps_a_node() -> None:
    assert distribute(4, N2, [4, 4], ntasks_per_node=2).tasks_per_node == (2, 2)
    assert distribute(2, N2, [4, 4], ntasks_per_node=1).tasks_per_node == (1, 1)


def test_plane_distribution_deals_blocks_of_plane_size() -> None:
    layout = distribute(5, N2, [4, 4], distribution="plane=2")
    assert layout.task_ids == ((0, 1, 4), (2, 3))
    assert layout.distribution == "plane"


def test_tasks_per_node_string_is_slurms_compressed_format() -> None:
    """Example from env.c's comment on uint16_array_to_str."""
    assert tasks_per_node_string([1, 2, 1, 1, 1, 3, 2]) == "1,2,1(x3),3,2"
    assert tasks_per_node_string([2, 2]) == "2(x2)"
    assert tasks_per_node_string([4]) == "4"
    assert tasks_per_node_string([]) == ""


def test_distribution_text_is_parsed_like_srun() -> None:
    assert distribution_base("block:cyclic") == ("block", None)
    assert distribution_base("cyclic") == ("cyclic", None)
    assert distribution_base("plane=4") == ("plane", 4)
    assert distribution_base(None) == ("block", None)
    assert distribution_base("*:block") == ("block", None)
    with pytest.raises(OptionError) as err:
        distribution_base("zigzag")
    assert err.value.message == "srun: error: Invalid --distribution specification"
    assert err.value.exit_code == 255


def test_srun_default_distribution() -> None:
    """Captures a2 (4 tasks / 2 nodes: block) and a3 (2 / 2: cyclic)."""
    assert default_step_distribution(4, 2) == "block"
    assert default_step_distribution(2, 2) == "cyclic"
    assert default_step_distribution(1, 2) == "cyclic"


def test_batch_task_count() -> None:
    """-n wins; else --ntasks-per-node x nodes; else what the CPUs hold (not exported)."""
    assert default_batch_ntasks(3, 2, [2, 2], None) == (3, True)
    assert default_batch_ntasks(None, 2, [2, 2], None) == (4, True)
    assert default_batch_ntasks(None, None, [4, 2], 2) == (3, False)


def test_bad_inputs_are_rejected() -> None:
    with pytest.raises(ValueError):
        distribute(2, N2, [1])
    with pytest.raises(ValueError):
        distribute(1, [], [])
    with pytest.raises(KeyError):
        TaskLayout(("n1",), ((0,),)).node_index(5)


@settings(max_examples=150, deadline=None)
@given(
    ntasks=st.integers(0, 40),
    cpus=st.lists(st.integers(0, 8), min_size=1, max_size=6),
    cpt=st.integers(1, 4),
    dist=st.sampled_from(["block", "cyclic", "plane=3"]),
)
def test_every_task_is_placed_exactly_once(
    ntasks: int, cpus: list[int], cpt: int, dist: str
) -> None:
    nodes = [f"n{i}" for i in range(len(cpus))]
    layout = distribute(ntasks, nodes, cpus, cpus_per_task=cpt, distribution=dist)
    placed = sorted(t for tids in layout.task_ids for t in tids)
    assert placed == list(range(ntasks))
    if dist == "block":
        assert placed == [t for tids in layout.task_ids for t in tids]
        cyclic = distribute(ntasks, nodes, cpus, cpus_per_task=cpt, distribution="cyclic")
        assert cyclic.tasks_per_node == layout.tasks_per_node
