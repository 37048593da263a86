"""How the course opens in JupyterLab (``python -m course lab``, run by scripts/course).

One place for what the learner's JupyterLab needs beyond ``jupyter lab``:

- **Terminals are minislurm's.** jupyter_server starts a terminal as ``$SHELL -l``; a
  login profile (Debian's /etc/profile for one) rebuilds PATH without the project's
  ``bin/``, so ``sinfo`` would run Debian's slurm-client or nothing. Terminals here are
  ``bash --rcfile course/terminal/bashrc -i``: that file reads the login files first,
  then puts ``MINISLURM_PATH_FIRST`` (``<repo>/bin:<repo>/.venv/bin``) at the head of
  PATH. The exported ``PROMPT_COMMAND`` re-applies it before every prompt, also in a
  ``bash`` or ``bash -l`` started inside the terminal, and ``ENV`` does it for ``sh``
  (both source course/terminal/path.sh). The cluster is found as in any shell
  (``MINISLURM_STATE_DIR``, ``SLURM_CONF`` or the default cluster's state folder).
- **Readings open rendered.** notebooks/readings/NN-name.md are links to the lesson
  readings (course/lessons/NN-name.md); JupyterLab's root is notebooks/, so a notebook
  links ``readings/NN-name.md``. The app settings folder course/jupyter/settings holds
  ``overrides.json``: Markdown files open in Markdown Preview, not in the editor.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path

from course.manifest import ROOT

#: The rc file of the course's terminals and the PATH hook it and PROMPT_COMMAND source.
TERMINAL_RC = Path(__file__).resolve().parent / "terminal" / "bashrc"
PATH_HOOK = Path(__file__).resolve().parent / "terminal" / "path.sh"
#: JupyterLab's app settings folder for the course (overrides.json).
APP_SETTINGS = Path(__file__).resolve().parent / "jupyter" / "settings"
#: The link folder under notebooks/ (JupyterLab's root) holding the readings.
READINGS_DIR = "readings"


def path_first(repo: Path = ROOT) -> str:
    """What goes first on a course terminal's PATH: minislurm's commands, then the venv."""
    return os.pathsep.join((str(repo / "bin"), str(repo / ".venv" / "bin")))


def terminal_environment(env: Mapping[str, str], repo: Path = ROOT) -> dict[str, str]:
    """``env`` plus what the course's terminals need (see the module docstring); PATH
    also starts with `path_first` for the server and the kernels."""
    out = dict(env)
    first = path_first(repo)
    out["MINISLURM_PATH_FIRST"] = first
    out["MINISLURM_PATH_HOOK"] = str(PATH_HOOK)
    out["PROMPT_COMMAND"] = '. "$MINISLURM_PATH_HOOK"'
    out["ENV"] = str(PATH_HOOK)
    path = out.get("PATH", os.defpath)
    if not (path == first or path.startswith(first + os.pathsep)):
        out["PATH"] = first + os.pathsep + path
    return out


def lab_arguments(root: Path, extra: Sequence[str] = ()) -> list[str]:
    """``jupyter lab`` arguments: notebooks/ as root, the course's terminals and
    settings, then ``extra`` (the caller's options and files)."""
    shell = " ".join(shlex.quote(p) for p in ("bash", "--rcfile", str(TERMINAL_RC), "-i"))
    return [
        "lab",
        f"--ServerApp.root_dir={root}",
        f"--ServerApp.terminado_settings=shell_command={shell}",
        f"--LabApp.app_settings_dir={APP_SETTINGS}",
        *extra,
    ]


def readings_links(notebooks: Path = ROOT / "notebooks") -> dict[str, Path]:
    """The reading links under notebooks/readings/: name -> the file each resolves to."""
    folder = notebooks / READINGS_DIR
    if not folder.is_dir():
        return {}
    return {p.name: p.resolve() for p in sorted(folder.iterdir())}
