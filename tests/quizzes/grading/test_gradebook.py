"""The gradebook: real SQLite, idempotent re-grades, two graders at once, exports, analysis."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from quizzes.analysis import analyse, chart, cronbach_alpha
from quizzes.author import build_item, load_sources
from quizzes.bank import load_banks, parse_bank
from quizzes.batch import CertificateIssuer, grade_folder
from quizzes.demo import EPOCH, model_submission
from quizzes.export import export_csv
from quizzes.gradebook import Gradebook
from quizzes.keys import generate, load_private

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def banks():
    return load_banks()


@pytest.fixture(scope="module")
def sources():
    return load_sources()


@pytest.fixture()
def issuer(tmp_path):
    key, _ = generate(tmp_path / "issuer")
    return CertificateIssuer(load_private(key), "Test issuer", clock=lambda: EPOCH + 3600)


#: The per-file budget: ample for a real submission on a loaded machine (a lab item is replayed
#: on the simulated clock, ~0.1 s cold), far below the slow scenario (1000 jobs: over 30 s).
PER_FILE = 5.0


def write(folder: Path, name: str, doc) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return path


def class_folder(tmp_path, banks, sources, n=6) -> Path:
    """n learners on module 1: even ones pass, odd ones fail; ada also has a retry."""
    folder = tmp_path / "subs"
    bank = banks["01-what-is-slurm"]
    for k in range(n):
        write(
            folder,
            f"l{k}.json",
            model_submission(
                bank,
                sources[bank.quiz_id],
                f"l{k}",
                f"Learner {k}",
                correct=k % 2 == 0,
                started_at=EPOCH + k,
            ),
        )
    return folder


def test_grading_fills_every_table(tmp_path, banks, sources, issuer):
    folder = class_folder(tmp_path, banks, sources)
    with Gradebook(tmp_path / "gb.sqlite") as book:
        report = grade_folder(folder, banks, book, issuer)
        counts = book.counts()
        assert (report.graded, report.duplicates, report.rejected) == (6, 0, [])
        assert counts == {
            "learners": 6,
            "quizzes": 1,
            "attempts": 6,
            "item_responses": 6 * len(banks["01-what-is-slurm"].items),
            "scores": 6,
            "certificates": 3,
        }
        assert len(report.certificates) == 3
        passed = {lid: p for lid, _, _, _, p, _ in book.scores()}
        assert passed == {"l0": True, "l1": False, "l2": True, "l3": False, "l4": True, "l5": False}


def test_regrading_is_idempotent(tmp_path, banks, sources, issuer):
    folder = class_folder(tmp_path, banks, sources)
    with Gradebook(tmp_path / "gb.sqlite") as book:
        grade_folder(folder, banks, book, issuer)
        before = book.counts()
        certs = sorted(r[0] for r in book.db.execute("SELECT cert_id FROM certificates"))
        again = grade_folder(folder, banks, book, issuer)
        assert (again.graded, again.duplicates) == (0, 6)
        assert book.counts() == before
        assert sorted(r[0] for r in book.db.execute("SELECT cert_id FROM certificates")) == certs


def test_attempts_policy_is_applied_across_submissions(tmp_path, banks, sources, issuer):
    bank = banks["01-what-is-slurm"]  # 3 attempts, -10% per retry, best counts
    src = sources[bank.quiz_id]
    folder = tmp_path / "subs"
    wrong_first = {it.common.id: i < 3 for i, it in enumerate(bank.items)}  # 3/7 right
    write(
        folder, "a1.json", model_submission(bank, src, "ada", correct=wrong_first, started_at=EPOCH)
    )
    write(folder, "a2.json", model_submission(bank, src, "ada", started_at=EPOCH + 100))
    write(folder, "a3.json", model_submission(bank, src, "ada", started_at=EPOCH + 200))
    write(folder, "a4.json", model_submission(bank, src, "ada", started_at=EPOCH + 300))
    with Gradebook(tmp_path / "gb.sqlite") as book:
        grade_folder(folder, banks, book, issuer)
        [(_, _, _, score, passed, attempts)] = book.scores()
    assert attempts == 4  # all recorded ...
    assert score == pytest.approx(0.9)  # ... best counted: attempt 2 at 100% x 0.9
    assert passed


def test_bad_submissions_are_reported_by_file_and_change_nothing(tmp_path, banks, sources, issuer):
    good = model_submission(banks["01-what-is-slurm"], sources["01-what-is-slurm"], "ada")
    folder = tmp_path / "bad"
    write(folder, "broken.json", "{oops")
    write(folder, "unknown.json", {**good, "quiz_id": "nope"})
    write(folder, "outdated.json", {**good, "bank_version": "ffffffffffffffff"})
    write(folder, "huge.json", {**good, "pad": "x" * 300_000})
    with Gradebook(tmp_path / "gb.sqlite") as book:
        before = book.counts()
        report = grade_folder(folder, banks, book, issuer)
        assert book.counts() == before
    problems = dict(report.rejected)
    assert sorted(problems) == ["broken.json", "huge.json", "outdated.json", "unknown.json"]
    assert problems["broken.json"].startswith("broken.json: not valid JSON")
    assert problems["unknown.json"] == "unknown.json: unknown quiz 'nope'"
    assert "is outdated" in problems["outdated.json"]
    assert problems["huge.json"].startswith("huge.json: too large")


def test_a_slow_submission_is_skipped_and_the_batch_goes_on(tmp_path, banks, sources, issuer):
    slow_bank = {
        "schema": 1,
        "quiz_id": "slow",
        "title": "Slow",
        "course": "C",
        "pass_mark": 0.5,
        "salt": "s",
        "objectives": {"o": "x"},
        "items": [
            build_item(
                {
                    "id": "q",
                    "type": "scheduler",
                    "objectives": ["o"],
                    "prompt": "?",
                    "explanation": "e",
                    "ask": "next_start",
                    "scenario": {
                        "jobs": [
                            # 1000 whole-cluster jobs one after another: far beyond
                            # the 1 s budget however fast the controller gets (the
                            # budget stops the simulation, so the test stays quick)
                            {"name": f"j{i}", "args": "-p gpu -N4 --exclusive -t 1",
                             "submit": 0, "runtime": 1}
                            for i in range(1000)
                        ]
                    },
                },
                "s",
                "slow.yaml",
            )
        ],
    }
    slow = parse_bank(slow_bank, "slow.yaml")
    all_banks = {**banks, "slow": slow}
    folder = class_folder(tmp_path, banks, sources, n=2)
    write(
        folder,
        "slow.json",
        {
            "format": "quizzes-submission/1",
            "learner_id": "zed",
            "quiz_id": "slow",
            "bank_version": slow.version,
            "started_at": EPOCH,
            "submitted_at": EPOCH + 9,
            "answers": {"q": {"response": "j0"}},
        },
    )
    with Gradebook(tmp_path / "gb.sqlite") as book:
        report = grade_folder(folder, all_banks, book, issuer, per_file_seconds=PER_FILE)
    assert report.graded == 2
    assert report.rejected == [("slow.json", f"grading took longer than {PER_FILE:g} s; skipped")]


GRADER = """
import sys, time
from pathlib import Path
from quizzes.bank import load_banks
from quizzes.batch import CertificateIssuer, grade_folder
from quizzes.gradebook import Gradebook
from quizzes.keys import load_private
folder, db, key, barrier, me = sys.argv[1:6]
banks, issuer = load_banks(), CertificateIssuer(load_private(key))
with Gradebook(db) as book:
    record_many = book.record_many

    def paced(*args, **kwargs):               # after each commit, give the other a turn
        for recorded in record_many(*args, **kwargs):
            yield recorded
            time.sleep(0.01)

    book.record_many = paced
    Path(barrier, me).touch()                 # ready: imports done, gradebook open
    deadline = time.time() + 60
    while len(list(Path(barrier).iterdir())) < 2 and time.time() < deadline:
        time.sleep(0.001)                     # wait for the other grader
    start = time.time()
    r = grade_folder(folder, banks, book, issuer, batch=1)  # one transaction per file
    end = time.time()
