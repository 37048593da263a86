"""``python -m minislurm <command> [args...]``: the Slurm commands under their names.

``python -m minislurm sbatch job.sh`` behaves like Slurm's ``sbatch job.sh``;
``python -m minislurm shell`` opens a shell whose PATH has every command under
its Slurm name (the repository's ``bin/`` folder does the same).
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from minislurm.errors import SlurmError

#: command name -> module under minislurm.cli providing ``main(argv) -> int``
COMMANDS: dict[str, str] = {
    "sbatch": "minislurm.cli.sbatch",
    "srun": "minislurm.cli.srun",
    "salloc": "minislurm.cli.salloc",
    "squeue": "minislurm.cli.squeue",
    "sinfo": "minislurm.cli.sinfo",
    "scancel": "minislurm.cli.scancel",
    "scontrol": "minislurm.cli.scontrol",
    "sacct": "minislurm.cli.sacct",
    "sprio": "minislurm.cli.sprio",
    "sshare": "minislurm.cli.sshare",
    "cluster": "minislurm.cli.cluster",
    "simulate": "minislurm.cli.simulate",
    "slurmctld": "minislurm.slurmctld",
}

#: Commands whose ``main`` is ``transport.run_command`` (answered by the controller).
_FORWARDED = ("sbatch", "squeue", "sinfo", "scancel", "scontrol", "sacct", "sprio", "sshare")

USAGE = """usage: python -m minislurm <command> [args...]

Slurm commands: {slurm}
Daemons: slurmctld [-D] [-f slurm.conf]; cluster up|status|down [--conf slurm.conf]
Experiments: simulate --workload FILE.swf|--generate N [--conf slurm.conf|--procs N]
             --scheduler fifo|easy|conservative|slurm [--out jobs.csv]
Other: shell (a shell with the commands on PATH under their Slurm names)
""".format(slurm=", ".join(c for c in COMMANDS if c not in ("cluster", "slurmctld", "simulate")))


def bin_dir() -> Path:
    """The folder of wrapper scripts named like Slurm's commands."""
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
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        sys.stdout.write(USAGE)
        return 0 if args else 1
    name, rest = args[0], args[1:]
    if name == "shell":
        return shell(rest)
    module = COMMANDS.get(name)
    if module is None:
        sys.stderr.write(f"minislurm: unknown command '{name}'\n{USAGE}")
        return 1
    try:
        if name in _FORWARDED:  # straight to the controller: the module only if offline
            from minislurm.cli.transport import run_command

            result: int = run_command(name, rest)
        else:
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
    return result


if __name__ == "__main__":
    sys.exit(main())
