"""minislurm/cli is fully typed: no ``# type: ignore`` (issue 20 removed all 35).

A new one means the command side reached past a seam (a controller typed ``object``,
options built from an untyped dict...): type the seam instead.
"""

from __future__ import annotations

from pathlib import Path

CLI = Path(__file__).resolve().parents[3] / "minislurm" / "cli"


def test_no_type_ignore_in_cli() -> None:
    found = [f"{p.relative_to(CLI)}:{n}" for p in sorted(CLI.rglob("*.py"))
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if "# type: ignore" in line]
    assert found == []
    assert (CLI / "scontrol" / "scontrol.py").exists()  # the path is right
