"""Tasks as real local processes (minislurm.slurmd.launch): what slurmstepd does.

Every test starts small real processes (``sh -c ...``) and waits for them with
a hard timeout; the ``steps`` fixture kills whatever a failing test leaves.
"""

from __future__ import annotations

import os
import signal
import stat
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from realslurm.procs import alive, processes

from minislurm.slurmd.launch import (
    RunningStep,
    StepIdentity,
    TaskResult,
    TaskSpec,
    exec_error_message,
    launch_step,
    resolve_command,
    write_batch_script,
)
from minislurm.slurmd.stdio import StdioSpec, label_width
from minislurm.states import LAUNCH_FAILED_STATUS

TIMEOUT = 15.0
ENV = {"PATH": "/usr/bin:/bin", "LANG": "C"}
STEP = StepIdentity(job_id=5, step_id=0, job_name="demo", user="root")
BATCH = StepIdentity(job_id=7, step_id="batch", job_name="job.sh", user="root")


@pytest.fixture
def steps() -> Iterator[list[RunningStep]]:
    started: list[RunningStep] = []
    yield started
    for step in started:
        step.signal(signal.SIGKILL)
        step.wait(TIMEOUT)


def _tasks(cwd: Path, script: str, n: int = 1, per_node: int = 2) -> list[TaskSpec]:
    return [
        TaskSpec(
            t,
            f"n{t // per_node + 1}",
            t // per_node,
            ("sh", "-c", script),
            {**ENV, "SLURM_PROCID": str(t)},
            str(cwd),
        )
        for t in range(n)
    ]


def _run(steps: list[RunningStep], identity: StepIdentity, tasks: Sequence[TaskSpec],
         stdio: StdioSpec, *, stdout_fd: int = 1, stderr_fd: int = 2) -> tuple[TaskResult, ...]:
    step = launch_step(identity, tasks, stdio, stdout_fd=stdout_fd, stderr_fd=stderr_fd)
    steps.append(step)
    return step.wait(TIMEOUT)


def test_each_task_has_its_env_cwd_and_real_pid(tmp_path: Path, steps: list[RunningStep]) -> None:
    script = 'echo "$SLURM_PROCID $SLURM_TASK_PID $$ $(pwd)"'
    results = _run(steps, STEP, _tasks(tmp_path, script, 3), StdioSpec(output="t%t.out"))
    assert [(r.task_id, r.exit_code, r.signal) for r in results] == [
        (0, 0, 0),
        (1, 0, 0),
        (2, 0, 0),
    ]
    for r in results:
        procid, task_pid, shell_pid, cwd = (tmp_path / f"t{r.task_id}.out").read_text().split()
        assert procid == str(r.task_id)
        assert task_pid == shell_pid == str(r.pid)  # SLURM_TASK_PID is the task's own pid
        assert cwd == str(tmp_path)


def test_output_patterns_per_task_and_per_node(tmp_path: Path, steps: list[RunningStep]) -> None:
    """Capture a1 03: -o task%t.env gives one file per task; %n is the node index."""
    _run(
        steps,
        STEP,
        _tasks(tmp_path, "echo $SLURM_PROCID", 4),
        StdioSpec(output="task%t.env", error="err-%n.txt"),
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "err-0.txt",
        "err-1.txt",
        "task0.env",
        "task1.env",
        "task2.env",
        "task3.env",
    ]
    assert (tmp_path / "task2.env").read_text() == "2\n"


def test_stdout_and_stderr_share_the_file_when_no_error_is_given(
    tmp_path: Path, steps: list[RunningStep]
) -> None:
    """Capture f4 07: ``-o both-%j.txt`` and ``echo out; echo err >&2`` -> out, err."""
    _run(steps, BATCH, _tasks(tmp_path, "echo out; echo err >&2"), StdioSpec(output="both-%j.txt"))
    assert (tmp_path / "both-7.txt").read_text() == "out\nerr\n"


def test_open_mode_truncate_and_append(tmp_path: Path, steps: list[RunningStep]) -> None:
    (tmp_path / "log").write_text("old\n")
    _run(steps, BATCH, _tasks(tmp_path, "echo new"), StdioSpec(output="log"))
    assert (tmp_path / "log").read_text() == "new\n"
    _run(steps, BATCH, _tasks(tmp_path, "echo more"), StdioSpec(output="log", open_mode="append"))
    assert (tmp_path / "log").read_text() == "new\nmore\n"


