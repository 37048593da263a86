"""One registry of commands (`minislurm.cli.registry`): everything else reads it."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

from minislurm import SLURM_VERSION
from minislurm.__main__ import USAGE
from minislurm.cli import registry
from minislurm.cli.common import VERSION
from minislurm.daemon import slurmctld
from minislurm.sim import cluster

ROOT = Path(__file__).resolve().parents[3]
NAMES = set(registry.SLURM_COMMANDS) | set(registry.TOOLS)


def test_every_command_has_its_module_and_its_bin_wrapper() -> None:
    for name in registry.SLURM_COMMANDS:
        module = importlib.import_module(f"minislurm.cli.{name}")
        assert callable(module.run) and callable(module.main), name
        assert f" {name} \"$@\"" in (ROOT / "bin" / name).read_text(), name
    assert sorted(p.name for p in (ROOT / "bin").iterdir()) == sorted(registry.SLURM_COMMANDS)


def test_the_lists_nest_and_the_readers_share_them() -> None:
    assert set(registry.CHANGING) <= set(registry.FORWARDED) <= set(registry.SLURM_COMMANDS)
    assert cluster.COMMANDS is registry.FORWARDED
    assert (slurmctld.FORWARDED, slurmctld.CHANGING) == (registry.FORWARDED, registry.CHANGING)
    assert registry.module_of("sstat") == "minislurm.cli.sstat"
    assert registry.module_of("slurmctld") == "minislurm.daemon.slurmctld"
    assert registry.module_of("sh") is None
    assert f"Slurm commands: {', '.join(registry.SLURM_COMMANDS)}\n" in USAGE


def _command_lists(path: Path) -> list[int]:
    """Lines of tuple/list/set literals made only of three or more command names
    (not ``A, B, C = "sbatch", "srun", "salloc"``: names for single commands)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    unpacked = {id(n.value) for n in ast.walk(tree)
                if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Tuple)}
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Tuple | ast.List | ast.Set) and id(node) not in unpacked:
            items = [e.value for e in node.elts if isinstance(e, ast.Constant)]
            if (len(items) == len(node.elts) >= 3 and all(isinstance(i, str) for i in items)
                    and set(items) <= NAMES):
                lines.append(node.lineno)
    return lines


def test_no_other_module_spells_the_command_list() -> None:
    found = {}
    for root in ("minislurm", "course", "quizzes"):
        for path in sorted((ROOT / root).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel != "minislurm/cli/registry.py" and (lines := _command_lists(path)):
                found[rel] = lines
    assert found == {}


def test_the_version_is_defined_once() -> None:
    assert VERSION == f"slurm {SLURM_VERSION}" == "slurm 22.05.8"
    done = subprocess.run([sys.executable, "-m", "minislurm", "sinfo", "-V"],
                          capture_output=True, text=True, check=False, cwd=ROOT)
    assert (done.returncode, done.stdout) == (0, "slurm 22.05.8\n")
