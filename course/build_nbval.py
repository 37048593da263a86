"""A pytest plugin for the course build: keep the outputs nbval produced.

``pytest --nbval -p course.build_nbval`` executes each notebook once and compares its
outputs with the stored ones (strict nbval). With ``COURSE_BUILD_CAPTURE=DIR`` set, this
plugin also writes each notebook, with the fresh outputs of that run, to ``DIR/<name>``,
so the build renders what was just validated without executing the notebooks twice.
``COURSE_BUILD_PROGRESS_FD`` (a pipe) receives one line per executed cell, for the
build's progress bar.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

import nbformat
import pytest

_outputs: dict[str, dict[int, list[Any]]] = {}


def _progress(line: str) -> None:
    fd = os.environ.get("COURSE_BUILD_PROGRESS_FD")
    if fd:
        with contextlib.suppress(OSError):
            os.write(int(fd), (line + "\n").encode())


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: Any, call: Any) -> Any:
    """After each cell ran, remember its fresh outputs."""
    yield
    if call.when != "call":
        return
    path = str(getattr(item.parent, "path", ""))
    outs = getattr(item, "test_outputs", None)
    if outs is not None:
        _outputs.setdefault(path, {})[int(item.cell_num)] = outs
    _progress(f"cell {Path(path).name} {item.cell_num} {'failed' if call.excinfo else 'ok'}")


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    """Write each notebook with the outputs of this run."""
    target = os.environ.get("COURSE_BUILD_CAPTURE")
    if not target:
        return
    out = Path(target)
    out.mkdir(parents=True, exist_ok=True)
    for path, cells in _outputs.items():
        nb = nbformat.read(path, as_version=4)
        code = [c for c in nb.cells if c.cell_type == "code"]
        count = 0
        for i, cell in enumerate(code):
            if i not in cells:
                continue
            count += 1  # nbval runs cells without history: number them in order
            cell.execution_count = count
            fresh = [nbformat.from_dict(dict(o)) for o in cells[i]]
            for o in fresh:
                if o.get("output_type") in ("execute_result", "display_data"):
                    o.setdefault("metadata", {})
                if o.get("output_type") == "execute_result":
                    o["execution_count"] = count
            cell.outputs = fresh
        nbformat.write(nb, str(out / Path(path).name))
