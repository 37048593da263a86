"""The wire between the commands and slurmctld (`minislurm.common.rpc`).

One JSON object per line on a Unix socket: a request ``{"op": ..., ...}``, an
answer ``{"ok": true, ...}`` or ``{"ok": false, "error": text, "exit_code": n}``.
A Slurm error raised by the handler travels to the client with its exact
text and exit code; a client that finds no controller gets
`ControllerUnavailable`, worded by `unavailable` the way each Slurm command
words it.
"""

from __future__ import annotations

import os
import shutil
import socket
import stat
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from minislurm.common import rpc
from minislurm.errors import ControllerUnavailable, SlurmError


@pytest.fixture
def short_dir() -> Iterator[Path]:
    """A short folder: Unix socket paths are limited to ~107 bytes."""
    path = Path(tempfile.mkdtemp(prefix="rpc-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _serve(path: Path, handler: rpc.Handler) -> rpc.Server:
    server = rpc.Server(path, handler)
    server.serve_in_thread()
    return server


def _echo(request: dict[str, Any]) -> dict[str, Any]:
    if request["op"] == "fail":
        raise SlurmError("scancel: error: Invalid job id specified", 1)
    if request["op"] == "option":
        raise SlurmError("sbatch: error: Invalid --time specification", 255)
    if request["op"] == "slow":
        time.sleep(0.4)
    return {"echo": request}


def test_a_request_and_its_answer(short_dir: Path) -> None:
    server = _serve(short_dir / "ctld.sock", _echo)
    try:
        answer = rpc.call(short_dir / "ctld.sock", {"op": "ping", "n": [1, 2], "text": "é"})
    finally:
        server.shutdown()
        server.server_close()
    assert answer == {"ok": True, "echo": {"op": "ping", "n": [1, 2], "text": "é"}}


def test_a_slurm_error_reaches_the_client_with_its_text_and_exit_code(short_dir: Path) -> None:
    server = _serve(short_dir / "ctld.sock", _echo)
    try:
        with pytest.raises(SlurmError) as failed:
            rpc.call(short_dir / "ctld.sock", {"op": "fail"})
        with pytest.raises(SlurmError) as option:
            rpc.call(short_dir / "ctld.sock", {"op": "option"})
    finally:
        server.shutdown()
        server.server_close()
    assert (failed.value.message, failed.value.exit_code) == (
        "scancel: error: Invalid job id specified", 1)
    assert (option.value.message, option.value.exit_code) == (
        "sbatch: error: Invalid --time specification", 255)


@pytest.mark.parametrize("line", [b"[1, 2]\n", b'{"no_op": 1}\n', b"not json\n"])
def test_a_malformed_request_is_answered_not_crashed_on(short_dir: Path, line: bytes) -> None:
    path = short_dir / "ctld.sock"
    server = _serve(path, _echo)
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(5)
            sock.connect(str(path))
            sock.sendall(line)
            raw = sock.makefile("rb").readline()
        still_up = rpc.call(path, {"op": "ping"})
    finally:
        server.shutdown()
        server.server_close()
    assert raw.startswith(b'{"ok": false, "error": "slurmctld: error: bad request: ')
    assert b'"exit_code": 1' in raw
    assert still_up["ok"] is True


def test_no_socket_means_no_controller(short_dir: Path) -> None:
    with pytest.raises(ControllerUnavailable) as err:
        rpc.call(short_dir / "nothing.sock", {"op": "ping"})
    assert err.value.message == "Unable to contact slurm controller (connect failure)"


def test_a_stale_socket_file_means_no_controller(short_dir: Path) -> None:
    """The socket of a daemon that died (kill -9) is left behind: nobody listens."""
    path = short_dir / "ctld.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.bind(str(path))
    assert path.exists()
    with pytest.raises(ControllerUnavailable):
        rpc.call(path, {"op": "ping"})


def test_the_socket_is_private_and_replaces_a_stale_one(short_dir: Path) -> None:
    path = short_dir / "ctld.sock"
    path.write_text("left over")
    server = _serve(path, _echo)
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
        assert rpc.call(path, {"op": "ping"})["ok"]
    finally:
        server.shutdown()
        server.server_close()
    assert mode == 0o600


def test_requests_are_served_concurrently(short_dir: Path) -> None:
    """srun waiting on a step must not block squeue: one thread per request."""
    path = short_dir / "ctld.sock"
    server = _serve(path, _echo)
    answers: list[dict[str, Any]] = []
    try:
        start = time.monotonic()
        threads = [threading.Thread(target=lambda: answers.append(rpc.call(path, {"op": "slow"})))
                   for _ in range(5)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
        elapsed = time.monotonic() - start
    finally:
        server.shutdown()
        server.server_close()
    assert len(answers) == 5
    assert elapsed < 1.5, elapsed  # five 0.4 s requests one after the other take 2 s


@pytest.mark.parametrize(("prog", "what", "first_line"), [
    ("sbatch", "Batch job submission failed",
     "sbatch: error: Batch job submission failed: Unable to contact slurm controller "
     "(connect failure)"),
    ("srun", "Unable to allocate resources",
     "srun: error: Unable to allocate resources: Unable to contact slurm controller "
     "(connect failure)"),
    ("squeue", "slurm_load_jobs error",
     "slurm_load_jobs error: Unable to contact slurm controller (connect failure)"),
])
def test_unavailable_words_the_error_like_each_client(prog: str, what: str,
                                                      first_line: str) -> None:
    error = rpc.unavailable(prog, what)
    assert isinstance(error, ControllerUnavailable)
    assert error.exit_code == 1
    lines = error.message.splitlines()
    assert lines == [first_line, rpc.CONNECT_HINT]
    assert "python -m minislurm cluster up" in rpc.CONNECT_HINT


def _full_backlog(path: Path) -> tuple[socket.socket, list[socket.socket]]:
    """A listening socket that accepts nothing, its backlog filled until connecting
    gives ``EAGAIN`` (what a daemon swamped by a burst of clients gives)."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(0)
    waiting: list[socket.socket] = []
    while True:
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        client.setblocking(False)
        try:
            client.connect(str(path))
        except BlockingIOError:
            client.close()
            return server, waiting
        waiting.append(client)


def test_a_full_backlog_is_waited_for_not_a_traceback(short_dir: Path) -> None:
    """A daemon that answers late (backlog full) is connected to once it accepts, like
    Slurm's ``_open_controller`` retrying; one that never does is `ControllerUnavailable`
    after the timeout, not an ``OSError`` traceback."""
    path = short_dir / "busy.sock"
    server, waiting = _full_backlog(path)
    try:
        with pytest.raises(ControllerUnavailable):
            rpc.call(path, {"op": "ping"}, timeout=0.5)

        def answer_later() -> None:
            time.sleep(0.3)
            for client in waiting:
                client.close()
            for _ in range(len(waiting) + 1):
                conn, _addr = server.accept()
                conn.settimeout(5)
                if conn.recv(1 << 16):
                    conn.sendall(b'{"ok": true, "late": 1}\n')
                    conn.close()
                    return
                conn.close()

        thread = threading.Thread(target=answer_later)
        thread.start()
        assert rpc.call(path, {"op": "ping"}, timeout=10) == {"ok": True, "late": 1}
        thread.join(10)
    finally:
        server.close()
        for client in waiting:
            client.close()


def test_a_daemon_dying_with_the_request_queued_is_unavailable_not_a_traceback(
        short_dir: Path) -> None:
    """A connection still in the backlog when the daemon dies (SIGKILL: its listening
    socket closes unaccepted) is reset: `ControllerUnavailable`, as for no daemon at all
    (it was a ``ConnectionResetError``, which ``cluster down`` took for a busy daemon and
    waited its whole timeout for)."""
    import select

    path = short_dir / "dying.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(4)

    def die_with_it_queued() -> None:
        select.select([server], [], [], 10)  # a connection waits to be accepted
        server.close()

    thread = threading.Thread(target=die_with_it_queued)
    thread.start()
    try:
        with pytest.raises(ControllerUnavailable):
            rpc.call(path, {"op": "ping"}, timeout=10)
    finally:
        thread.join(10)
