"""The README's first command opens the course: JupyterLab on lesson 1, a local cluster up.

``scripts/course`` is started as a learner would (plus ``--no-browser`` and a
fixed port/token so the test can talk to it); the test waits until JupyterLab
serves lesson 1 and the local cluster answers, then stops it like Ctrl-C and
checks that the cluster went down with it. The test command itself is what CI
runs (``.ci/run`` calls ``scripts/test``), so it needs no test of its own here.

The clean-up must stop the cluster whatever happens meanwhile: a second Ctrl-C while
it runs, a daemon that does not stop (it is killed when ``cluster down``'s time is up),
a daemon that exited but is not reaped yet (a zombie is not waited for).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest
from realslurm.procs import Proc, proc, processes

from minislurm.cli.cluster import DOWN_TIMEOUT, down

ROOT = Path(__file__).resolve().parents[2]
PYTHON = str(ROOT / ".venv/bin/python")
TOKEN = "t0ken"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _course_env(tmp_path: Path) -> dict[str, str]:
    """A learner's environment with everything of this test under ``tmp_path``."""
    env = dict(os.environ)
    env.update({
        "MINISLURM_STATE_DIR": str(tmp_path / "state"),
        "JUPYTER_CONFIG_DIR": str(tmp_path / "jconf"), "JUPYTER_DATA_DIR": str(tmp_path / "jdata"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "jrun"), "IPYTHONDIR": str(tmp_path / "ipy"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
    })
    env.pop("SLURM_CONF", None)
    return env


#: Starts ``argv[1:]`` with SIGINT at its default disposition, as a terminal starts a
#: command. A suite started in the background of a shell without job control (``nohup
#: scripts/test &`` in a script) inherits SIGINT ignored, and a signal ignored when bash
#: starts cannot be trapped or reset there (bash(1), SIGNALS): scripts/course and
#: JupyterLab would never see the test's Ctrl-C, and both tests failed so.
_AS_FROM_A_TERMINAL = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
                       "os.execv(sys.argv[1], sys.argv[1:])")


