"""The class tests' shared fixture: one running class (real JupyterHub, real proxy,
real quiz service on 127.0.0.1) per test module, torn down at the module's end."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="module")
def cls(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[object]:
    """A started ``RunningClass`` whose learners are the module's ``CLASS_LEARNERS`` (the
    harness's default when the module names none); skips when the proxy is missing."""
    pytest.importorskip("jupyterhub", reason="the 'class' extra (jupyterhub) is not installed")
    from course.classroom import deploy
    from course.classroom.harness import RunningClass

    try:
        deploy.proxy_bin()
    except Exception as exc:
        pytest.skip(str(exc))
    learners = getattr(request.module, "CLASS_LEARNERS", None)
    kwargs = {} if learners is None else {"learners": learners}
    with RunningClass(tmp_path_factory.mktemp("class"), **kwargs) as running:
        yield running
