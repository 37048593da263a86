"""The ``quizzes`` command: grading, certificates, analysis, the service, authoring.

Every failure is printed as one clear message on stderr with a non-zero exit
status (1 for errors, 2 for bad usage); ``quizzes verify`` exits 0 for a valid
certificate, 1 for an invalid one and 3 for a revoked one.  Never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from minislurm.errors import SlurmError
from quizzes.errors import QuizError, UsageError
from quizzes.i18n import resolve, tr

EXIT_INVALID, EXIT_REVOKED = 1, 3


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message}\nTry \"{self.prog} --help\" for more information")


def positive_seconds(text: str) -> float:
    """``--timeout``: a finite number of seconds greater than 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number of seconds: '{text}'") from None
    if not 0 < value < 1e9:
        raise argparse.ArgumentTypeError(f"must be a number of seconds greater than 0, "
                                         f"not '{text}'")
    return value


def positive_count(text: str) -> int:
    """``--simulate-class``: a whole number of learners from 1 to 100000."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number of learners: '{text}'") from None
    if not 1 <= value <= 100000:
        raise argparse.ArgumentTypeError(f"must be 1 to 100000 learners, not {value}")
    return value


def tcp_port(text: str) -> int:
    """``--port``: 0 (any free port) to 65535."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid port number: '{text}'") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"port must be 0 to 65535, not {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="quizzes", description="Quiz engine of the minislurm course.")
    p.add_argument("--banks", help="folder of question banks (default: the packaged banks)")
    p.add_argument("--lang", help="language of the messages: en or pt-BR (default: "
                                  "$COURSE_LANG, else en); Slurm's words and the status words "
                                  "VALID/INVALID/REVOKED stay English")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    g = sub.add_parser("grade", help="grade a folder of submissions into the gradebook")
    g.add_argument("folder")
    g.add_argument("--key", required=True, help="issuer private key (PEM), signs certificates")
    g.add_argument("--db", default="gradebook.sqlite")
    g.add_argument("--issuer", default="minislurm course", help="issuer name on certificates")
    g.add_argument("--timeout", type=positive_seconds, default=30.0,
                   help="seconds allowed per submission (> 0)")
    g.add_argument("--no-progress", action="store_true")
    g.add_argument("--publish", metavar="DIR",
                   help="also write every certificate as DIR/<ID>.json (for `verify --certs`)")

    v = sub.add_parser("verify", help="check a certificate ID or file offline")
    v.add_argument("target", help="certificate ID (e.g. 7K2Q-M9XA-4TRB-E) or certificate file")
    v.add_argument("--pub", required=True, help="issuer public key (PEM)")
    v.add_argument("--db", default="gradebook.sqlite", help="gradebook that resolves IDs")
    v.add_argument("--certs", help="folder of <ID>.json certificate files that resolves IDs")
    v.add_argument("--revocations", default="revocations.json")

    k = sub.add_parser("keygen", help="create an issuer key pair")
    k.add_argument("--out", default="issuer", help="writes OUT.key and OUT.pub")

    r = sub.add_parser("revoke", help="add a certificate ID to the signed revocation list")
    r.add_argument("id")
    r.add_argument("--key", required=True)
    r.add_argument("--reason", default="revoked by the instructor")
    r.add_argument("--revocations", default="revocations.json")

    e = sub.add_parser("export", help="gradebook CSV (one row per learner, one column per quiz)")
    e.add_argument("--db", default="gradebook.sqlite")
    e.add_argument("--format", default="canvas", choices=("canvas", "moodle", "plain"))
    e.add_argument("-o", "--output", help="file to write (default: stdout)")

    a = sub.add_parser("analyse", aliases=["analyze"], help="item analysis of a quiz")
    a.add_argument("quiz_id", nargs="?",
                   help="the quiz (every quiz with --simulate-class when omitted)")
    a.add_argument("--db", help="gradebook (default gradebook.sqlite; with --simulate-class "
                                "a temporary one unless given)")
    a.add_argument("--html", help="write the plotly chart to this HTML file")
    a.add_argument("--simulate-class", type=positive_count, metavar="N",
                   help="first run N simulated learners with partial knowledge through every "
                        "quiz (quizzes.classsim) and analyse their attempts")
    a.add_argument("--seed", type=int, default=0, help="seed of the simulated class")
    a.add_argument("--sources", metavar="DIR", help="authoring sources for the simulated "
                                                   "class (default: as `author build`)")
    a.add_argument("--report", metavar="FILE", help="write the items with negative "
                                                    "discrimination to FILE (Markdown)")

    c = sub.add_parser("certificate", help="render a certificate: HTML, PDF, Open Badge JSON")
    c.add_argument("id")
    c.add_argument("--db", default="gradebook.sqlite")
    c.add_argument("--key", help="issuer private key (needed for --badge)")
    c.add_argument("--html")
    c.add_argument("--pdf")
    c.add_argument("--badge")
    c.add_argument("--json", help="write the signed certificate file")

    s = sub.add_parser("serve", help="grading + verification web service ('serve --hub "
                       "--key K --db D' runs it as JupyterHub's quizzes service)")
    s.add_argument("--key", required=True)
    s.add_argument("--db", default="gradebook.sqlite")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=tcp_port, default=8765, help="0 picks a free port")
    s.add_argument("--issuer", default="minislurm course")
    s.add_argument("--revocations", default="revocations.json")

    au = sub.add_parser("author", help="build banks from the private sources; hash answers")
    asub = au.add_subparsers(dest="action", required=True, parser_class=_Parser)
    b = asub.add_parser("build", help="write banks/*.yaml from authoring sources")
    b.add_argument("--sources", metavar="DIR",
                   help="folder of private sources (default: $QUIZZES_SOURCES, else "
                        "quizzes/authoring/sources)")
    b.add_argument("--out", metavar="DIR", help="folder to write banks to (default: the "
                                                "packaged banks)")
    h = asub.add_parser("hash", help="print the stored hash of one canonical answer")
    h.add_argument("answer")
    h.add_argument("--salt", required=True)
    h.add_argument("--item", required=True)
    h.add_argument("--variant", default="")

    from quizzes.labs.cli import add_parser as add_lab_parser
    add_lab_parser(sub, _Parser)
    return p


