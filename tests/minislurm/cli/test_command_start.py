"""How a command typed in a shell starts: ``bin/<command>`` -> ``python -S`` -> the daemon.

A forwarded command (squeue, sbatch, ...) imports only modules written in C before
its request leaves (`minislurm.cli.transport.quick_forward`); the state directory is
found without parsing slurm.conf (`quick_state_dir`, which must agree with the full
parser on every configuration we ship or capture); site-packages come back as soon as
a command needs one of them (`minislurm.__main__.LateSite`). The daemon here is a
stand-in `minislurm.common.rpc.Server` answering like slurmctld does, so each test sees
exactly what the command sent and prints; every process has a timeout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from minislurm.cli import transport
from minislurm.common import rpc
from minislurm.errors import SlurmError

REPO = Path(__file__).resolve().parents[3]
BIN = REPO / "bin"
TIMEOUT = 30

#: Modules a forwarded command must not import (each costs ms, or means site ran).
HEAVY = ("typing", "re", "json", "socket", "pathlib", "dataclasses", "site", "enum",
         "minislurm.cli.common", "minislurm.conf", "minislurm.options", "simpy")


@pytest.fixture
def short_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A state folder with a short path (Unix socket paths are limited to 108 bytes)."""
    import tempfile

    path = Path(tempfile.mkdtemp(prefix="cmd-", dir="/tmp"))
    try:
        yield path
    finally:
        import shutil

        shutil.rmtree(path, ignore_errors=True)


class FakeController:
    """slurmctld's socket answering every ``command`` with a fixed answer."""

    def __init__(self, state: Path, answer: dict[str, Any]) -> None:
        self.requests: list[dict[str, Any]] = []
        self.answer = answer
        self.server = rpc.Server(state / "slurmctld.sock", self.handle)
        self.server.serve_in_thread()

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        self.requests.append(request)
        if "error" in self.answer:
            raise SlurmError(self.answer["error"], self.answer["exit_code"])
        return dict(self.answer)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _env(state: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "SQUEUE_"))}
    env.update(MINISLURM_STATE_DIR=str(state), **extra)
    return env


def _run(argv: list[str], env: dict[str, str], **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=TIMEOUT,
                          stdin=kw.pop("stdin", subprocess.DEVNULL), **kw)


def _imported(importtime_stderr: str) -> set[str]:
    """Module names from ``-X importtime`` lines (``import time: self | cum | name``)."""
    return {line.rsplit("|", 1)[1].strip() for line in importtime_stderr.splitlines()
            if line.startswith("import time:") and "|" in line and "imported package" not in line}


def test_a_forwarded_squeue_sends_its_context_and_prints_the_answer(short_dir: Path,
                                                                    tmp_path: Path) -> None:
    fake = FakeController(short_dir, {"stdout": "JOBID\n1\n", "stderr": "warn\n", "rc": 3})
    env = _env(short_dir, FOO="bar é")
    try:
        done = _run([str(BIN / "squeue"), "-h", "-o", "%i %T"], env, cwd=tmp_path)
    finally:
        fake.close()
    assert (done.returncode, done.stdout, done.stderr) == (3, "JOBID\n1\n", "warn\n")
    [request] = fake.requests
    assert request["op"] == "command" and request["name"] == "squeue"
    assert request["argv"] == ["-h", "-o", "%i %T"]
    assert request["cwd"] == str(tmp_path)
    assert request["env"]["FOO"] == "bar é"
    # the wrapper adds nothing to the job's env (the caller's own PYTHONPATH, if any, stays)
    assert request["env"].get("PYTHONPATH") == env.get("PYTHONPATH")
    assert (request["uid"], request["gid"]) == (os.getuid(), os.getgid())
    assert request["stdin"] is None


def test_a_forwarded_command_imports_only_c_modules(short_dir: Path, tmp_path: Path) -> None:
    fake = FakeController(short_dir, {"stdout": "", "stderr": "", "rc": 0})
    try:
        done = _run([str(BIN / "squeue")], _env(short_dir, PYTHONPROFILEIMPORTTIME="1"),
                    cwd=tmp_path)
    finally:
        fake.close()
    assert done.returncode == 0, done.stderr
    imported = _imported(done.stderr)
    assert "minislurm.cli.transport" in imported
    assert not imported & set(HEAVY), sorted(imported & set(HEAVY))


def test_sbatch_sends_a_piped_script(short_dir: Path, tmp_path: Path) -> None:
    fake = FakeController(short_dir, {"stdout": "Submitted batch job 7\n", "stderr": "",
                                      "rc": 0})
    try:
        done = _run([str(BIN / "sbatch")], _env(short_dir), cwd=tmp_path,
                    input="#!/bin/sh\necho hi\n", stdin=None)
    finally:
        fake.close()
    assert (done.returncode, done.stdout) == (0, "Submitted batch job 7\n")
    assert fake.requests[0]["stdin"] == "#!/bin/sh\necho hi\n"


def test_an_error_answer_is_printed_with_its_exit_code(short_dir: Path, tmp_path: Path) -> None:
    fake = FakeController(short_dir, {"error": "scancel: error: Invalid job id", "exit_code": 4})
    try:
        done = _run([str(BIN / "scancel"), "5"], _env(short_dir), cwd=tmp_path)
    finally:
        fake.close()
    assert (done.returncode, done.stdout, done.stderr) == (
        4, "", "scancel: error: Invalid job id\n")


