"""course/lab.py: what ``python -m course lab`` (scripts/course) gives JupyterLab.
The real browser checks (a terminal, a reading link) are in
tests/browser/test_lessons_in_browser.py."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

from realslurm.procs import processes

from course.lab import (
    APP_SETTINGS,
    PATH_HOOK,
    TERMINAL_RC,
    lab_arguments,
    path_first,
    readings_links,
    terminal_environment,
)
from course.manifest import ROOT

HOSTILE = "PATH=/usr/bin:/bin\nexport PATH\n"


def _shell(home: Path, script: str, *args: str) -> str:
    env = terminal_environment({"HOME": str(home), "PATH": "/usr/bin:/bin", "TERM": "dumb"})
    res = subprocess.run(["bash", *args, "-c", script], env=env, capture_output=True,
                         text=True, timeout=30)
    assert res.returncode == 0, res.stderr
    return res.stdout.strip()


def test_terminal_rc_puts_minislurm_first_after_a_hostile_profile(tmp_path: Path) -> None:
    (tmp_path / ".profile").write_text(HOSTILE)
    (tmp_path / ".bashrc").write_text(HOSTILE)
    # what JupyterLab starts: the login files are read first, then bin/ goes first
    out = _shell(tmp_path, "command -v sinfo; echo $PATH", "--rcfile", str(TERMINAL_RC), "-i")
    which, path = out.splitlines()[-2:]
    assert which == str(ROOT / "bin" / "sinfo")
    assert path.startswith(path_first() + ":/usr/bin:/bin")
    # PROMPT_COMMAND (run before each prompt, inherited by a `bash -l` inside) and ENV (sh)
    out = _shell(tmp_path, 'PATH=/usr/bin:/bin; eval "$PROMPT_COMMAND"; command -v sinfo')
    assert out == str(ROOT / "bin" / "sinfo")
    sh = subprocess.run(["sh", "-i", "-c", "command -v sinfo"], capture_output=True, text=True,
                        env=terminal_environment({"HOME": str(tmp_path), "PATH": "/usr/bin"}),
                        timeout=30)
    assert sh.stdout.strip() == str(ROOT / "bin" / "sinfo")


def test_environment_and_arguments() -> None:
    env = terminal_environment({"PATH": "/usr/bin"})
    assert env["PATH"] == path_first() + ":/usr/bin"
    assert terminal_environment(env)["PATH"] == env["PATH"]  # not twice
    assert env["ENV"] == str(PATH_HOOK) and env["MINISLURM_PATH_HOOK"] == str(PATH_HOOK)
    args = lab_arguments(ROOT / "notebooks", ["--no-browser"])
    assert f"--ServerApp.root_dir={ROOT / 'notebooks'}" in args
    assert any(a.startswith("--ServerApp.terminado_settings=shell_command=bash --rcfile ")
               and a.endswith(" -i") for a in args)
    assert args[-1] == "--no-browser"
    overrides = json.loads((APP_SETTINGS / "overrides.json").read_text())
    viewers = overrides["@jupyterlab/docmanager-extension:plugin"]["defaultViewers"]
    assert viewers == {"markdown": "Markdown Preview"}


def test_readings_folder_links_every_reading_and_nothing_else() -> None:
    """notebooks/readings/NN-name.md -> course/lessons/NN-name.md, one per lesson reading;
    nothing else of course/ or quizzes/ is reachable from JupyterLab's root."""
    lessons = ROOT / "course" / "lessons"
    links = readings_links()
    assert links == {p.name: p.resolve() for p in sorted(lessons.glob("[0-9][0-9]-*.md"))}
    for name in links:
        link = ROOT / "notebooks" / "readings" / name
        assert link.is_symlink() and not Path(os.readlink(link)).is_absolute()
    # The pt-BR edition (built, not committed) links its own readings: checked in
    # tests/course/i18n/test_i18n_notebooks.py.
    others = [p for p in (ROOT / "notebooks").rglob("*") if p.is_symlink()
              and p.relative_to(ROOT / "notebooks").parts[0] != "pt-BR"]
    assert sorted(p.name for p in others) == sorted(links)


def test_reading_links_in_notebooks_resolve() -> None:
    """Every ``readings/...`` link a notebook writes names an existing reading link."""
    pattern = re.compile(r"\]\((readings/[^)\s]+)\)")
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in json.loads(nb.read_text())["cells"]:
            if cell["cell_type"] != "markdown":
                continue
            for href in pattern.findall("".join(cell["source"])):
                assert (ROOT / "notebooks" / href).is_file(), f"{nb.name}: {href} is not there"


# ----- stopping `python -m course lab` stops JupyterLab and its kernels ------------------------
def _processes_mentioning(text: str) -> list[int]:
    """Live processes whose command line mentions ``text`` (zombies do not count)."""
    return [p.pid for p in processes() if text in p.cmdline and p.state != "Z"]


def test_a_stopped_course_lab_leaves_no_jupyterlab_or_kernel(tmp_path: Path) -> None:
    """SIGTERM to ``python -m course lab`` (what a test's teardown, a hub or ``kill``
    sends) ends JupyterLab and the kernel it started: killed by default, the wrapper used
    to leave JupyterLab and its kernels running without it (CI collected dozens)."""
    import secrets
    import signal
    import socket
    import sys
    import time
    import urllib.request

    runtime = tmp_path / "runtime"
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(runtime),
           "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
           "JUPYTER_DATA_DIR": str(tmp_path / "data"), "IPYTHONDIR": str(tmp_path / "ipy"),
           "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "ws"), "PYTHONPATH": str(ROOT)}
    env.pop("COURSE_LANG", None)
    (tmp_path / "root").mkdir()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    token = secrets.token_hex(16)
    proc = subprocess.Popen(
        [sys.executable, "-m", "course", "lab", "--root", str(tmp_path / "root"),
         "--no-browser", "--ip=127.0.0.1", f"--port={port}", "--ServerApp.port_retries=0",
         "--allow-root", f"--IdentityProvider.token={token}"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 240
        while True:
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2).close()
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, "no JupyterLab"
                time.sleep(0.3)
        req = urllib.request.Request(f"{base}/api/kernels?token={token}", data=b"{}",
                                     method="POST")
        urllib.request.urlopen(req, timeout=60).close()
        while not [p for p in _processes_mentioning(str(runtime)) if p != proc.pid]:
            assert time.monotonic() < deadline, "the kernel did not start"
            time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) is not None
        deadline = time.monotonic() + 60
        while left := _processes_mentioning(str(tmp_path)):
            assert time.monotonic() < deadline, f"still running after course lab: {left}"
            time.sleep(0.2)
    finally:
        for pid in _processes_mentioning(str(tmp_path)):
            os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
