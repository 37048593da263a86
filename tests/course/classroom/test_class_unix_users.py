"""``spawn: unix-users`` for real (the tests run as root here): each learner's server
runs as a Unix user of their own, created by ``class up``, with a Python they can run,
the course, the commands and their own cluster in their own home; one learner cannot
read another's files, nor the class's private folder."""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from realslurm.procs import processes

pytest.importorskip("jupyterhub", reason="the 'class' extra (jupyterhub) is not installed")

from course.classroom import deploy, runtime
from course.classroom.harness import RunningClass

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(os.geteuid() != 0, reason="separate Unix users need root"),
              pytest.mark.skipif(shutil.which("useradd") is None, reason="no useradd")]
LEARNERS = ("ux-ada", "ux-bob")
INSTRUCTORS = ("ux-teacher",)


def drop_users() -> None:
    """Remove the test's Unix users (only ones a class created)."""
    for user in (*LEARNERS, *INSTRUCTORS):
        with contextlib.suppress(KeyError):
            if pwd.getpwnam(user).pw_gecos.startswith(deploy.USER_COMMENT):
                subprocess.run(["userdel", user], capture_output=True, timeout=60)


@pytest.fixture(scope="module")
def cls() -> Iterator[RunningClass]:
    try:
        deploy.proxy_bin()
    except Exception as exc:
        pytest.skip(str(exc))
    if not runtime.available():
        pytest.skip("no Python other Unix users can run")
    drop_users()
    folder = Path(tempfile.mkdtemp(prefix="class-unix-"))  # learners must reach their homes
    folder.chmod(0o755)
    try:
        with RunningClass(folder, learners=LEARNERS, instructors=INSTRUCTORS,
                          spawn="auto") as running:
            yield running
    finally:
        drop_users()
        shutil.rmtree(folder, ignore_errors=True)


def as_user(user: str, env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    info = pwd.getpwnam(user)
    return subprocess.run(argv, env=env, user=info.pw_uid, group=info.pw_gid,
                          extra_groups=[], capture_output=True, text=True, timeout=120,
                          cwd=info.pw_dir)


def test_learners_are_separate_unix_users_with_their_own_cluster(cls):
    status = deploy.status(cls.cfg)
    assert status.mode == "unix-users" and "separate Unix users" in status.run_as
    for user in LEARNERS:
        cls.start_server(user)
    try:
        uids = {}
        for user in LEARNERS:
            info = pwd.getpwnam(user)
            assert info.pw_dir == str(cls.paths.home(user))
            pid = cls.server_pid(user)
            uids[user] = os.stat(f"/proc/{pid}").st_uid
            assert uids[user] == info.pw_uid != 0
            env = cls.server_env(user)
            # the server's Python, the course and the commands work as the learner
            out = as_user(user, env, "sbatch", "--wrap", "hostname", "-J", f"job-{user}")
            assert out.returncode == 0 and out.stdout.startswith("Submitted batch job"), \
                out.stderr
            queue = as_user(user, env, "squeue", "-h", "-o", "%j", "--states=all")
            assert queue.returncode == 0 and f"job-{user}" in queue.stdout, queue.stderr
            state = Path(env["MINISLURM_STATE_DIR"])
            assert state.is_relative_to(info.pw_dir) and state.stat().st_uid == info.pw_uid
            ctld = [p for p in cls_pids(cls, "slurmctld") if env["MINISLURM_STATE_DIR"]
                    in Path(f"/proc/{p}/environ").read_bytes().decode(errors="replace")]
            assert ctld and all(os.stat(f"/proc/{p}").st_uid == info.pw_uid for p in ctld)
        assert uids["ux-ada"] != uids["ux-bob"]
        secret = cls.paths.home("ux-bob") / "course" / "notes.txt"
        as_user("ux-bob", cls.server_env("ux-bob"), "sh", "-c", f"echo mine > {secret}")
        assert secret.read_text() == "mine\n"
        ada_env = cls.server_env("ux-ada")
        for target in (secret, cls.paths.gradebook, cls.paths.key):
            peek = as_user("ux-ada", ada_env, "cat", str(target))
            assert peek.returncode != 0 and "Permission denied" in peek.stderr, target
        listing = as_user("ux-ada", ada_env, "ls", str(cls.paths.home("ux-bob")))
        assert listing.returncode != 0 and "Permission denied" in listing.stderr
        # status tells the truth about the checkout's banks (learners read it or not)
        bank = deploy.REPO / "quizzes" / "banks" / "01-what-is-slurm.yaml"
        if as_user("ux-ada", ada_env, "cat", str(bank)).returncode == 0:
            assert status.keys.startswith("EXPOSED: learners can read")
        else:
            assert status.keys.startswith("not in the learner image")
    finally:
        for user in LEARNERS:
            cls.stop_server(user)


def cls_pids(cls: RunningClass, needle: str) -> list[int]:
    return [p.pid for p in processes() if needle in p.cmdline]
