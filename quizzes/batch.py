"""Grading a folder of submissions into the gradebook (``quizzes grade``).

Each ``*.json`` file is read (at most :data:`quizzes.submission.MAX_BYTES`),
validated, graded and recorded.  Lab items are regraded by replaying the submitted
text on a fresh minislurm cluster on the simulated clock (`quizzes.labs`); their
results are listed per file and lab (`BatchReport.labs`).  A bad file (including
one whose grading or recording raises anything at all) is reported with its name and skipped; a file
whose grading exceeds ``per_file_seconds`` is stopped and reported, so one bad
or slow submission never aborts the batch.  Certificates
are signed by :class:`CertificateIssuer`, which only the grader (holding the
issuer's private key) can construct.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from minislurm.errors import SlurmError
from quizzes.bank import Bank
from quizzes.certify import SELF_STUDY, issue, make_record
from quizzes.grade import AttemptGrade, grade_submission
from quizzes.gradebook import Gradebook, Recorded
from quizzes.submission import MAX_BYTES, Submission, parse_submission


@dataclass(frozen=True, slots=True)
class CertificateIssuer:
    """Signs a certificate for a passing learner with the issuer's private key."""

    private: Ed25519PrivateKey
    issuer: str = "minislurm course"
    clock: Callable[[], int] | None = None

    def __call__(self, sub: Submission, bank: Bank, score: float) -> dict[str, Any]:
        record = make_record(
            course=bank.course, quiz_id=bank.quiz_id, quiz_title=bank.title,
            learner_id=sub.learner_id, learner_name=sub.learner_name, score=score,
            pass_mark=bank.pass_mark, bank_version=bank.version, issuer=self.issuer,
            public=self.private.public_key(),
            issued_at=self.clock() if self.clock else None, lang=sub.lang)
        record["assessment"] = SELF_STUDY
        return issue(record, self.private).to_json()


@dataclass
class BatchReport:
    graded: int = 0
    duplicates: int = 0
    certificates: list[str] = field(default_factory=list)  # newly issued by this run
    rejected: list[tuple[str, str]] = field(default_factory=list)
    #: Per-lab results of the graded files: (file, item id, passed, feedback).
    labs: list[tuple[str, str, bool, str]] = field(default_factory=list)


class GradingTimeout(Exception):
    """A single submission took longer than its time budget."""


@contextmanager
def time_budget(seconds: float | None) -> Iterator[None]:
    """Interrupt the block after ``seconds`` (SIGALRM; only in the main thread)."""
    if not seconds or threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_alarm(signum: int, frame: Any) -> None:
        raise GradingTimeout

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def read_limited(path: Path) -> bytes:
    """The file's bytes, at most one byte over the submission size limit."""
    with path.open("rb") as fh:
        return fh.read(MAX_BYTES + 1)


def prepare(path: Path, banks: Mapping[str, Bank], per_file_seconds: float | None
            ) -> tuple[Submission, Bank, AttemptGrade]:
    """Read, validate and grade one file.

    Raises SlurmError (a bad file), GradingTimeout, or whatever else grading it
    raised: :func:`grade_folder` rejects that one file with the reason.
    """
    try:
        data = read_limited(path)
    except OSError as exc:
        raise SlurmError(f"cannot read: {exc.strerror}") from None
    with time_budget(per_file_seconds):
        sub = parse_submission(data, banks, source=path.name)
        bank = banks[sub.quiz_id]
        return sub, bank, grade_submission(bank, sub)


def grade_folder(
    folder: str | Path, banks: Mapping[str, Bank], book: Gradebook,
    issuer: CertificateIssuer | None, *, progress: bool = False,
    per_file_seconds: float | None = 30.0, batch: int = 200,
) -> BatchReport:
    """Grade every ``*.json`` under ``folder`` (sorted by name) into ``book``."""
    files = sorted(p for p in Path(folder).rglob("*.json") if p.is_file())
    report = BatchReport()
    bar: Any = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=len(files), unit="submission", desc="grading")
    ready: list[tuple[Submission, Bank, AttemptGrade, str]] = []

    def flush() -> None:
        results: list[Recorded] = list(book.record_many(ready, issuer, batch=batch))
        for (_, bank, grade, name), result in zip(ready, results, strict=True):
            if result.status == "rejected":
                report.rejected.append((name, f"{result.problem}; skipped"))
                continue
            kinds = {it.common.id: it.common.type for it in bank.items}
            report.labs += [(name, g.item_id, g.correct, g.feedback) for g in grade.items
                            if kinds.get(g.item_id) == "lab" and g.response is not None]
            if result.status == "graded":
                report.graded += 1
            else:
                report.duplicates += 1
            cid = result.certificate_id
            if result.new_certificate and cid and cid not in report.certificates:
                report.certificates.append(cid)
        ready.clear()

    for path in files:
        name = str(path.relative_to(folder))
        try:
            sub, bank, grade = prepare(path, banks, per_file_seconds)
            ready.append((sub, bank, grade, name))
        except SlurmError as exc:
            report.rejected.append((name, exc.message.removeprefix("quizzes: error: ")))
        except GradingTimeout:
            report.rejected.append((name, f"grading took longer than {per_file_seconds:g} s;"
                                          " skipped"))
        except RecursionError:
            report.rejected.append((name, "too deeply nested; skipped"))
        except Exception as exc:  # whatever one file does, the batch goes on
            report.rejected.append((name, f"could not be graded ({type(exc).__name__}: "
                                          f"{exc}); skipped"))
        if len(ready) >= batch:
            flush()
        if bar is not None:
            bar.update(1)
    flush()
    if bar is not None:
        bar.close()
    return report
