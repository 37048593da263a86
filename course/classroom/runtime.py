"""The Python that learners' servers run when each learner is a Unix user of their own.

The hub's own environment is often out of learners' reach: a virtualenv whose base
interpreter lives in root's home (pyenv under ``/root``, mode 0700) cannot be
executed by any other user, although the virtualenv's packages may be readable.
With ``spawn: unix-users`` the class therefore gets a Python of its own in
``<dir>/python``:

* if the hub's interpreter and environment are usable by others
  (:func:`shared_python`), learners run that very interpreter (nothing is built);
* else a virtualenv is made there (``python -m venv --without-pip``) from a base
  interpreter of the same ``major.minor`` that every user can run (the system's
  ``/usr/bin/python3.X``, found by :func:`learner_base`), and a ``.pth`` file in it
  adds the hub environment's ``site-packages`` (``site.addsitedir``, so that
  environment's own ``.pth`` files apply too): learners get the same packages,
  read-only, without a second installation.  Compiled packages keep working because
  CPython's ABI is the same across the patch releases of one ``major.minor``.

Learners can read that virtualenv and run it; they cannot write to it (root owns it).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from course.classroom.errors import ClassError

#: The file in the class's virtualenv that adds the hub's packages.
PTH = "course_hub_env.pth"


def others_can_run(path: Path) -> bool:
    """Whether a user who is neither owner nor in the group reaches and runs ``path``."""
    real = Path(os.path.realpath(path))
    try:
        if not all(os.stat(folder).st_mode & 0o001 for folder in real.parents):
            return False
        return bool(os.stat(real).st_mode & (0o001 if real.is_file() else 0o005))
    except OSError:
        return False


def others_can_read(path: Path) -> bool:
    """Whether a user who is neither owner nor in the group can read ``path`` (a folder:
    list and enter it)."""
    real = Path(os.path.realpath(path))
    try:
        if not all(os.stat(folder).st_mode & 0o001 for folder in real.parents):
            return False
        return bool(os.stat(real).st_mode & (0o005 if real.is_dir() else 0o004))
    except OSError:
        return False


def shared_python(python: str = sys.executable, prefix: str = sys.prefix) -> bool:
    """Whether other Unix users can run this Python and read its environment (every
    folder on the way searchable, the interpreter executable by others)."""
    exe = Path(os.path.realpath(python))
    for target in (exe, Path(os.path.realpath(prefix))):
        for folder in target.parents:
            if not os.stat(folder).st_mode & 0o001:
                return False
    return bool(os.stat(exe).st_mode & 0o001)


def hub_site_packages() -> Path:
    """The ``site-packages`` of the environment running the hub."""
    return Path(os.path.realpath(sysconfig.get_paths()["purelib"]))


def learner_base(version: tuple[int, int] = sys.version_info[:2],
                 candidates: tuple[str, ...] = ()) -> Path | None:
    """An interpreter of this ``major.minor`` that every user can run, or None."""
    name = f"python{version[0]}.{version[1]}"
    found = [*candidates, f"/usr/bin/{name}", f"/usr/local/bin/{name}"]
    on_path = shutil.which(name)
    if on_path:
        found.append(on_path)
    for cand in found:
        path = Path(cand)
        if path.is_file() and others_can_run(path):
            return path
    return None


def available() -> bool:
    """Whether learners can be given a Python (the hub's, or a class virtualenv)."""
    return shared_python() or (learner_base() is not None
                               and others_can_run(hub_site_packages()))


def learner_python(dest: Path) -> Path:
    """The interpreter learners' servers run: the hub's when others can run it, else the
    class virtualenv at ``dest`` (built or refreshed here); ClassError if neither."""
    if shared_python():
        return Path(sys.executable)
    base = learner_base()
    site = hub_site_packages()
    if base is None:
        raise ClassError(f"spawn: unix-users, but other Unix users cannot run "
                         f"{os.path.realpath(sys.executable)} and there is no "
                         f"python{sys.version_info[0]}.{sys.version_info[1]} they can run "
                         "(install the system's python3, or use spawn: one-user)")
    if not others_can_run(site):
        raise ClassError(f"spawn: unix-users, but other Unix users cannot read {site}: "
                         "make the hub's environment readable, or use spawn: one-user")
    python = dest / "bin" / "python"
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    pth = dest / "lib" / version / "site-packages" / PTH
    line = f"import site; site.addsitedir({str(site)!r})\n"
    if not (python.exists() and pth.exists() and pth.read_text() == line):
        if dest.exists():
            shutil.rmtree(dest)
        subprocess.run([str(base), "-m", "venv", "--without-pip", str(dest)], check=True,
                       capture_output=True, timeout=120)
        pth.write_text(line, encoding="utf-8")
    for folder in (dest, *dest.rglob("*")):
        if folder.is_dir() and not folder.is_symlink():
            folder.chmod(0o755)
    return python
