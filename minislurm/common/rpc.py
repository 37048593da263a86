"""The wire between the commands and slurmctld: JSON messages on a Unix socket.

Real Slurm's commands talk to slurmctld over its RPC protocol on
``SlurmctldPort`` (src/common/slurm_protocol_api.c). minislurm keeps the idea
and drops the bytes: one JSON object per line on a Unix socket in the
controller's state directory (``StateSaveLocation``). A request is
``{"op": name, ...arguments}``; the answer is ``{"ok": true, ...}`` or
``{"ok": false, "error": text, "exit_code": n}``.

When no controller answers, `call` raises `ControllerUnavailable` with the
text Slurm's clients print when slurmctld is down.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import socketserver
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from minislurm.common.wire import MAX_MESSAGE, SUN_PATH_MAX
from minislurm.errors import ControllerUnavailable, Errno, SlurmError

Handler = Callable[[dict[str, Any]], dict[str, Any]]



@contextlib.contextmanager
def socket_address(path: str | os.PathLike[str]) -> Iterator[str]:
    """An address that binds or connects the Unix socket ``path`` however deep it lies.

    slurmctld's socket is ``$MINISLURM_STATE_DIR/slurmctld.sock`` and a step daemon's
    ``SlurmdSpoolDir/<node>_<jobid>.<stepid>`` (``stepd_api.c``), with the spool under
    ``$MINISLURM_STATE_DIR``, which may be deep (a pytest-xdist worker's tmp folder gave
    110 bytes). `call`, `listening_socket` and `Server` use it. ``sun_path`` holds 108
    bytes: a longer path is reached through its folder's descriptor,
    ``/proc/self/fd/<fd>/<name>`` (the socket file is still created at ``path``).
    The descriptor is open while the block runs (for ``bind`` or ``connect``).
    """
    text = os.fspath(path)
    if len(os.fsencode(text)) < SUN_PATH_MAX:
        yield text
        return
    where = Path(text)
    folder = os.open(where.parent, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        yield f"/proc/self/fd/{folder}/{where.name}"
    finally:
        os.close(folder)


CONNECT_HINT = (
    "(minislurm: no controller is running; start one with "
    "'python -m minislurm cluster up')"
)


def unavailable(prog: str, what: str) -> ControllerUnavailable:
    """The error a client prints when slurmctld does not answer.

    ``what`` is the client's own lead-in, e.g. ``Batch job submission failed``
    for sbatch or ``slurm_load_jobs error`` for squeue.
    """
    if what.endswith("error"):
        text = f"{what}: {Errno.SLURMCTLD_COMMUNICATIONS_CONNECTION_ERROR}"
    else:
        text = (f"{prog}: error: {what}: "
                f"{Errno.SLURMCTLD_COMMUNICATIONS_CONNECTION_ERROR}")
    return ControllerUnavailable(f"{text}\n{CONNECT_HINT}", exit_code=1)


def call(socket_path: str | os.PathLike[str], request: Mapping[str, Any],
         *, timeout: float | None = 30.0) -> dict[str, Any]:
    """Send one request and return the answer; raise `SlurmError` on ``ok: false``.

    Raises `ControllerUnavailable` (without the client-specific lead-in; use
    `unavailable` to word it) when nothing listens on ``socket_path``.
    """
    data = (json.dumps(request) + "\n").encode()
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout)
            _connect(sock, socket_path, timeout)
            sock.sendall(data)
            reader = sock.makefile("rb")
            line = reader.readline(MAX_MESSAGE + 1)
    except (FileNotFoundError, ConnectionRefusedError, BlockingIOError, ConnectionResetError,
            BrokenPipeError) as exc:
        # reset/broken before any answer: the daemon died with this connection queued
        # (just after a SIGKILL, connect still succeeds into the closing backlog)
        raise ControllerUnavailable(Errno.SLURMCTLD_COMMUNICATIONS_CONNECTION_ERROR) from exc
    if not line:
        raise ControllerUnavailable(Errno.SLURMCTLD_COMMUNICATIONS_CONNECTION_ERROR)
    answer: dict[str, Any] = json.loads(line)
    if not answer.get("ok", False):
        raise SlurmError(str(answer.get("error", "unknown error")), int(answer.get("exit_code", 1)))
    return answer


def _connect(sock: socket.socket, socket_path: str | os.PathLike[str],
             timeout: float | None) -> None:
    """Connect ``sock`` to ``socket_path`` (however deep: `socket_address`). A daemon whose
    backlog is full (a burst of clients on a loaded machine) refuses with ``EAGAIN``:
    tried again, as Slurm's ``_open_controller`` retries its connection, until
    ``timeout`` (``MessageTimeout``'s role) has passed."""
    deadline = time.monotonic() + (timeout if timeout is not None else 30.0)
    pause = 0.01
    while True:
        try:
            with socket_address(socket_path) as address:
                sock.connect(address)
            return
        except BlockingIOError:
            if time.monotonic() + pause > deadline:
                raise
            time.sleep(pause)
            pause = min(pause * 2, 0.5)


class _RequestHandler(socketserver.StreamRequestHandler):
    server: Server

    def handle(self) -> None:
        line = self.rfile.readline(MAX_MESSAGE + 1)
        if not line:
            return
        try:
            request = json.loads(line)
            if not isinstance(request, dict) or not isinstance(request.get("op"), str):
                raise ValueError("a request is a JSON object with an 'op'")
            answer = self.server.handler(request)
            answer.setdefault("ok", True)
        except SlurmError as exc:
            answer = {"ok": False, "error": exc.message, "exit_code": exc.exit_code}
        except (ValueError, TypeError, KeyError) as exc:
            answer = {"ok": False, "error": f"slurmctld: error: bad request: {exc}", "exit_code": 1}
        # the client may have gone away (e.g. srun interrupted): nothing to answer then
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write((json.dumps(answer) + "\n").encode())


#: Connections a daemon's socket queues before answering (``listen``'s backlog): the
#: commands and step daemons of a busy cluster connect in bursts.
BACKLOG = 128


def listening_socket(socket_path: str | os.PathLike[str]) -> socket.socket:
    """A Unix socket bound to ``socket_path`` and listening (mode 0600).

    slurmd creates a step daemon's socket before starting it and hands the open socket
    over (`Server` with ``listening=``): a request sent at once waits in the backlog
    until the step daemon answers, instead of finding no socket.
    """
    path = Path(socket_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        with socket_address(path) as address:
            sock.bind(address)
        os.chmod(path, 0o600)
        sock.listen(BACKLOG)
    except OSError:
        sock.close()
        raise
    return sock


class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    """A threaded Unix-socket server calling ``handler(request) -> answer``.

    ``listening``: serve an already bound and listening socket (see `listening_socket`).
    """

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, socket_path: str | os.PathLike[str], handler: Handler,
                 *, listening: socket.socket | None = None) -> None:
        self.handler = handler
        super().__init__(os.fspath(socket_path), _RequestHandler, bind_and_activate=False)
        self.socket.close()
        self.socket = listening if listening is not None else listening_socket(socket_path)

    def serve_in_thread(self) -> threading.Thread:
        thread = threading.Thread(target=self.serve_forever, name="rpc", daemon=True)
        thread.start()
        return thread
