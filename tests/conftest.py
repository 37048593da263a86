"""Shared fixtures: ``real_slurm`` (a real Slurm 22.05 cluster for the session)
and ``captures`` (the slurm-reference folder, or a skip).

Tests that use ``real_slurm`` are marked ``@pytest.mark.realslurm``. Set
``MINISLURM_REALSLURM_ACCOUNTING=0`` to start the cluster without MariaDB +
slurmdbd (no sacct; saves ~0.3 s).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from captures import capture_root
from realslurm import HarnessUnavailable, RealSlurm
from realslurm.normalize import JOB_ID_BASE

_TIMINGS = pytest.StashKey[dict[str, float]]()


@pytest.fixture(scope="session")
def real_slurm(
    tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config
) -> Iterator[RealSlurm]:
    """A started 4-node cluster (see tests/realslurm/harness.py); skips with the
    reason and the daemon logs' last lines when it cannot start; torn down (no
    process left) at the end of the session. Job ids start at JOB_ID_BASE."""
    accounting = os.environ.get("MINISLURM_REALSLURM_ACCOUNTING", "1") != "0"
    cluster = RealSlurm(
        tmp_path_factory.mktemp("realslurm"), accounting=accounting, first_job_id=JOB_ID_BASE
    )
    try:
        cluster.start()
    except HarnessUnavailable as exc:
        pytest.skip(f"real Slurm unavailable: {exc}")
    pytestconfig.stash[_TIMINGS] = cluster.timings
    try:
        yield cluster
    finally:
        left = cluster.stop()
        if left:
            pytest.fail(f"real Slurm processes left after stop: {left}")


@pytest.fixture(scope="session")
def captures() -> Path:
    """The slurm-reference folder (see tests/captures.py); skips when absent."""
    root = capture_root()
    if root is None:
        pytest.skip("slurm-reference captures not found (../shared/slurm-reference)")
    return root


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    """Report how long the real cluster took to start (if it was started)."""
    timings = config.stash.get(_TIMINGS, None)
    if timings:
        parts = ", ".join(f"{k} {v:.2f} s" for k, v in timings.items())
        terminalreporter.write_line(f"real Slurm start: {parts}")


# ----- minislurm's local cluster (tests/minicluster.py; differential tests) -----------------
from minicluster import MiniCluster  # noqa: E402


@pytest.fixture(scope="session")
def mini_slurm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MiniCluster]:
    """minislurm's local cluster on the reference slurm.conf (see tests/minicluster.py),
    the counterpart of ``real_slurm`` in differential tests; skips with the reason when
    it cannot start; torn down (no process left) at the end of the session."""
    cluster = MiniCluster(tmp_path_factory.mktemp("minislurm"))
    cluster.start_or_skip("minislurm cluster unavailable: ")
    try:
        yield cluster
    finally:
        left = cluster.stop()
        if left:
            pytest.fail(f"minislurm processes left after stop: {left}")