def run(argv: Sequence[str]) -> int:
    if list(argv[:2]) == ["serve", "--hub"]:  # the service under JupyterHub: its own options
        from quizzes.hubservice import main as hub_main
        return hub_main(list(argv[2:]))
    args = build_parser().parse_args(argv)
    try:
        args.lang = resolve(args.lang)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    handler = {"grade": cmd_grade, "verify": cmd_verify, "keygen": cmd_keygen,
               "revoke": cmd_revoke, "export": cmd_export, "analyse": cmd_analyse,
               "analyze": cmd_analyse, "certificate": cmd_certificate, "serve": cmd_serve,
               "author": cmd_author, "lab": cmd_lab}[args.command]
    return handler(args)


def _banks(args: argparse.Namespace) -> dict[str, Any]:
    from quizzes.bank import load_banks
    return dict(load_banks(args.banks))


def cmd_grade(args: argparse.Namespace) -> int:
    from quizzes.batch import CertificateIssuer, grade_folder
    from quizzes.gradebook import Gradebook
    from quizzes.keys import load_private

    if not Path(args.folder).is_dir():
        raise QuizError(f"{args.folder}: no such folder of submissions")
    issuer = CertificateIssuer(load_private(args.key), args.issuer)
    banks = _banks(args)
    with Gradebook(args.db) as book:
        report = grade_folder(args.folder, banks, book, issuer,
                              progress=not args.no_progress, per_file_seconds=args.timeout)
        if args.publish:
            out = Path(args.publish)
            out.mkdir(parents=True, exist_ok=True)
            for cid, doc in book.certificates():
                (out / f"{cid}.json").write_text(doc + "\n", encoding="utf-8")
    for name, problem in report.rejected:
        print(f"quizzes: skipped {name}: {problem}", file=sys.stderr)
    for name, item_id, passed, feedback in report.labs:
        print(f"lab {name} {item_id}: {'PASS' if passed else 'NOT YET'}: {feedback}")
    print(tr(args.lang, "graded {graded}, already graded {duplicates}, skipped {skipped}, "
                        "certificates issued {issued}").format(  # by this run, not earlier ones
        graded=report.graded, duplicates=report.duplicates, skipped=len(report.rejected),
        issued=len(report.certificates)))
    for cid in report.certificates:
        print(tr(args.lang, "certificate {id}").format(id=cid))
    return 1 if report.rejected else 0


