"""The user's login environment for ``SLURM_GET_USER_ENV`` (``env_array_user_default``).

sbatch asks for it whenever ``--export`` is neither unset nor exactly ``ALL`` (nor
``NIL``): ``--export=NONE``, ``--export=FOO=bar`` and ``--export=ALL,FOO=bar`` all put
``SLURM_GET_USER_ENV=1`` into the job's environment, and slurmd then starts the batch
script with the user's login environment (``su - <user> -c env``: ``HOME``, ``PATH``,
``MAIL``, whatever the user's profile exports) *under* the job's own environment,
which wins on every name (src/slurmd/slurmd/req.c ``_get_user_env``).  Measured on
22.05.8: ``sbatch --export=NONE`` gives ``HOME``, ``LOGNAME``, ``MAIL=/var/mail/root``,
``PATH`` of root's profile, ``SHELL``, ``USER``, ``SHLVL=2`` and
``SLURM_GET_USER_ENV=1``, and not the submit shell's ``LANG``.

Slurm drops ``DISPLAY``, ``ENVIRONMENT`` and ``HOSTNAME`` from what ``su`` prints
(``_discard_env``) and shell functions.  minislurm runs ``su -`` as root, and
otherwise (its jobs run as the invoking user) that user's login shell with the
environment ``su -`` would start it with; the result is kept for a few seconds.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import time
from collections.abc import Mapping

__all__ = [
    "START_TOKEN", "STOP_TOKEN", "gets_user_env", "login_environment", "parse_env_dump",
    "with_user_env",
]

START_TOKEN = "XXXXSLURMSTARTPARSINGHEREXXXX"
STOP_TOKEN = "XXXXSLURMENDPARSINGHEREXXXXX"
#: ``_discard_env`` of src/common/env.c.
_DISCARDED = ("DISPLAY", "ENVIRONMENT", "HOSTNAME")
#: GetEnvTimeout's default (seconds), plus slack for a loaded machine.
TIMEOUT = 8.0
_CACHE_SECONDS = 30.0
_cache: dict[str, tuple[float, dict[str, str]]] = {}


def parse_env_dump(text: str) -> dict[str, str]:
    """The variables ``env`` printed between the start and stop tokens.

    >>> parse_env_dump("noise\\nXXXXSLURMSTARTPARSINGHEREXXXX\\nA=1\\nHOSTNAME=x\\n"
    ...                "f=() {  echo\\n}\\nXXXXSLURMENDPARSINGHEREXXXXX\\n")
    {'A': '1'}
    """
    env: dict[str, str] = {}
    started = False
    in_function = False
    for line in text.splitlines():
        if not started:
            started = line.startswith(START_TOKEN)
            continue
        if line.startswith(STOP_TOKEN):
            break
        if in_function:
            in_function = line != "}"
            continue
        name, sep, value = line.partition("=")
        if not sep or not name:
            continue
        if value.startswith("() {"):  # an exported shell function: skipped
            in_function = not value.rstrip().endswith("}")
            continue
        if name in _DISCARDED:
            continue
        env[name] = value
    return env


def _command(user: str) -> tuple[list[str], dict[str, str] | None] | None:
    script = f"/bin/echo; /bin/echo {START_TOKEN}; /usr/bin/env; /bin/echo {STOP_TOKEN}"
    su = shutil.which("su", path="/bin:/usr/bin")
    if os.geteuid() == 0 and su:
        return [su, "-", user, "-c", script], {"PATH": "/usr/bin:/bin"}
    try:
        entry = pwd.getpwnam(user)
    except KeyError:
        return None
    if entry.pw_uid != os.geteuid():  # only root may become someone else
        return None
    shell = entry.pw_shell or "/bin/sh"
    env = {
        "HOME": entry.pw_dir,
        "SHELL": shell,
        "USER": user,
        "LOGNAME": user,
        "PATH": "/usr/local/bin:/usr/bin:/bin:/usr/local/games:/usr/games",
        "MAIL": f"/var/mail/{user}",
    }
    return [shell, "-l", "-c", script], env


def login_environment(user: str) -> dict[str, str]:
    """``user``'s login environment (``{}`` when it cannot be had)."""
    now = time.monotonic()
    cached = _cache.get(user)
    if cached is not None and now - cached[0] < _CACHE_SECONDS:
        return dict(cached[1])
    command = _command(user)
    if command is None:
        return {}
    argv, env = command
    try:
        res = subprocess.run(
            argv, env=env, capture_output=True, text=True, timeout=TIMEOUT,
            stdin=subprocess.DEVNULL, cwd="/",
        )
    except (OSError, subprocess.SubprocessError):
        return {}
    found = parse_env_dump(res.stdout)
    if found:
        _cache[user] = (now, found)
    return dict(found)


def gets_user_env(export: str | None) -> bool:
    """Whether sbatch sets ``SLURM_GET_USER_ENV=1`` for this ``--export``."""
    return export is not None and export.upper() not in ("ALL", "NIL")


def with_user_env(job_env: Mapping[str, str], export: str | None, user: str) -> dict[str, str]:
    """The batch step's base environment: the job's exported environment, and for a
    ``--export`` other than ``ALL``/``NIL`` ``SLURM_GET_USER_ENV=1`` over the user's
    login environment."""
    if not gets_user_env(export):
        return dict(job_env)
    merged = login_environment(user)
    merged.update(job_env)
    merged["SLURM_GET_USER_ENV"] = "1"
    return merged
