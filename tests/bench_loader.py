"""Import a benchmark script of ``benchmarks/`` (not a package) as a module for tests.

benchmarks/ goes on ``sys.path`` as it is for a script run from it, so a benchmark finds
its sibling modules (``script_module``, the loader they share) the same way in both."""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
if str(BENCHMARKS) not in sys.path:
    sys.path.append(str(BENCHMARKS))

from script_module import load_script  # noqa: E402  (found through the line above)


def load_benchmark(name: str) -> ModuleType:
    """``benchmarks/<name>.py`` as the module ``name`` (registered in ``sys.modules``, so
    its dataclasses resolve their annotations)."""
    return load_script(BENCHMARKS / f"{name}.py", name)
