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
    show = step.results[-1].stdout
    assert "JobState=PENDING Reason=BeginTime" in show and "Restarts=1" in show
    sacct = drill.cluster.run("sacct -D -X --format=JobID,State,NodeList").stdout
    assert "NODE_FAIL" in sacct and "gpu[01-04]" in sacct


def test_with_no_kill_the_job_runs_on_without_the_dead_node() -> None:
    """Slurm 22.05.8 (measured): -k keeps the job RUNNING on the nodes that are left."""
    drill = ElasticDrill(no_kill=True)
    drill.start()
    step = drill.fail()
    out = drill.outcome()
    assert (out.state, out.restarts, out.node_count) == ("RUNNING", 0, 3)
    assert out.kept_running and out.nodes == "gpu[01-03]"
    assert drill.failed == "gpu04"
    show = step.results[-1].stdout
    assert "JobState=RUNNING" in show and "NodeList=gpu[01-03]" in show
    # the next step runs on the survivors, and the job ends COMPLETED there
    drill.cluster.wait_job(drill.job)
    assert drill.cluster.controller.job(drill.job).state.value == "COMPLETED"
