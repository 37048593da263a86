"""submitit, a tool written for real Slurm, drives minislurm's local cluster unchanged.

`submitit <https://github.com/facebookincubator/submitit>`_ (what many PyTorch users
submit their training with) writes a batch script with ``#SBATCH`` lines
(``--partition``, ``--nodes``, ``--ntasks-per-node``, ``--signal=USR2@90``,
``--open-mode=append``, ``--wckey``, ``--array=0-4%2`` ...) whose body is
``srun --unbuffered --output ... python -m submitit.core._submit``, and then shells
out to ``sbatch`` (parsing ``Submitted batch job N``), ``sacct -o JobID,State,NodeList
--parsable2 -j N`` (its only source of job states), ``scancel N``,
``scancel N --signal USR2`` (``job._interrupt()``) and, inside the job,
``scontrol requeue N``. In the job, its ``JobEnvironment`` reads SLURM_JOB_ID,
SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_NODEID, SLURM_JOB_NUM_NODES,
SLURM_JOB_NODELIST (a hostlist it expands itself) and SLURM_ARRAY_*.

None of that is our code: the test process puts minislurm's ``bin/`` first on PATH
(``bin/sbatch`` runs minislurm's sbatch, see bin/) and lets submitit do exactly what
it does on a real cluster, against the session's ``mini_slurm`` daemon (the
reference slurm.conf: n[1-4], 4 CPUs each; partitions debug, gpu, short).

Every case has a hard wall-clock limit (:func:`_hard_limit`, SIGALRM): a hung
submitit call fails its test instead of hanging the run.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

submitit = pytest.importorskip("submitit")
cloudpickle = pytest.importorskip("cloudpickle")

from minicluster import BIN_DIR, STATE_VAR, MiniCluster  # noqa: E402
from submitit.core.utils import FailedJobError  # noqa: E402
from submitit.helpers import Checkpointable  # noqa: E402
from submitit.slurm.slurm import SlurmInfoWatcher, SlurmJob  # noqa: E402

#: Hard wall-clock limit of one case (seconds).
CASE_LIMIT = 90
#: Longest a job may take to reach a state the case waits for (seconds).
WAIT = 45.0

# The job functions live in this module, which the job's Python cannot import:
# cloudpickle ships them by value (what a notebook user gets for free from __main__).
cloudpickle.register_pickle_by_value(sys.modules[__name__])


class CaseTimeout(Exception):
    """A case ran past :data:`CASE_LIMIT`."""


@pytest.fixture(autouse=True)
def _hard_limit() -> Iterator[None]:
    """Fail a case that runs longer than CASE_LIMIT seconds (SIGALRM in the main thread)."""

    def expire(_sig: int, _frame: FrameType | None) -> None:
        raise CaseTimeout(f"case exceeded its hard limit of {CASE_LIMIT} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(CASE_LIMIT)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture(scope="module")
def cluster(mini_slurm: MiniCluster) -> Iterator[MiniCluster]:
    """The session cluster, with this process's environment pointing at it the way a
    user's shell would (minislurm's commands first on PATH, no stray SLURM_* of an
    outer job), so that submitit's subprocess calls reach minislurm."""
    mp = pytest.MonkeyPatch()
    for name in list(os.environ):
        if name.startswith(("SLURM_", "SBATCH_", "SRUN_", "SQUEUE_", "SACCT_", "SUBMITIT_")):
            mp.delenv(name)
    mp.setenv("PATH", f"{BIN_DIR}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}")
    mp.setenv(STATE_VAR, str(mini_slurm.state_dir))
    mp.setenv("SLURM_CONF", str(mini_slurm.conf_path))
    try:
        yield mini_slurm
    finally:
        mp.undo()


