"""``python -m course build [--out build/site] [--only ID ...]``: build the course site."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from course.build import BuildError, BuildOptions, build
from course.manifest import ROOT, ManifestError, check_files, load_manifest


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
    sub.add_parser("check", help="check course/manifest.yaml against the files it names")
    sub.add_parser("class", help="run a class on JupyterHub (up, down, status, passwd)")
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["class"]:  # its own parser: python -m course class --help
        from course.classroom.cli import main as class_main

        return class_main(argv[1:])
    args = parser.parse_args(argv)
    try:
        manifest = load_manifest()
        if args.command == "check":
            check_files(manifest)
            print(f"course: {manifest.path.name}: {len(manifest.modules)} modules, all files found")
            return 0
        opts = BuildOptions(out=args.out.resolve(), execute=not args.no_execute,
                            validate=not args.no_validate, only=tuple(args.only),
                            timeout=args.timeout, progress=sys.stderr.isatty())
        report = build(opts, manifest=manifest)
    except (BuildError, ManifestError) as exc:
        print(exc, file=sys.stderr)
        return 1
    print(report.summary())
    return 0


if __name__ == "__main__":
    sys.exit(main())
