"""Lesson 8's elastic drill: a node failure ends the whole allocation unless ``-k``."""

from __future__ import annotations

from course.lessons.elastic import ElasticDrill, elastic_script
from minislurm.options import parse_sbatch


def test_the_script_asks_for_no_kill_only_when_told() -> None:
    def opts(no_kill: bool) -> bool:
        inv = parse_sbatch([], env={}, stdin=elastic_script(no_kill), cwd="/tmp")
        return inv.options.no_kill

    assert opts(True) is True
    assert opts(False) is False


def test_without_no_kill_one_dead_node_ends_the_whole_allocation() -> None:
    """Slurm 22.05.8 (measured): the job is cancelled on every node and requeued."""
    drill = ElasticDrill(no_kill=False)
    drill.start()
    assert drill.outcome().node_count == 4
    step = drill.fail()
    out = drill.outcome()
    assert (out.state, out.restarts, out.node_count) == ("PENDING", 1, 0)
    assert not out.kept_running
    sacct = step.results[-1].stdout
    assert "NODE_FAIL" in sacct and "gpu[01-04]" in sacct
