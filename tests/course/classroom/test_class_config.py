"""The class deployment's pure parts: class.yaml, the password file, the generated hub
configuration, the learner image, and the exam desk's policy (time limit, attempts)."""

from __future__ import annotations

import ast
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from course.classroom import image, passwords
from course.classroom.config import load, parse
from course.classroom.errors import ClassError
from course.classroom.harness import correct_responses
from course.classroom.hubconfig import hub_config
from course.classroom.paths import ClassPaths
from quizzes.author import load_sources
from quizzes.bank import load_banks
from quizzes.errors import ExamError
from quizzes.exam import ExamDesk
from quizzes.keys import generate, load_private

REPO = Path(__file__).resolve().parents[3]


def test_password_hashes_check_and_refuse():
    stored = passwords.hash_password("s3cret")
    assert stored.startswith("scrypt$") and "s3cret" not in stored
    assert passwords.check("s3cret", stored)
    assert not passwords.check("s3cret ", stored)
    assert not passwords.check("s3cret", "scrypt$1$2$3$bad$bad")
    assert passwords.hash_password("x") != passwords.hash_password("x")  # salted


def test_password_file_round_trip_and_errors(tmp_path):
    path = tmp_path / "pw"
    passwords.set_password(path, "ada", "one")
    passwords.set_password(path, "bob", "two")
    entries = passwords.read(path)
    assert sorted(entries) == ["ada", "bob"] and passwords.check("two", entries["bob"])
    assert path.stat().st_mode & 0o777 == 0o600
    path.write_text("ada:plain-text-password\n")
    with pytest.raises(ClassError, match=r"pw:1: expected 'user:scrypt"):
        passwords.read(path)
    with pytest.raises(ClassError, match="invalid user name 'Ada'"):
        passwords.set_password(tmp_path / "pw2", "Ada", "x")


def test_config_fields_and_errors(tmp_path):
    cfg = parse({"name": "c", "dir": "state", "passwords": "pw", "instructors": ["teacher"],
                 "learners": ["ada"], "port": 9000}, "class.yaml", tmp_path)
    assert (cfg.dir, cfg.port, cfg.hub_port, cfg.service_port) == (tmp_path / "state", 9000,
                                                                    9002, 9003)
    assert cfg.users == ("ada", "teacher")
    assert cfg.spawn_mode(uid=0) == "unix-users" and cfg.spawn_mode(uid=1000) == "one-user"
    for raw, words in (({"name": "c"}, "field 'dir': is required"),
                       ({"name": "c", "dir": "d", "port": 80}, "field 'port'"),
                       ({"name": "c", "dir": "d", "spawn": "docker"}, "field 'spawn'"),
                       ({"name": "c", "dir": "d", "colour": 1}, "field 'colour': unknown"),
                       ({"name": "c", "dir": "d", "token_cache_seconds": 0},
                        "field 'token_cache_seconds'"),
                       ({"name": "c", "dir": "d"}, "field 'passwords': is required")):
        with pytest.raises(ClassError, match=words):
            parse(raw, "class.yaml", tmp_path)
    (tmp_path / "bad.yaml").write_text("name: [unclosed\n")
    with pytest.raises(ClassError, match="not valid YAML"):
        load(tmp_path / "bad.yaml")


def test_learners_default_to_the_password_file(tmp_path):
    passwords.set_password(tmp_path / "pw", "ada", "x")
    passwords.set_password(tmp_path / "pw", "teacher", "y")
    cfg = parse({"name": "c", "dir": "d", "passwords": "pw", "instructors": ["teacher"]},
                "class.yaml", tmp_path)
    assert cfg.learners == ("ada",)


def _settings(text: str) -> dict[str, Any]:
    """The literal assignments ``c.X.y = <literal>`` of a generated config (each value
    as ``ast.literal_eval`` reads it, else its source text)."""
    out: dict[str, Any] = {}
    for node in ast.parse(text).body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Attribute):
            target = ast.unparse(node.targets[0])
            try:
                out[target] = ast.literal_eval(node.value)
            except ValueError:
                out[target] = ast.unparse(node.value)
    return out


