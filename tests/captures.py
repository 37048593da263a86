"""Loader for the captures of real Slurm 22.05.8 in ``../shared/slurm-reference``.

Each case folder (``b_sbatch_errors``, ``c1_hostlist``, ...) holds, per command
NAME, ``NAME.cmd`` (the command, run with bash in the case folder), ``NAME.out``
(stdout), ``NAME.err`` (stderr) and ``NAME.rc`` (exit code); see CAPTURES.md
there. Usage::

    from captures import capture_root, cases, load_case
    root = capture_root()            # None when the folder is absent: skip
    case = load_case("c1_hostlist", "01_hostnames")
    case.cmd, case.out, case.err, case.rc
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from minislurm.sim import Cluster

#: Overrides the location (a folder holding CAPTURES.md).
ENV_VAR = "MINISLURM_SLURM_REFERENCE"


@dataclass(frozen=True, slots=True)
class Case:
    """One captured command: ``cmd`` ran in ``folder_path`` and printed ``out``
    and ``err`` with exit code ``rc``. ``name`` is NAME (e.g. ``01_hostnames``)."""

    cmd: str
    out: str
    err: str
    rc: int
    folder_path: Path
    name: str = ""


def capture_root() -> Path | None:
    """The slurm-reference folder: ``$MINISLURM_SLURM_REFERENCE``, else
    ``<repo>/../shared/slurm-reference``; None when absent (tests skip)."""
    candidates = [
        os.environ.get(ENV_VAR, ""),
        str(Path(__file__).resolve().parent.parent.parent / "shared" / "slurm-reference"),
    ]
    for candidate in candidates:
        if candidate and (Path(candidate) / "CAPTURES.md").is_file():
            return Path(candidate)
    return None


def _root() -> Path:
    root = capture_root()
    if root is None:
        raise FileNotFoundError(
            "slurm-reference captures not found "
            f"(set {ENV_VAR} or put them in ../shared/slurm-reference)"
        )
    return root


def load_case(folder: str, name: str) -> Case:
    """The case ``<folder>/<name>.{cmd,out,err,rc}``; raises FileNotFoundError."""
    base = _root() / folder
    cmd = (base / f"{name}.cmd").read_text()
    cmd = cmd[:-1] if cmd.endswith("\n") else cmd
    return Case(
        cmd=cmd,
        out=(base / f"{name}.out").read_text(),
        err=(base / f"{name}.err").read_text(),
        rc=int((base / f"{name}.rc").read_text().strip()),
        folder_path=base,
        name=name,
    )


def cases(folder: str) -> list[Case]:
    """Every complete case of ``folder``, sorted by name (the capture order for
    numbered names; ``[]`` when the captures are absent)."""
    root = capture_root()
    if root is None or not (root / folder).is_dir():
        return []
    base = root / folder
    names = sorted(
        p.stem
        for p in base.glob("*.cmd")
        if all((base / f"{p.stem}{ext}").exists() for ext in (".out", ".err", ".rc"))
    )
    return [load_case(folder, n) for n in names]


#: The captures folder (``capture_root()``), or the default location when absent,
#: so that ``REF.is_dir()`` tells whether the captures are there.
REF: Path = capture_root() or (
    Path(__file__).resolve().parent.parent.parent / "shared" / "slurm-reference"
)


def _needs_captures() -> pytest.MarkDecorator:
    return pytest.mark.skipif(capture_root() is None, reason=f"captures not found at {REF}")


#: Skips a test when the captures are absent.
needs_captures = _needs_captures()


def capture_out(folder: str, name: str) -> str:
    """The stdout Slurm printed for ``<folder>/<name>``."""
    return (REF / folder / f"{name}.out").read_text()


def reference_cluster(folder: Path) -> Cluster:
    """minislurm's embedded ``Cluster`` on the reference cluster's slurm.conf and gres.conf
    (copied into ``folder``; jobs work in ``folder/w``) as root; skips without captures."""
    import shutil

    from minislurm.sim import Cluster

    if not (REF / "slurm.conf").exists():
        pytest.skip("the reference captures are not here")
    for name in ("slurm.conf", "gres.conf"):
        shutil.copy(REF / name, folder / name)
    return Cluster(folder / "slurm.conf", user="root", uid=0, workdir=folder / "w")


def checked_stdout(run: Callable[..., Any], **kwargs: Any) -> Callable[[str], str]:
    """``cmd -> stdout`` for a cluster's ``run`` (minislurm's ``Cluster.run`` or the real
    harness's ``RealSlurm.run``, ``kwargs`` such as ``cwd=``), asserting exit code 0."""

    def call(cmd: str) -> str:
        result = run(cmd, **kwargs)
        code = getattr(result, "returncode", getattr(result, "rc", None))
        assert code == 0, (cmd, str(result))
        return str(result.stdout)

    return call
