"""Standard streams of tasks: ``-o/--output``, ``-e/--error``, ``-i/--input``,
``--open-mode`` and ``srun -l/--label`` (slurmstepd's ``io.c``).

* Patterns are expanded per task (`minislurm.common.filenames.expand_pattern`):
  ``-o task%t.env`` gives one file per task (capture a1 03); a relative path is
  relative to the job's working directory.
* ``--open-mode=truncate`` (default) or ``append``; a path shared by several
  tasks (or by stdout and stderr) is opened once and shared, so the lines of
  ``echo out; echo err >&2`` keep their order (capture f4 07).
* Without ``-e``, stderr goes where stdout goes.  Without ``-o``, streams go to
  the launcher's own stdout/stderr (srun prints them).
* ``-l``: every line is prefixed with the task id, right-aligned to the width
  of the largest task id (``0: ``; ``srun`` client_io ``_wid``), through a pipe
  pumped by a thread per stream.
"""

from __future__ import annotations

import errno
import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from minislurm.common.filenames import expand_pattern
from minislurm.errors import Errno
from minislurm.slurmd.execve import stepd_error
from minislurm.slurmd.tasks import StepIdentity, TaskSpec

__all__ = ["LabelPump", "OutputFiles", "StdioSpec", "label_pipe", "label_width", "open_streams"]

_PER_TASK = re.compile(r"%\d*[tnN]")  # pattern symbols that differ between tasks


@dataclass(frozen=True, slots=True)
class StdioSpec:
    """Where a step's streams go: the ``-o``/``-e``/``-i`` patterns as given.

    ``output``/``error`` ``None`` = the launcher's own stdout/stderr (srun
    without ``-o``); ``error`` ``None`` with an ``output`` = same file as stdout.
    ``input`` is a path pattern, or ``None`` for ``/dev/null`` (the batch step;
    an srun that forwards its stdin passes ``stdin_fd`` to the launcher).
    ``open_mode`` is ``truncate`` or ``append`` (``--open-mode``).
    """

    output: str | None = None
    error: str | None = None
    input: str | None = None
    open_mode: str = "truncate"
    label: bool = False


def label_width(ntasks: int) -> int:
    """Digits of the largest task id (srun's ``_wid``): 4 tasks -> 1, 11 -> 2."""
    return len(str(max(ntasks - 1, 0)))


class OutputFiles:
    """Opens each distinct output path once; shared by the tasks of a step."""

    def __init__(self, open_mode: str) -> None:
        self._append = open_mode == "append"
        self._fds: dict[str, int] = {}

    def open(self, path: str) -> int:
        """The fd of output file ``path`` (absolute; raises OSError as ``open(2)``)."""
        full = os.path.normpath(path)
        if full not in self._fds:
            flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if self._append else os.O_TRUNC)
            self._fds[full] = os.open(full, flags | os.O_CLOEXEC, 0o644)
        return self._fds[full]

    def take(self) -> list[int]:
        """Hand over every fd opened so far (the caller closes them)."""
        fds = list(self._fds.values())
        self._fds.clear()
        return fds


class LabelPump:
    """Copies lines from a pipe to a destination fd, each prefixed ``'N: '``.

    One pump per task stream; ``lock`` serialises writes to the same
    destination so that lines of different tasks never interleave.
    """

    def __init__(
        self,
        read_fd: int,
        dest_fd: int,
        prefix: bytes,
        lock: threading.Lock,
        on_done: Callable[[], None] | None = None,
    ) -> None:
        self._read_fd = read_fd
        self._dest = dest_fd
        self._prefix = prefix
        self._lock = lock
        self._on_done = on_done
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _write(self, data: bytes) -> None:
        with self._lock:
            view = memoryview(data)
            while view:
                try:
                    n = os.write(self._dest, view)
                except OSError:
                    return
                view = view[n:]

    def _run(self) -> None:
        pending = b""
        try:
            while True:
                chunk = os.read(self._read_fd, 65536)
                if not chunk:
                    break
                pending += chunk
                *lines, pending = pending.split(b"\n")
                if lines:
                    self._write(b"".join(self._prefix + line + b"\n" for line in lines))
            if pending:  # write_labelled_message: a last partial line gets a newline
                self._write(self._prefix + pending + b"\n")
        finally:
            os.close(self._read_fd)
            if self._on_done is not None:
                self._on_done()

    def join(self, timeout: float | None = None) -> None:
        """Wait until the pipe reached end of file."""
        self.thread.join(timeout)


