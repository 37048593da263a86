"""A pytest plugin for the course build: keep the outputs nbval produced.

``pytest --nbval -p course.build_nbval`` executes each notebook once and compares its
outputs with the stored ones (strict nbval). With ``COURSE_BUILD_CAPTURE=DIR`` set, this
plugin also writes each notebook, with the fresh outputs of that run, to ``DIR/<name>``,
so the build renders what was just validated without executing the notebooks twice.
``COURSE_BUILD_PROGRESS_FD`` (a pipe) receives one line per executed cell, for the
build's progress bar.

Right after a cell that displays a widget (an experiment), the kernel is asked for the
widgets' state (``ipywidgets.Widget.get_manager_state``): the captured notebook keeps it
in ``metadata.widgets`` as nbclient's ``store_widget_state`` would, so the site shows each
experiment as it first appeared (its Output widgets' plotly figures; build_render.py).
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

import nbformat
import pytest

_outputs: dict[str, dict[int, list[Any]]] = {}
_widget_state: dict[str, dict[str, Any]] = {}

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE_MIME = "application/vnd.jupyter.widget-state+json"
_MARK = "@@course-widget-state@@"
_STATE_CODE = (
    "import json as _course_json, ipywidgets as _course_w\n"
    f"print({_MARK!r} + _course_json.dumps("
    "_course_w.Widget.get_manager_state(drop_defaults=True)['state']))\n"
    "del _course_json, _course_w\n"
)


def _kernel_widget_state(kernel: Any, timeout: float = 60.0) -> dict[str, Any]:
    """Every live widget's state in nbval's kernel ({} if it cannot be had)."""
    msg_id = kernel.execute_cell_input(_STATE_CODE, allow_stdin=False)
    kernel.await_reply(msg_id, timeout=timeout)
    text: list[str] = []
    while True:
        msg = kernel.get_message(stream="iopub", timeout=timeout)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "stream":
            text.append(msg["content"]["text"])
        elif msg["msg_type"] == "error":
            return {}
        elif msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            break
    body = "".join(text)
    if _MARK not in body:
        return {}
    state: dict[str, Any] = json.loads(body.split(_MARK, 1)[1])
    return state


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
        kernel = getattr(item.parent, "kernel", None)
        shows_widget = any(WIDGET_MIME in (o.get("data") or {}) for o in outs)
        if shows_widget and kernel is not None and os.environ.get("COURSE_BUILD_CAPTURE"):
            with contextlib.suppress(Exception):  # the site then shows the note only
                _widget_state.setdefault(path, {}).update(_kernel_widget_state(kernel))
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
        nb.metadata.pop("widgets", None)  # the stored state names the stored run's models
        if _widget_state.get(path):
            nb.metadata["widgets"] = {WIDGET_STATE_MIME: {
                "version_major": 2, "version_minor": 0, "state": _widget_state[path]}}
        nbformat.write(nb, str(out / Path(path).name))