@pytest.fixture
def executor(cluster: MiniCluster, tmp_path: Path) -> Iterator[Any]:
    """A fresh ``submitit.AutoExecutor(cluster="slurm")`` logging under tmp_path; every
    job the case left behind is cancelled afterwards."""
    SlurmJob.watcher = SlurmInfoWatcher(delay_s=600)  # no state cached from other cases
    ex = submitit.AutoExecutor(folder=str(tmp_path / "submitit" / "%j"), cluster="slurm")
    ex.update_parameters(timeout_min=5, slurm_partition="debug")
    try:
        yield ex
    finally:
        cluster.cancel_all()


def _sacct_state(job: Any) -> str:
    """The job's state as submitit reads it (a forced ``sacct`` call)."""
    return str(job.get_info(mode="force").get("State", "UNKNOWN"))


def _wait_for(job: Any, pred: Callable[[str], bool], what: str, timeout: float = WAIT) -> str:
    """Poll submitit's view of the job (sacct) until ``pred(state)``; return the state."""
    deadline = time.monotonic() + timeout
    state = _sacct_state(job)
    while not pred(state):
        if time.monotonic() > deadline:
            raise AssertionError(f"job {job.job_id} not {what} after {timeout} s: {state!r}")
        time.sleep(0.2)
        state = _sacct_state(job)
    return state


def _wait_done(job: Any, timeout: float = WAIT) -> None:
    """Poll ``job.done(force_check=True)`` (result pickle or a final sacct state)."""
    deadline = time.monotonic() + timeout
    while not job.done(force_check=True):
        if time.monotonic() > deadline:
            raise AssertionError(f"job {job.job_id} not done after {timeout} s: {job.state}")
        time.sleep(0.2)


def _final(state: str) -> bool:
    return state.split()[0] not in ("PENDING", "RUNNING", "REQUEUED", "COMPLETING", "UNKNOWN")


# ----- the job functions (pickled by value, run by submitit inside the job) -------------
def describe(x: int) -> dict[str, Any]:
    """What submitit's JobEnvironment and the raw SLURM_* variables say in this task."""
    env = submitit.JobEnvironment()
    return {
        "x": x,
        "job_id": env.job_id,
        "global_rank": env.global_rank,
        "local_rank": env.local_rank,
        "node": env.node,
        "num_tasks": env.num_tasks,
        "num_nodes": env.num_nodes,
        "hostnames": env.hostnames,
        "nodelist": os.environ.get("SLURM_JOB_NODELIST"),
        "procid": os.environ.get("SLURM_PROCID"),
        "ntasks": os.environ.get("SLURM_NTASKS"),
        "partition": os.environ.get("SLURM_JOB_PARTITION"),
    }


def fail(x: int) -> None:
    raise ValueError(f"deliberate failure {x}")


def sleep_for(seconds: float) -> str:
    time.sleep(seconds)
    return "woke"


def array_task(x: int) -> dict[str, Any]:
    """Sleep a little and report when, so that the test can see array_parallelism."""
    env = submitit.JobEnvironment()
    start = time.time()
    time.sleep(1.5)
    return {
        "x": x,
        "square": x * x,
        "array_job_id": env.array_job_id,
        "array_task_id": env.array_task_id,
        "start": start,
        "end": time.time(),
    }


class Resumable(Checkpointable):
    """Counts to ``target`` slowly, keeping its progress in a file; submitit calls
    ``checkpoint`` on USR2 and requeues the job with ``scontrol requeue``."""

    def __init__(self) -> None:
        self.progress = 0

    def __call__(self, target: int, marker: str) -> dict[str, Any]:
        restarts = os.environ.get("SLURM_RESTART_COUNT", "0")
        Path(marker).with_suffix(f".run{restarts}").write_text(str(self.progress))
        while self.progress < target:
            if restarts == "0":
                time.sleep(0.5)  # the first attempt is slow: it gets interrupted
            self.progress += 1
            Path(marker).write_text(str(self.progress))
        return {"progress": self.progress, "restarts": int(restarts)}