def _start_course(env: dict[str, str], port: int) -> subprocess.Popen[bytes]:
    """``scripts/course`` in a session of its own (its process group is what Ctrl-C hits),
    started as from a terminal (`_AS_FROM_A_TERMINAL`)."""
    return subprocess.Popen(
        [PYTHON, "-c", _AS_FROM_A_TERMINAL,
         str(ROOT / "scripts/course"), "--no-browser", f"--port={port}",
         "--ServerApp.port_retries=0", "--allow-root", f"--IdentityProvider.token={TOKEN}"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
    )


def _wait_for_lesson_one(proc: subprocess.Popen[bytes], port: int, env: dict[str, str]) -> None:
    """Until JupyterLab serves lesson 1; then the local cluster must answer."""
    url = (f"http://127.0.0.1:{port}/api/contents/01-what-is-slurm.ipynb"
           f"?content=0&token={TOKEN}")
    deadline, body = time.monotonic() + 120, None
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:
                body = json.load(answer)
            break
        except OSError:
            time.sleep(0.3)
    assert body is not None, "JupyterLab did not serve lesson 1"
    assert body["name"] == "01-what-is-slurm.ipynb"
    status = subprocess.run([PYTHON, "-m", "minislurm", "cluster", "status"],
                            env=env, capture_output=True, text=True, timeout=30)
    assert status.returncode == 0, status.stdout + status.stderr


def _finish(proc: subprocess.Popen[bytes]) -> str:
    """Let the command finish its clean-up (``cluster down``, bounded by DOWN_TIMEOUT plus
    the kill); return its output. Killing it before would kill ``cluster down`` too."""
    try:
        output = proc.communicate(timeout=DOWN_TIMEOUT + 60)[0].decode(errors="replace")
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        output = proc.communicate(timeout=10)[0].decode(errors="replace")
        output += "\n[scripts/course did not stop within its clean-up time]"
    return output


def _never_leave_a_daemon(env: dict[str, str], daemon: Proc | None) -> None:
    """Whatever the test found, no daemon of it stays on the machine (and no other
    process that got its pid after it exited is signalled)."""
    sock = Path(env["MINISLURM_STATE_DIR"]) / "slurmctld.sock"
    if daemon is not None and _alive(daemon):
        os.kill(daemon.pid, signal.SIGCONT)
    if sock.exists() or (daemon is not None and _alive(daemon)):
        subprocess.run([PYTHON, "-m", "minislurm", "cluster", "down"],
                       env=env, capture_output=True, timeout=DOWN_TIMEOUT + 30)
        if daemon is not None and _alive(daemon):  # it did not answer `cluster down` either
            os.kill(daemon.pid, signal.SIGKILL)


def test_ci_runs_exactly_the_readme_test_command() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "scripts/test " in readme.split("\n\n")[1]
    assert "exec scripts/test" in (ROOT / ".ci/run").read_text()


def test_course_command_opens_lesson_one_with_a_cluster(tmp_path: Path) -> None:
    env, port = _course_env(tmp_path), _free_port()
    state = tmp_path / "state"
    proc = _start_course(env, port)
    daemon, output = None, ""
    try:
        _wait_for_lesson_one(proc, port, env)
        daemon = _daemon(state)
    finally:
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C
        output = _finish(proc)
        survived = (state / "slurmctld.sock").exists() or (
            daemon is not None and _alive(daemon))
        _never_leave_a_daemon(env, daemon)
    assert not survived, f"the cluster kept running (slurmctld {daemon}):\n{output}"


def test_a_second_ctrl_c_during_the_clean_up_still_stops_the_cluster(tmp_path: Path) -> None:
    """Ctrl-C twice (JupyterLab says "twice to skip confirmation"): the second one comes
    while the clean-up's ``cluster down`` waits for the daemon. It used to kill
    ``cluster down`` before it had asked the daemon to stop, and the daemon, leading a
    session of its own, kept running. The daemon is frozen (SIGSTOP) from before the
    first Ctrl-C until after the second, so that ``cluster down`` is surely waiting then
    (as it does for a daemon busy on a loaded machine)."""
    env, port = _course_env(tmp_path), _free_port()
    state = tmp_path / "state"
    proc = _start_course(env, port)
    daemon, output, down_seen = None, "", False
    try:
        _wait_for_lesson_one(proc, port, env)
        daemon = _daemon(state)
        os.kill(daemon.pid, signal.SIGSTOP)
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: JupyterLab stops, the clean-up starts
        down_seen = _wait_until(lambda: any("minislurm cluster down" in cmd
                                            for cmd in _session(proc.pid)), 120)
        time.sleep(1.0)  # let its Python start: the old clean-up died of KeyboardInterrupt
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C again
        time.sleep(1.0)
        os.kill(daemon.pid, signal.SIGCONT)
        output = _finish(proc)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)
            output = _finish(proc)
        survived = (state / "slurmctld.sock").exists() or (
            daemon is not None and _alive(daemon))
        _never_leave_a_daemon(env, daemon)
    assert down_seen, f"the clean-up never ran `cluster down`:\n{output}"
    assert not survived, f"the cluster kept running (slurmctld {daemon}):\n{output}"


