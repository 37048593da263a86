"""Faults under a real hub: the quiz service SIGKILLed mid-submission, the hub restarted,
a learner's server restarted (its minislurm cluster's state found again)."""

from __future__ import annotations

import hashlib
import os
import signal
import sqlite3
import subprocess
import threading
import time
from pathlib import Path

import pytest
from realslurm.procs import environ, processes

pytest.importorskip("jupyterhub", reason="the 'class' extra (jupyterhub) is not installed")

from course.classroom import deploy
from course.classroom.harness import RunningClass
from minislurm.common import rpc
from quizzes.bank import load_banks

pytestmark = pytest.mark.slow
LEARNERS = tuple(f"l{k:02d}" for k in range(20))
CLASS_LEARNERS = ("ada", *LEARNERS)
QUIZZES = ("01-what-is-slurm", "02-sbatch", "03-gres-gpus")


def pids(cls: RunningClass, needle: str) -> list[int]:
    """Pids of this class's processes whose command line holds ``needle``."""
    where = str(cls.cfg.dir)
    return [p.pid for p in processes()
            if needle in p.cmdline and (where in p.cmdline or where in environ(p.pid))]


def test_service_killed_mid_submission_loses_no_accepted_attempt(cls):
    banks = load_banks()
    attempts = []  # (learner, attempt id) with one answer each, to be submitted
    for learner in LEARNERS:
        tok = cls.token(learner)
        for quiz in QUIZZES:
            code, att = cls.call("POST", "api/attempts", token=tok, body={"quiz_id": quiz})
            assert code == 200, att
            item = att["items"][0]
            response = item["options"][0][0] if item["options"] else "1"
            code, fb = cls.call("POST", f"api/attempts/{att['attempt_id']}/answers", token=tok,
                                body={"item_id": item["item_id"], "response": response})
            assert code == 200, fb
            attempts.append((learner, att["attempt_id"]))
    service = pids(cls, "quizzes serve --hub")
    assert len(service) == 1
    accepted: list[str] = []
    failed: list[str] = []
    lock = threading.Lock()
    queue = list(attempts)

    def worker() -> None:
        while True:
            with lock:
                if not queue:
                    return
                learner, aid = queue.pop()
            try:
                code, _ = cls.call("POST", f"api/attempts/{aid}/submit",
                                   token=cls.token(learner), timeout=20)
            except OSError:
                code = 0
            with lock:
                (accepted if code == 200 else failed).append(aid)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 60
    while len(accepted) < 5 and time.monotonic() < deadline:
        time.sleep(0.005)
    os.kill(service[0], signal.SIGKILL)
    for t in threads:
        t.join(60)
    assert accepted, "no submission was accepted before the kill"
    assert failed, "the kill landed after every submission: nothing was cut"
    cls.wait_service()  # the hub restarts its managed service
    assert pids(cls, "quizzes serve --hub") != service
    # every submission again: the accepted ones and any committed before the kill answer 409
    for learner, aid in attempts:
        code, reply = cls.call("POST", f"api/attempts/{aid}/submit", token=cls.token(learner))
        assert code in (200, 409), reply
        if aid in accepted:
            assert code == 409 and "already submitted" in reply["error"]
    db = sqlite3.connect(cls.paths.gradebook.resolve().as_uri() + "?mode=ro", uri=True)
    try:
        items = {q: len(banks[q].items) for q in QUIZZES}
        for _, aid in attempts:
            digest = hashlib.sha256(f"exam|{aid}".encode()).hexdigest()
            rows = db.execute("SELECT attempt_id, quiz_id FROM attempts WHERE"
                              " submission_digest = ?", (digest,)).fetchall()
            assert len(rows) == 1, (aid, rows)  # exactly once, accepted or not
            n = db.execute("SELECT COUNT(*) FROM item_responses WHERE attempt_id = ?",
                           (rows[0][0],)).fetchone()[0]
            assert n == items[rows[0][1]]  # never a partial attempt
            assert db.execute("SELECT submitted_at FROM exam_attempts WHERE attempt_id = ?",
                              (aid,)).fetchone()[0] is not None
        assert db.execute("SELECT COUNT(*) FROM attempts").fetchone()[0] == len(attempts)
    finally:
        db.close()


def learner_env(cls: RunningClass, user: str) -> dict[str, str]:
    env = dict(os.environ)
    env["MINISLURM_STATE_DIR"] = str(cls.paths.home(user) / ".local/state/minislurm/class")
    env["PYTHONPATH"] = str(cls.paths.image)
    env["PATH"] = f"{cls.paths.image / 'bin'}:{env['PATH']}"
    return env


def slurm(cls: RunningClass, user: str, *argv: str) -> str:
    out = subprocess.run(argv, env=learner_env(cls, user), capture_output=True, text=True,
                         timeout=60, cwd=cls.paths.home(user))  # slurm-%j.out lands there
    assert out.returncode == 0, out.stderr
    return out.stdout


def ctld_pid(cls: RunningClass, user: str) -> int | None:
    sock = Path(learner_env(cls, user)["MINISLURM_STATE_DIR"]) / "slurmctld.sock"
    try:
        return int(rpc.call(sock, {"op": "ping"}, timeout=5)["pid"])
    except Exception:
        return None


