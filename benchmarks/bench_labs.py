"""Lab grading speed: check one lab (target <= 300 ms median), grade 1,000 lab
submissions (target <= 60 s on this 2-core machine).

Run: ``.venv/bin/python benchmarks/bench_labs.py [N]``.  Prints

* the median wall time of one uncached check per lab (a right answer: the play runs
  to the end; the verdict cache is bypassed), and the median over all labs;
* the whole ``quizzes grade`` path for N submission files (default 1,000), each
  holding one lab answer, every text unique (a comment names the learner, so no
  verdict is reused from the cache: the worst case): read, validated, replayed on
  a fresh minislurm cluster each, recorded in a fresh SQLite gradebook;

with the ratio to each target (< 1 is within it).
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from quizzes.bank import Bank
from quizzes.batch import grade_folder
from quizzes.gradebook import Gradebook
from quizzes.items.base import Common
from quizzes.items.lab import LabItem
from quizzes.labs import LABS, check_text
from quizzes.policy import Policy

H = "#!/bin/bash\n"
#: (lab id, answer): right and wrong answers of the script and snippet labs.
ANSWERS: tuple[tuple[str, str], ...] = (
    ("first-job", H + "#SBATCH -p gpu -J train -N1 --gres=gpu:1 -t 30 -o train-%j.out\n"
                      "srun python train.py\n"),
    ("first-job", H + "#SBATCH -p gpu -J train -N1 --gres=gpu:1 -t 30\nsrun python train.py\n"),
    ("ddp-2x4", H + "#SBATCH -N2 --ntasks-per-node=4 --gpus-per-task=1\nsrun python train.py\n"),
    ("ddp-2x4", H + "#SBATCH -N2 --gres=gpu:4 --ntasks-per-node=4\nsrun python train.py\n"),
    ("sweep-array", H + "#SBATCH --array=0-15%4 --gres=gpu:1 -o sweep-%A_%a.out\n"
                        "srun python train.py\n"),
    ("sweep-array", H + "#SBATCH --array=0-15 --gres=gpu:1 -o sweep-%j.out\n"
                        "srun python train.py\n"),
    ("survive-node-failure", H + "#SBATCH -N1 --gres=gpu:8 -t 2:00:00 --requeue "
                                 "--open-mode=append --signal=B:USR1@300\n"
                                 "#MINISLURM runtime=1:30:00\nsrun python train.py\n"),
    ("after-preprocess", "jid=$(sbatch --parsable preprocess.sh)\n"
                         "sbatch --dependency=afterok:$jid train.sh\n"),
    ("after-preprocess", "jid=$(sbatch --parsable preprocess.sh)\n"
                         "sbatch --dependency=afterany:$jid train.sh\n"),
    ("cpu-preprocess", H + "#SBATCH -p cpu -J prep -c8 --mem=32G -t 2:00:00 -o prep-%j.out "
                           "-e prep-%j.err\nsrun python preprocess.py\n"),
    ("four-gpus", H + "#SBATCH -N1 --gres=gpu:4 -c 32\nsrun python train.py\n"),
    ("qos-eval", H + "#SBATCH --qos=debug --gres=gpu:2 -t 30\nsrun python eval.py\n"),
    ("backfill-fit", H + "#SBATCH -N1 --gres=gpu:8 -t 30\nsrun python train.py\n"),
    ("diagnose-queue", "Resources"),
    ("diagnose-start", "10:00:00"),
)

TARGET_CHECK = 0.300
TARGET_GRADE = 60.0


def _uncached(lab_id: str, text: str) -> float:
    t = time.perf_counter()
    check_text.__wrapped__(lab_id, text)
    return time.perf_counter() - t


def bench_check(repeat: int = 7) -> float:
    medians = []
    for item in LABS:
        text = next((a for lab_id, a in ANSWERS if lab_id == item.id), None)
        if text is None:
            continue
        _uncached(item.id, text)  # warm imports and the diagnose scenario cache
        m = statistics.median(_uncached(item.id, f"{text}\n# run {k}\n" if item.kind !=
                                        "diagnose" else text) for k in range(repeat))
        medians.append(m)
        print(f"  check {item.id:<22} median {m * 1000:7.1f} ms")
    overall = statistics.median(medians)
    print(f"check one lab: median {overall * 1000:.1f} ms (target {TARGET_CHECK * 1000:.0f} ms, "
          f"ratio {overall / TARGET_CHECK:.2f})")
    return overall


def _bank() -> Bank:
    ids = sorted({lab_id for lab_id, _ in ANSWERS})
    items = tuple(LabItem(Common(f"lab-{i}", "lab", i, "", ("L.1",)), i) for i in ids)
    return Bank(quiz_id="labs-bench", title="Labs", course="c", module="labs-bench",
                pass_mark=0.6, policy=Policy(), salt="s", objectives=(("L.1", "labs"),),
                items=items, version="bench", path="")


def bench_grade(n: int) -> float:
    bank = _bank()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "subs"
        folder.mkdir()
        for k in range(n):
            lab_id, text = ANSWERS[k % len(ANSWERS)]
            if not lab_id.startswith("diagnose"):
                text += f"# learner {k}\n"
            doc = {"format": "quizzes-submission/1", "learner_id": f"l{k}",
                   "quiz_id": "labs-bench", "bank_version": "bench",
                   "started_at": 1767600000, "submitted_at": 1767600600,
                   "answers": {f"lab-{lab_id}": {"response": text}}}
            (folder / f"{k:05d}.json").write_text(json.dumps(doc), encoding="utf-8")
        check_text.cache_clear()
        t, c = time.perf_counter(), time.process_time()
        with Gradebook(Path(tmp) / "gb.sqlite") as book:
            report = grade_folder(folder, {"labs-bench": bank}, book, None)
        wall, cpu = time.perf_counter() - t, time.process_time() - c
    assert report.graded == n and not report.rejected, report.rejected[:3]
    passed = sum(1 for *_, ok, _ in report.labs if ok)
    print(f"grade {n} lab submissions: {wall:.1f} s wall, {cpu:.1f} s CPU "
          f"({passed} passed); target {TARGET_GRADE:.0f} s, ratio {wall / TARGET_GRADE:.2f} "
          f"(per submission {wall / n * 1000:.1f} ms)")
    return wall


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    if n < 1:
        raise SystemExit("bench_labs.py: N must be at least 1")
    bench_check()
    bench_grade(n)


if __name__ == "__main__":
    main()
