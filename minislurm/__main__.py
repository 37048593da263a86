"""``python -m minislurm <command> [args...]``: the Slurm commands under their names.

``python -m minislurm sbatch job.sh`` behaves like Slurm's ``sbatch job.sh``;
``python -m minislurm shell`` opens a shell whose PATH has every command under
its Slurm name (the repository's ``bin/`` folder does the same).

The ``bin/`` wrappers start Python with ``-S`` (no ``site``: its ``.pth`` files
cost ~25 ms per command) and call `main`, which puts ``site`` back the moment a
module outside the standard library and minislurm is wanted (`LateSite`), so
that a forwarded ``squeue`` or ``sbatch`` starts in about 10 ms of Python.
"""

from __future__ import annotations

import os
import sys

from minislurm.cli.registry import FORWARDED, SLURM_COMMANDS, module_of

TYPE_CHECKING = False  # typing itself costs a forwarded command ~5 ms (re, collections)
if TYPE_CHECKING:
    from collections.abc import Sequence
    from importlib.machinery import ModuleSpec
    from pathlib import Path
    from typing import Any

USAGE = """usage: python -m minislurm <command> [args...]

Slurm commands: {slurm}
Daemons: slurmctld [-D] [-f slurm.conf]; cluster up|status|down [--conf slurm.conf]
Experiments: simulate --workload FILE.swf|--generate N [--conf slurm.conf|--procs N]
             --scheduler fifo|easy|conservative|slurm [--out jobs.csv]
Other: shell (a shell with the commands on PATH under their Slurm names)
""".format(slurm=", ".join(SLURM_COMMANDS))


class LateSite:
    """A last meta path finder that runs ``site.main()`` when an import fails without it.

    Installed by `main` when Python was started with ``-S`` (the ``bin/`` wrappers):
    the venv's site-packages (simpy, numpy, yaml, ...) are added only when a command
    needs one of them, e.g. an offline ``squeue`` that imports the controller.
    """

    def find_spec(self, name: str, path: Sequence[str] | None = None,
                  target: object = None) -> ModuleSpec | None:
        """Turn ``site`` on (once) and ask the finders again for a top-level ``name``
        that is not the standard library's (whose optional imports fail by design:
        ``from nt import ...`` in ntpath)."""
        if path is not None or name.partition(".")[0] in sys.stdlib_module_names:
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        import site

        site.main()
        for finder in list(sys.meta_path):
            find = getattr(finder, "find_spec", None)
            spec = find(name, path, target) if find is not None else None
            if spec is not None:
                return spec
        return None


def late_site() -> None:
    """Under ``python -S``: install `LateSite` (or run ``site`` now when coverage of
    subprocesses is on, since its ``.pth`` hook must run at start)."""
    if not sys.flags.no_site or any(isinstance(f, LateSite) for f in sys.meta_path):
        return
    if os.environ.get("COVERAGE_PROCESS_START"):
        import site

        site.main()
        return
    sys.meta_path.append(LateSite())


def bin_dir() -> Path:
    """The folder of wrapper scripts named like Slurm's commands."""
    from pathlib import Path

    return Path(__file__).resolve().parent.parent / "bin"


def shell(argv: Sequence[str]) -> int:
    """Start ``$SHELL`` (or /bin/sh) with minislurm's commands first on PATH."""
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir()}{os.pathsep}{env.get('PATH', '')}"
    sh = env.get("SHELL") or "/bin/sh"
    print(f"minislurm: commands on PATH from {bin_dir()}; type 'exit' to leave", file=sys.stderr)
    os.execvpe(sh, [sh, *argv], env)
    return 0  # pragma: no cover - execvpe does not return


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``<command> [args...]`` (``sys.argv[1:]`` by default); returns its exit code."""
    late_site()
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        sys.stdout.write(USAGE)
        return 0 if args else 1
    name, rest = args[0], args[1:]
    if name == "shell":
        return shell(rest)
    module = module_of(name)
    if module is None:
        sys.stderr.write(f"minislurm: unknown command '{name}'\n{USAGE}")
        return 1
    from minislurm.errors import SlurmError

    result: Any
    try:
        if name in FORWARDED:  # straight to the controller: the module only if offline
            from minislurm.cli.transport import run_command

            result = run_command(name, rest)
        else:
            import importlib

            result = importlib.import_module(module).main(rest)
    except KeyboardInterrupt:
        return 130
    except SlurmError as exc:  # a typed error a command did not print itself
        sys.stderr.write(exc.message.rstrip("\n") + "\n")
        return exc.exit_code
    except Exception as exc:  # last resort: one line, never a traceback
        sys.stderr.write(f"{name}: error: internal error: {type(exc).__name__}: {exc}\n"
                         "(minislurm: please report this as a bug)\n")
        return 1
    return int(result)


if __name__ == "__main__":
    sys.exit(main())