def test_a_closed_pipe_ends_squeue_quietly_like_slurms(short_dir: Path, tmp_path: Path) -> None:
    lines = "".join(f"{i:>18} debug job user PD 0:00 1 (None)\n" for i in range(50_000))
    fake = FakeController(short_dir, {"stdout": lines, "stderr": "", "rc": 0})
    try:
        done = _run(["bash", "-c", f"{BIN / 'squeue'} | head -1; echo ${{PIPESTATUS[0]}}"],
                    _env(short_dir), cwd=tmp_path)
    finally:
        fake.close()
    assert done.stderr == ""
    first, status = done.stdout.splitlines()
    assert first.split()[0] == "0"
    assert status in ("0", "141")  # 141: SIGPIPE, as a C client


def test_a_stale_socket_means_no_controller(short_dir: Path, tmp_path: Path) -> None:
    (short_dir / "slurmctld.sock").write_text("")  # a file nobody listens on
    done = _run([str(BIN / "squeue")], _env(short_dir), cwd=tmp_path)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.splitlines()[0] == ("slurm_load_jobs error: Unable to contact slurm "
                                           "controller (connect failure)")


def test_the_offline_path_turns_site_back_on_when_it_needs_a_package(tmp_path: Path) -> None:
    """``python -S`` + `late_site`: a third-party import (simpy) still works, and the
    standard library's own failing optional imports (``nt`` in ntpath) do not run site."""
    code = ("import sys; sys.path[0] = sys.argv[1]\n"
            "from minislurm.__main__ import late_site; late_site()\n"
            "import pathlib, ntpath\n"
            "assert 'site' not in sys.modules, 'site ran for a stdlib import'\n"
            "import simpy\n"
            "assert 'site' in sys.modules\n"
            "print(simpy.__name__)")
    done = _run([sys.executable, "-S", "-c", code, str(REPO)], dict(os.environ), cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (0, "simpy\n", "")


# ---- the state directory without parsing slurm.conf --------------------------------------

def _confs() -> list[Path]:
    found = sorted(REPO.glob("**/slurm.conf"))
    from captures import capture_root

    root = capture_root()
    if root is not None:
        found += sorted(root.glob("**/slurm.conf"))
    return [p for p in found if ".venv" not in p.parts]


def test_quick_state_dir_agrees_with_the_full_parser_on_every_slurm_conf(tmp_path: Path) -> None:
    confs = _confs()
    assert confs
    for conf in confs:
        env = {"SLURM_CONF": str(conf), "XDG_STATE_HOME": str(tmp_path / "xdg")}
        quick = transport.quick_state_dir(env)
        try:
            full = str(transport.state_dir(env))
        except SlurmError:
            full = None
        if quick is not None:
            assert quick == full, conf
    default = {"XDG_STATE_HOME": str(tmp_path / "xdg")}
    assert transport.quick_state_dir(default) == str(transport.state_dir(default))
    assert transport.quick_state_dir({"MINISLURM_STATE_DIR": "rel/dir"}) == "rel/dir"


@pytest.mark.parametrize(("text", "quick"), [
    ("ClusterName=Mini\nSlurmctldHost=h\n", "mini"),
    ("# ClusterName=old\nclustername=new # note\nSlurmctldHost=h\n", "new"),
    ("ClusterName=a\nClusterName=b\nSlurmctldHost=h\n", "b"),  # the last one wins
    ('ClusterName="x y"\nSlurmctldHost=h\n', None),
    ("Include other.conf\nSlurmctldHost=h\n", None),
    ("ClusterName=x\\\ny\nSlurmctldHost=h\n", None),
    ("SlurmctldHost=h\n", None),
    ("ClusterName=a SlurmctldHost=h\n", None),
])
def test_quick_state_dir_is_none_whenever_unsure(tmp_path: Path, text: str,
                                                 quick: str | None) -> None:
    conf = tmp_path / "slurm.conf"
    conf.write_text(text)
    env = {"SLURM_CONF": str(conf), "XDG_STATE_HOME": str(tmp_path / "xdg")}
    got = transport.quick_state_dir(env)
    assert got == (None if quick is None else str(tmp_path / "xdg/minislurm" / quick))
    if got is not None:
        assert got == str(transport.state_dir(env))


def test_quick_state_dir_of_an_unreadable_conf_is_none(tmp_path: Path) -> None:
    assert transport.quick_state_dir({"SLURM_CONF": str(tmp_path / "missing.conf")}) is None


@pytest.mark.parametrize("value", [
    {"op": "command", "argv": ["-o", "%i \"q\" \\ é \x01"], "env": {"A": "ü\udcff"},
     "stdin": None, "uid": 0, "neg": -3, "flag": True, "off": False, "t": ("x", 1)},
])
def test_the_request_encoder_writes_what_json_dumps_writes(value: dict[str, Any]) -> None:
    assert transport._dumps(value) == json.dumps(value)
    text = json.dumps({"stdout": "a\nb \"é\" \\", "rc": 3, "ok": True, "x": [1.5, None, {}]})
    assert transport._loads(text) == json.loads(text)
