"""How a command started from a shell reaches the controller.

A running controller (``python -m minislurm slurmctld``, started by
``python -m minislurm cluster up``) listens on a Unix socket in its state
directory. A command forwards its arguments, environment, working directory,
standard input and the caller's identity there; the controller runs the very
same ``run(argv, ctx)`` against its live state and sends back what to print.

With no controller listening, the command runs here with a context whose
``controller()`` raises `ControllerUnavailable`: option errors are reported
exactly as without a controller in Slurm, and anything that needs slurmctld
fails with Slurm's "Unable to contact slurm controller" text plus a hint.

A learner types these commands, so their start is kept short: `quick_forward`
(what ``squeue``, ``sbatch``, ... do first) needs only modules written in C
(``_socket``, ``_json``, ``select``, ``pwd``, ``grp``) and finds the socket
without parsing slurm.conf (`quick_state_dir`); only when no controller answers
is the command's own module imported (with the options parser and, for the
offline answers, the controller). Started by ``bin/`` (``python -S``) a
forwarded ``squeue`` costs about 10 ms of Python before its request leaves.
"""

from __future__ import annotations

import os
import sys

from minislurm.cli.identity import process_identity
from minislurm.common.wire import MAX_MESSAGE, SUN_PATH_MAX

TYPE_CHECKING = False  # typing itself costs a forwarded command ~5 ms (re, collections)
if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path
    from typing import Any

    from minislurm.cli.common import Context

#: Seconds sbatch waits for a piped script to show data (see `_read_stdin_if_needed`).
_STDIN_GRACE = 0.2


def quick_state_dir(env: dict[str, str] | os._Environ[str]) -> str | None:
    """`state_dir` without importing or parsing the configuration, or None if unsure.

    ``$MINISLURM_STATE_DIR``, else ``<XDG_STATE_HOME or ~/.local/state>/minislurm/<name>``
    with ``<name>`` the ``ClusterName=`` line of ``$SLURM_CONF`` (or of the embedded
    default), lowercased as slurmctld does. None -- take `state_dir` -- when the file
    cannot be read or anything could make the full parser disagree: an ``Include``,
    a backslash, a quote, no or a misplaced ``ClusterName``.
    """
    if env.get("MINISLURM_STATE_DIR"):
        return env["MINISLURM_STATE_DIR"]
    conf = env.get("SLURM_CONF") or os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "etc", "slurm.conf")
    try:
        with open(conf, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError):
        return None
    name = None
    for raw in text.split("\n"):
        code = raw.split("#", 1)[0]  # a backslash before that '#' is caught below
        if "\\" in code or '"' in code:
            return None
        words = code.split()
        if not words:
            continue
        first = words[0].lower()
        if first == "include" or first.startswith("include="):
            return None
        if first.startswith("clustername"):
            key, sep, value = words[0].partition("=")
            if key.lower() != "clustername" or not sep or not value or len(words) > 1:
                return None
            name = value.lower()
        elif any("clustername" in w.lower() for w in words[1:]):
            return None
    if name is None:
        return None
    base = env.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local",
                                                        "state")
    return os.path.join(base, "minislurm", name)