def test_hub_config_for_both_spawn_modes_and_a_site_authenticator(tmp_path):
    cfg = parse({"name": "c", "dir": "d", "passwords": "pw", "instructors": ["teacher"],
                 "learners": ["ada"], "port": 9000}, "class.yaml", tmp_path)
    paths = ClassPaths(cfg.dir)
    root = _settings(hub_config(cfg, paths, repo=REPO, uid=0))
    assert root["c.JupyterHub.spawner_class"] == "jupyterhub.spawner.LocalProcessSpawner"
    assert root["c.JupyterHub.cleanup_servers"] is False
    assert root["c.JupyterHub.ip"] == "127.0.0.1" and root["c.JupyterHub.port"] == 9000
    assert root["c.JupyterHub.load_groups"] == {"instructors": {"users": ["teacher"]}}
    assert root["c.Authenticator.allowed_users"] == {"ada", "teacher"}
    env = root["c.Spawner.environment"]
    assert env["PYTHONPATH"] == str(paths.image)
    assert env["PATH"].split(":")[0] == str(paths.image / "bin")
    assert env["COURSE_QUIZ_SERVICE"] == "http://127.0.0.1:9000/services/quizzes/"
    text = hub_config(cfg, paths, repo=REPO, uid=0)
    assert "'name': 'quizzes', 'url': 'http://127.0.0.1:9003'" in text
    assert f"'--banks', '{paths.banks}'" in text
    assert "'--token-cache', '30'" in text  # the default: a revoked token lives <= 30 s
    user = _settings(hub_config(cfg, paths, repo=REPO, uid=1000))
    assert user["c.JupyterHub.spawner_class"] == "jupyterhub.spawner.SimpleLocalProcessSpawner"
    site = parse({"name": "c", "dir": "d", "authenticator":
                  "ltiauthenticator.lti13.auth.LTI13Authenticator",
                  "authenticator_config": {"client_id": ["abc"]}}, "class.yaml", tmp_path)
    lti = _settings(hub_config(site, paths, repo=REPO, uid=1000))
    assert lti["c.JupyterHub.authenticator_class"] == \
        "ltiauthenticator.lti13.auth.LTI13Authenticator"
    assert lti["c.LTI13Authenticator.client_id"] == ["abc"]
    compile(hub_config(site, paths, repo=REPO), "jupyterhub_config.py", "exec")


def test_the_learner_image_has_no_answer_material(tmp_path):
    dest = image.build(REPO, tmp_path / "image")
    assert image.answer_material(dest) == []
    assert not (dest / "quizzes" / "banks").exists()
    assert not (dest / "quizzes" / "authoring").exists()
    assert (dest / "minislurm" / "__init__.py").exists() and (dest / "bin" / "sbatch").exists()
    assert (dest / "notebooks").is_dir() and (dest / ".venv").is_symlink()
    assert image.answer_material(REPO)  # the checkout does have them: the check can fail


@pytest.fixture()
def desk_parts(tmp_path):
    key, _ = generate(tmp_path / "issuer")
    return load_banks(), load_sources(), load_private(key), str(tmp_path / "gb.sqlite")


def _rows(db: str) -> dict[str, list[tuple]]:
    con = sqlite3.connect(db)
    try:
        return {t: con.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall()
                for t in ("attempts", "item_responses", "scores", "certificates",
                          "exam_attempts", "exam_answers")}
    finally:
        con.close()


def test_exam_time_limit_refuses_late_answers_and_hands_the_attempt_in(desk_parts):
    banks, sources, private, db = desk_parts
    bank = banks["01-what-is-slurm"]
    minutes = 20
    timed = {bank.quiz_id: type(bank)(**{**{f: getattr(bank, f) for f in bank.__slots__},
                                         "policy": type(bank.policy)(3, 0.1, "best",
                                                                     minutes)})}
    now = [1_800_000_000.0]
    desk = ExamDesk(timed, db, private, clock=lambda: now[0])
    att = desk.start("ada", "Ada", bank.quiz_id)
    assert att["deadline"] == int(now[0]) + 60 * minutes
    answers = correct_responses(bank, sources[bank.quiz_id], "ada", 1)
    first, second = list(answers)[:2]
    assert desk.answer("ada", att["attempt_id"], first, answers[first])["correct"]
    now[0] += 60 * minutes  # the deadline
    before = _rows(db)
    with pytest.raises(ExamError) as late:
        desk.answer("ada", att["attempt_id"], second, answers[second])
    assert late.value.status == 409 and "time limit" in late.value.reason
    assert _rows(db) == before
    again = desk.start("ada", "Ada", bank.quiz_id)  # the late attempt is handed in first
    assert again["attempt"] == 2
    rows = _rows(db)
    assert len(rows["attempts"]) == 1 and len(rows["item_responses"]) == len(bank.items)
    assert {r[1]: r[3] for r in rows["item_responses"]}[first] == 1.0  # the on-time answer
    assert {r[1]: r[3] for r in rows["item_responses"]}[second] == 0.0  # never stored


def test_exam_attempt_variants_differ_per_attempt(desk_parts):
    banks, _, private, db = desk_parts
    bank = next(b for b in banks.values() if any(it.common.params for it in b.items))
    desk = ExamDesk(banks, db, private)
    seen = set()
    for _ in range(bank.policy.attempts or 3):
        att = desk.start("ada", "Ada", bank.quiz_id)
        seen.add(json.dumps(att["items"], sort_keys=True))
        desk.submit("ada", att["attempt_id"])
    assert len(seen) > 1


