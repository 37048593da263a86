"""Lesson 4: two concurrent 2-rank srun --exact steps in one allocation each get their port."""

from __future__ import annotations

import pytest

from course.ddp.wiring import master_port
from course.lessons.concurrent_steps import StepRow, SweepRun, format_steps, run_sweep
from course.lessons.ddp_ranks import local_cluster


def _row(step: int, port: int, digest: str = "d", state: str = "COMPLETED") -> StepRow:
    return StepRow("a" if step == 0 else "b", step, 2, f"127.0.0.1:{port}", True, False, state,
                   digest)


def test_the_table_shows_ports_relative_to_step_0_and_compares_the_parameters() -> None:
    run = SweepRun(0, 42, (_row(1, master_port(42, 1)), _row(0, master_port(42, 0))), "")
    lines = format_steps(run).splitlines()
    assert lines[1].split()[:4] == ["0", "2", "step", "0's"]
    assert "+1009" in lines[2]
    assert lines[-1] == "both steps trained to the same parameters: True"
    differ = SweepRun(0, 42, (_row(0, 20042, "x"), _row(1, 21051, "y")), "")
    assert format_steps(differ).endswith("parameters: False")


@pytest.mark.ddp_ports
def test_two_concurrent_steps_train_on_their_own_ports_on_the_local_cluster() -> None:
    with local_cluster() as cluster:
        run = run_sweep(cluster)
    assert run.returncode == 0, run.stderr
    steps = sorted(run.steps, key=lambda r: r.step_id)
    assert [r.step_id for r in steps] == [0, 1]
    assert all(r.world_size == 2 and r.state == "COMPLETED" for r in steps), steps
    assert all(r.port_is_the_steps and not r.addr_in_use for r in steps), steps
    assert steps[0].master != steps[1].master  # same node, different ports
    assert steps[0].digest == steps[1].digest != ""  # same seed, same data: same result
