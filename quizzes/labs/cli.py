"""``quizzes lab``: list the labs, show one, check an answer file.

    quizzes lab list                 # id, lesson, title (practice labs marked)
    quizzes lab show first-job       # the task, the starting files, the skeleton
    quizzes lab check first-job train.sh
    quizzes lab show first-job --lang pt-BR   # or quizzes --lang pt-BR lab ..., COURSE_LANG

``list``, ``show`` and ``check`` speak the language `quizzes.i18n.resolve` picks
(``--lang`` after the action, else ``quizzes --lang``, else ``$COURSE_LANG``, else the
``.course-lang`` marker, else English): the titles, the task, the fixed words, the
verdict's frame (``APROVADO:``/``AINDA NÃO:``) and the checkers' sentences (Slurm's words
in them, and what Slurm printed, in English); a lab whose translation is stale is shown
in English (`quizzes.labs.i18n`).

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
from quizzes.i18n import DEFAULT_LANG, resolve, tr
from quizzes.labs.model import MAX_ANSWER_BYTES

_LANG_HELP = "language of the title, task and words: en or pt-BR (default: $COURSE_LANG)"


def add_parser(sub: Any, parser_class: type[argparse.ArgumentParser]) -> None:
    """Add ``lab`` and its actions to the ``quizzes`` subcommands."""
    lp = sub.add_parser("lab", help="hands-on labs: list, show, check an answer")
    lsub = lp.add_subparsers(dest="action", required=True, parser_class=parser_class)
    ls = lsub.add_parser("list", help="every lab: id, lesson, title")
    sh = lsub.add_parser("show", help="the task of one lab")
    sh.add_argument("lab_id", metavar="ID")
    ch = lsub.add_parser("check", help="check an answer file (exit 0 pass, 1 not yet)")
    ch.add_argument("lab_id", metavar="ID")
    ch.add_argument("file", metavar="FILE")
    for action in (ls, sh, ch):  # also after the action (quizzes --lang works before it)
        action.add_argument("--lang", dest="lab_lang", metavar="LANG", help=_LANG_HELP)


def _language(args: argparse.Namespace) -> str:
    """``lab ... --lang`` else the ``quizzes --lang`` already resolved, else resolve()."""
    chosen = getattr(args, "lab_lang", None) or getattr(args, "lang", None)
    try:
        return resolve(chosen)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


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
    from quizzes.labs.i18n import localise

    lang = _language(args)
    if args.action == "list":
        width = max(len(x.id) for x in LABS)
        mark = "  [" + tr(lang, "practice, not counted") + "]"
        for x in LABS:
            title = localise(x, lang).title
            print(f"{x.id:<{width}}  {x.lesson:<21}  {title}{mark if x.practice else ''}")
        return 0
    item = _lab(args.lab_id)
    if args.action == "show":
        print(show_text(localise(item, lang), lang))
        return 0
    path = Path(args.file)
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_ANSWER_BYTES + 1)
    except OSError as exc:
        raise UsageError(f"{args.file}: cannot read: {exc.strerror}") from None
    verdict = check(item.id, data)
    print(verdict.text(lang))
    sys.stdout.flush()
    return 0 if verdict.passed else 1


def show_text(item: Any, lang: str = DEFAULT_LANG) -> str:
    """The task as ``lab show`` prints it (the widget shows the same parts as HTML:
    `quizzes.labs.widget.task_html`); ``item`` as given (`quizzes.labs.i18n.localise`
    it for ``lang``), the fixed words in ``lang``."""
    from quizzes.labs.diagnose import exhibit

    lines = [f"{item.id}: {item.title} ({item.lesson})"]
    if item.practice:
        lines.append(tr(lang, "PRACTICE: needs real execution; not counted toward the "
                              "score."))
    lines += ["", item.task]
    if item.kind == "diagnose":
        lines += ["", exhibit(item.scenario).text.rstrip("\n")]
    for name, content in item.files:
        lines += ["", "--- " + tr(lang, "{name} (in the lab's folder)").format(name=name)
                  + " ---", content.rstrip("\n")]
    if item.skeleton:
        lines += ["", "--- " + tr(lang, "{name} (start from this)").format(
            name=item.answer_file) + " ---", item.skeleton.rstrip("\n")]
    return "\n".join(lines)
