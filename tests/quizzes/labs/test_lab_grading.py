"""`quizzes grade` on a folder of lab submissions: per-lab results in the gradebook, a clear
per-file message for malformed, oversize, non-UTF-8 or simulator-exhausting submissions."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from quizzes.bank import Bank
from quizzes.batch import grade_folder
from quizzes.gradebook import Gradebook
from quizzes.items.base import Common
from quizzes.items.lab import LabItem
from quizzes.policy import Policy

FIRST = ("#!/bin/bash\n#SBATCH -p gpu -J train --gres=gpu:1 -t 30 -o train-%j.out\n"
         "srun python train.py\n")
AFTER = "jid=$(sbatch --parsable preprocess.sh)\nsbatch -d afterok:$jid train.sh\n"


def _bank() -> Bank:
    items = tuple(
        LabItem(Common(f"lab-{lab_id}", "lab", f"Lab {lab_id}", "explained", ("L.1",)), lab_id)
        for lab_id in ("first-job", "after-preprocess", "diagnose-queue"))
    return Bank(quiz_id="labs-test", title="Labs", course="c", module="labs-test",
                pass_mark=0.6, policy=Policy(attempts=3), salt="s",
                objectives=(("L.1", "do labs"),), items=items, version="v1", path="")


def _write(folder: Path, name: str, answers: dict[str, str], learner: str = "ada") -> None:
    doc = {"format": "quizzes-submission/1", "learner_id": learner, "quiz_id": "labs-test",
           "bank_version": "v1", "started_at": 1767600000, "submitted_at": 1767600600,
           "answers": {k: {"response": v} for k, v in answers.items()}}
    (folder / name).write_text(json.dumps(doc), encoding="utf-8")


def test_grade_folder_of_lab_submissions(tmp_path: Path) -> None:
    subs = tmp_path / "subs"
    subs.mkdir()
    _write(subs, "ada.json", {"lab-first-job": FIRST, "lab-after-preprocess": AFTER,
                              "lab-diagnose-queue": "Resources"})
    _write(subs, "bob.json", {"lab-first-job": FIRST.replace(" -t 30", ""),
                              "lab-diagnose-queue": "Priority"}, learner="bob")
    hostile = {
        "array.json": "#!/bin/bash\n#SBATCH --array=0-999999\nsleep 1\n",
        "year.json": "#!/bin/bash\n#SBATCH -t 2-00:00:00\nsleep 365d\n",
        "sruns.json": "#!/bin/bash\n" + "srun hostname\n" * 1000,
        "admin.json": "scontrol update nodename=gpu01 state=down reason=x\n",
    }
    for k, (name, text) in enumerate(hostile.items()):
        _write(subs, name, {"lab-first-job": text}, learner=f"h{k}")
    _write(subs, "big.json", {"lab-first-job": "#" * (64 * 1024 + 1)}, learner="big")
    (subs / "binary.json").write_bytes(b'{"format": "\xff\xfe"}')
    (subs / "junk.json").write_text("{not json", encoding="utf-8")
    db = tmp_path / "gb.sqlite"
    with Gradebook(db) as book:
        report = grade_folder(subs, {"labs-test": _bank()}, book, None, per_file_seconds=30)
    rejected = dict(report.rejected)
    assert "64 KiB" in rejected["big.json"]
    assert "not UTF-8 text" in rejected["binary.json"]
    assert "not valid JSON" in rejected["junk.json"]
    assert report.graded == 6
    results = {(f, i): (ok, msg) for f, i, ok, msg in report.labs}
    assert results[("ada.json", "lab-first-job")][0]
    assert results[("ada.json", "lab-after-preprocess")][0]
    assert results[("ada.json", "lab-diagnose-queue")][0]
    assert "TimeLimit=01:00:00" in results[("bob.json", "lab-first-job")][1]
    assert "Not Priority" in results[("bob.json", "lab-diagnose-queue")][1]
    assert "Slurm said: sbatch: error: Batch job submission failed: Invalid job array " \
        "specification" in results[("array.json", "lab-first-job")][1]
    assert "Slurm refused the job" in results[("array.json", "lab-first-job")][1]
    assert "1000 srun lines" in results[("sruns.json", "lab-first-job")][1]
    assert "scontrol update" in results[("admin.json", "lab-first-job")][1]
    assert not results[("year.json", "lab-first-job")][0]
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT a.learner_id, r.item_id, r.score, r.feedback FROM "
                           "item_responses r JOIN attempts a USING (attempt_id) "
                           "ORDER BY 1, 2").fetchall()
    per = {(learner, item): (score, fb) for learner, item, score, fb in rows}
    assert per[("ada", "lab-first-job")][0] == 1.0
    assert per[("bob", "lab-first-job")][0] == 0.0
    assert "TimeLimit" in per[("bob", "lab-first-job")][1]
