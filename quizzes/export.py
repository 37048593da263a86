"""Gradebook CSV export: one row per learner, one column per quiz, LMS-friendly.

Formats (``quizzes export --format ...``):

* ``canvas``: the layout of a Canvas gradebook export, which its Import accepts:
  ``Student,ID,SIS User ID,SIS Login ID,Section`` then one column per quiz named by
  its title (a title without ``(assignment id)`` makes Canvas create the
  assignment), and a ``Points Possible`` row.  Learners are matched by ``SIS User
  ID``/``SIS Login ID`` = our learner id; ``ID`` (Canvas's internal id) is left
  empty.  Scores are points out of 100.
* ``moodle``: ``ID number,First name,Last name`` then one column per quiz; in
  Moodle's "Import grades: CSV file", map ``ID number`` to the user's ID number
  and each quiz column to a grade item.  Scores are out of 100.
* ``plain``: ``learner_id,name`` then one 0..1 fraction per quiz.

A learner who has not attempted a quiz gets an empty cell, which both LMSs
leave unchanged on import.  A text cell (a learner's name or id, a quiz title)
that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is
prefixed with ``'`` so that a spreadsheet shows it as text instead of running it
as a formula (CSV injection, OWASP); scores are numbers and never start so.
"""

from __future__ import annotations

import csv
import io

from quizzes.errors import UsageError
from quizzes.gradebook import Gradebook

FORMATS = ("canvas", "moodle", "plain")
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(text: str) -> str:
    """``text``, defused if a spreadsheet would read it as a formula."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def export_csv(book: Gradebook, fmt: str = "canvas") -> str:
    """The CSV text of the whole gradebook in one of :data:`FORMATS`."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown export format '{fmt}' (one of {', '.join(FORMATS)})")
    quizzes = book.quizzes()
    learners: dict[str, str] = {}
    cells: dict[tuple[str, str], float] = {}
    for learner_id, name, quiz_id, score, _passed, _n in book.scores():
        learners[learner_id] = name
        cells[(learner_id, quiz_id)] = score
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")

    def write(row: list[str]) -> None:
        writer.writerow([safe_cell(c) for c in row])

    # Canvas reads "Name (123)" as existing assignment 123; a plain title creates one.
    titles = [title if fmt == "canvas" else f"{title} ({quiz_id})" if fmt == "moodle"
              else quiz_id for quiz_id, title, _ in quizzes]

    def scores_of(learner_id: str, scale: float) -> list[str]:
        row = []
        for quiz_id, _, _ in quizzes:
            value = cells.get((learner_id, quiz_id))
            row.append("" if value is None else f"{value * scale:.2f}".rstrip("0").rstrip("."))
        return row

    if fmt == "canvas":
        write(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", *titles])
        write(["    Points Possible", "", "", "", "", *(["100"] * len(quizzes))])
        for learner_id, name in sorted(learners.items(), key=lambda kv: _sort_name(kv[1])):
            write([_last_first(name), "", learner_id, learner_id, "",
                             *scores_of(learner_id, 100)])
    elif fmt == "moodle":
        write(["ID number", "First name", "Last name", *titles])
        for learner_id, name in sorted(learners.items()):
            first, last = _split(name)
            write([learner_id, first, last, *scores_of(learner_id, 100)])
    else:
        write(["learner_id", "name", *titles])
        for learner_id, name in sorted(learners.items()):
            write([learner_id, name, *scores_of(learner_id, 1)])
    return out.getvalue()


def _split(name: str) -> tuple[str, str]:
    parts = name.rsplit(" ", 1)
    return (parts[0], parts[1]) if len(parts) == 2 else (name, "")


def _last_first(name: str) -> str:
    first, last = _split(name)
    return f"{last}, {first}" if last else first


def _sort_name(name: str) -> tuple[str, str]:
    first, last = _split(name)
    return (last.casefold(), first.casefold())
