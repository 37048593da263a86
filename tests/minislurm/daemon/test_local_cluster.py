"""The local cluster end to end: ``python -m minislurm cluster up``, then Slurm's commands.

One daemon serves the whole module (the reference slurm.conf of the captures:
4 nodes n1..n4 with 4 CPUs and 4 GPUs each), its state in a temporary folder
(``MINISLURM_STATE_DIR``). Every command runs as a separate program, as in a
terminal, with minislurm's ``bin/`` first on PATH so that a batch script's
``srun`` is minislurm's. Batch scripts are real processes; what they print,
the files they write, their exit codes and their deaths (scancel, a node
going down) are compared with the captures of real Slurm 22.05.

Every command has a hard timeout; the fixture stops the daemon and kills any
process a test left behind even when a test fails.
"""

from __future__ import annotations

import contextlib
import getpass
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from minislurm.cli.srun import failure_lines, step_exit_code
from minislurm.slurmd.tasks import TaskResult

REPO = Path(__file__).resolve().parents[3]
BIN = REPO / "bin"

#: Longest any one command may take (seconds); a hung command fails its test.
TIMEOUT = 30


def _reference() -> Path:
    from captures import capture_root

    root = capture_root()
    if root is None:
        pytest.skip("slurm-reference captures not found (../shared/slurm-reference)")
    return root


