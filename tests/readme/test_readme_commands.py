"""The README's first command opens the course: JupyterLab on lesson 1, a local cluster up.

``scripts/course`` is started as a learner would (plus ``--no-browser`` and a
fixed port/token so the test can talk to it); the test waits until JupyterLab
serves lesson 1 and the local cluster answers, then stops it like Ctrl-C and
checks that the cluster went down with it. The test command itself is what CI
runs (``.ci/run`` calls ``scripts/test``), so it needs no test of its own here.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

from minislurm.cli.cluster import DOWN_TIMEOUT

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_ci_runs_exactly_the_readme_test_command() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "scripts/test " in readme.split("\n\n")[1]
    assert "exec scripts/test" in (ROOT / ".ci/run").read_text()


def test_course_command_opens_lesson_one_with_a_cluster(tmp_path: Path) -> None:
    port, token = _free_port(), "t0ken"
    env = dict(os.environ)
    env.update({
        "MINISLURM_STATE_DIR": str(tmp_path / "state"),
        "JUPYTER_CONFIG_DIR": str(tmp_path / "jconf"), "JUPYTER_DATA_DIR": str(tmp_path / "jdata"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "jrun"), "IPYTHONDIR": str(tmp_path / "ipy"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
    })
    env.pop("SLURM_CONF", None)
    proc = subprocess.Popen(
        [str(ROOT / "scripts/course"), "--no-browser", f"--port={port}",
         "--ServerApp.port_retries=0", "--allow-root", f"--IdentityProvider.token={token}"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
    )
    pid_file, sock = tmp_path / "state" / "slurmctld.pid", tmp_path / "state" / "slurmctld.sock"
    daemon, output = None, ""
    try:
        url = (f"http://127.0.0.1:{port}/api/contents/01-what-is-slurm.ipynb"
               f"?content=0&token={token}")
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
        status = subprocess.run([str(ROOT / ".venv/bin/python"), "-m", "minislurm", "cluster",
                                 "status"], env=env, capture_output=True, text=True, timeout=30)
        assert status.returncode == 0, status.stdout + status.stderr
        daemon = int(pid_file.read_text())
    finally:
        # Ctrl-C, then let the command finish its own clean-up (`cluster down`, which
        # waits up to its DOWN_TIMEOUT for the daemon to exit): killing the command
        # before that would kill `cluster down` too and leave the daemon running.
        os.killpg(proc.pid, signal.SIGINT)
        try:
            output = proc.communicate(timeout=DOWN_TIMEOUT + 60)[0].decode(errors="replace")
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            output = proc.communicate(timeout=10)[0].decode(errors="replace")
            output += "\n[scripts/course did not stop within its clean-up time]"
        survived = sock.exists() or (daemon is not None and _alive(daemon))
        if survived:  # never leave a daemon behind on the machine
            subprocess.run([str(ROOT / ".venv/bin/python"), "-m", "minislurm", "cluster", "down"],
                           env=env, capture_output=True, timeout=DOWN_TIMEOUT + 30)
            if daemon is not None and _alive(daemon):  # it did not answer `cluster down` either
                os.kill(daemon, signal.SIGKILL)
    assert not survived, f"the cluster kept running (slurmctld pid {daemon}):\n{output}"


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists and has not exited (a zombie has exited)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"
