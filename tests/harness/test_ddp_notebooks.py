"""`training_cells`: which cells of a lesson the pt-BR browser test leaves out (the DDP
trainings and what reads their results), so that the rest runs without a NameError."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from ddp_notebooks import (
    DDP_NOTEBOOKS,
    DDP_TRAINERS,
    bound_names,
    loaded_names,
    training_cells,
)

from course.manifest import ROOT

NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb"))


def _code(notebook: Path) -> dict[int, ast.Module]:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    return {i: ast.parse("".join(c["source"])) for i, c in enumerate(cells)
            if c["cell_type"] == "code"}


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[n.stem for n in NOTEBOOKS])
def test_every_training_is_left_out_and_nothing_kept_needs_it(notebook: Path) -> None:
    code = _code(notebook)
    left = training_cells(notebook)
    calls = [i for i, tree in code.items() if loaded_names(tree) & DDP_TRAINERS]
    # the DDP lessons train (a renamed trainer would make this list empty), the others not
    assert bool(calls) == (notebook.stem in DDP_NOTEBOOKS), calls
    assert set(calls) <= set(left)
    kept_bound: set[str] = set()
    for i, tree in code.items():
        if i in left:
            continue
        needs = loaded_names(tree) - kept_bound - bound_names(tree)
        only_left = needs & set().union(*(bound_names(code[j]) for j in left if j < i))
        assert not only_left, (notebook.name, i, only_left)
        kept_bound |= bound_names(tree)


def test_a_cell_reading_a_left_out_result_is_left_out_too(tmp_path: Path) -> None:
    cells = ["x = 1", "from course.lessons.ddp_ranks import run_ddp\nddp = run_ddp(c)",
             "print(x)", "curves = ddp.logs", "figure(curves)", "print(x + 1)"]
    nb = tmp_path / "nb.ipynb"
    nb.write_text(json.dumps({"cells": [{"cell_type": "markdown", "source": ["# t"]}] + [
        {"cell_type": "code", "source": [src]} for src in cells]}))
    assert training_cells(nb) == [2, 4, 5]