# ----- the cases -----------------------------------------------------------------------
def test_single_node_two_tasks(executor: Any) -> None:
    """1 node x 2 tasks: one result per task, each with its own SLURM_PROCID, and
    submitit's JobEnvironment agrees with the variables; the job ends COMPLETED."""
    executor.update_parameters(nodes=1, tasks_per_node=2)
    job = executor.submit(describe, 7)
    assert job.job_id.isdigit()
    results = job.results()
    assert [r["global_rank"] for r in results] == [0, 1]
    assert [r["procid"] for r in results] == ["0", "1"]
    for r in results:
        assert r["x"] == 7
        assert r["job_id"] == job.job_id
        assert r["num_tasks"] == 2 and r["ntasks"] == "2"
        assert r["num_nodes"] == 1 and r["node"] == 0
        assert r["local_rank"] == r["global_rank"]
        assert r["partition"] == "debug"
        assert len(r["hostnames"]) == 1 and r["hostnames"] == [r["nodelist"]]
    assert _wait_for(job, _final, "finished") == "COMPLETED"
    assert job.state == "COMPLETED"
    assert job.get_info()["NodeList"] == results[0]["nodelist"]


def test_two_nodes_two_tasks_each(executor: Any) -> None:
    """2 nodes x 2 tasks: ranks 0..3 spread over both nodes, SLURM_JOB_NODELIST a
    compressed hostlist that submitit expands to both hostnames."""
    executor.update_parameters(nodes=2, tasks_per_node=2)
    job = executor.submit(describe, 1)
    results = job.results()
    assert len(results) == 4
    assert sorted(r["global_rank"] for r in results) == [0, 1, 2, 3]
    nodelist = results[0]["nodelist"]
    assert all(r["nodelist"] == nodelist for r in results)
    hosts = results[0]["hostnames"]
    assert len(hosts) == 2 and len(set(hosts)) == 2, (nodelist, hosts)
    assert all(h.startswith("n") for h in hosts)
    by_node = {r["global_rank"]: (r["node"], r["local_rank"]) for r in results}
    assert by_node == {0: (0, 0), 1: (0, 1), 2: (1, 0), 3: (1, 1)}
    assert {r["num_nodes"] for r in results} == {2}
    assert _wait_for(job, _final, "finished") == "COMPLETED"


def test_state_while_running(executor: Any) -> None:
    """``job.state`` goes PENDING/RUNNING -> COMPLETED as sacct reports it."""
    job = executor.submit(sleep_for, 2.0)
    assert _wait_for(job, lambda s: s == "RUNNING", "running") == "RUNNING"
    assert not job.done(force_check=True)
    assert job.result() == "woke"
    assert _wait_for(job, _final, "finished") == "COMPLETED"


def test_exception_is_failed_job_error(executor: Any) -> None:
    """An exception inside the job comes back as submitit's FailedJobError with the
    remote traceback; the job itself ends FAILED."""
    job = executor.submit(fail, 3)
    with pytest.raises(FailedJobError, match="deliberate failure 3"):
        job.result()
    assert _wait_for(job, _final, "finished") == "FAILED"
    assert isinstance(job.exception(), FailedJobError)


def test_cancel(executor: Any) -> None:
    """``job.cancel()`` (``scancel N``) of a running job: sacct says ``CANCELLED by UID``,
    which submitit treats as done."""
    job = executor.submit(sleep_for, 120)
    _wait_for(job, lambda s: s == "RUNNING", "running")
    job.cancel()
    state = _wait_for(job, _final, "finished")
    assert state == f"CANCELLED by {os.getuid()}", state
    assert job.done(force_check=True)
    assert job.state.startswith("CANCELLED")


def test_cancel_pending(executor: Any) -> None:
    """A job that cannot start yet (``--begin`` in an hour) is PENDING, then CANCELLED."""
    executor.update_parameters(slurm_additional_parameters={"begin": "now+1hour"})
    job = executor.submit(sleep_for, 1)
    assert _wait_for(job, lambda s: s != "UNKNOWN", "known") == "PENDING"
    job.cancel()
    assert _wait_for(job, _final, "finished").startswith("CANCELLED")


