"""Lesson 4: two concurrent 2-rank srun --exact steps in one allocation each get their port.

The table's logic, headless. The real steps (`run_sweep` on the local cluster) run in
lesson 4's notebook, whose stored table (ports, EADDRINUSE, sacct State, equal
parameters) nbval compares in both editions (tests/notebooks/test_notebooks.py,
tests/course/i18n/test_i18n_notebooks.py); tests/course/ddp/test_ddp_minislurm.py
runs two concurrent exact steps of the training on their own ports.
"""

from __future__ import annotations

from course.ddp.wiring import master_port
from course.lessons.concurrent_steps import StepRow, SweepRun, format_steps


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
