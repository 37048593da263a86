"""Quiz engine speed: grade 10,000 submissions (target <= 10 s), verify one certificate (<= 1 ms).

Run: ``.venv/bin/python benchmarks/bench_quizzes.py [N]``.  Prints

* parse + grade of N submission documents spread over all eight banks (a mix of
  right and wrong answers, every item type including sbatch parsing and the
  controller-simulated scheduler items, whose keys are computed once per variant,
  and parsed sbatch answers cached by text);
* the whole ``quizzes grade`` path: N files read from disk, validated, graded,
  recorded in a fresh SQLite gradebook and certificates signed;
* verification of one certificate (signature, ID binding, revocation list),
  median of many runs: in memory (:func:`quizzes.certify.verify`) and the real
  ``quizzes verify <ID>`` path (:meth:`quizzes.registry.Lookup.check_id`: the
  gradebook opened read-only, the signed revocation list read and checked).

Wall and CPU seconds are both printed: on a shared machine the wall time of the
SQLite path varies with the other processes' load.
"""

from __future__ import annotations

import hashlib
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from quizzes import ids
from quizzes.author import load_sources
from quizzes.bank import load_banks
from quizzes.batch import CertificateIssuer, grade_folder
from quizzes.certify import issue, make_record, revoke, verify
from quizzes.demo import simulated_class
from quizzes.grade import grade_submission
from quizzes.gradebook import Gradebook
from quizzes.keys import generate, load_private
from quizzes.registry import Lookup
from quizzes.submission import parse_submission


def make_documents(n: int) -> list[str]:
    banks, sources = load_banks(), load_sources()
    per = n // len(banks) + 1
    docs: list[str] = []
    for quiz_id, bank in banks.items():
        docs += [json.dumps(d) for d in simulated_class(bank, sources[quiz_id], per, seed=7,
                                                        skip_scheduler=False)]
    return docs[:n]


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    banks = load_banks()
    t = time.perf_counter()
    docs = make_documents(n)
    print(f"made {len(docs)} submissions in {time.perf_counter() - t:.1f} s (not timed below)")

    t, cpu = time.perf_counter(), time.process_time()
    points = 0.0
    for doc in docs:
        sub = parse_submission(doc, banks)
        points += grade_submission(banks[sub.quiz_id], sub).points
    grade_s, grade_cpu = time.perf_counter() - t, time.process_time() - cpu
    print(f"parse + grade {len(docs)} submissions: {grade_s:.2f} s wall, {grade_cpu:.2f} s CPU "
          f"({grade_s / len(docs) * 1e6:.0f} us each; target <= 10 s)  "
          f"{'OK' if grade_s <= 10 else 'SLOW'}")

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "subs"
        folder.mkdir()
        for i, doc in enumerate(docs):
            (folder / f"{i:05d}.json").write_text(doc)
        key, _pub = generate(Path(tmp) / "issuer")
        private = load_private(key)
        t, cpu = time.perf_counter(), time.process_time()
        with Gradebook(Path(tmp) / "gb.sqlite") as book:
            report = grade_folder(folder, banks, book, CertificateIssuer(private))
        full_s, full_cpu = time.perf_counter() - t, time.process_time() - cpu
        print(f"quizzes grade (files -> SQLite + certificates) {len(docs)} submissions: "
              f"{full_s:.2f} s wall, {full_cpu:.2f} s CPU; graded {report.graded}, certificates "
              f"{len(report.certificates)}, skipped {len(report.rejected)}  "
              f"{'OK' if full_s <= 10 else 'SLOW'}")

        record = make_record(course="C", quiz_id="q", quiz_title="Q", learner_id="ada",
                             learner_name="Ada", score=0.9, pass_mark=0.7,
                             bank_version="0" * 16, issuer="I", public=private.public_key())
        cert = issue(record, private)
        public = private.public_key()
        revoked = {f"{i:04d}-0000-0000-0": "test" for i in range(1000)}
        report_timing("verify one certificate (in memory)",
                      lambda: verify(cert, public, revoked).ok)

        # The real `quizzes verify <ID>` path: parse the typed ID, open the gradebook
        # read-only, fetch the document, read the signed revocation list, verify.
        revocations = Path(tmp) / "revocations.json"
        for i in range(100):
            revoke(revocations, ids.encode(hashlib.sha256(b"%d" % i).digest()), "test", private,
                   when=1767600000)
        lookup = Lookup(public, db=str(Path(tmp) / "gb.sqlite"), revocations=str(revocations))
        cid = report.certificates[0]
        report_timing(f"Lookup.check_id (SQLite, {len(lookup.revoked())} revoked)",
                      lambda: lookup.check_id(cid).ok)


def report_timing(what: str, run: Callable[[], bool], n: int = 2000) -> None:
    """Median and p99 of ``n`` runs of ``run`` (which must return True)."""
    times = []
    for _ in range(n):
        t = time.perf_counter()
        ok = run()
        times.append(time.perf_counter() - t)
        assert ok, what
    med = statistics.median(times) * 1e3
    print(f"{what}: median {med:.3f} ms, p99 {sorted(times)[int(n * 0.99)] * 1e3:.3f} ms "
          f"(target <= 1 ms)  {'OK' if med <= 1 else 'SLOW'}")


if __name__ == "__main__":
    main()