def cmd_verify(args: argparse.Namespace) -> int:
    from quizzes.keys import load_public
    from quizzes.registry import Lookup

    lookup = Lookup(load_public(args.pub), db=args.db, certs_dir=args.certs,
                    revocations=args.revocations)
    if Path(args.target).is_file():
        result = lookup.check_file(args.target)
    elif args.target.endswith(".json") or "/" in args.target:
        raise QuizError(f"{args.target}: no such certificate file")
    else:
        result = lookup.check_id(args.target)
    cid = f" {result.certificate.id}" if result.certificate else ""
    note = "" if lookup.revocations_checked \
        else " " + tr(args.lang, "(no revocation list checked)")
    print(f"{result.status.upper()}{cid}: {result.in_language(args.lang)}{note}")
    return {"valid": 0, "revoked": EXIT_REVOKED}.get(result.status, EXIT_INVALID)


def cmd_keygen(args: argparse.Namespace) -> int:
    from quizzes.keys import generate, key_id, load_public

    key, pub = generate(args.out)
    print(tr(args.lang, "wrote {key} (private: keep it with the grader) and {pub} (public); "
                        "key id {id}").format(key=key, pub=pub, id=key_id(load_public(pub))))
    return 0


def cmd_revoke(args: argparse.Namespace) -> int:
    from quizzes.certify import revoke
    from quizzes.keys import load_private

    printed = revoke(args.revocations, args.id, args.reason, load_private(args.key))
    print(tr(args.lang, "revoked {id} in {path}").format(id=printed, path=args.revocations))
    return 0


def _existing_db(path: str) -> str:
    if not Path(path).is_file():
        raise QuizError(f"{path}: no such gradebook (run `quizzes grade` first)")
    return path


def cmd_export(args: argparse.Namespace) -> int:
    from quizzes.export import export_csv
    from quizzes.gradebook import Gradebook

    with Gradebook(_existing_db(args.db)) as book:
        text = export_csv(book, args.format)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8", newline="")
        print(tr(args.lang, "wrote {path}").format(path=args.output))
    else:
        sys.stdout.write(text)
    return 0


def cmd_analyse(args: argparse.Namespace) -> int:
    from quizzes.analysis import analyse, chart
    from quizzes.gradebook import Gradebook

    banks = _banks(args)
    if args.quiz_id is not None and args.quiz_id not in banks:
        raise QuizError(f"unknown quiz '{args.quiz_id}' (known: {', '.join(sorted(banks))})")
    if args.simulate_class:
        from quizzes.classsim import negative_report, simulate_class

        chosen = banks if args.quiz_id is None else {args.quiz_id: banks[args.quiz_id]}
        run = simulate_class(chosen, args.simulate_class, seed=args.seed, db=args.db,
                             sources=args.sources, progress=sys.stderr.isatty())
        print(f"simulated class: {run.learners} learners, gradebook {run.db}")
        for stats in run.stats:
            print(stats.table())
            print()
        bad = run.negative()
        print(f"items with negative discrimination: {len(bad)}")
        for quiz, item, d in bad:
            print(f"  {quiz} {item} D={d:.2f}")
        if args.report:
            Path(args.report).write_text(negative_report(run), encoding="utf-8")
            print(tr(args.lang, "wrote {path}").format(path=args.report))
        if args.html and args.quiz_id is not None:
            chart(run.stats[0]).write_html(args.html, include_plotlyjs=True, full_html=True)
            print(tr(args.lang, "wrote {path}").format(path=args.html))
        return 0
    if args.quiz_id is None:
        raise UsageError("analyse needs a quiz id (or --simulate-class N)")
    with Gradebook(_existing_db(args.db or "gradebook.sqlite")) as book:
        stats = analyse(book, banks[args.quiz_id])
    print(stats.table())
    if args.html:
        chart(stats).write_html(args.html, include_plotlyjs=True, full_html=True)
        print(tr(args.lang, "wrote {path}").format(path=args.html))
    return 0


