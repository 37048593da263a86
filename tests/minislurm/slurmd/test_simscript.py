"""How a simulated node "runs" a batch script (`minislurm.sim.simscript.script_body`).

No process runs on the simulated clock, so the script's own lines say how
long the job lasts and how it ends: ``sleep`` lines (also behind ``srun``)
add up, ``exit N`` ends it with code N, and ``#MINISLURM runtime=`` /
``#MINISLURM exit=`` comment lines (ignored by real Slurm) state them
outright. Runtimes in marks use Slurm's time formats (as ``--time``: a bare
number is minutes).
"""

from __future__ import annotations

import pytest

from minislurm.ctld.runner import JobBody, SimStep
from minislurm.sim.simscript import DEFAULT_RUNTIME, script_body


def _body(*lines: str) -> JobBody:
    return script_body("#!/bin/bash\n" + "\n".join(lines) + "\n")


def test_sleeps_add_up_including_those_run_by_srun() -> None:
    assert _body("#SBATCH -N2", "sleep 600", "srun -N2 --ntasks-per-node=1 sleep 60") == \
        JobBody(run_time=660, exit_code=0,
                steps=(SimStep(600, 60, ("-N2", "--ntasks-per-node=1", "sleep", "60")),))


@pytest.mark.parametrize(("line", "seconds"), [
    ("sleep 90", 90),
    ("sleep 1.5", 2),          # rounded to whole seconds
    ("sleep 2m", 120),
    ("sleep 1h 30m", 5400),    # GNU sleep adds its arguments
    ("sleep 1d", 86400),
    ("srun --ntasks=4 sleep 5s", 5),
])
def test_gnu_sleep_units(line: str, seconds: int) -> None:
    assert _body(line).run_time == seconds


def test_exit_sets_the_exit_code_and_ends_the_script() -> None:
    body = _body("sleep 10", "exit 3", "sleep 1000")
    assert body == JobBody(run_time=10, exit_code=3)


@pytest.mark.parametrize(("code", "status"), [("256", 0), ("257", 1), ("-1", 255)])
def test_exit_codes_wrap_like_a_shells(code: str, status: int) -> None:
    assert _body("sleep 1", f"exit {code}").exit_code == status


@pytest.mark.parametrize(("mark", "seconds"), [
    ("#MINISLURM runtime=90", 90 * 60),             # minutes, as --time=90
    ("#MINISLURM runtime=2:00:00", 7200),
    ("#MINISLURM runtime=1-00:00:00", 86400),
    ("#MINISLURM runtime=10:30", 630),              # M:S
    ("# minislurm RUNTIME = 5", 300),               # spacing and case do not matter
])
def test_a_runtime_mark_states_the_run_time(mark: str, seconds: int) -> None:
    assert _body(mark, "python train.py").run_time == seconds


def test_a_runtime_mark_wins_over_sleeps_wherever_it_is() -> None:
    assert _body("sleep 5", "#MINISLURM runtime=1:00:00").run_time == 3600


def test_an_exit_mark_sets_the_exit_code() -> None:
    assert _body("#MINISLURM exit=7", "python train.py") == JobBody(
        run_time=DEFAULT_RUNTIME, exit_code=7)


def test_a_script_that_says_nothing_runs_the_default_time() -> None:
    assert _body("python train.py") == JobBody(run_time=DEFAULT_RUNTIME, exit_code=0)


@pytest.mark.parametrize("line", [
    "# sleep 1000",              # a comment
    "#SBATCH --comment='sleep 1000'",
    "sleep $DURATION",           # not known before the job runs
    "sleep",                     # no argument
    "echo 'unbalanced",          # unreadable for the shell: ignored
    "sleep 10x",
])
def test_lines_that_state_no_duration_are_ignored(line: str) -> None:
    assert _body(line).run_time == DEFAULT_RUNTIME


def test_an_unreadable_mark_is_ignored_like_any_comment() -> None:
    assert _body("#MINISLURM runtime=soon", "sleep 30").run_time == 30
    assert _body("#MINISLURM exit=maybe").exit_code == 0


def test_trailing_comments_do_not_count() -> None:
    assert _body("sleep 20  # then sleep 1000").run_time == 20


def test_every_srun_line_is_a_step_in_script_order() -> None:
    body = _body("srun hostname", "sleep 10", "srun -n1 sleep 3", "srun -l env")
    assert body.steps == (SimStep(0, 0, ("hostname",)), SimStep(10, 3, ("-n1", "sleep", "3")),
                          SimStep(13, None, ("-l", "env")))  # ends with the job
    assert body.run_time == 13


def test_background_steps_run_together_until_wait() -> None:
    body = _body("srun -n1 sleep 30 &", "srun -n1 sleep 20 &", "wait", "srun sleep 5")
    assert [(s.offset, s.duration) for s in body.steps] == [(0, 30), (0, 20), (30, 5)]
    assert body.run_time == 35


def test_a_program_that_is_the_scripts_last_work_runs_until_the_job_ends() -> None:
    body = _body("#MINISLURM runtime=20", "srun hostname", "sleep 5",
                 "srun python train.py", "srun -n1 python eval.py &", "wait")
    assert [(s.offset, s.duration) for s in body.steps] == [(0, 0), (5, None), (5, None)]
    assert body.run_time == 20 * 60