def test_map_array_parallelism(executor: Any, cluster: MiniCluster) -> None:
    """``map_array`` submits one ``--array=0-4%2`` job; every task gets its own result
    and SLURM_ARRAY_*; no more than 2 tasks ever run at once; sacct's array lines
    (``N_[2-4%2]`` while pending, then ``N_0`` ...) are understood.

    submitit makes each task's folder (where ``--output`` points) only after sbatch
    returns; a task that starts first finds no folder and fails its launch
    (``FAILED 0:53``, as on real Slurm, test_differential_sbatch). On a busy real
    cluster the scheduler's latency hides that race; on an idle one it is real. The
    case submits the array held (``--hold``) and releases it once submitit is done."""
    executor.update_parameters(
        slurm_array_parallelism=2, slurm_additional_parameters={"hold": True}
    )
    jobs = executor.map_array(array_task, range(5))
    assert len(jobs) == 5
    main = jobs[0].job_id.split("_")[0]
    assert _sacct_state(jobs[0]) == "PENDING"
    released = cluster.run(["scontrol", "release", main])
    assert released.rc == 0, released.stderr
    assert [j.job_id for j in jobs] == [f"{main}_{i}" for i in range(5)]
    results = [j.result() for j in jobs]
    assert [r["x"] for r in results] == list(range(5))
    assert [r["square"] for r in results] == [0, 1, 4, 9, 16]
    assert [r["array_task_id"] for r in results] == [str(i) for i in range(5)]
    assert {r["array_job_id"] for r in results} == {main}
    events = sorted([(r["start"], 1) for r in results] + [(r["end"], -1) for r in results])
    running = peak = 0
    for _t, step in events:
        running += step
        peak = max(peak, running)
    assert peak <= 2, f"{peak} array tasks ran at once with %2"
    for j in jobs:
        assert _wait_for(j, _final, "finished") == "COMPLETED"


@pytest.mark.parametrize("timeout", [True, False], ids=["timeout", "preemption"])
def test_checkpoint_and_requeue(executor: Any, cluster: MiniCluster, tmp_path: Path,
                                timeout: bool) -> None:
    """A ``Checkpointable`` job interrupted the way submitit's own tests do it
    (``job._interrupt()``: ``scancel N --signal USR2``, preceded by ``--signal SIGTERM``
    for a preemption, which submitit ignores) checkpoints itself and runs
    ``scontrol requeue N``; the job goes back to PENDING with a BeginTime 2 minutes on
    (as in Slurm), the test lets it start now with ``scontrol update StartTime=now``,
    and the second attempt (SLURM_RESTART_COUNT=1) resumes from the checkpoint."""
    marker = tmp_path / "progress"
    job = executor.submit(Resumable(), 30, str(marker))
    _wait_for(job, lambda s: s == "RUNNING", "running")
    deadline = time.monotonic() + WAIT
    while not (marker.exists() and int(marker.read_text() or 0) >= 2):
        assert time.monotonic() < deadline, "the job made no progress"
        time.sleep(0.1)
    job._interrupt(timeout=timeout)
    _wait_for(job, lambda s: s in ("PENDING", "REQUEUED"), "requeued")
    res = cluster.run(["scontrol", "update", f"jobid={job.job_id}", "StartTime=now"])
    assert res.rc == 0, res.stderr
    result = job.result()
    assert result["restarts"] == 1
    assert result["progress"] == 30
    resumed_at = int(marker.with_suffix(".run1").read_text())
    assert resumed_at >= 2, "the second attempt did not start from the checkpoint"
    final = _wait_for(job, _final, "finished")
    if final != "COMPLETED":
        acct = cluster.run(["sacct", "-D", "-j", job.job_id, "--parsable2",
                            "-o", "JobID,State,ExitCode,Start,End,Restarts"])
        logs = "\n".join(f"--- {p.name}:\n{p.read_text()}"
                          for p in sorted(Path(job.paths.folder).glob("*.out"))
                          + sorted(Path(job.paths.folder).glob("*.err")))
        raise AssertionError(f"ended {final}\n{acct.stdout}{acct.stderr}\n{logs}")