def cmd_certificate(args: argparse.Namespace) -> int:
    from quizzes import ids
    from quizzes.certify import parse_certificate
    from quizzes.gradebook import Gradebook
    from quizzes.render import certificate_html, certificate_pdf

    try:
        printed = ids.normalise(args.id)
    except ids.IdError as exc:
        raise QuizError(f"'{args.id}': {exc}") from None
    with Gradebook(_existing_db(args.db)) as book:
        doc = book.certificate(printed)
    if doc is None:
        raise QuizError(f"no certificate {printed} in {args.db}")
    cert = parse_certificate(doc, printed)
    wrote = []
    if args.html:
        Path(args.html).write_text(certificate_html(cert), encoding="utf-8")
        wrote.append(args.html)
    if args.pdf:
        Path(args.pdf).write_bytes(certificate_pdf(cert))
        wrote.append(args.pdf)
    if args.json:
        Path(args.json).write_text(json.dumps(cert.to_json(), indent=2) + "\n", encoding="utf-8")
        wrote.append(args.json)
    if args.badge:
        if not args.key:
            raise UsageError("--badge needs --key (the badge is signed by the issuer)")
        from quizzes.badges import open_badge
        from quizzes.keys import load_private
        badge = open_badge(cert, load_private(args.key))
        Path(args.badge).write_text(json.dumps(badge, indent=2) + "\n", encoding="utf-8")
        wrote.append(args.badge)
    if not wrote:
        print(json.dumps(cert.to_json(), indent=2))
    for path in wrote:
        print(tr(args.lang, "wrote {path}").format(path=path))
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from quizzes.keys import load_private
    from quizzes.serve import QuizService, make_server

    service = QuizService(_banks(args), args.db, load_private(args.key), issuer=args.issuer,
                          revocations=args.revocations)
    try:
        server = make_server(service, args.host, args.port)
    except OSError as exc:
        raise QuizError(f"cannot listen on {args.host}:{args.port}: {exc.strerror}") from None
    print(tr(args.lang, "quizzes serve: listening on {url} (Ctrl-C stops)").format(
        url=service.base_url), flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


def cmd_lab(args: argparse.Namespace) -> int:
    from quizzes.labs.cli import cmd_lab as run_lab
    return run_lab(args)


def cmd_author(args: argparse.Namespace) -> int:
    from quizzes.author import build_all, hash_answer

    if args.action == "hash":
        print(hash_answer(args.salt, args.item, args.answer, args.variant))
        return 0
    for path in build_all(args.sources, args.out):
        print(tr(args.lang, "wrote {path}").format(path=path))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: run and turn every failure into a message and an exit status."""
    try:
        return run(sys.argv[1:] if argv is None else argv)
    except SlurmError as exc:
        print(exc.message, file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("quizzes: interrupted", file=sys.stderr)
        return 130
    except OSError as exc:
        where = f": {exc.filename}" if exc.filename else ""
        print(f"quizzes: error: {exc.strerror or exc}{where}", file=sys.stderr)
        return 1
    except sqlite3.Error as exc:
        print(f"quizzes: error: gradebook: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # a bug: still one line, never a traceback
        print(f"quizzes: internal error: {type(exc).__name__}: {exc} (please report it)",
              file=sys.stderr)
        return 70
