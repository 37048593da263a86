"""What slurmstepd does around ``execve`` (src/slurmd/slurmstepd/task.c).

* `resolve_command`: the command is looked up in the *task's* ``PATH``
  (``_build_path``), not the daemon's;
* `spawn`: the task becomes a session leader (``setsid``) with exactly its
  environment plus ``SLURM_TASK_PID`` = its own pid, in its working directory
  (or ``/tmp`` with slurmstepd's ``couldn't chdir`` message);
* when ``execve`` fails, `exec_error_message` is what the task's stderr gets,
  and the task's exit code is ``errno`` (ENOENT -> 2, EACCES -> 13);
* `write_batch_script`: the batch script is spooled as ``job%05u/slurm_script``
  with mode 0700, so a script file without execute permission still runs.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import subprocess
from collections.abc import Mapping, Sequence

__all__ = [
    "chdir_error",
    "exec_error_message",
    "resolve_command",
    "spawn",
    "stepd_error",
    "write_batch_script",
    "write_line",
]


def stepd_error(node: str) -> str:
    """The prefix of slurmstepd's messages in a task's stderr: ``slurmstepd-n1: error: ``.

    Real 22.05.8 names itself after its node (``slurmstepd-<NodeName>``), as the
    real cluster of tests/realslurm shows for execve and cancel messages.
    """
    return f"slurmstepd-{node}: error: "


_clearenv = ctypes.CDLL(None, use_errno=True).clearenv  # libc clearenv(3)


def resolve_command(command: str, env: Mapping[str, str], cwd: str) -> str | None:
    """slurmstepd's ``_build_path``: the file ``execve`` will run, or ``None``.

    An absolute path is taken as it is; a path starting with ``.`` is
    appended to ``cwd`` *as written* (real Slurm reports
    ``execve(): /work/dir/./noexec.sh: Permission denied``); any other name is
    searched in the task's ``PATH`` for an executable regular file.  ``None``:
    not found, ``execve`` then runs the name relative to ``cwd``.
    """
    if command.startswith("/"):
        return command
    if command.startswith("."):
        return f"{cwd}/{command}"
    for directory in env.get("PATH", "").split(":"):
        candidate = os.path.join(directory or ".", command)
        if not os.path.isabs(candidate):
            candidate = os.path.join(cwd, candidate)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def exec_error_message(command: str, path: str | None, err: int, node: str) -> str:
    """What slurmstepd prints when ``execve`` fails (task.c ``exec_task``).

    >>> exec_error_message("nosuch", None, 2, "n1")
    'slurmstepd-n1: error: execve(): nosuch: No such file or directory'
    """
    if err == errno.ENOENT and path is not None:
        try:
            with open(path, "rb") as script:
                head = script.read(256)
        except OSError:
            head = b""
        if len(head) >= 3 and head.startswith(b"#!"):
            interp = head[2:].split(b"\n", 1)[0].decode(errors="replace")
            return f"{stepd_error(node)}execve(): bad interpreter({interp}): {os.strerror(err)}"
    return f"{stepd_error(node)}execve(): {path or command}: {os.strerror(err)}"


def write_batch_script(spool_dir: str, job_id: int, text: str) -> str:
    """Write the batch script where slurmd keeps it (``job%05u/slurm_script``, 0700)."""
    job_dir = os.path.join(spool_dir, f"job{job_id:05d}")
    os.makedirs(job_dir, mode=0o700, exist_ok=True)
    path = os.path.join(job_dir, "slurm_script")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.chmod(path, 0o700)
    return path


def write_line(fd: int, text: str) -> None:
    with contextlib.suppress(OSError):
        os.write(fd, (text + "\n").encode())


def chdir_error(cwd: str, node: str) -> str:
    """slurmstepd's message for a working directory that does not exist."""
    return (
        f"{stepd_error(node)}couldn't chdir to `{cwd}': {os.strerror(errno.ENOENT)}: "
        "going to /tmp instead"
    )


def spawn(
    argv: Sequence[str],
    env: Mapping[str, str],
    cwd: str,
    stdin: int,
    stdout: int,
    stderr: int,
    *,
    node: str,
    first_on_node: bool = False,
) -> subprocess.Popen[bytes] | tuple[int, str]:
    """Fork/exec one task; on failure ``(exit code, message)`` (message already in stderr).

    A missing ``cwd`` is reported once per task plus once by the step daemon
    itself (``first_on_node``): real Slurm prints the ``couldn't chdir`` line
    three times for ``srun -n2 -N1 -D /nonexistent``.
    """
    if not os.path.isdir(cwd):
        for _ in range(2 if first_on_node else 1):
            write_line(stderr, chdir_error(cwd, node))
        cwd = "/tmp"
    command = argv[0]
    path = resolve_command(command, env, cwd)
    task_env = dict(env)

    def child_setup() -> None:  # runs in the child between fork and exec
        # The C environment may hold more than os.environ (readline exports
        # LINES/COLUMNS): empty it for real, then set exactly the task's.
        _clearenv()
        for name, value in task_env.items():
            os.putenv(name, value)
        os.putenv("SLURM_TASK_PID", str(os.getpid()))

    target = path if path is not None else os.path.join(".", command)
    try:
        return subprocess.Popen(
            list(argv),
            executable=target,
            cwd=cwd,
            env=None,
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,
            preexec_fn=child_setup,  # sets SLURM_TASK_PID=getpid() before exec
        )
    except OSError as exc:
        code = exc.errno or errno.ENOENT
        message = exec_error_message(command, path, code, node)
        write_line(stderr, message)
        return code & 0xFF, message
