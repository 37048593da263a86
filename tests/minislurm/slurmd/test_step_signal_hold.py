"""A step signal sent while a step's tasks start is held, not dropped (slurmd's runner).

srun starts a step's tasks, then reports their process groups (`register_step_pids`).
``scancel --signal=USR1`` in between used to find no process of the step and was lost;
slurmstepd holds a step signal until the step runs and then delivers it
(slurmd/slurmstepd/req.c ``_handle_signal_container`` -> ``_wait_for_job_running``).
These tests start a real process group standing for a task and send real signals.
"""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import simpy

from minislurm.conf import default_config
from minislurm.slurmd.process_runner import ProcessRunner


@pytest.fixture
def runner(tmp_path: Path) -> ProcessRunner:
    def post(fn: Callable[[], None]) -> None:
        fn()

    return ProcessRunner(simpy.Environment(), default_config(), tmp_path / "spool", post)


@pytest.fixture
def task(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """A task in a process group of its own that writes ``got`` on SIGUSR1."""
    got = tmp_path / "got"
    proc = subprocess.Popen(
        ["bash", "-c", f"trap 'echo USR1 >> {got}' USR1; touch {tmp_path / 'on'}; "
                       "while :; do sleep 0.1 & wait; done"],
        start_new_session=True)
    deadline = time.monotonic() + 30
    while not (tmp_path / "on").exists():
        assert time.monotonic() < deadline and proc.poll() is None, "the task did not start"
        time.sleep(0.02)
    try:
        yield proc.pid, got
    finally:
        proc.kill()
        proc.wait()


def _signals(got: Path, expected: int) -> int:
    """How many SIGUSR1 the task wrote down, once it wrote ``expected`` (or after 5 s)."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if got.exists() and len(got.read_text().split()) >= expected:
            break
        time.sleep(0.05)
    time.sleep(0.3)  # a second delivery would show by now
    return len(got.read_text().split()) if got.exists() else 0


def test_a_signal_sent_before_srun_reports_the_tasks_reaches_them_then(
        runner: ProcessRunner, task: tuple[int, Path]) -> None:
    pid, got = task
    runner.step_created(7, 0)
    runner.signal_steps(7, signal.SIGUSR1)   # the tasks run, srun has not reported them
    time.sleep(0.3)
    assert not got.exists()                  # nothing knows their process group yet
    runner.register_step_pids(7, {pid}, 0)
    assert _signals(got, 1) == 1             # delivered once, when reported


def test_a_signal_after_the_report_is_delivered_at_once_and_once(
        runner: ProcessRunner, task: tuple[int, Path]) -> None:
    pid, got = task
    runner.step_created(7, 0)
    runner.register_step_pids(7, {pid}, 0)
    runner.signal_steps(7, signal.SIGUSR1)
    assert _signals(got, 1) == 1


def test_another_jobs_signal_and_a_finished_step_are_not_held(
        runner: ProcessRunner, task: tuple[int, Path]) -> None:
    pid, got = task
    runner.step_created(7, 0)
    runner.signal_steps(8, signal.SIGUSR1)   # another job
    runner.step_created(7, 1)
    runner.unregister_step_pids(7, set(), 1)  # step 1 ended before it reported anything
    runner.signal_steps(7, signal.SIGUSR1)   # held for step 0 only
    runner.register_step_pids(7, {pid}, 0)
    assert _signals(got, 1) == 1
    runner.register_step_pids(7, {pid}, 1)   # a late report of the ended step: nothing held
    assert _signals(got, 2) == 1
