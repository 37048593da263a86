"""Lesson 3: --gpus counts per job and spreads over a busy cluster; per-node requests pend."""

from __future__ import annotations

from course.lessons.busy_requests import on_busy_cluster


def test_gpus_total_spreads_over_several_nodes_when_no_node_is_idle() -> None:
    (spread,) = on_busy_cluster(["--gpus=8"])
    assert spread.total == 8
    assert spread.tres_per_node == "N/A"  # nothing asked per node
    assert len(spread.gpus) == 3  # 2 + 3 + 3, not one whole node
    assert sorted(len(idx) for _, idx in spread.gpus) == [2, 3, 3]


def test_a_whole_node_request_pends_for_resources_on_the_busy_cluster() -> None:
    (whole,) = on_busy_cluster(["-N1 --gres=gpu:8"])
    assert whole.gpus == ()
    assert whole.message == "PENDING (Resources)"


def test_per_node_request_takes_the_same_count_on_each_node() -> None:
    (two,) = on_busy_cluster(["-N2 --gpus-per-node=3"])
    assert two.tres_per_node == "gres:gpu:3"
    assert [len(idx) for _, idx in two.gpus] == [3, 3]


def test_an_impossible_request_keeps_sbatchs_error() -> None:
    (nine,) = on_busy_cluster(["-N1 --gres=gpu:9"])
    assert nine.gpus == ()
    assert nine.message.endswith("Requested node configuration is not available")
