"""Load a Python file that is not in a package (``benchmarks/*.py``, ``tests/*.py``) as a
module: the one loader the benchmarks and their tests share.

The module is registered in ``sys.modules`` under ``name`` before it runs, so its
dataclasses resolve their annotations; a second call returns the module already loaded.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def load_script(path: Path, name: str) -> ModuleType:
    """The file ``path`` as the module ``name``."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
