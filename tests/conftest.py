"""Shared fixtures: ``real_slurm`` (a real Slurm 22.05 cluster for the session)
and ``captures`` (the slurm-reference folder, or a skip).

Tests that use ``real_slurm`` are marked ``@pytest.mark.realslurm``. Set
``MINISLURM_REALSLURM_ACCOUNTING=0`` to start the cluster without MariaDB +
slurmdbd (no sacct; saves ~0.3 s).
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import tempfile
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest
from captures import capture_root
from realslurm import HarnessUnavailable, RealSlurm
from realslurm.normalize import JOB_ID_BASE

_TIMINGS = pytest.StashKey[dict[str, float]]()
#: The session's real cluster once started, and the modules whose tests use it.
_REAL_SLURM = pytest.StashKey[RealSlurm]()
_REAL_SLURM_MODULES = pytest.StashKey[set[str]]()


def _started_real_slurm(tmp_path_factory: pytest.TempPathFactory) -> RealSlurm:
    accounting = os.environ.get("MINISLURM_REALSLURM_ACCOUNTING", "1") != "0"
    cluster = RealSlurm(
        tmp_path_factory.mktemp("realslurm"), accounting=accounting, first_job_id=JOB_ID_BASE
    )
    try:
        cluster.start()
    except HarnessUnavailable as exc:
        pytest.skip(f"real Slurm unavailable: {exc}")
    return cluster


@pytest.fixture(scope="session")
def real_slurm(
    tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config
) -> Iterator[RealSlurm]:
    """A started 4-node cluster (see tests/realslurm/harness.py); skips with the
    reason and the daemon logs' last lines when it cannot start; torn down (no
    process left) at the end of the session. Job ids start at JOB_ID_BASE."""
    cluster = _started_real_slurm(tmp_path_factory)
    pytestconfig.stash[_TIMINGS] = cluster.timings
    pytestconfig.stash[_REAL_SLURM] = cluster
    try:
        yield cluster
    finally:
        del pytestconfig.stash[_REAL_SLURM]
        left = cluster.stop()
        if left:
            pytest.fail(f"real Slurm processes left after stop: {left}")


@pytest.fixture(scope="module")
def fresh_real_slurm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealSlurm]:
    """A real cluster of the module's own (about 5 s to start), for answers that depend
    on history :meth:`RealSlurm.reset` cannot undo: after a node was DOWN and another ran a
    job, ``sbatch --test-only`` named n3 rather than n1 on 22.05.8 for over a minute."""
    cluster = _started_real_slurm(tmp_path_factory)
    try:
        yield cluster
    finally:
        left = cluster.stop()
        if left:
            pytest.fail(f"real Slurm processes left after stop: {left}")


@pytest.fixture(scope="module", autouse=True)
def _real_slurm_reset_after_module(request: pytest.FixtureRequest) -> Iterator[None]:
    """After a test file that used ``real_slurm``: the session's cluster back as started
    (:meth:`RealSlurm.reset`: no job, no reservation, every node idle), so that no file
    sees what an earlier one left (a node still resuming, a job completing) whatever
    order the files run in (pytest-xdist hands each worker its own sequence)."""
    yield
    cluster = request.config.stash.get(_REAL_SLURM, None)
    if cluster is not None and request.module.__name__ in request.config.stash.get(
            _REAL_SLURM_MODULES, set()):
        cluster.reset()


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

#: The session's minislurm cluster once started, and the test files whose tests use it.
_MINI_SLURM = pytest.StashKey[MiniCluster]()
_MINI_SLURM_FILES = pytest.StashKey[frozenset[Path]]()


@pytest.fixture(scope="session")
def mini_slurm(
    tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config
) -> Iterator[MiniCluster]:
    """minislurm's local cluster on the reference slurm.conf (see tests/minicluster.py),
    the counterpart of ``real_slurm`` in differential tests; skips with the reason when
    it cannot start; torn down (no process left) at the end of the session."""
    cluster = MiniCluster(tmp_path_factory.mktemp("minislurm"))
    cluster.start_or_skip("minislurm cluster unavailable: ")
    pytestconfig.stash[_MINI_SLURM] = cluster
    try:
        yield cluster
    finally:
        del pytestconfig.stash[_MINI_SLURM]
        left = cluster.stop()
        if left:
            pytest.fail(f"minislurm processes left after stop: {left}")


def _mini_slurm_files(session: pytest.Session) -> frozenset[Path]:
    """The test files with a test that uses ``mini_slurm`` (directly or through a fixture)."""
    files = session.config.stash.get(_MINI_SLURM_FILES, None)
    if files is None:
        files = frozenset(item.path for item in session.items
                          if "mini_slurm" in getattr(item, "fixturenames", ()))
        session.config.stash[_MINI_SLURM_FILES] = files
    return files


@pytest.fixture(scope="module", autouse=True)
def _mini_slurm_reset_after_module(request: pytest.FixtureRequest) -> Iterator[None]:
    """After a test file that used ``mini_slurm``: the session's minislurm cluster back as
    started (:meth:`MiniCluster.reset`: no job, no reservation, every node resumed and
    idle, partitions as at start), like ``_real_slurm_reset_after_module`` for real Slurm:
    a job an earlier file left running (or still completing) must not change which nodes
    a later file's jobs get, whatever order pytest-xdist's workers run the files in.
    Fails the file's last test's teardown, naming what is left, when it cannot."""
    yield
    cluster = request.config.stash.get(_MINI_SLURM, None)
    if cluster is not None and request.node.path in _mini_slurm_files(request.session):
        cluster.reset()


# ----- running side by side (pytest-xdist; scripts/test runs the suite with -n) ------------
#: The group of the tests that use the DDP example's rendezvous ports
#: (``course.ddp.wiring.master_port``: 20000 + job id % 10000). Every cluster numbers its
#: jobs from the same first ids, so two such jobs on two workers at once would bind or
#: join each other's TCP store; these tests run one after the other on one worker.
DDP_PORTS_GROUP = "ddp-ports"
#: workerinput key: the folder where each worker writes its test -> group map.
_GROUPS_KEY = "minislurm_test_groups"
#: The controller's folder of those maps.
_GROUPS_DIR = pytest.StashKey[str]()


def test_group(item: pytest.Item) -> str:
    """The unit ``--dist loadgroup`` hands to one worker: DDP_PORTS_GROUP for a test marked
    ``ddp_ports``, the test alone in a module marked ``spread``, else its file, so module-
    and session-scoped fixtures (a started cluster, a JupyterLab) are made once per file
    as in a serial run. Each worker has its own session fixtures: its own real Slurm and
    minislurm clusters (own folder, ports from the worker's slice: tests/realslurm/ports.py)."""
    if item.get_closest_marker("ddp_ports"):
        return DDP_PORTS_GROUP
    if item.get_closest_marker("spread"):
        return item.nodeid
    return item.nodeid.split("::", 1)[0]


#: Session fixtures whose tests wait on daemons and wall clocks rather than compute.
_WAITING_FIXTURES = frozenset({"real_slurm", "fresh_real_slurm", "mini_slurm"})
#: Each group's seconds in a full run on the 2-core CI host (`_GroupTimes` writes them to
#: build/group-times.json at the end of every ``--dist loadgroup`` run; copy that file
#: here to refresh them). Only the order the groups are handed out in depends on them.
GROUP_TIMES = Path(__file__).with_name("group-times.json")
#: The seconds assumed for a group GROUP_TIMES does not know yet: a waiting one (a new
#: file of real-Slurm or wall-clock tests) before the short ones.
_NEW_WAITING_GROUP = 30.0


def _waits(item: pytest.Item) -> bool:
    """Whether ``item`` is one of the long, waiting-bound tests (run those first)."""
    return bool(item.get_closest_marker("realslurm") or item.get_closest_marker("slow")
                or _WAITING_FIXTURES & set(getattr(item, "fixturenames", ())))


def group_order(items: list[pytest.Item], known: dict[str, float]) -> list[pytest.Item]:
    """``items`` with their groups longest first (longest processing time first: the
    long groups start at once and the short ones fill in around them, so the workers
    end together instead of one running a long group alone at the end): a group's
    seconds from ``known``, else `_NEW_WAITING_GROUP` if any of its tests waits, else 0;
    collection order among equals and within a group."""
    waiting = {test_group(i) for i in items if _waits(i)}

    def seconds(group: str) -> float:
        return known.get(group, _NEW_WAITING_GROUP if group in waiting else 0.0)

    return sorted(items, key=lambda i: -seconds(test_group(i)))


def _known_group_times() -> dict[str, float]:
    try:
        data = json.loads(GROUP_TIMES.read_text())
    except (OSError, ValueError):
        return {}
    return {str(k): float(v) for k, v in data.items()} if isinstance(data, dict) else {}


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(
    config: pytest.Config, items: list[pytest.Item]
) -> Iterator[None]:
    """On an xdist worker: order the groups longest first (`group_order`), and write the
    test -> group map the controller's scheduler reads (``pytest_xdist_make_scheduler``)."""
    workerinput: dict[str, Any] = getattr(config, "workerinput", {})  # xdist's, on a worker
    folder = workerinput.get(_GROUPS_KEY)
    if folder:
        items[:] = group_order(items, _known_group_times())
    result = yield
    config.stash[_REAL_SLURM_MODULES] = {
        item.module.__name__ for item in items
        if isinstance(item, pytest.Function) and "real_slurm" in item.fixturenames}
    if folder:
        worker = workerinput["workerid"]
        tmp = Path(folder) / f".{worker}.json"
        tmp.write_text(json.dumps({i.nodeid: test_group(i) for i in items}))
        tmp.rename(Path(folder) / f"{worker}.json")
    return result


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist controller, per worker: where to write its test -> group map."""
    if node.config.getvalue("dist") == "loadgroup":
        folder = node.config.stash.setdefault(_GROUPS_DIR, tempfile.mkdtemp(prefix="groups-"))
        node.workerinput[_GROUPS_KEY] = folder


def _group_map(folder: str) -> dict[str, str]:
    """The test -> group maps the workers wrote into ``folder``, merged."""
    groups: dict[str, str] = {}
    for f in sorted(Path(folder).glob("gw*.json")):
        groups.update(json.loads(f.read_text()))
    return groups


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadgroup`` by :func:`test_group` (xdist 3.8's own loadgroup no longer
    groups under pytest 9.2: it renames ``item._nodeid``, which pytest stopped reading)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):
        """xdist's scope scheduling with :func:`test_group` as the scope: the workers
        wrote each test's group before reporting their collection."""

        groups: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self.groups is None:
                self.groups = _group_map(config.stash[_GROUPS_DIR])
            return self.groups.get(nodeid, nodeid)

        def _reschedule(self, node: Any) -> None:
            """The next group goes to a worker once only the last test of its group is
            left (a worker runs a test once it knows the next one, so that test waits for
            it). xdist's own threshold, 2 tests left, hands it out while the one before
            runs: queued behind a test that may be long, where another worker could
            have started it at once."""
            if node.shutting_down:
                return
            if not self.workqueue:
                node.shutdown()
                return
            if self._pending_of(self.assigned_work[node]) > 1:
                return
            self._assign_work_unit(node)

    config.option.loadscopereorder = False  # keep the order the workers collected
    return GroupScheduling(config, log)


_CPU_AT_START = pytest.StashKey[float]()


def _cpu_seconds() -> float:
    """CPU seconds of this process and of the children it has reaped (a test's
    subprocesses, daemons and kernels once they are waited for)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(
        resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    item.stash[_CPU_AT_START] = _cpu_seconds()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """The teardown report carries the CPU seconds the test took, setup to teardown
    (``user_properties`` travel from an xdist worker to the controller)."""
    report = yield
    if call.when == "teardown" and _CPU_AT_START in item.stash:
        report.user_properties.append(("cpu", _cpu_seconds() - item.stash[_CPU_AT_START]))
    return report


class _GroupTimes:
    """On the xdist controller under ``--dist loadgroup``: the seconds each group (the unit
    one worker runs in a row) took, summed from its tests' reports (setup + call +
    teardown), the longest printed at the end, so every run's output shows the suite's
    critical path."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.spent: dict[str, float] = {}
        self.cpu: dict[str, float] = {}
        self.cpu_at_start = _cpu_ticks()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.spent[report.nodeid] = self.spent.get(report.nodeid, 0.0) + report.duration
        for name, value in report.user_properties:
            if name == "cpu":
                self.cpu[report.nodeid] = float(value)

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        folder = self.config.stash.get(_GROUPS_DIR, None)
        if not self.spent or not folder:
            return
        groups = _group_map(folder)
        totals: dict[str, float] = {}
        for nodeid, seconds in self.spent.items():
            group = groups.get(nodeid, nodeid)
            totals[group] = totals.get(group, 0.0) + seconds
        longest = sorted(totals.items(), key=lambda kv: -kv[1])
        terminalreporter.write_line("longest xdist groups: " + ", ".join(
            f"{group} {seconds:.0f} s" for group, seconds in longest[:15]))
        workers = self.config.getoption("numprocesses", None)
        workers = workers if isinstance(workers, int) and workers > 0 else 1
        total = sum(totals.values())
        terminalreporter.write_line(
            f"all groups: {total:.0f} s of test time in {len(totals)} groups, "
            f"{total / workers:.0f} s per worker on {workers} workers")
        busy, idle = (b - a for a, b in zip(self.cpu_at_start, _cpu_ticks(), strict=True))
        if busy + idle:
            terminalreporter.write_line(
                f"machine CPU during the run: {100 * busy / (busy + idle):.0f} % busy "
                f"on {os.cpu_count()} cores (/proc/stat)")
        cpu: dict[str, float] = {}
        for nodeid, seconds in self.cpu.items():
            group = groups.get(nodeid, nodeid)
            cpu[group] = cpu.get(group, 0.0) + seconds
        terminalreporter.write_line("most CPU (the workers and the children they reaped): "
                                    + ", ".join(f"{group} {seconds:.0f} s" for group, seconds
                                                in sorted(cpu.items(), key=lambda kv: -kv[1])[:15]))
        terminalreporter.write_line(f"CPU of all tests so counted: {sum(cpu.values()):.0f} s")
        out = self.config.rootpath / "build" / "group-times.json"
        out.parent.mkdir(exist_ok=True)
        out.write_text("{\n" + ",\n".join(f"{json.dumps(group)}: {seconds:.0f}"
                                          for group, seconds in longest if seconds >= 1)
                       + "\n}\n")
        out = self.config.rootpath / "build" / "test-times.json"
        rows = sorted(self.spent.items(), key=lambda kv: -kv[1])
        out.write_text("{\n" + ",\n".join(
            f"{json.dumps(k)}: [{v:.2f}, {self.cpu.get(k, 0.0):.2f}]" for k, v in rows) + "\n}\n")
        terminalreporter.write_line(
            f"each test's seconds (wall, CPU): {out.relative_to(self.config.rootpath)}")


def _cpu_ticks() -> tuple[int, int]:
    """The machine's (busy, idle) clock ticks so far, summed over its cores (``cpu`` line
    of /proc/stat; idle counts iowait)."""
    try:
        values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return (0, 0)
    idle = values[3] + values[4]
    return (sum(values[:8]) - idle, idle)


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput") and getattr(config.option, "dist", "no") == "loadgroup":
        config.pluginmanager.register(_GroupTimes(config), "minislurm-group-times")


def pytest_unconfigure(config: pytest.Config) -> None:
    folder = config.stash.get(_GROUPS_DIR, None)
    if folder:
        shutil.rmtree(folder, ignore_errors=True)
