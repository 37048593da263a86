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
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from minislurm.errors import ControllerUnavailable, Errno, SlurmError

Handler = Callable[[dict[str, Any]], dict[str, Any]]

#: Largest request or answer accepted (a batch script plus its environment fits easily).
MAX_MESSAGE = 64 * 1024 * 1024

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
            sock.connect(os.fspath(socket_path))
            sock.sendall(data)
            reader = sock.makefile("rb")
            line = reader.readline(MAX_MESSAGE + 1)
    except (FileNotFoundError, ConnectionRefusedError) as exc:
        raise ControllerUnavailable(Errno.SLURMCTLD_COMMUNICATIONS_CONNECTION_ERROR) from exc
    if not line:
        raise ControllerUnavailable(Errno.SLURMCTLD_COMMUNICATIONS_CONNECTION_ERROR)
    answer: dict[str, Any] = json.loads(line)
    if not answer.get("ok", False):
        raise SlurmError(str(answer.get("error", "unknown error")), int(answer.get("exit_code", 1)))
    return answer


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
        sock.bind(os.fspath(path))
        os.chmod(path, 0o600)
        sock.listen(64)
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
        if listening is not None:
            super().__init__(os.fspath(socket_path), _RequestHandler, bind_and_activate=False)
            self.socket.close()
            self.socket = listening
            return
        path = Path(socket_path)
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists():
            path.unlink()
        super().__init__(os.fspath(path), _RequestHandler)
        os.chmod(path, 0o600)

    def serve_in_thread(self) -> threading.Thread:
        thread = threading.Thread(target=self.serve_forever, name="rpc", daemon=True)
        thread.start()
        return thread
