"""A test module's own real cluster (a setting the session's cluster does not have).

Use it in a module-scoped fixture::

    @pytest.fixture(scope="module")
    def strict_slurm(tmp_path_factory):
        cluster = RealSlurm(tmp_path_factory.mktemp("strict"), accounting=False,
                            extra_conf=("EnforcePartLimits=ALL",))
        with running(cluster):
            yield cluster
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from .harness import HarnessUnavailable, RealSlurm


@contextmanager
def running(cluster: RealSlurm) -> Iterator[RealSlurm]:
    """``cluster`` started (the test skips with the reason when it cannot start), then
    stopped with no process of it left."""
    try:
        cluster.start()
    except HarnessUnavailable as exc:
        pytest.skip(f"real Slurm unavailable: {exc}")
    try:
        yield cluster
    finally:
        assert cluster.stop() == []
