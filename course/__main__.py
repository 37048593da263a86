"""``python -m course build [--lang en|pt-BR|all] [--notebooks-only] [--out build/site]
[--only ID ...]``: build the language editions' notebooks (notebooks/pt-BR/ from the English
notebooks and course/locale/pt_BR/notebooks/, course/i18n.py) and the course site;
``python -m course lab [--lang LANG] [jupyter options and files]``: open the course in
JupyterLab (the edition's notebooks as root, minislurm's terminals, readings rendered,
JupyterLab's menus in the edition's language; see course/lab.py, course/i18n_lab.py)."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from course.build import BuildError, BuildOptions, build
from course.i18n import EditionError, build_edition, edition_dir
from course.i18n_lab import (
    LANGUAGE_PACK,
    app_settings,
    lab_environment,
    language_pack_installed,
    split_lang,
    with_settings,
)
from course.lab import lab_arguments, terminal_environment
from course.manifest import ROOT, ManifestError, check_files, load_manifest
from quizzes.i18n import DEFAULT_LANG, LANGS, resolve


def main(argv: Sequence[str] | None = None) -> int:
    """The ``course`` command line; returns the exit code."""
    parser = argparse.ArgumentParser(prog="python -m course", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="execute, validate (nbval) and render the course site")
    b.add_argument("--out", type=Path, default=ROOT / "build" / "site",
                   help="folder to write the site to (default: build/site)")
    b.add_argument("--only", nargs="+", default=(), metavar="ID",
                   help="build only these modules (e.g. 01-what-is-slurm)")
    b.add_argument("--no-validate", action="store_true",
                   help="execute with nbclient without comparing outputs (no nbval)")
    b.add_argument("--no-execute", action="store_true",
                   help="render the stored outputs without executing the notebooks")
    b.add_argument("--timeout", type=int, default=900, help="seconds for all notebooks")
    b.add_argument("--lang", default=None, metavar="LANG",
                   help="edition: en, pt-BR or all (default: $COURSE_LANG, else en); pt-BR "
                   "writes notebooks/pt-BR/ and its site into OUT/pt-BR")
    b.add_argument("--notebooks-only", action="store_true",
                   help="write the editions' notebooks (notebooks/pt-BR/) but not the site")
    sub.add_parser("check", help="check course/manifest.yaml against the files it names")
    sub.add_parser("class", help="run a class on JupyterHub (up, down, status, passwd)")
    sub.add_parser("lab", help="open the course in JupyterLab: python -m course lab "
                   "[--lang en|pt-BR] [--root DIR] [--first-lesson] [jupyter lab options and "
                   "files] (scripts/course runs this)")
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["class"]:  # its own parser: python -m course class --help
        from course.classroom.cli import main as class_main

        return class_main(argv[1:])
    if argv[:1] == ["lab"]:
        return lab(argv[1:])
    args = parser.parse_args(argv)
    try:
        manifest = load_manifest()
        if args.command == "check":
            check_files(manifest)
            print(f"course: {manifest.path.name}: {len(manifest.modules)} modules, all files found")
            return 0
        langs = build_langs(args.lang)
        for lang in langs:
            written = build_edition(lang, [m.notebook_path() for m in manifest.modules
                                           if m.notebook_path().is_file()])
            if lang != "en":
                print(f"course: {lang}: wrote {len(written)} notebooks to "
                      f"{edition_dir(lang)}")
        if args.notebooks_only:
            return 0
        for lang in langs:
            opts = BuildOptions(out=args.out.resolve(), execute=not args.no_execute,
                                validate=not args.no_validate, only=tuple(args.only),
                                timeout=args.timeout, progress=sys.stderr.isatty(),
                                lang=lang, langs=tuple(langs))
            report = build(opts, manifest=manifest)
            print(report.summary())
    except (BuildError, ManifestError, EditionError, ValueError) as exc:
        print(exc, file=sys.stderr)
        return 1
    return 0


def build_langs(arg: str | None) -> list[str]:
    """The editions ``--lang`` names (``all``: every language, English first); without
    ``--lang``, ``$COURSE_LANG``'s, else English.  ValueError for an unknown language."""
    if (arg or "").strip().lower() == "all":
        return list(LANGS)
    return [resolve(arg, cwd=ROOT)]


def lab(argv: Sequence[str]) -> int:
    """``python -m course lab [--lang LANG] [--root DIR] [--first-lesson] [jupyter lab options
    and files]``: JupyterLab on the edition's notebooks (notebooks/, notebooks/pt-BR/) or
    DIR, with the course's terminals and settings (course/lab.py) and JupyterLab's own
    interface in the edition's language (course/i18n_lab.py).  ``--lang`` defaults to
    ``$COURSE_LANG``, else English; ``--first-lesson`` opens the edition's first notebook."""
    try:
        lang, rest = split_lang(argv, os.environ)
    except ValueError as exc:
        print(f"course lab: {exc}", file=sys.stderr)
        return 2
    root = edition_dir(lang, ROOT / "notebooks")
    if rest[:1] == ["--root"] and len(rest) >= 2:
        root, rest = Path(rest[1]), rest[2:]
    if lang != DEFAULT_LANG and root == edition_dir(lang, ROOT / "notebooks"):
        try:   # always current: the English notebooks may have changed since the last run
            build_edition(lang, sorted((ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb")))
        except EditionError as exc:
            print(exc, file=sys.stderr)
            return 1
    if "--first-lesson" in rest:
        rest.remove("--first-lesson")
        first = sorted(root.glob("[0-9][0-9]-*.ipynb"))
        rest += [str(first[0])] if first else []
    if not language_pack_installed(lang):
        print(f"course lab: JupyterLab's {lang} language pack ({LANGUAGE_PACK}) is not "
              "installed (scripts/setup installs it): JupyterLab's menus stay in English",
              file=sys.stderr)
    env = lab_environment(terminal_environment(os.environ), lang)
    with app_settings(lang) as settings:
        cmd = [sys.executable, "-m", "jupyter",
               *with_settings(lab_arguments(root.resolve(), rest), settings)]
        return run_jupyter(cmd, env)


#: Seconds JupyterLab gets to shut its kernels and terminals down before it is killed.
STOP_GRACE = 30.0


def run_jupyter(cmd: Sequence[str], env: dict[str, str]) -> int:
    """Run JupyterLab until it ends; stop it cleanly when this process is told to stop.

    SIGTERM and SIGHUP (a test's or a hub's stop, a closed terminal) are passed on to
    JupyterLab, which then shuts its kernels and terminals down: killed as this process
    would be by default, JupyterLab and its kernels went on without it.  Ctrl-C reaches
    JupyterLab too (the same foreground process group), where it only asks "Shutdown this
    Jupyter server (y/[n])?" and resumes after 5 s: here it is stopped with SIGTERM
    instead, and exit status 130 says it was interrupted.  After `STOP_GRACE` seconds it
    is killed.
    """
    proc = subprocess.Popen(list(cmd), env=env)

    def forward(signum: int, frame: object) -> None:
        proc.send_signal(signum)

    previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        try:
            return proc.wait()
        except KeyboardInterrupt:
            proc.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired, KeyboardInterrupt):
                proc.wait(timeout=STOP_GRACE)  # a second Ctrl-C: no more waiting
            return 130
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if proc.poll() is None:
            proc.kill()
            proc.wait()


if __name__ == "__main__":
    sys.exit(main())