print(r.graded, r.duplicates, len(r.rejected), start, end)
"""


def test_two_graders_at_once_never_lose_or_double_a_row(tmp_path, banks, sources):
    """Both graders start together (a barrier folder), commit file by file and walk the
    same submissions from opposite ends, so their transactions really interleave and
    collide on the same rows in the middle; no row may be lost or doubled."""
    folder = class_folder(tmp_path, banks, sources, n=40)
    backwards = tmp_path / "backwards"  # the same files, named so they sort in reverse
    backwards.mkdir()
    for k in range(40):
        (backwards / f"{39 - k:02d}.json").write_bytes((folder / f"l{k}.json").read_bytes())
    key, _ = generate(tmp_path / "k")
    db = tmp_path / "gb.sqlite"
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    Gradebook(db).close()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", GRADER, str(where), str(db), str(key), str(barrier), me],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for where, me in ((folder, "a"), (backwards, "b"))
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    totals = [out.split() for out, _ in outs]
    graded = [int(t[0]) for t in totals]
    dups = [int(t[1]) for t in totals]
    starts, ends = [float(t[3]) for t in totals], [float(t[4]) for t in totals]
    assert max(starts) < min(ends), "the two graders did not overlap"
    assert min(graded) > 0, graded  # they met in the middle: both recorded rows
    assert sum(graded) == 40  # each submission graded exactly once
    assert sum(dups) == 40  # ... and seen as done by the other
    assert all(int(t[2]) == 0 for t in totals)
    with Gradebook(db) as book:
        assert book.counts() == {
            "learners": 40,
            "quizzes": 1,
            "attempts": 40,
            "item_responses": 40 * len(banks["01-what-is-slurm"].items),
            "scores": 40,
            "certificates": 20,
        }
        assert book.db.execute("SELECT COUNT(DISTINCT learner_id) FROM certificates"
                               ).fetchone()[0] == 20


def test_csv_exports_for_canvas_moodle_and_plain(tmp_path, banks, sources, issuer):
    folder = class_folder(tmp_path, banks, sources, n=2)
    write(
        folder,
        "x.json",
        model_submission(banks["02-sbatch"], sources["02-sbatch"], "l0", "Learner 0"),
    )
    with Gradebook(tmp_path / "gb.sqlite") as book:
        grade_folder(folder, banks, book, issuer)
        canvas = list(csv.reader(io.StringIO(export_csv(book, "canvas"))))
        moodle = list(csv.reader(io.StringIO(export_csv(book, "moodle"))))
        plain = list(csv.reader(io.StringIO(export_csv(book, "plain"))))
    assert canvas[0] == [
        "Student",
        "ID",
        "SIS User ID",
        "SIS Login ID",
        "Section",
        "Module 1: What Slurm is for",
        "Module 2: Batch jobs with sbatch",
    ]
    assert canvas[1] == ["    Points Possible", "", "", "", "", "100", "100"]
    assert canvas[2] == ["0, Learner", "", "l0", "l0", "", "100", "100"]
    assert canvas[3][2:] == ["l1", "l1", "", "0", ""]  # not attempted: empty cell
    assert moodle[0] == ["ID number", "First name", "Last name",
                         "Module 1: What Slurm is for (01-what-is-slurm)",
                         "Module 2: Batch jobs with sbatch (02-sbatch)"]
    assert moodle[1] == ["l0", "Learner", "0", "100", "100"]
    assert plain[2] == ["l1", "Learner 1", "0", ""]


def test_cronbach_alpha_by_hand():
    import numpy as np

    matrix = np.array([[1, 1, 1], [1, 1, 0], [1, 0, 0], [0, 0, 0]], dtype=float)
    # item variances .1875 + .25 + .1875 = .625; total variance 1.25; 3/2 * (1 - .5) = .75
    assert cronbach_alpha(matrix) == pytest.approx(0.75)
    assert cronbach_alpha(np.ones((5, 3))) is None


def test_item_analysis_on_first_attempts(tmp_path, issuer):
    items = [
        {
            "id": f"q{i}",
            "type": "single",
            "options": [
                {"id": "a", "text": "right", "correct": True},
                {"id": "b", "text": "wrong"},
                {"id": "c", "text": "also wrong"},
            ],
        }
        for i in (1, 2, 3)
    ]
    data = {
        "schema": 1,
        "quiz_id": "ia",
        "title": "IA",
        "course": "C",
        "pass_mark": 0.5,
        "salt": "s",
        "objectives": {"o": "x"},
        "items": [
            build_item(
                {"objectives": ["o"], "prompt": "?", "explanation": "e", **it}, "s", "ia.yaml"
            )
            for it in items
        ],
    }
    bank = parse_bank(data, "ia.yaml")
    pattern = {"w": "aaa", "x": "aab", "y": "acb", "z": "bbc"}  # learner -> answers q1..q3
    folder = tmp_path / "ia"
    for learner, answers in pattern.items():
        write(
            folder,
            f"{learner}.json",
            {
                "format": "quizzes-submission/1",
                "learner_id": learner,
                "quiz_id": "ia",
                "bank_version": bank.version,
                "started_at": EPOCH,
                "submitted_at": EPOCH + 60,
                "answers": {f"q{i + 1}": {"response": a} for i, a in enumerate(answers)},
            },
        )
    # a later perfect retry by z must not count in the analysis (first attempts only)
    write(
        folder,
        "z2.json",
        {
            "format": "quizzes-submission/1",
            "learner_id": "z",
            "quiz_id": "ia",
            "bank_version": bank.version,
            "started_at": EPOCH + 999,
            "submitted_at": EPOCH + 1000,
            "answers": {f"q{i}": {"response": "a"} for i in (1, 2, 3)},
        },
    )
    with Gradebook(tmp_path / "gb.sqlite") as book:
        grade_folder(folder, {"ia": bank}, book, issuer)
        stats = analyse(book, bank)
    assert stats.learners == 4
    assert [it.facility for it in stats.items] == [0.75, 0.5, 0.25]
    assert stats.alpha == pytest.approx(0.75)
    assert [it.discrimination for it in stats.items] == [1.0, 1.0, 1.0]
    assert stats.items[1].distractors == (("a", 2), ("b", 1), ("c", 1))
    assert stats.items[2].distractors == (("a", 1), ("b", 2), ("c", 1))
    assert "Cronbach's alpha = 0.75" in stats.table()
    fig = chart(stats)
    assert [t.name for t in fig.data] == ["facility", "discrimination D"]
    assert list(fig.data[0].y) == [0.75, 0.5, 0.25]