def state_dir(env: dict[str, str] | None = None) -> Path:
    """Where the controller of the current configuration keeps its state and socket.

    ``$MINISLURM_STATE_DIR`` if set, else ``~/.local/state/minislurm/<ClusterName>``
    (``$XDG_STATE_HOME`` replacing ``~/.local/state``) of the active slurm.conf
    (``$SLURM_CONF`` or the embedded default), which is parsed whole: a broken one
    fails here with Slurm's words. `quick_state_dir` is the same without parsing.
    """
    from pathlib import Path

    env = dict(os.environ) if env is None else env
    if env.get("MINISLURM_STATE_DIR"):
        return Path(env["MINISLURM_STATE_DIR"])
    from minislurm.conf import load_config

    config = load_config(env.get("SLURM_CONF") or None)
    base = Path(env.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    return base / "minislurm" / (config.cluster_name or "cluster")


def socket_path(env: dict[str, str] | None = None) -> Path:
    """The controller's Unix socket (found without parsing slurm.conf when possible)."""
    from pathlib import Path

    quick = quick_state_dir(dict(os.environ) if env is None else env)
    if quick is not None:
        return Path(quick) / "slurmctld.sock"
    return state_dir(env) / "slurmctld.sock"


def forward(name: str, argv: Sequence[str], ctx: Context, sock: Path) -> dict[str, Any]:
    """Send one command to the controller at ``sock``; returns its answer."""
    from minislurm.common import rpc

    return rpc.call(sock, _request(name, argv, ctx.env, ctx.cwd, ctx.stdin, ctx.user, ctx.uid,
                                   ctx.group, ctx.gid), timeout=None)


def _request(name: str, argv: Sequence[str], env: Any, cwd: str, stdin: str | None,
             user: str, uid: int, group: str, gid: int) -> dict[str, Any]:
    """The ``command`` request (`minislurm.daemon.slurmctld.Slurmctld.command` answers it)."""
    return {"op": "command", "name": name, "argv": list(argv), "env": dict(env), "cwd": cwd,
            "stdin": stdin, "user": user, "uid": uid, "group": group, "gid": gid}


def _read_stdin_if_needed(name: str, argv: Sequence[str]) -> str | None:
    """sbatch reads its script from standard input when no script is named.

    A terminal is never read; a pipe or file is read when it has data (or is at
    its end) within a moment, so an idle inherited pipe does not hang sbatch.
    """
    if name != "sbatch" or sys.stdin is None or sys.stdin.closed:
        return None
    if any(a == "--wrap" or a.startswith("--wrap=") for a in argv):
        return None  # sbatch --wrap never reads standard input
    import select

    try:
        if sys.stdin.isatty():
            return None
        ready, _, _ = select.select([sys.stdin], [], [], _STDIN_GRACE)
    except (OSError, ValueError):
        return None
    return sys.stdin.read() if ready else None


# ---- the quick path: C modules only ---------------------------------------------------

def _dumps(value: object) -> str:
    """``json.dumps(value)`` for a request (str, int, bool, None, lists, str-keyed dicts)."""
    from _json import encode_basestring_ascii as quote

    if isinstance(value, str):
        return quote(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_dumps(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{quote(str(k))}: {_dumps(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot send {type(value).__name__}")


if TYPE_CHECKING:
    from collections.abc import Callable

    def _make_scanner(context: _Scanning) -> Callable[[str, int], tuple[Any, int]]:
        """``_json.make_scanner``: the C scanner reads only the attributes of `_Scanning`
        (typeshed asks for a whole ``json.JSONDecoder``, whose module imports ``re``)."""
        ...


class _Scanning:
    """What ``_json.make_scanner`` reads from ``json.JSONDecoder``: plain JSON, strict."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = float  # NaN, Infinity: never in an answer


def _loads(text: str) -> Any:
    """``json.loads(text)`` with the C scanner (json.decoder itself imports ``re``)."""
    if not TYPE_CHECKING:
        from _json import make_scanner as _make_scanner

    value, end = _make_scanner(_Scanning())(text, 0)
    if text[end:].strip():
        raise ValueError("extra data after the answer")
    return value


def _exchange(sock_path: str, data: bytes) -> bytes | None:
    """Send ``data`` to the Unix socket and read the answer line; None: nobody listens."""
    import _socket

    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        chunks: list[bytes] = []
        size = 0
        try:
            sock.connect(sock_path)
            sock.sendall(data)
            while True:
                chunk = sock.recv(1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
                if chunk.endswith(b"\n") or size > MAX_MESSAGE:
                    break
        except (FileNotFoundError, ConnectionRefusedError, ConnectionResetError,
                BrokenPipeError):
            return None  # no daemon, or one that died with this request queued
        return b"".join(chunks) or None
    finally:
        sock.close()


def quick_forward(name: str, argv: Sequence[str], stdin: str | None = None) -> int | None:
    """Forward ``name argv`` to a running controller, print its answer, return its exit code.

    ``stdin``: what sbatch read from standard input (`_read_stdin_if_needed`). None when
    no controller answers (no socket, a stale one) or the socket cannot be found without
    parsing slurm.conf: `run_command` then takes the full path.
    """
    where = quick_state_dir(os.environ)
    if where is None:
        return None
    sock = os.path.join(where, "slurmctld.sock")
    if not os.path.exists(sock) or len(os.fsencode(sock)) >= SUN_PATH_MAX:
        return None  # a path past sun_path: the full path's rpc.socket_address reaches it
    request = _request(name, argv, os.environ, os.getcwd(), stdin, *process_identity())
    raw = _exchange(sock, (_dumps(request) + "\n").encode())
    if raw is None:
        return None
    answer = _loads(raw.decode())
    import _signal

    # like Slurm's C clients: a closed pipe (squeue | head -1) ends the command quietly
    _signal.signal(_signal.SIGPIPE, _signal.SIG_DFL)
    if not answer.get("ok", False):
        sys.stderr.write(str(answer.get("error", "unknown error")).rstrip("\n") + "\n")
        return int(answer.get("exit_code", 1))
    sys.stdout.write(answer.get("stdout", ""))
    sys.stdout.flush()
    sys.stderr.write(answer.get("stderr", ""))
    return int(answer.get("rc", 0))


def run_command(name: str, argv: Sequence[str]) -> int:
    """Entry point of ``python -m minislurm <name> ...``: forward or run offline.

    `quick_forward` first; the command's module (which imports the options parser and,
    for what it answers offline, the whole controller) only when no controller answers.
    """
    stdin = _read_stdin_if_needed(name, argv)
    quick = quick_forward(name, argv, stdin)
    if quick is not None:
        return quick
    import importlib

    from minislurm.cli.common import Context
    from minislurm.errors import ControllerUnavailable, SlurmError

    ctx = Context.from_process()
    ctx.stdin = stdin
    try:
        sock = state_dir(dict(ctx.env)) / "slurmctld.sock"
    except SlurmError as exc:  # a broken slurm.conf: Slurm's own fatal text
        ctx.err(exc.message)
        return exc.exit_code
    if sock.exists():
        try:
            answer = forward(name, argv, ctx, sock)
        except ControllerUnavailable:
            pass  # stale socket: behave as with no controller
        except SlurmError as exc:
            ctx.err(exc.message)
            return exc.exit_code
        else:
            sys.stdout.write(answer.get("stdout", ""))
            sys.stderr.write(answer.get("stderr", ""))
            return int(answer.get("rc", 0))
    module = importlib.import_module(f"minislurm.cli.{name}")
    result: int = module.run(argv, ctx)
    return result