def _clean_env(state: Path, conf: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SLURM_", "SBATCH_", "SRUN_", "SALLOC_", "SQUEUE_", "SACCT_"))}
    env.update(MINISLURM_STATE_DIR=str(state), SLURM_CONF=str(conf),
               PATH=f"{BIN}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}")
    return env


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its parent counts as gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return "\nState:\tZ" not in status


def _wait_until(predicate: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


@dataclass
class LocalCluster:
    """A running daemon and a way to run commands against it."""

    root: Path
    env: dict[str, str]
    pids: set[int] = field(default_factory=set)
    """Processes the tests recorded (killed at teardown if still alive)."""

    @property
    def state(self) -> Path:
        return Path(self.env["MINISLURM_STATE_DIR"])

    def run(self, *argv: str, cwd: Path, stdin: str | None = None,
            timeout: float = TIMEOUT) -> subprocess.CompletedProcess[str]:
        """Run one command line (``argv[0]`` found on PATH: minislurm's bin/)."""
        return subprocess.run(list(argv), cwd=cwd, env=self.env, text=True, input=stdin,
                              capture_output=True, timeout=timeout,
                              stdin=None if stdin is not None else subprocess.DEVNULL)

    def sh(self, script: str, *, cwd: Path,
           timeout: float = TIMEOUT) -> subprocess.CompletedProcess[str]:
        """Run a bash command line, as the captures' .cmd files were run."""
        return self.run("bash", "-c", script, cwd=cwd, timeout=timeout)

    def submit(self, *argv: str, cwd: Path) -> int:
        done = self.run("sbatch", "--parsable", *argv, cwd=cwd)
        assert done.returncode == 0, done.stderr
        return int(done.stdout.strip())

    def sacct(self, job_id: int, cwd: Path, fields: str = "JobID,JobName,State,ExitCode"
              ) -> list[list[str]]:
        done = self.run("sacct", "-j", str(job_id), "-P", "-n", "-o", fields, cwd=cwd)
        assert done.returncode == 0, done.stderr
        return [line.split("|") for line in done.stdout.splitlines()]

    def job_state(self, job_id: int, cwd: Path) -> str:
        done = self.run("scontrol", "show", "job", str(job_id), cwd=cwd)
        match = re.search(r"JobState=(\S+)", done.stdout)
        assert match, done.stdout + done.stderr
        return match.group(1)

    def wait_pid_file(self, path: Path) -> int:
        assert _wait_until(lambda: bool(path.is_file() and path.read_text().strip()), 15), path
        pid = int(path.read_text().split()[0])
        self.pids.add(pid)
        return pid

    def is_up(self) -> bool:
        done = subprocess.run([sys.executable, "-m", "minislurm", "cluster", "status"],
                              env=self.env, capture_output=True, text=True, timeout=TIMEOUT)
        return done.returncode == 0


def _start(root: Path, conf_src: Path) -> LocalCluster:
    root.mkdir(parents=True, exist_ok=True)
    conf = root / "slurm.conf"
    shutil.copy(conf_src / "slurm.conf", conf)
    shutil.copy(conf_src / "gres.conf", root / "gres.conf")
    cluster = LocalCluster(root, _clean_env(root / "state", conf))
    done = subprocess.run([sys.executable, "-m", "minislurm", "cluster", "up"], env=cluster.env,
                          capture_output=True, text=True, timeout=60, cwd=root)
    assert done.returncode == 0, done.stdout + done.stderr
    return cluster


def _stop(cluster: LocalCluster) -> None:
    """``cluster down``; then kill the daemon (pid file) and recorded processes if left."""
    pid_file = cluster.state / "slurmctld.pid"
    daemon = int(pid_file.read_text()) if pid_file.is_file() else None
    with contextlib.suppress(subprocess.TimeoutExpired):
        subprocess.run([sys.executable, "-m", "minislurm", "cluster", "down"], env=cluster.env,
                       capture_output=True, text=True, timeout=TIMEOUT)
    if daemon is not None:
        _wait_until(lambda: not _alive(daemon), 5)
        if _alive(daemon):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(daemon, signal.SIGKILL)  # the daemon leads its own session
    for path in cluster.root.rglob("*.pid"):
        with contextlib.suppress(ValueError, OSError):
            cluster.pids.add(int(path.read_text().split()[0]))
    for pid in cluster.pids:
        if _alive(pid):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def reference() -> Path:
    return _reference()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory, reference: Path) -> Iterator[LocalCluster]:
    running = _start(tmp_path_factory.mktemp("local"), reference)
    try:
        yield running
    finally:
        _stop(running)


@pytest.fixture
def work(cluster: LocalCluster, tmp_path: Path) -> Path:
    """A fresh submit folder for one test (under the module's root, so teardown sees it)."""
    path = cluster.root / "work" / tmp_path.name
    path.mkdir(parents=True)
    return path


def _env_file(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)


# ---- sbatch -------------------------------------------------------------------------------

def test_sbatch_wait_exits_with_the_jobs_exit_code(cluster: LocalCluster, work: Path,
                                                   reference: Path) -> None:
    """Capture f4/09: ``sbatch --wait --wrap 'exit 7'`` -> rc 7."""
    assert "sbatch_rc=7" in (reference / "f4_output_patterns/09_exit_code_wait.out").read_text()
    done = cluster.run("sbatch", "--wait", "--wrap", "exit 7", cwd=work)
    assert done.returncode == 7
    assert re.fullmatch(r"Submitted batch job \d+\n", done.stdout)


def test_sbatch_parsable_prints_only_the_job_id(cluster: LocalCluster, work: Path) -> None:
    done = cluster.run("sbatch", "--parsable", "--wait", "--wrap", "true", cwd=work)
    assert done.returncode == 0
    assert re.fullmatch(r"\d+\n", done.stdout)
    job = int(done.stdout)
    assert (work / f"slurm-{job}.out").is_file()            # default output in the submit dir
    assert cluster.job_state(job, work) == "COMPLETED"


def test_output_patterns_like_capture_f4(cluster: LocalCluster, work: Path) -> None:
    """Capture f4/01: ``-J pat -o 'o-%j-%x-%u-%N-%n-%t-%s-%%.out' -e 'e-%j.err'``.

    %N is the short host name of the node, as real Slurm prints it (``vm`` on the
    single-host reference cluster; every minislurm node is this host)."""
    done = cluster.run("sbatch", "--wait", "-J", "pat", "-o", "o-%j-%x-%u-%N-%n-%t-%s-%%.out",
                       "-e", "e-%j.err", "--wrap", "echo out; echo err >&2", cwd=work)
    assert done.returncode == 0, done.stderr
    job = int(done.stdout.split()[-1])
    host = socket.gethostname().split(".")[0]
    out = work / f"o-{job}-pat-{getpass.getuser()}-{host}-0-0-batch-%.out"
    assert out.read_text() == "out\n"
    assert (work / f"e-{job}.err").read_text() == "err\n"


def test_output_and_error_share_one_file_by_default(cluster: LocalCluster, work: Path) -> None:
    """Capture f4/07: with only ``-o``, stderr goes to the same file."""
    done = cluster.run("sbatch", "--wait", "-o", "both-%j.txt", "--wrap",
                       "echo out; sleep 0.1; echo err >&2", cwd=work)
    job = int(done.stdout.split()[-1])
    assert (work / f"both-{job}.txt").read_text() == "out\nerr\n"


def test_a_script_need_not_be_executable(cluster: LocalCluster, work: Path) -> None:
    """sbatch sends the script's text; slurmd spools and runs it (its mode does not matter)."""
    script = work / "noexec.sh"
    script.write_text("#!/bin/bash\necho ran with $SLURM_JOB_NAME\n")
    script.chmod(0o644)
    done = cluster.run("sbatch", "--wait", "-o", "noexec.out", "noexec.sh", cwd=work)
    assert done.returncode == 0, done.stderr
    assert (work / "noexec.out").read_text() == "ran with noexec.sh\n"


# ---- a batch job and its steps (captures a2, a1) ------------------------------------------

A2_SCRIPT = """#!/bin/bash
#SBATCH -N 2 --ntasks-per-node=2 --gres=gpu:2
#SBATCH -o slurm-%j.out
env | grep -E '^(SLURM_|CUDA_VISIBLE|GPU)' | sort > batch.env
srun -l bash -c 'echo $SLURM_PROCID $SLURM_LOCALID $SLURM_NODEID $CUDA_VISIBLE_DEVICES \
$SLURMD_NODENAME'
"""


def _expected_tasks(folder: Path, pattern: str) -> list[str]:
    """``-l`` lines ``T: PROCID LOCALID NODEID CUDA_VISIBLE_DEVICES NODE`` from env captures."""
    lines = []
    for path in sorted(folder.glob(pattern)):
        env = _env_file(path)
        lines.append(f"{env['SLURM_PROCID']}: {env['SLURM_PROCID']} {env['SLURM_LOCALID']} "
                     f"{env['SLURM_NODEID']} {env['CUDA_VISIBLE_DEVICES']} "
                     f"{env['SLURM_TOPOLOGY_ADDR']}")
    return lines


@pytest.fixture(scope="module")
def a2_job(cluster: LocalCluster, tmp_path_factory: pytest.TempPathFactory) -> tuple[int, Path]:
    """The a2 job (2 nodes x 2 tasks, 2 GPUs per node) run once for the tests below."""
    work = cluster.root / "work" / "a2"
    work.mkdir(parents=True)
    (work / "job.sh").write_text(A2_SCRIPT)
    done = cluster.run("sbatch", "--wait", "job.sh", cwd=work)
    assert done.returncode == 0, done.stdout + done.stderr
    return int(done.stdout.split()[-1]), work


def test_srun_in_a_batch_script_gives_each_task_its_identity(
    a2_job: tuple[int, Path], reference: Path,
) -> None:
    """Capture a2: PROCID 0,1 on n1 and 2,3 on n2 (block), LOCALID 0/1, NODEID 0/1,
    CUDA_VISIBLE_DEVICES=0,1 in every task."""
    job, work = a2_job
    expected = _expected_tasks(reference / "a2_sbatch_env", "step.*.env")
    assert expected[0] == "0: 0 0 0 0,1 n1"
    lines = sorted((work / f"slurm-{job}.out").read_text().splitlines())
    assert lines == expected


def test_the_batch_script_itself_is_task_0_on_the_first_node(
    a2_job: tuple[int, Path], reference: Path,
) -> None:
    job, work = a2_job
    ours, real = _env_file(work / "batch.env"), _env_file(reference / "a2_sbatch_env/batch.env")
    for key in ("SLURM_PROCID", "SLURM_LOCALID", "SLURM_NODEID", "CUDA_VISIBLE_DEVICES",
                "SLURM_JOB_GPUS", "SLURM_GPUS_ON_NODE", "SLURM_JOB_NODELIST", "SLURM_NTASKS",
                "SLURM_TASKS_PER_NODE", "SLURM_JOB_CPUS_PER_NODE", "SLURM_JOB_NAME"):
        assert ours.get(key) == real[key], key
    assert ours["SLURM_JOB_ID"] == str(job)
    assert "SLURM_STEP_ID" not in ours


def test_sacct_shows_the_batch_step_and_the_srun_step(cluster: LocalCluster,
                                                      a2_job: tuple[int, Path]) -> None:
    job, work = a2_job
    rows = cluster.sacct(job, work)
    assert sorted(rows) == sorted([[str(job), "job.sh", "COMPLETED", "0:0"],
                                   [f"{job}.batch", "batch", "COMPLETED", "0:0"],
                                   [f"{job}.0", "bash", "COMPLETED", "0:0"]])


def test_sacct_lists_the_batch_step_before_numbered_steps(cluster: LocalCluster,
                                                          a2_job: tuple[int, Path]) -> None:
    job, work = a2_job
    assert [r[0] for r in cluster.sacct(job, work)] == [str(job), f"{job}.batch", f"{job}.0"]


def test_srun_outside_an_allocation_creates_its_own_job(cluster: LocalCluster, work: Path,
                                                        reference: Path) -> None:
    """Capture a1/02: ``srun -l -N2 --ntasks-per-node=2 --gres=gpu:2 ...``; the job is named
    after the command (SLURM_JOB_NAME=bash)."""
    done = cluster.run(
        "srun", "-l", "-N2", "--ntasks-per-node=2", "--gres=gpu:2", "bash", "-c",
        "echo $SLURM_PROCID $SLURM_LOCALID $SLURM_NODEID $CUDA_VISIBLE_DEVICES $SLURMD_NODENAME",
        cwd=work)
    assert (done.returncode, done.stderr) == (0, "")
    assert sorted(done.stdout.splitlines()) == _expected_tasks(reference / "a1_srun_env",
                                                               "task*.env")
    named = cluster.run("srun", "bash", "-c", "echo $SLURM_JOB_NAME $SLURM_STEP_ID", cwd=work)
    assert named.stdout == "bash 0\n"


def test_srun_reports_a_failed_task_like_capture_b50(cluster: LocalCluster, work: Path,
                                                     reference: Path) -> None:
    """``srun -N1 bash -c 'exit 3'`` -> rc 3 and
    ``srun: error: n1: task 0: Exited with exit code 3``."""
    real = reference / "b_sbatch_errors"
    cmd = (real / "50_srun_exit_code.cmd").read_text().strip()
    done = cluster.sh(cmd, cwd=work)
    assert done.returncode == int((real / "50_srun_exit_code.rc").read_text())
    assert done.stderr == (real / "50_srun_exit_code.err").read_text()
    assert done.stdout == ""


def test_srun_reports_a_task_killed_by_a_signal(cluster: LocalCluster, work: Path) -> None:
    done = cluster.run("srun", "-n2", "bash", "-c",
                       "ulimit -c 0; [ $SLURM_PROCID = 1 ] && kill -SEGV $$; true", cwd=work)
    assert done.returncode == 128 + signal.SIGSEGV
    assert done.stderr.splitlines() == ["srun: error: n1: task 1: Segmentation fault"]
    assert cluster.is_up()


def test_salloc_runs_a_command_in_the_allocation(cluster: LocalCluster, work: Path) -> None:
    done = cluster.run("salloc", "-N2", "bash", "-c",
                       "echo $SLURM_JOB_NODELIST; srun -l bash -c 'echo $SLURM_STEP_ID "
                       "$SLURMD_NODENAME' | sort; exit 4", cwd=work)
    assert done.returncode == 4
    assert done.stdout.splitlines() == ["n[1-2]", "0: 0 n1", "1: 0 n2"]
    job = re.search(r"Granted job allocation (\d+)", done.stderr)
    assert job, done.stderr
    assert done.stderr.splitlines() == [f"salloc: Granted job allocation {job.group(1)}",
                                        f"salloc: Relinquishing job allocation {job.group(1)}"]
    assert cluster.job_state(int(job.group(1)), work) == "FAILED"


def _task(task_id: int, node: str, exit_code: int = 0, sig: int = 0) -> TaskResult:
    return TaskResult(task_id=task_id, node=node, pid=None, exit_code=exit_code, signal=sig)


def test_failure_lines_group_tasks_per_node_and_cause() -> None:
    """srun's ``_task_finish``: ``<node>: task(s) <ids>: Exited with exit code N`` or the
    signal's strsignal() text; tasks that exit 0 say nothing."""
    results = [_task(0, "n1", 3), _task(1, "n1", 3), _task(2, "n2"), _task(3, "n2", 0, 11)]
    assert failure_lines(results) == [
        "srun: error: n1: tasks 0-1: Exited with exit code 3",
        "srun: error: n2: task 3: Segmentation fault",
    ]
    assert failure_lines([_task(0, "n1"), _task(1, "n1")]) == []


def test_step_exit_code_is_the_largest_exit_code() -> None:
    assert step_exit_code([_task(0, "n1", 3), _task(1, "n1", 7), _task(2, "n2")]) == 7
    assert step_exit_code([_task(0, "n1"), _task(1, "n2")]) == 0
    assert step_exit_code([_task(0, "n1", 0, 9)]) == 128 + 9


def test_a_signalled_task_outranks_exit_codes() -> None:
    assert step_exit_code([_task(0, "n1", 3), _task(1, "n1", 0, 11)]) == 128 + 11


def test_srun_with_a_stale_slurm_job_id(cluster: LocalCluster, work: Path) -> None:
    env = {**cluster.env, "SLURM_JOB_ID": "9999"}
    done = subprocess.run(["srun", "true"], env=env, cwd=work, capture_output=True, text=True,
                          timeout=TIMEOUT, stdin=subprocess.DEVNULL)
    assert (done.returncode, done.stderr) == (
        1, "srun: error: Unable to confirm allocation for job 9999: Invalid job id specified\n"
           "srun: Check SLURM_JOB_ID environment variable. Expired or invalid job 9999\n")


def test_salloc_with_a_missing_command(cluster: LocalCluster, work: Path) -> None:
    done = cluster.run("salloc", "nosuchcmd", cwd=work)
    assert done.returncode == 1
    assert done.stderr.splitlines()[1] == 'salloc: error: Unable to exec command "nosuchcmd"'


def _pending_srun(cluster: LocalCluster, work: Path) -> tuple[int, str, int | None]:
    """Start ``srun -N5 true`` (5 nodes in a 4-node partition: pends forever), interrupt it
    like Ctrl-C after 2 s; return its exit code, stderr and the job id it announced."""
    proc = subprocess.Popen(["srun", "-N5", "true"], env=cluster.env, cwd=work, text=True,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    cluster.pids.add(proc.pid)
    try:
        time.sleep(2)
        proc.send_signal(signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    match = re.search(r"job (\d+) queued", err)
    job = int(match.group(1)) if match else None
    return proc.returncode, err, job


def test_interrupting_a_pending_srun_cancels_its_job(cluster: LocalCluster, work: Path) -> None:
    rc, err, job = _pending_srun(cluster, work)
    try:
        assert job is not None, err
        assert "Traceback" not in err
        assert rc != 0
        assert _wait_until(lambda: cluster.job_state(job, work) != "PENDING", 5)
    finally:
        if job is not None:
            cluster.run("scancel", str(job), cwd=work)


def test_srun_says_why_its_job_cannot_start(cluster: LocalCluster, work: Path) -> None:
    _, err, job = _pending_srun(cluster, work)
    if job is not None:
        cluster.run("scancel", str(job), cwd=work)
    assert err.splitlines()[:2] == ["srun: Requested partition configuration not available now",
                                    f"srun: job {job} queued and waiting for resources"]


# ---- killing running jobs -----------------------------------------------------------------

SLEEPER = """#!/bin/bash
echo $$ > script.pid
sleep 300 &
echo $! > sleep.pid
wait
"""


def test_scancel_kills_a_running_batch_jobs_processes(cluster: LocalCluster,
                                                      work: Path) -> None:
    (work / "sleeper.sh").write_text(SLEEPER)
    job = cluster.submit("sleeper.sh", cwd=work)
    script, sleeper = (cluster.wait_pid_file(work / n) for n in ("script.pid", "sleep.pid"))
    assert _alive(script) and _alive(sleeper)
    assert cluster.job_state(job, work) == "RUNNING"
    done = cluster.run("scancel", str(job), cwd=work)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert _wait_until(lambda: not _alive(script) and not _alive(sleeper), 10)
    assert _wait_until(lambda: cluster.job_state(job, work) == "CANCELLED", 10)
    assert cluster.sacct(job, work)[1] == [f"{job}.batch", "batch", "CANCELLED", "0:15"]


def test_sacct_of_a_cancelled_job_matches_the_capture(cluster: LocalCluster, work: Path) -> None:
    (work / "sleeper.sh").write_text(SLEEPER)
    job = cluster.submit("sleeper.sh", cwd=work)
    cluster.wait_pid_file(work / "sleep.pid")
    cluster.run("scancel", str(job), cwd=work)
    assert _wait_until(lambda: cluster.job_state(job, work) == "CANCELLED", 10)
    rows = cluster.sacct(job, work, "JobID,State,ExitCode")
    assert rows == [[str(job), f"CANCELLED by {os.getuid()}", "0:0"],
                    [f"{job}.batch", "CANCELLED", "0:15"]]


def test_a_node_going_down_kills_the_jobs_processes(cluster: LocalCluster, work: Path) -> None:
    (work / "sleeper.sh").write_text(SLEEPER)
    job = cluster.submit("-w", "n4", "--no-requeue", "sleeper.sh", cwd=work)
    script, sleeper = (cluster.wait_pid_file(work / n) for n in ("script.pid", "sleep.pid"))
    try:
        done = cluster.run("scontrol", "update", "nodename=n4", "state=down", "reason=x",
                           cwd=work)
        assert (done.returncode, done.stderr) == (0, "")
        assert _wait_until(lambda: not _alive(script) and not _alive(sleeper), 10)
        assert _wait_until(lambda: cluster.job_state(job, work) == "NODE_FAIL", 10)
        sinfo = cluster.run("sinfo", "-h", "-n", "n4", "-o", "%T %E", cwd=work)
        assert sinfo.stdout.split("\n")[0] == "down x"
    finally:
        cluster.run("scontrol", "update", "nodename=n4", "state=resume", cwd=work)
    assert cluster.is_up()


# ---- jobs that fail; the daemon stays up --------------------------------------------------

def test_a_batch_script_killed_by_a_signal_fails_the_job(cluster: LocalCluster,
                                                         work: Path) -> None:
    (work / "crash.sh").write_text("#!/bin/bash\nulimit -c 0\nkill -SEGV $$\n")
    done = cluster.run("sbatch", "--wait", "crash.sh", cwd=work)
    job = int(done.stdout.split()[-1])
    assert cluster.sacct(job, work) == [[str(job), "crash.sh", "FAILED", "0:11"],
                                        [f"{job}.batch", "batch", "FAILED", "0:11"]]
    assert cluster.is_up()


def test_sbatch_wait_of_a_signalled_job_exits_1(cluster: LocalCluster, work: Path) -> None:
    (work / "crash.sh").write_text("#!/bin/bash\nulimit -c 0\nkill -SEGV $$\n")
    assert cluster.run("sbatch", "--wait", "crash.sh", cwd=work).returncode == 1


def test_a_missing_interpreter_fails_the_job_with_slurmstepds_message(
    cluster: LocalCluster, work: Path,
) -> None:
    """slurmstepd's exec_task: ``execve(): bad interpreter(...)``, exit status errno (ENOENT 2)."""
    (work / "nointerp.sh").write_text("#!/nonexistent/interp\necho hi\n")
    done = cluster.run("sbatch", "--wait", "-o", "nointerp-%j.out", "nointerp.sh", cwd=work)
    assert done.returncode == 2
    job = int(done.stdout.split()[-1])
    text = (work / f"nointerp-{job}.out").read_text()
    assert "error: execve(): bad interpreter(/nonexistent/interp): No such file or directory" \
        in text
    assert cluster.sacct(job, work)[0] == [str(job), "nointerp.sh", "FAILED", "2:0"]
    assert cluster.is_up()


def test_a_step_whose_script_is_not_executable_fails_the_job(cluster: LocalCluster,
                                                              work: Path) -> None:
    """``srun ./noexec.sh`` (mode 644) as the batch script's last command: slurmstepd's
    ``execve(): ...: Permission denied`` and srun's task line in the job's error file,
    the step, the batch step and the job FAILED 13:0 (EACCES) in sacct."""
    (work / "noexec.sh").write_text("#!/bin/sh\necho hi\n")
    (work / "noexec.sh").chmod(0o644)
    (work / "job.sh").write_text("#!/bin/bash\nsrun ./noexec.sh\n")
    done = cluster.run("sbatch", "--wait", "-o", "job-%j.out", "-e", "job-%j.err", "job.sh",
                       cwd=work)
    assert done.returncode == 13, done.stderr
    job = int(done.stdout.split()[-1])
    err = (work / f"job-{job}.err").read_text().splitlines()
    assert err == [f"slurmstepd-n1: error: execve(): {work}/./noexec.sh: Permission denied",
                   "srun: error: n1: task 0: Exited with exit code 13"]
    assert [r[2:] for r in cluster.sacct(job, work)] == [["FAILED", "13:0"]] * 3
    assert cluster.is_up()


def test_an_output_path_that_cannot_be_written_fails_the_job(cluster: LocalCluster,
                                                             work: Path) -> None:
    """Capture f4/05: ``-o nosuchdir/out-%j.out`` -> the launch fails, sbatch --wait rc 1, no
    file, sacct ``FAILED 0:53`` as on 22.05
    (tests/minislurm/options/test_sbatch_differential.py)."""
    done = cluster.run("sbatch", "--wait", "-o", "nosuchdir/out-%j.out", "--wrap", "echo x",
                       cwd=work)
    assert done.returncode == 1
    job = int(done.stdout.split()[-1])
    assert not (work / "nosuchdir").exists()
    assert cluster.sacct(job, work)[0] == [str(job), "wrap", "FAILED", "0:53"]
    assert cluster.is_up()


# ---- errors of the commands themselves ----------------------------------------------------

@pytest.mark.parametrize("case", ["23_unknown_option_short", "24b_option_missing_argument2",
                                  "48_srun_unknown_option"])
def test_option_errors_keep_glibcs_text_and_rc_255_with_a_daemon(
    cluster: LocalCluster, work: Path, reference: Path, case: str,
) -> None:
    real = reference / "b_sbatch_errors"
    (work / "ok.sh").write_text("#!/bin/bash\ntrue\n")
    done = cluster.sh((real / f"{case}.cmd").read_text().strip(), cwd=work)
    assert (done.returncode, done.stdout, done.stderr) == (
        int((real / f"{case}.rc").read_text()), "", (real / f"{case}.err").read_text())


@pytest.mark.parametrize(("argv", "first_line"), [
    (("sbatch", "--wrap", "true"),
     "sbatch: error: Batch job submission failed: Unable to contact slurm controller "
     "(connect failure)"),
    (("srun", "true"),
     "srun: error: Unable to allocate resources: Unable to contact slurm controller "
     "(connect failure)"),
    (("salloc", "true"),
     "salloc: error: Job submit/allocate failed: Unable to contact slurm controller "
     "(connect failure)"),
    (("scancel", "5"),
     "scancel: error: Kill job error on job id 5: Unable to contact slurm controller "
     "(connect failure)"),
    (("squeue",), "slurm_load_jobs error: Unable to contact slurm controller (connect failure)"),
    (("sinfo",), "slurm_load_partitions: Unable to contact slurm controller (connect failure)"),
])
def test_without_a_daemon_commands_print_slurms_unavailable_error(
    tmp_path: Path, reference: Path, argv: tuple[str, ...], first_line: str,
) -> None:
    env = _clean_env(tmp_path / "no-state", reference / "slurm.conf")
    done = subprocess.run(list(argv), env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=TIMEOUT, stdin=subprocess.DEVNULL)
    assert (done.returncode, done.stdout) == (1, "")
    lines = done.stderr.splitlines()
    assert lines[0] == first_line
    assert lines[1:] == ["(minislurm: no controller is running; start one with "
                         "'python -m minislurm cluster up')"]


def test_without_a_daemon_option_errors_are_still_rc_255(tmp_path: Path,
                                                         reference: Path) -> None:
    env = _clean_env(tmp_path / "no-state", reference / "slurm.conf")
    done = subprocess.run(["sbatch", "--foo"], env=env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL)
    assert (done.returncode, done.stderr) == (
        255, "sbatch: unrecognized option '--foo'\nTry \"sbatch --help\" for more information\n")


# ---- the daemon's life cycle --------------------------------------------------------------

def test_cluster_up_status_down(tmp_path: Path, reference: Path) -> None:
    """A second, short-lived cluster: up twice, status, down, status; nothing left running."""
    second = _start(tmp_path / "second", reference)
    try:
        py = [sys.executable, "-m", "minislurm", "cluster"]

        def cluster_cmd(verb: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run([*py, verb], env=second.env, capture_output=True, text=True,
                                  timeout=TIMEOUT)

        pid = int((second.state / "slurmctld.pid").read_text())
        status = cluster_cmd("status")
        assert status.returncode == 0
        assert status.stdout == (f"minislurm: cluster mini is up (slurmctld pid {pid}, "
                                 f"state in {second.state})\n")
        again = cluster_cmd("up")
        assert (again.returncode, again.stdout) == (
            0, f"minislurm: cluster mini is already up (slurmctld pid {pid})\n")
        down = cluster_cmd("down")
        assert (down.returncode, down.stdout) == (0, "minislurm: cluster is down\n")
        assert _wait_until(lambda: not _alive(pid), 10)
        assert not (second.state / "slurmctld.sock").exists()
        assert not (second.state / "slurmctld.pid").exists()
        after = cluster_cmd("status")
        assert (after.returncode, after.stdout) == (
            1, f"minislurm: no cluster is running (state directory {second.state})\n")
        assert cluster_cmd("down").stdout == "minislurm: no cluster is running\n"
    finally:
        _stop(second)


def test_cluster_down_stops_running_jobs(tmp_path: Path, reference: Path) -> None:
    second = _start(tmp_path / "third", reference)
    try:
        work = second.root / "work"
        work.mkdir()
        (work / "sleeper.sh").write_text(SLEEPER)
        second.submit("sleeper.sh", cwd=work)
        sleeper = second.wait_pid_file(work / "sleep.pid")
        subprocess.run([sys.executable, "-m", "minislurm", "cluster", "down"], env=second.env,
                       capture_output=True, text=True, timeout=TIMEOUT)
        assert _wait_until(lambda: not _alive(sleeper), 10)
    finally:
        _stop(second)


def test_slurmctld_d_runs_the_controller_in_the_foreground(tmp_path: Path,
                                                           reference: Path) -> None:
    """``python -m minislurm slurmctld -D`` (as ``slurmctld -D``): it serves in the
    foreground, logs to its standard output, and SIGTERM saves the state and ends it
    (exit 0, socket gone); the job submitted meanwhile is there at the next start.
    Without ``-D`` it says how to start it in the background."""
    root = tmp_path / "fg"
    root.mkdir()
    shutil.copy(reference / "slurm.conf", root / "slurm.conf")
    shutil.copy(reference / "gres.conf", root / "gres.conf")
    env = _clean_env(root / "state", root / "slurm.conf")
    bare = subprocess.run([sys.executable, "-m", "minislurm", "slurmctld"], env=env,
                          capture_output=True, text=True, timeout=TIMEOUT)
    assert bare.returncode == 1 and "cluster up" in bare.stderr
    proc = subprocess.Popen([sys.executable, "-m", "minislurm", "slurmctld", "-D"], env=env,
                            cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, stdin=subprocess.DEVNULL)
    try:
        sock = root / "state" / "slurmctld.sock"
        assert _wait_until(sock.exists, 30), "slurmctld -D did not open its socket"
        held = subprocess.run(["sbatch", "--parsable", "-H", "--wrap", "true"], env=env,
                              cwd=root, capture_output=True, text=True, timeout=TIMEOUT)
        assert held.returncode == 0, held.stderr
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    assert proc.returncode == 0, out
    assert "slurmctld running" in out and "Saving all slurm state" in out
    assert not sock.exists()
    again = _start(root, reference)
    try:
        job = again.run("squeue", "-h", "-o", "%i %T %r", cwd=root)
        assert job.stdout == f"{held.stdout.strip()} PENDING JobHeldUser\n", job
    finally:
        _stop(again)


def test_cluster_usage_errors(tmp_path: Path) -> None:
    for argv in ([], ["sideways"], ["up", "--conf"]):
        done = subprocess.run([sys.executable, "-m", "minislurm", "cluster", *argv],
                              env={**os.environ, "MINISLURM_STATE_DIR": str(tmp_path)},
                              capture_output=True, text=True, timeout=TIMEOUT)
        assert (done.returncode, done.stderr) == (
            1, "usage: python -m minislurm cluster up|status|down [--conf slurm.conf]\n")


def test_cluster_down_waits_for_a_busy_daemon_instead_of_calling_it_gone(
        tmp_path: Path, reference: Path) -> None:
    """A daemon too busy to answer a ping within seconds (a loaded machine) is still
    running: ``cluster down`` waits for it and stops it. It used to say "no cluster is
    running" after 5 s and leave the daemon and its socket behind (seen in CI)."""
    own = _start(tmp_path / "busy", reference)
    pid = int((own.state / "slurmctld.pid").read_text().split()[0])
    try:
        os.kill(pid, signal.SIGSTOP)  # as busy as can be: it answers nothing
        down = subprocess.Popen([sys.executable, "-m", "minislurm", "cluster", "down"],
                                env=own.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        with contextlib.suppress(subprocess.TimeoutExpired):
            down.wait(timeout=8)  # longer than the old 5 s ping
        still_waiting = down.poll() is None
        os.kill(pid, signal.SIGCONT)
        out, err = down.communicate(timeout=120)
        assert still_waiting, out + err
        assert down.returncode == 0 and "cluster is down" in out, out + err
        assert not (own.state / "slurmctld.sock").exists()
        assert _wait_until(lambda: not _alive(pid), 10)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)
        _stop(own)