def wait_running(cls: RunningClass, user: str, job: str, limit: float = 30.0) -> None:
    """Wait for the event that starts ``job`` and require that it started.

    slurmctld starts a job at the main scheduler's pass that its submission triggers (an
    empty cluster: at once); the controller's ``wait_start`` request returns as soon as
    the job leaves PENDING, so nothing here races a poll of ``squeue`` against a clock.
    ``limit`` is only the bound for a job that the submission's pass did not start (the
    next chance, sched/backfill, comes ``bf_interval`` = 30 s later): such a job, or one
    that ended instead of running, fails with its record and the controller's log.
    """
    sock = Path(learner_env(cls, user)["MINISLURM_STATE_DIR"]) / "slurmctld.sock"
    answer = rpc.call(sock, {"op": "wait_start", "job_id": int(job), "timeout": limit},
                      timeout=limit + 30)
    shown = slurm(cls, user, "squeue", "-h", "-j", job, "-o", "%T %r").strip()
    if answer["state"] != "RUNNING" or not shown.startswith("RUNNING"):
        record = slurm(cls, user, "scontrol", "show", "job", job)
        logs = [sock.parent / "slurmctld.log", sock.parent / "spool" / "slurmd.log"]
        pytest.fail(f"job {job} is {answer['state']} (squeue: {shown!r}), not RUNNING\n"
                    f"{record}\n" + "\n".join(p.read_text() for p in logs if p.exists()))


def start_server(cls: RunningClass, user: str) -> None:
    code, reply = cls.hub("POST", f"users/{user}/server")
    assert code in (201, 202), reply
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        _, model = cls.hub("GET", f"users/{user}")
        if model["server"] and not model["pending"]:
            return
        time.sleep(0.5)
    raise TimeoutError(f"{user}'s server did not start")


def stop_server(cls: RunningClass, user: str) -> None:
    code, reply = cls.hub("DELETE", f"users/{user}/server")
    assert code in (202, 204), reply
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        _, model = cls.hub("GET", f"users/{user}")
        if not model["server"] and not model["pending"]:
            return
        time.sleep(0.5)
    raise TimeoutError(f"{user}'s server did not stop")


def test_a_learners_server_has_the_course_the_commands_and_its_own_cluster(cls):
    start_server(cls, "ada")
    home = cls.paths.home("ada")
    assert (home / "course").is_dir() and any((home / "course").glob("*.ipynb"))
    server = pids(cls, "jupyterhub.singleuser")
    assert len(server) == 1
    env = dict(kv.split("=", 1) for kv in
               Path(f"/proc/{server[0]}/environ").read_text().split("\0") if "=" in kv)
    assert env["PATH"].split(":")[0] == str(cls.paths.image / "bin")  # terminals inherit it
    assert env["MINISLURM_STATE_DIR"].startswith(str(home))
    assert env["PYTHONPATH"] == str(cls.paths.image)
    assert env["JUPYTERHUB_USER"] == "ada"
    assert env["COURSE_QUIZ_SERVICE"] == cls.service
    assert ctld_pid(cls, "ada") is not None
    assert "JOBID" in slurm(cls, "ada", "squeue")
    # through the proxy, with ada's token, the server answers
    import urllib.request

    req = urllib.request.Request(f"{cls.url}/user/ada/api/status",
                                 headers={"Authorization": f"token {cls.token('ada')}"})
    with urllib.request.urlopen(req, timeout=20) as resp:
        assert resp.status == 200


def test_hub_restart_leaves_servers_and_clusters_running(cls):
    server = pids(cls, "jupyterhub.singleuser")
    ctld = ctld_pid(cls, "ada")
    assert server and ctld
    job = slurm(cls, "ada", "sbatch", "--parsable", "--wrap", "sleep 600").strip()
    wait_running(cls, "ada", job)
    assert deploy.stop_hub(cls.paths)
    assert deploy.hub_pid(cls.paths) is None
    assert pids(cls, "jupyterhub.singleuser") == server  # the server goes on
    assert ctld_pid(cls, "ada") == ctld  # and its cluster
    assert "RUNNING" in slurm(cls, "ada", "squeue", "-h", "-j", job, "-o", "%T")
    deploy.up(cls.cfg)
    _, model = cls.hub("GET", "users/ada")
    assert model["server"]  # the new hub found the running server
    import urllib.request

    req = urllib.request.Request(f"{cls.url}/user/ada/api/status",
                                 headers={"Authorization": f"token {cls.token('ada')}"})
    with urllib.request.urlopen(req, timeout=20) as resp:
        assert resp.status == 200
    assert pids(cls, "jupyterhub.singleuser") == server
    assert ctld_pid(cls, "ada") == ctld


def test_server_restart_finds_its_cluster_state_again(cls):
    held = slurm(cls, "ada", "sbatch", "--parsable", "--hold", "--wrap", "true").strip()
    before = slurm(cls, "ada", "squeue", "-h", "-o", "%i %T %r")
    assert f"{held} PENDING JobHeldUser" in before
    stop_server(cls, "ada")
    assert ctld_pid(cls, "ada") is None  # the cluster stopped with the server
    assert not pids(cls, "jupyterhub.singleuser")
    start_server(cls, "ada")
    assert ctld_pid(cls, "ada") is not None
    after = slurm(cls, "ada", "squeue", "-h", "-o", "%i %T %r")
    assert f"{held} PENDING JobHeldUser" in after  # the saved queue came back
    history = slurm(cls, "ada", "sacct", "-n", "-X", "-o", "JobID,State")
    assert any(line.split()[:1] == [held] for line in history.splitlines()), history