def test_cluster_down_kills_a_daemon_that_does_not_stop_in_time(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A daemon that never answers (frozen here; stuck or starved in real life) is killed
    when ``cluster down``'s time is up, and its socket and pid file go: the clean-up of
    ``scripts/course`` is bounded and leaves no daemon. It used to wait three times its
    timeout (ping, shutdown, exit), then say "cluster is down" and leave it running."""
    env = _course_env(tmp_path)
    state = tmp_path / "state"
    daemon = _cluster_up(env, state)
    try:
        os.kill(daemon.pid, signal.SIGSTOP)
        capsys.readouterr()
        rc = down(env, timeout=3.0)
        out, err = capsys.readouterr()
        assert (rc, out, err) == (1, "", (
            f"minislurm: slurmctld (pid {daemon.pid}) did not stop within 3 s: killed it "
            "(running jobs go on; 'cluster up' finds them again)\n"))
        assert _wait_until(lambda: not _alive(daemon), 10)
        assert not (state / "slurmctld.sock").exists()
        assert not (state / "slurmctld.pid").exists()
        again = subprocess.run([PYTHON, "-m", "minislurm", "cluster", "down"],
                               env=env, capture_output=True, text=True, timeout=60)
        assert (again.returncode, again.stdout) == (0, "minislurm: no cluster is running\n")
    finally:
        _never_leave_a_daemon(env, daemon)


def test_cluster_down_clears_what_a_killed_daemon_left(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A daemon killed with SIGKILL leaves its socket and pid file: ``cluster down`` finds
    nothing listening, says so and removes them (it used to leave the socket, which
    looks like a running cluster to a clean-up check)."""
    env = _course_env(tmp_path)
    state = tmp_path / "state"
    daemon = _cluster_up(env, state)
    try:
        os.kill(daemon.pid, signal.SIGKILL)
        assert _wait_until(lambda: not _alive(daemon), 30)
        assert (state / "slurmctld.sock").exists() and (state / "slurmctld.pid").exists()
        capsys.readouterr()
        assert down(env, timeout=30.0) == 0
        assert capsys.readouterr() == ("minislurm: no cluster is running\n", "")
        assert not (state / "slurmctld.sock").exists()
        assert not (state / "slurmctld.pid").exists()
    finally:
        _never_leave_a_daemon(env, daemon)


def test_cluster_down_does_not_wait_for_a_daemon_that_exited_unreaped(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A daemon that has exited but whose parent has not reaped it yet (a zombie) is down:
    ``cluster down`` used to count it as running and wait its whole timeout. Here the
    test itself is the daemon's parent and reaps it only at the end."""
    env = _course_env(tmp_path)
    state = tmp_path / "state"
    state.mkdir()
    with open(state / "slurmctld.log", "ab") as log:
        daemon = subprocess.Popen([PYTHON, "-m", "minislurm", "slurmctld", "-D"], env=env,
                                  cwd=state, stdin=subprocess.DEVNULL, stdout=log,
                                  stderr=subprocess.STDOUT, start_new_session=True)
    try:
        def answers() -> bool:
            return subprocess.run([PYTHON, "-m", "minislurm", "cluster", "status"], env=env,
                                  capture_output=True, timeout=60).returncode == 0
        assert _wait_until(answers, 120), (state / "slurmctld.log").read_text()
        capsys.readouterr()
        timeout, started = 90.0, time.monotonic()
        rc = down(env, timeout=timeout)
        took = time.monotonic() - started
        out, err = capsys.readouterr()
        assert (rc, out, err) == (0, "minislurm: cluster is down\n", "")
        exited = proc(daemon.pid)  # exited, not reaped: `down` did not wait for that
        assert exited is not None and exited.state == "Z"
        assert took < timeout / 2, f"cluster down waited {took:.1f} s for a zombie"
        assert not (state / "slurmctld.sock").exists()
    finally:
        if daemon.poll() is None:
            daemon.kill()
        daemon.wait(timeout=30)


def _session(sid: int) -> list[str]:
    """The command lines of the processes in session ``sid``."""
    return [p.cmdline for p in processes() if p.session == sid]


def _wait_until(predicate: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


def _cluster_up(env: dict[str, str], state: Path) -> Proc:
    """``minislurm cluster up`` in ``env``; the daemon it started."""
    up = subprocess.run([PYTHON, "-m", "minislurm", "cluster", "up"],
                        env=env, capture_output=True, text=True, timeout=120)
    assert up.returncode == 0, up.stdout + up.stderr
    return _daemon(state)


def _daemon(state: Path) -> Proc:
    """The daemon ``slurmctld.pid`` names (it runs: the cluster just answered)."""
    found = proc(int((state / "slurmctld.pid").read_text()))
    assert found is not None
    return found


def _alive(process: Proc) -> bool:
    """Whether ``process`` still runs: same pid and start, not exited (a zombie has).
    Another process may get the pid once it has exited (a loaded machine wraps pids in
    minutes)."""
    now = proc(process.pid)
    return now is not None and now.live and now.started == process.started