def _expand(
    pattern: str,
    identity: StepIdentity,
    spec: TaskSpec,
    hostname_of: Callable[[str], str] | None,
) -> str:
    return expand_pattern(
        pattern,
        job_id=identity.job_id,
        array_job_id=identity.array_job_id,
        array_task_id=identity.array_task_id,
        job_name=identity.job_name,
        user=identity.user,
        node=hostname_of(spec.node) if hostname_of is not None else spec.node,
        node_index=spec.node_index,
        task_id=spec.task_id,
        step_id=identity.step_id,
    )


#: How long the batch step waits for the folder of its ``-o/-e`` file (seconds).
BATCH_DIR_GRACE = 0.5


def _await_directory(path: str, grace: float = BATCH_DIR_GRACE) -> None:
    """Give a missing ``-o/-e`` folder of the batch step ``grace`` seconds to appear.

    On a real cluster slurmstepd opens these files 50-950 ms after ``sbatch`` returns
    (measured with 22.05 on this host); minislurm's step daemon is there in ~35 ms.
    Tools that make the folder right after sbatch returns (submitit does) rely on
    that delay, so the batch step waits a little before it fails as Slurm does
    (``FAILED 0:53``, Reason=JobLaunchFailure).
    """
    folder = os.path.dirname(path) or "."
    deadline = time.monotonic() + grace
    while not os.path.isdir(folder) and time.monotonic() < deadline:
        time.sleep(0.01)


def open_streams(
    identity: StepIdentity,
    spec: TaskSpec,
    stdio: StdioSpec,
    files: OutputFiles,
    std: tuple[int, int, int],
    keep: list[int],
    hostname_of: Callable[[str], str] | None,
) -> tuple[int, int, int, str]:
    """(stdin, stdout, stderr, failure message) of one task (slurmstepd io.c)."""
    stdin, out_fd, err_fd = std

    def where(pattern: str) -> str:
        name = _expand(pattern, identity, spec, hostname_of)
        path = name if os.path.isabs(name) else os.path.join(spec.cwd, name)
        if identity.step_id == "batch":
            _await_directory(path)
        return path

    if stdio.input is not None:
        path = where(stdio.input)
        try:
            stdin = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError as exc:
            return (
                stdin,
                out_fd,
                err_fd,
                _open_failure(identity, spec, "stdin", stdio.input, path, exc),
            )
        keep.append(stdin)
    if stdio.output is not None:  # stdout before stderr: a bad -e leaves the -o file behind
        path = where(stdio.output)
        try:
            out_fd = files.open(path)
        except OSError as exc:
            return (
                stdin,
                out_fd,
                err_fd,
                _open_failure(identity, spec, "stdout", stdio.output, path, exc),
            )
        if stdio.error is None:
            err_fd = out_fd
    if stdio.error is not None:
        path = where(stdio.error)
        try:
            err_fd = files.open(path)
        except OSError as exc:
            return (
                stdin,
                out_fd,
                err_fd,
                _open_failure(identity, spec, "stderr", stdio.error, path, exc),
            )
    return stdin, out_fd, err_fd, ""


def _open_failure(
    identity: StepIdentity, spec: TaskSpec, stream: str, pattern: str, path: str, exc: OSError
) -> str:
    """The message real Slurm gives when a ``-o/-e/-i`` file cannot be opened.

    * batch step: slurmstepd fails the job (``sbatch --wait`` exits 1, no file);
    * srun step, one file for all tasks: srun opens it itself and says
      ``srun: error: Could not open stdout file: No such file or directory``;
    * srun step, a per-task file (``%t``, ``%n``, ``%N``): slurmstepd cannot set
      up the task's IO and srun says ``task 0 launch failed: Slurmd could not connect IO``.
    """
    reason = os.strerror(exc.errno or errno.EIO)
    if identity.step_id == "batch":
        return f"{stepd_error(spec.node)}Could not open {stream} file {path}: {reason}"
    if _PER_TASK.search(pattern):
        return f"srun: error: task {spec.task_id} launch failed: {Errno.ESLURMD_IO_ERROR}"
    return f"srun: error: Could not open {stream} file: {reason}"


def label_pipe(dest: int, prefix: bytes, lock: threading.Lock) -> tuple[int, LabelPump]:
    """A pipe whose lines go to ``dest`` labelled: (write end for the task, its pump)."""
    read_fd, write_fd = os.pipe2(os.O_CLOEXEC)
    return write_fd, LabelPump(read_fd, dest, prefix, lock)
