"""``quizzes lab``: list the labs, show one, check an answer file.

    quizzes lab list                 # id, lesson, title (practice labs marked)
    quizzes lab show first-job       # the task, the starting files, the skeleton
    quizzes lab check first-job train.sh

``check`` prints the feedback and exits 0 (pass), 1 (not yet) or 2 (usage: an
unknown lab, a file that cannot be read).  The answer file is read as bytes (at
most 64 KiB, UTF-8) and played on a fresh minislurm cluster on the simulated
clock, wherever the command runs: the lab's starting files are in its own
scratch folder.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from quizzes.errors import UsageError
from quizzes.labs.model import MAX_ANSWER_BYTES


def add_parser(sub: Any, parser_class: type[argparse.ArgumentParser]) -> None:
    """Add ``lab`` and its actions to the ``quizzes`` subcommands."""
    lp = sub.add_parser("lab", help="hands-on labs: list, show, check an answer")
    lsub = lp.add_subparsers(dest="action", required=True, parser_class=parser_class)
    lsub.add_parser("list", help="every lab: id, lesson, title")
    sh = lsub.add_parser("show", help="the task of one lab")
    sh.add_argument("lab_id", metavar="ID")
    ch = lsub.add_parser("check", help="check an answer file (exit 0 pass, 1 not yet)")
    ch.add_argument("lab_id", metavar="ID")
    ch.add_argument("file", metavar="FILE")


def _lab(lab_id: str) -> Any:
    from quizzes.labs import LABS, lab

    try:
        return lab(lab_id)
    except KeyError:
        known = ", ".join(x.id for x in LABS)
        raise UsageError(f"no lab '{lab_id}' (labs: {known})") from None


def cmd_lab(args: argparse.Namespace) -> int:
    """Run ``quizzes lab ACTION``."""
    from quizzes.labs import LABS, check

    if args.action == "list":
        width = max(len(x.id) for x in LABS)
        for x in LABS:
            mark = "  [practice, not counted]" if x.practice else ""
            print(f"{x.id:<{width}}  {x.lesson:<21}  {x.title}{mark}")
        return 0
    item = _lab(args.lab_id)
    if args.action == "show":
        print(show_text(item))
        return 0
    path = Path(args.file)
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_ANSWER_BYTES + 1)
    except OSError as exc:
        raise UsageError(f"{args.file}: cannot read: {exc.strerror}") from None
    verdict = check(item.id, data)
    print(verdict.text())
    sys.stdout.flush()
    return 0 if verdict.passed else 1


def show_text(item: Any) -> str:
    """The task as ``lab show`` prints it (the widget shows the same parts as HTML:
    `quizzes.labs.widget.task_html`)."""
    from quizzes.labs.diagnose import exhibit

    lines = [f"{item.id}: {item.title} ({item.lesson})"]
    if item.practice:
        lines.append("PRACTICE: needs real execution; not counted toward the score.")
    lines += ["", item.task]
    if item.kind == "diagnose":
        lines += ["", exhibit(item.scenario).text.rstrip("\n")]
    for name, content in item.files:
        lines += ["", f"--- {name} (in the lab's folder) ---", content.rstrip("\n")]
    if item.skeleton:
        lines += ["", f"--- {item.answer_file} (start from this) ---",
                  item.skeleton.rstrip("\n")]
    return "\n".join(lines)
