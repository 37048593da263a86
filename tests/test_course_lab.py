"""course/lab.py: what ``python -m course lab`` (scripts/course) gives JupyterLab.
The real browser checks (a terminal, a reading link) are in tests/test_browser.py."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from course.lab import (
    APP_SETTINGS,
    PATH_HOOK,
    TERMINAL_RC,
    lab_arguments,
    path_first,
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
