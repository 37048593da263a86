"""Driving the course's JupyterLab, and a real chromium through Playwright: what the
browser tests and the JupyterLab tests share. `running_lab` starts JupyterLab as
``scripts/course`` does (``python -m course lab``), in a folder of its own (HOME with
hostile login files, its own Jupyter and minislurm state folders); `open_and_run` opens
a notebook (in a fresh workspace, or next in the JupyterLab the page already shows, as a
learner goes from one lesson to the next), runs every cell and checks that none errored.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from ddp_notebooks import own_first_job_id

from course.manifest import ROOT

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--no-first-run"]
SCREENSHOTS = ROOT / "build" / "screenshots"
#: A learner's login files that rebuild PATH without the project's bin/ (Debian's
#: /etc/profile does the same for root): the course's terminals must still be minislurm's.
HOSTILE_PROFILE = "PATH=/usr/local/bin:/usr/bin:/bin\nexport PATH\n"
#: Seconds JupyterLab may take to answer after its start: its imports alone took over 60 s
#: on a 2-core machine at load 25 (its log still empty), 5-10 s on a quiet one.
LAB_START = 240
#: Who takes the quizzes in the browser (JupyterLab runs as a hub user of that name).
QUIZ_LEARNER = "student"
#: What the interface says in each edition: the File menu, the predict step's words.
EDITION_WORDS = {
    "en": {"menu": "File", "predict": "Predict first:", "check": "Check",
           "explore": "Now explore"},
    "pt-BR": {"menu": "Arquivo", "predict": "Preveja primeiro:", "check": "Verificar",
              "explore": "Agora explore"},
}

try:
    from playwright.sync_api import Page, sync_playwright
except ImportError:  # pragma: no cover - depends on the machine
    HAVE_PLAYWRIGHT = False
else:
    HAVE_PLAYWRIGHT = True

#: The browser tests' module marks: slow, and skipped (saying why) without chromium or
#: playwright.
BROWSER_MARKS = [
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.is_file(),
                       reason="chromium is not installed at /usr/bin/chromium "
                              "(scripts/install-system-packages installs it)"),
    pytest.mark.skipif(not HAVE_PLAYWRIGHT, reason="playwright is not installed"),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def write_settings(folder: Path) -> None:
    """No news pop-up; every cell kept in the DOM (no windowing) so all can be checked."""
    for plugin, value in (
        ("@jupyterlab/apputils-extension/notification",
         {"fetchNews": "false", "checkForUpdates": False}),
        ("@jupyterlab/notebook-extension/tracker", {"windowingMode": "none"}),
    ):
        path = folder / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value))


def lab_env(tmp: Path) -> dict[str, str]:
    """The environment JupyterLab runs in: this process's, with Jupyter's, JupyterLab's
    and minislurm's folders under ``tmp``, a HOME whose profile rebuilds PATH, the quizzes'
    learner, no SLURM_CONF or COURSE_LANG, and a ``COURSE_FIRST_JOB_ID`` of the worker's
    own (tests/ddp_notebooks.py: its DDP lessons meet no other test's rendezvous port)."""
    home = tmp / "home"
    home.mkdir()
    for name in (".profile", ".bashrc"):
        (home / name).write_text(HOSTILE_PROFILE)
    env = dict(os.environ)
    for var in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR"):
        env[var] = str(tmp / var.lower())
    env["JUPYTERLAB_SETTINGS_DIR"] = str(tmp / "settings")
    env["JUPYTERLAB_WORKSPACES_DIR"] = str(tmp / "workspaces")
    env["XDG_CACHE_HOME"] = str(tmp / "cache")
    env["HOME"] = str(home)
    env["MINISLURM_STATE_DIR"] = str(tmp / "state")
    env["PYTHONPATH"] = str(ROOT)
    env["JUPYTERHUB_USER"] = QUIZ_LEARNER  # the quizzes' learner (quizzes/identity.py)
    env["COURSE_FIRST_JOB_ID"] = own_first_job_id()
    env.pop("SLURM_CONF", None)
    env.pop("COURSE_LANG", None)  # the switch is --lang, as scripts/course passes it
    write_settings(tmp / "settings")
    return env


@contextmanager
def running_lab(tmp: Path, root: Path, env: dict[str, str],
                extra: Sequence[str] = ()) -> Iterator[tuple[str, str]]:
    """``python -m course lab [extra] --root root`` on a free loopback port with a fresh
    token, in ``tmp`` with ``env`` (`lab_env`); yields (base url, token) once it answers,
    fails with its log if it does not start in 60 s; stopped on exit."""
    port, token = free_port(), secrets.token_hex(16)
    log = (tmp / "lab.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "course", "lab", *extra, "--root", str(root), "--no-browser",
         "--ip=127.0.0.1", f"--port={port}", "--ServerApp.port_retries=0", "--allow-root",
         f"--IdentityProvider.token={token}", "--LabApp.expose_app_in_browser=True"],
        cwd=tmp, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + LAB_START
        while True:
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("JupyterLab did not start:\n" + (tmp / "lab.log").read_text())
                time.sleep(0.3)
        yield base, token
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        log.close()


@contextmanager
def launched_chromium() -> Iterator[Any]:
    """Headless chromium through Playwright (`CHROMIUM`, `FLAGS`)."""
    assert HAVE_PLAYWRIGHT
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
        yield b
        b.close()


_BUSY = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  if (!w || !w.sessionContext || !w.content) return 'no notebook';
  const k = w.sessionContext.session && w.sessionContext.session.kernel;
  if (!k) return 'no kernel';
  if (k.status !== 'idle') return k.status;
  const running = w.content.widgets.filter(c => c.model.type === 'code' &&
      c.node.querySelector('.jp-InputPrompt') &&
      c.node.querySelector('.jp-InputPrompt').textContent.includes('*'));
  return running.length ? 'running ' + running.length : 'idle';
}"""


def wait_idle(page: Page, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    quiet = 0
    while time.monotonic() < deadline:
        state = page.evaluate(_BUSY)
        quiet = quiet + 1 if state == "idle" else 0
        if quiet >= 3:
            return
        page.wait_for_timeout(500)
    pytest.fail(f"the kernel was still busy after {seconds:.0f} s ({page.evaluate(_BUSY)})")


def errors(page: Page) -> list[str]:
    return page.evaluate("""() => {
      const nb = '#' + window.jupyterapp.shell.currentWidget.id;
      const errs = Array.from(document.querySelectorAll(
          nb + ' .jp-OutputArea-output[data-mime-type*="error"]'))
          .map(e => e.innerText.slice(0, 2000));
      const tb = Array.from(document.querySelectorAll(
          nb + ' .jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'))
          .map(e => e.innerText).filter(t => t.includes('Traceback') || t.includes('Error'));
      return errs.concat(tb.map(t => t.slice(0, 2000)));
    }""")


#: The notebook the page shows is ``path``, its kernel started and idle.
_READY = """(path) => {
  if (!window.jupyterapp) return false;
  const w = window.jupyterapp.shell.currentWidget;
  const s = w && w.sessionContext && w.sessionContext.session;
  return !!(s && s.kernel && s.kernel.status === 'idle' && w.context
            && w.context.path === path);
}"""

#: Close the notebook the page shows as a learner leaving it would end it: its kernel shut
#: down (no lesson's processes outlive it), its unsaved outputs dropped (no "Save your
#: work" dialog). True when the app is left showing no dialog, ready for the next one.
_LEAVE = """async () => {
  const app = window.jupyterapp;
  const w = app && app.shell.currentWidget;
  if (!w || !w.sessionContext || !w.context) return false;
  await w.sessionContext.shutdown();
  w.context.model.dirty = false;
  w.close();
  return document.querySelectorAll('.jp-Dialog').length === 0;
}"""


#: Run the notebook's cells of these indices, one after another, each once the one before
#: has run (NotebookActions.run's promise), as a learner pressing Shift+Enter would.
_RUN_CELLS = """async (indices) => {
  const app = window.jupyterapp;
  const nb = app.shell.currentWidget.content;
  for (const i of indices) {
    nb.activeCellIndex = i;
    nb.deselectAll();
    await app.commands.execute('notebook:run-cell');
  }
}"""


def open_and_run(page: Page, lab: tuple[str, str], notebook: Path, workspace: str,
                 leave_out: Collection[int] = ()) -> str:
    """Open ``notebook``, clear its outputs, run all its cells (all but the cells of the
    indices ``leave_out``, the others one by one), wait for the kernel to be idle and
    check that no cell errored; returns the notebook panel's CSS selector.

    A page that already shows this JupyterLab with an earlier notebook (a module's
    lessons, one after another on one page) closes it (`_LEAVE`) and opens ``notebook``
    in the same app (``docmanager:open``); loading JupyterLab again took about 7 s of
    chromium's CPU per lesson, opening a notebook in the loaded app about 3. Otherwise
    (a new page, or one left with a dialog) JupyterLab is loaded afresh in its own
    ``workspace``."""
    base, token = lab
    if page.url.startswith(base) and page.evaluate(_LEAVE):
        page.evaluate("(p) => { window.jupyterapp.commands.execute('docmanager:open',"
                      " {path: p}); }", notebook.name)
    else:
        page.goto(f"{base}/lab/workspaces/{workspace}/tree/{notebook.name}?reset&token={token}")
    page.wait_for_function(_READY, arg=notebook.name, timeout=90_000)
    page.evaluate("() => window.jupyterapp.commands.execute("
                  "'notebook:clear-all-cell-outputs')")
    if leave_out:
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        page.evaluate(_RUN_CELLS, [i for i, c in enumerate(cells)
                                   if c["cell_type"] == "code" and i not in leave_out])
    else:
        page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_timeout(1000)
    wait_idle(page, 300)
    panel = "#" + page.evaluate("() => window.jupyterapp.shell.currentWidget.id")
    assert errors(page) == [], f"{notebook.name}: cells errored"
    return panel


def menu_bar(page: Page) -> list[str]:
    """The labels of JupyterLab's menu bar (File, Edit, ... or Arquivo, Editar, ...)."""
    page.wait_for_selector("#jp-MainMenu .lm-MenuBar-itemLabel", timeout=60_000)
    return list(page.eval_on_selector_all("#jp-MainMenu .lm-MenuBar-itemLabel",
                                          "els => els.map(e => e.textContent)"))
