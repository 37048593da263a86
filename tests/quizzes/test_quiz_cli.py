"""The `quizzes` command: the instructor workflow; errors are messages, never tracebacks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from quizzes.author import load_sources
from quizzes.bank import load_banks
from quizzes.cli import main
from quizzes.demo import EPOCH, model_submission
from quizzes.items.text import TextItem

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def classroom(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    banks, sources = load_banks(), load_sources()
    subs = tmp_path / "subs"
    subs.mkdir()
    for k, ok in enumerate((True, True, False)):
        doc = model_submission(banks["02-sbatch"], sources["02-sbatch"], f"l{k}",
                               f"Learner {k}", correct=ok, started_at=EPOCH + k)
        (subs / f"l{k}.json").write_text(json.dumps(doc))
    (subs / "junk.json").write_text("{")
    assert main(["keygen", "--out", "issuer"]) == 0
    return tmp_path


def test_the_instructor_workflow(classroom, capsys):
    assert main(["grade", "subs", "--key", "issuer.key"]) == 1  # one skipped
    out, err = capsys.readouterr()
    assert "graded 3, already graded 0, skipped 1, certificates issued 2" in out
    assert "quizzes: skipped junk.json: junk.json: not valid JSON" in err
    assert "grading: 100%" in err and "4/4" in err                # the tqdm progress bar
    cid = out.split("certificate ")[-1].split()[0]

    assert main(["verify", cid, "--pub", "issuer.pub"]) == 0
    assert capsys.readouterr().out.startswith(f"VALID {cid}: issued to Learner")

    assert main(["certificate", cid, "--html", "c.html", "--pdf", "c.pdf", "--json", "c.json",
                 "--badge", "b.json", "--key", "issuer.key"]) == 0
    assert Path("c.pdf").read_bytes().startswith(b"%PDF")
    assert main(["verify", "c.json", "--pub", "issuer.pub", "--db", "none.sqlite"]) == 0

    assert main(["revoke", cid, "--key", "issuer.key", "--reason", "test"]) == 0
    capsys.readouterr()
    assert main(["verify", cid, "--pub", "issuer.pub"]) == 3
    assert capsys.readouterr().out.startswith(f"REVOKED {cid}: revoked by the issuer: test")

    assert main(["export", "--format", "moodle", "-o", "grades.csv"]) == 0
    assert Path("grades.csv").read_text().startswith("ID number,First name,Last name,")
    assert main(["analyse", "02-sbatch", "--html", "ia.html"]) == 0
    out = capsys.readouterr().out
    assert "quiz 02-sbatch: 3 learner(s) on first attempts" in out
    assert Path("ia.html").stat().st_size > 1000

    assert main(["grade", "subs", "--key", "issuer.key", "--no-progress",
                 "--publish", "public"]) == 1
    rerun = capsys.readouterr().out
    assert "graded 0, already graded 3, skipped 1, certificates issued 0" in rerun
    assert "certificate " not in rerun.replace("certificates", "")  # none listed as new
    assert (Path("public") / f"{cid}.json").exists()             # third parties resolve IDs
    assert main(["verify", cid, "--pub", "issuer.pub", "--db", "none", "--certs", "public"]) == 3


def test_verify_rejects_a_mistyped_id_and_another_key(classroom, capsys):
    main(["grade", "subs", "--key", "issuer.key", "--no-progress"])
    cid = capsys.readouterr().out.split("certificate ")[-1].split()[0]
    typo = cid[:-1] + ("0" if cid[-1] != "0" else "1")
    assert main(["verify", typo, "--pub", "issuer.pub"]) == 1
    assert "check symbol does not match" in capsys.readouterr().out
    main(["keygen", "--out", "other"])
    capsys.readouterr()
    assert main(["verify", cid, "--pub", "other.pub"]) == 1
    assert "signed by another issuer key" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["grade", "nowhere", "--key", "issuer.key"], "quizzes: error: nowhere: no such folder"),
    (["grade", "subs", "--key", "missing.key"], "quizzes: error: missing.key: cannot read"),
    (["grade", "subs", "--key", "issuer.pub"], "quizzes: error: issuer.pub: not a PEM private"),
    (["verify", "X", "--pub", "nope.pub"], "quizzes: error: nope.pub: cannot read the key"),
    (["export", "--db", "none.sqlite"], "quizzes: error: none.sqlite: no such gradebook"),
    (["analyse", "99-x"], "quizzes: error: unknown quiz '99-x'"),
    (["keygen", "--out", "issuer"], "quizzes: error: issuer.key already exists"),
    (["revoke", "ABC", "--key", "issuer.key"], "quizzes: error: cannot revoke 'ABC'"),
    (["frobnicate"], "quizzes: error: argument command: invalid choice"),
    (["verify", "gone.json", "--pub", "issuer.pub"],
     "quizzes: error: gone.json: no such certificate file"),
    (["grade", "subs"], "quizzes: error: the following arguments are required: --key"),
])
def test_errors_are_one_clear_message_and_a_non_zero_exit(classroom, capsys, argv, message):
    code = main(argv)
    err = capsys.readouterr().err
    assert code != 0
    assert err.startswith(message), err
    assert "Traceback" not in err


def test_the_console_script_never_shows_a_traceback(tmp_path):
    (tmp_path / "gb.sqlite").write_text("this is not a database")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-m", "quizzes", "export", "--db", "gb.sqlite"],
                         cwd=tmp_path, capture_output=True, text=True, env=env, timeout=60)
    assert run.returncode == 1
    assert run.stderr.startswith("quizzes: error: gb.sqlite: not a usable gradebook database")
    assert "Traceback" not in run.stderr


def test_author_hash_matches_the_bank(capsys):
    bank = load_banks()["01-what-is-slurm"]
    assert main(["author", "hash", "slurmctld", "--salt", bank.salt,
                 "--item", "name-the-controller"]) == 0
    digest = capsys.readouterr().out.strip()
    item = bank.item("name-the-controller")
    assert isinstance(item, TextItem)
    assert digest in item.keys[""]