def test_auto_spawn_needs_a_python_other_users_can_run(tmp_path):
    from course.classroom.runtime import shared_python

    cfg = parse({"name": "c", "dir": "d", "passwords": "pw"}, "class.yaml", tmp_path)
    assert cfg.spawn_mode(uid=0, shared=True) == "unix-users"
    assert cfg.spawn_mode(uid=0, shared=False) == "one-user"
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    exe = private / "python"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    assert not shared_python(str(exe), str(private))
    private.chmod(0o755)
    tmp_path.chmod(0o755)
    assert shared_python(str(exe), str(private)) == all(
        p.stat().st_mode & 0o001 for p in exe.parents)


def test_demo_config_and_cli_without_a_hub(tmp_path, capsys):
    from course.classroom.cli import DEMO_INSTRUCTOR, DEMO_LEARNERS, demo_config, main

    conf, chosen = demo_config(tmp_path / "demo", 8800)
    cfg = load(conf)
    assert cfg.learners == DEMO_LEARNERS and cfg.instructors == (DEMO_INSTRUCTOR,)
    assert cfg.passwords is not None  # the demo class has a password file
    stored = passwords.read(cfg.passwords)
    assert all(passwords.check(chosen[u], stored[u]) for u in (*DEMO_LEARNERS, DEMO_INSTRUCTOR))
    assert main(["status", "--config", str(conf)]) == 0
    out = capsys.readouterr().out
    assert "class demo-class: down at http://127.0.0.1:8800" in out and "spawner: " in out
    assert main(["passwd", "dan", "--random", "--config", str(conf)]) == 0
    said = capsys.readouterr().out.split(": ")[1].strip()
    assert passwords.check(said, passwords.read(cfg.passwords)["dan"])
    assert main(["down", "--config", str(conf)]) == 0  # nothing runs: nothing to stop
    assert main(["status", "--config", str(tmp_path / "missing.yaml")]) == 1
    assert "cannot read the class configuration" in capsys.readouterr().err


def test_quizzes_serve_hub_is_the_hub_service_entry_point(capsys, monkeypatch):
    from quizzes.cli import main

    for var in ("JUPYTERHUB_SERVICE_URL", "JUPYTERHUB_API_TOKEN", "JUPYTERHUB_API_URL"):
        monkeypatch.delenv(var, raising=False)
    assert main(["serve", "--hub", "--key", "k", "--db", "d"]) == 1
    assert "JUPYTERHUB_SERVICE_URL is not set" in capsys.readouterr().err


def test_status_says_separate_unix_users_or_one_user_and_why(tmp_path, monkeypatch):
    from course.classroom import deploy, runtime

    cfg = parse({"name": "c", "dir": "d", "passwords": "pw"}, "class.yaml", tmp_path)
    monkeypatch.setattr(deploy.os, "geteuid", lambda: 1000)
    said = deploy.status(cfg)
    assert said.mode == "one-user" and said.run_as.startswith("one user: not root;")
    monkeypatch.setattr(deploy.os, "geteuid", lambda: 0)
    said = deploy.status(cfg)
    if runtime.available():
        assert said.mode == "unix-users" and said.run_as.startswith("separate Unix users")
    else:
        assert said.run_as.startswith("one user: root, but no Python other users can run")
    fixed = parse({"name": "c", "dir": "d", "passwords": "pw", "spawn": "one-user"},
                  "class.yaml", tmp_path)
    assert deploy.status(fixed).run_as.startswith("one user: spawn: one-user in class.yaml")


def test_others_can_read_needs_every_folder_on_the_way(tmp_path):
    from course.classroom.runtime import others_can_read

    folder = tmp_path / "a" / "banks"
    folder.mkdir(parents=True)
    (folder / "k.yaml").write_text("x")
    tmp_path.chmod(0o755)
    (tmp_path / "a").chmod(0o700)
    assert not others_can_read(folder / "k.yaml")
    (tmp_path / "a").chmod(0o755)
    reachable = all(p.stat().st_mode & 0o001 for p in tmp_path.parents)
    assert others_can_read(folder / "k.yaml") == reachable
    folder.chmod(0o700)
    assert not others_can_read(folder) and not others_can_read(folder / "k.yaml")


def test_the_learners_python_is_a_virtualenv_over_the_hubs_packages(tmp_path):
    from course.classroom import runtime

    if runtime.shared_python() or runtime.learner_base() is None:
        pytest.skip("the hub's Python is usable by all (or no system Python): nothing built")
    python = runtime.learner_python(tmp_path / "python")
    pth = next((tmp_path / "python" / "lib").glob("python3.*/site-packages/" + runtime.PTH))
    assert str(runtime.hub_site_packages()) in pth.read_text()
    assert runtime.others_can_run(python)
    import subprocess

    out = subprocess.run([str(python), "-c", "import jupyterhub, ipykernel; print('ok')"],
                         capture_output=True, text=True, timeout=60, env={"PATH": "/usr/bin"})
    assert out.stdout.strip() == "ok", out.stderr
    assert runtime.learner_python(tmp_path / "python") == python  # kept when up to date