def test_label_prefixes_every_line_with_the_task_id(
    tmp_path: Path, steps: list[RunningStep]
) -> None:
    """srun -l (capture a1 02): ``0: CUDA_VISIBLE_DEVICES=0,1``; stdout and stderr."""
    out = tmp_path / "out"
    fd = os.open(out, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        _run(
            steps,
            STEP,
            _tasks(tmp_path, "echo a; echo b >&2; printf c", 2),
            StdioSpec(label=True),
            stdout_fd=fd,
            stderr_fd=fd,
        )
    finally:
        os.close(fd)
    assert sorted(out.read_text().splitlines()) == ["0: a", "0: b", "0: c", "1: a", "1: b", "1: c"]
    assert [label_width(n) for n in (1, 4, 10, 11, 101)] == [1, 1, 1, 2, 3]


def test_label_width_grows_with_the_task_count(tmp_path: Path, steps: list[RunningStep]) -> None:
    _run(
        steps,
        STEP,
        _tasks(tmp_path, "echo x", 11, per_node=11),
        StdioSpec(output="all.out", label=True),
    )
    lines = sorted((tmp_path / "all.out").read_text().splitlines())
    assert lines[0] == " 0: x" and lines[-1] == "10: x" and len(lines) == 11


def test_input_file(tmp_path: Path, steps: list[RunningStep]) -> None:
    (tmp_path / "in.txt").write_text("hello\n")
    _run(steps, STEP, _tasks(tmp_path, "cat"), StdioSpec(output="o", input="in.txt"))
    assert (tmp_path / "o").read_text() == "hello\n"
    # without -i the batch step reads /dev/null
    _run(steps, BATCH, _tasks(tmp_path, "cat; echo done"), StdioSpec(output="o2"))
    assert (tmp_path / "o2").read_text() == "done\n"


def test_exit_codes_and_signals_are_collected(tmp_path: Path, steps: list[RunningStep]) -> None:
    results = _run(steps, STEP, _tasks(tmp_path, 'exit "$SLURM_PROCID"', 3), StdioSpec(output="o"))
    assert [r.exit_code for r in results] == [0, 1, 2]
    killed = _run(steps, STEP, _tasks(tmp_path, "kill -SEGV $$"), StdioSpec(output="o"))
    assert (killed[0].exit_code, killed[0].signal) == (0, signal.SIGSEGV)


def test_missing_command_fails_with_slurmstepds_message_and_errno(
    tmp_path: Path, steps: list[RunningStep]
) -> None:
    spec = TaskSpec(0, "n1", 0, ("nosuch",), ENV, str(tmp_path))
    (result,) = _run(steps, STEP, [spec], StdioSpec(output="o-%t.out"))
    assert (result.exit_code, result.pid) == (2, None)
    message = "slurmstepd-n1: error: execve(): nosuch: No such file or directory"
    assert result.error == message
    assert (tmp_path / "o-0.out").read_text() == message + "\n"


def test_script_that_is_not_executable(tmp_path: Path, steps: list[RunningStep]) -> None:
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    spec = TaskSpec(0, "n1", 0, ("./run.sh",), ENV, str(tmp_path))
    (result,) = _run(steps, STEP, [spec], StdioSpec(output="o"))
    assert result.exit_code == 13
    # real Slurm appends "./run.sh" to the working directory as written
    assert result.error == (
        f"slurmstepd-n1: error: execve(): {tmp_path}/./run.sh: Permission denied"
    )


def test_missing_interpreter(tmp_path: Path, steps: list[RunningStep]) -> None:
    script = tmp_path / "train.py"
    script.write_text("#!/nonexistent/python3 -u\nprint(1)\n")
    script.chmod(0o755)
    spec = TaskSpec(0, "n1", 0, (str(script),), ENV, str(tmp_path))
    (result,) = _run(steps, STEP, [spec], StdioSpec(output="o", error="e"))
    assert result.exit_code == 2
    expected = (
        "slurmstepd-n1: error: execve(): bad interpreter(/nonexistent/python3 -u): "
        "No such file or directory"
    )
    assert (tmp_path / "e").read_text() == expected + "\n"
    assert (tmp_path / "o").read_text() == ""


def test_unwritable_output_path_fails_the_task_without_a_file(
    tmp_path: Path, steps: list[RunningStep]
) -> None:
    """Capture f4 05: ``-o nosuchdir/out-%j.out``: the launch fails (status 53: sacct
    ``FAILED 0:53``, sbatch --wait rc 1), no file, after the batch step's short wait
    for the folder (`stdio.BATCH_DIR_GRACE`)."""
    log = tmp_path / "slurmd.log"
    fd = os.open(log, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        (result,) = _run(
            steps,
            BATCH,
            _tasks(tmp_path, "echo x"),
            StdioSpec(output="nosuchdir/out-%j.out"),
            stderr_fd=fd,
        )
    finally:
        os.close(fd)
    assert (result.exit_code, result.signal, result.pid) == (0, LAUNCH_FAILED_STATUS, None)
    path = tmp_path / "nosuchdir" / "out-7.out"
    assert result.error == (
        f"slurmstepd-n1: error: Could not open stdout file {path}: No such file or directory"
    )
    assert log.read_text() == result.error + "\n"
    assert not (tmp_path / "nosuchdir").exists()


def test_missing_working_directory_falls_back_to_tmp(
    tmp_path: Path, steps: list[RunningStep]
) -> None:
    """Real ``srun -n2 -N1 -D /nonexistent pwd``: the message 3 times (step + each task)."""
    out = tmp_path / "o"
    gone = str(tmp_path / "gone")
    tasks = [TaskSpec(t, "n1", 0, ("sh", "-c", "pwd"), ENV, gone) for t in range(2)]
    _run(steps, STEP, tasks, StdioSpec(output=str(out)))
    message = (
        f"slurmstepd-n1: error: couldn't chdir to `{gone}': "
        "No such file or directory: going to /tmp instead"
    )
    assert sorted(out.read_text().splitlines()) == ["/tmp", "/tmp", message, message, message]


def _gone(pid: int, within: float = 5.0) -> bool:
    """Signals are asynchronous: give a killed process a moment to die."""
    deadline = time.monotonic() + within
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_cancel_reaches_the_whole_process_tree(tmp_path: Path, steps: list[RunningStep]) -> None:
    """scancel: slurmstepd's message, SIGTERM to every task's process group."""
    step = launch_step(
        BATCH,
        _tasks(tmp_path, "sleep 60 & echo $! > child; wait"),
        StdioSpec(output="slurm-%j.out"),
        kill_wait=5,
    )
    steps.append(step)
    child = tmp_path / "child"
    deadline = time.monotonic() + TIMEOUT
    while not (child.exists() and child.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.02)
    grandchild = int(child.read_text())
    step.terminate(now=lambda: 1767600085)
    (result,) = step.wait(TIMEOUT)
    assert result.signal == signal.SIGTERM
    assert _gone(grandchild)
    assert (tmp_path / "slurm-7.out").read_text() == (
        "slurmstepd-n1: error: *** JOB 7 ON n1 CANCELLED AT 2026-01-05T08:01:25 ***\n"
    )


def test_time_limit_sigterm_then_sigkill_after_kill_wait(
    tmp_path: Path, steps: list[RunningStep]
) -> None:
    """A task ignoring SIGTERM is killed KillWait seconds later; the step is TIMEOUT."""
    start = time.monotonic()
    step = launch_step(
        STEP,
        _tasks(tmp_path, "trap '' TERM; echo up; sleep 60", 2),
        StdioSpec(output="o"),
        time_limit=0.5,
        kill_wait=0.5,
    )
    steps.append(step)
    results = step.wait(TIMEOUT)
    elapsed = time.monotonic() - start
    assert step.timed_out
    assert [r.signal for r in results] == [signal.SIGKILL, signal.SIGKILL]
    assert 0.9 <= elapsed < 5
    text = (tmp_path / "o").read_text()
    assert "slurmstepd-n1: error: *** STEP 5.0 ON n1 CANCELLED AT " in text
    assert text.rstrip().endswith("DUE TO TIME LIMIT ***")
    assert text.count("CANCELLED") == 1  # one message per node (both tasks on n1)


def test_finished_step_leaves_no_zombie_and_no_straggler(
    tmp_path: Path, steps: list[RunningStep]
) -> None:
    step = launch_step(STEP, _tasks(tmp_path, "(sleep 60 &) ; echo $$", 2), StdioSpec(output="o"))
    steps.append(step)
    results = step.wait(TIMEOUT)
    for r in results:
        assert r.pid is not None
        with pytest.raises(ChildProcessError):
            os.waitpid(r.pid, os.WNOHANG)
    leftover = [p.pid for p in processes()
                if p.cmdline == "sleep 60" and _pgid(p.pid) in {r.pid for r in results}]
    assert all(_gone(pid) for pid in leftover)
    assert step.poll() and step.wait() == results


def _pgid(pid: int) -> int:
    try:
        return os.getpgid(pid)
    except ProcessLookupError:
        return -1


def test_wait_times_out_on_a_running_step(tmp_path: Path, steps: list[RunningStep]) -> None:
    step = launch_step(STEP, _tasks(tmp_path, "sleep 60"), StdioSpec(output="o"))
    steps.append(step)
    with pytest.raises(TimeoutError):
        step.wait(0.2)
    assert not step.poll()
    step.signal(signal.SIGUSR1)
    assert step.wait(TIMEOUT)[0].signal == signal.SIGUSR1


def test_batch_script_is_spooled_and_run(tmp_path: Path, steps: list[RunningStep]) -> None:
    spool = tmp_path / "spool"
    path = write_batch_script(str(spool), 7, "#!/bin/sh\necho batch on $SLURMD_NODENAME\n")
    assert path == str(spool / "job00007" / "slurm_script")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o700
    spec = TaskSpec(0, "n1", 0, (path,), {**ENV, "SLURMD_NODENAME": "n1"}, str(tmp_path))
    _run(steps, BATCH, [spec], StdioSpec(output="slurm-%j.out"))
    assert (tmp_path / "slurm-7.out").read_text() == "batch on n1\n"


def test_command_lookup_uses_the_tasks_path(tmp_path: Path) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    tool = bindir / "tool"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    (bindir / "plain").write_text("")
    env = {"PATH": f"/nonexistent:{bindir}"}
    assert resolve_command("tool", env, "/") == str(tool)
    assert resolve_command("plain", env, "/") is None  # not executable
    assert resolve_command("./x", env, "/work") == "/work/./x"
    assert resolve_command("sub/x", env, "/work") is None  # then run relative to cwd
    assert resolve_command("/bin/sh", env, "/") == "/bin/sh"
    assert exec_error_message("x", None, 13, "n2") == (
        "slurmstepd-n2: error: execve(): x: Permission denied"
    )


def test_batch_only_signal_reaches_the_shell_not_its_children(
    tmp_path: Path, steps: list[RunningStep]
) -> None:
    """``--signal=B:USR1``: only the batch shell gets it; its trap runs, the child lives."""
    script = "trap 'echo got USR1; kill $c; exit 0' USR1; sleep 60 & c=$!; echo $c > child; wait"
    step = launch_step(BATCH, _tasks(tmp_path, script), StdioSpec(output="o"))
    steps.append(step)
    child = tmp_path / "child"
    deadline = time.monotonic() + TIMEOUT
    while not (child.exists() and child.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.02)
    step.signal(signal.SIGUSR1, tree=False)
    (result,) = step.wait(TIMEOUT)
    assert (result.exit_code, result.signal) == (0, 0)
    assert (tmp_path / "o").read_text() == "got USR1\n"


def test_done_callback_reports_without_polling(tmp_path: Path, steps: list[RunningStep]) -> None:
    """What slurmd tells the controller when a step ends (its exit codes)."""
    import threading

    got: list[tuple[TaskResult, ...]] = []
    done = threading.Event()

    def report(results: tuple[TaskResult, ...]) -> None:
        got.append(results)
        done.set()

    step = launch_step(
        STEP, _tasks(tmp_path, 'sleep 0.2; exit "$SLURM_PROCID"', 2), StdioSpec(output="o")
    )
    steps.append(step)
    step.add_done_callback(report)
    assert done.wait(TIMEOUT)
    assert [r.exit_code for r in got[0]] == [0, 1]
    late: list[tuple[TaskResult, ...]] = []
    step.add_done_callback(late.append)  # after the end: called at once
    assert late == got
    step.terminate()  # too late to cancel: no message, no error
    assert "CANCELLED" not in (tmp_path / "o").read_text()


def test_batch_output_folder_made_just_after_submission_is_used(
    tmp_path: Path, steps: list[RunningStep]
) -> None:
    """A folder that appears within `stdio.BATCH_DIR_GRACE` (submitit makes its job
    folder right after sbatch returns) gets the batch output; the job runs."""
    import threading

    folder = tmp_path / "later"
    timer = threading.Timer(0.15, folder.mkdir)
    timer.start()
    try:
        (result,) = _run(steps, BATCH, _tasks(tmp_path, "echo x"),
                         StdioSpec(output="later/out-%j.out"))
    finally:
        timer.join()
    assert (result.exit_code, result.signal) == (0, 0)
    assert (folder / "out-7.out").read_text() == "x\n"
