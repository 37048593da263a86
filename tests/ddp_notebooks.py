"""The notebooks whose cells start DDP ranks on a local cluster, and their test params.

Lesson 4's srun steps and lesson 7's drill train on `course.lessons.ddp_ranks.local_cluster`,
whose jobs rendezvous on ``MASTER_PORT`` 20000 + job id % 10000 from ``FirstJobId`` 4001,
and their stored outputs show those ids (nbval compares them). A test that runs one of them
with the stored ids is marked ``ddp_ports`` (tests/conftest.py: those run one after another
on one worker); a test that does not compare the ids gives its cluster a range of its own
(`own_first_job_id`) and runs anywhere.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

import pytest

#: Notebooks that run DDP ranks on a cluster (lesson 4's srun steps, lesson 7's drill).
DDP_NOTEBOOKS = ("04-srun-ddp", "07-failures-requeue")


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
