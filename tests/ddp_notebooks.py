"""The notebooks whose cells start DDP ranks on a local cluster, and their test params.

Lesson 4's srun steps and lesson 7's drill train on `course.lessons.ddp_ranks.local_cluster`,
whose jobs rendezvous on ``MASTER_PORT`` 20000 + job id % 10000 from ``FirstJobId`` 4001,
and their stored outputs show those ids (nbval compares them). A test that runs one of them
with the stored ids is marked ``ddp_ports`` (tests/conftest.py: those run one after another
on one worker); a test that does not compare the ids gives its cluster a range of its own
(`own_first_job_id`) and runs anywhere.
"""

from __future__ import annotations

import ast
import json
import os
import re
from collections.abc import Iterable
from pathlib import Path

import pytest

#: Notebooks that run DDP ranks on a cluster (lesson 4's srun steps, lesson 7's drill).
DDP_NOTEBOOKS = ("04-srun-ddp", "07-failures-requeue")
#: The lessons' functions that train DDP ranks (course.lessons.ddp_ranks, concurrent_steps,
#: ddp_drill): each run starts torch in every rank, some 20 s of CPU per lesson here.
DDP_TRAINERS = frozenset({"run_ddp", "run_sweep", "real_ddp_drill"})


def notebook_params(notebooks: Iterable[Path]) -> list[object]:
    """One pytest param per notebook (id: its stem), the DDP ones marked ``ddp_ports``."""
    return [pytest.param(n, id=n.stem,
                         marks=[pytest.mark.ddp_ports] if n.stem in DDP_NOTEBOOKS else [])
            for n in notebooks]


def own_first_job_id() -> str:
    """A ``COURSE_FIRST_JOB_ID`` for this pytest-xdist worker (``gwN``): 5001 + 500 N, so
    its lessons' MASTER_PORTs (25001 + 500 N ...) meet neither the stored outputs' 24001-
    nor another worker's; 5001 outside xdist."""
    match = re.fullmatch(r"gw(\d+)", os.environ.get("PYTEST_XDIST_WORKER", ""))
    return str(5001 + 500 * (int(match.group(1)) % 8 if match else 0))


def loaded_names(tree: ast.Module) -> set[str]:
    """The names a cell's code reads."""
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)
            and isinstance(n.ctx, ast.Load)}


def bound_names(tree: ast.Module) -> set[str]:
    """The names a cell's code binds: assigned, or imported (a dotted import binds its
    first part)."""
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)
             and isinstance(n.ctx, ast.Store)}
    return names | {(a.asname or a.name).split(".")[0] for n in ast.walk(tree)
                    if isinstance(n, ast.Import | ast.ImportFrom) for a in n.names}


def training_cells(notebook: Path) -> list[int]:
    """The indices (among all the notebook's cells) of the code cells that train DDP ranks
    (call one of `DDP_TRAINERS`) or read what such a cell made (a name it binds, then a
    name bound from that, ...): the cells to leave out to run the rest of the lesson
    without training. The rest then never reads a name only a left-out cell binds."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    tainted: set[str] = set()
    out = []
    for index, cell in enumerate(cells):
        if cell["cell_type"] != "code":
            continue
        tree = ast.parse("".join(cell["source"]))
        if loaded_names(tree) & (DDP_TRAINERS | tainted):
            out.append(index)
            tainted |= bound_names(tree)
    return out
