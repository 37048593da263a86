"""Differential tests of task launch: real Slurm 22.05 vs minislurm.slurmd.launch.

Each case runs a command on the real cluster (tests/realslurm) and the same
tasks through `launch_step` in a twin folder, then compares what the user
sees: the task's exit code (srun's exit status), the files written and the
lines slurmstepd / srun print.  Only the folder name and, for the cancel
message, the time stamp are mapped; srun's own lines (``srun: error: n1: task
0: Exited with exit code 2``) come from the srun client, not from slurmstepd,
and are left out of the comparison.
"""

from __future__ import annotations

import re
import signal
from pathlib import Path

import pytest
from polling import poll
from realslurm import RealSlurm
from realslurm.launch import two_children_streams

from minislurm.slurmd.launch import StepIdentity, TaskResult, TaskSpec, launch_step
from minislurm.slurmd.stdio import StdioSpec
from minislurm.states import LAUNCH_FAILED_STATUS

pytestmark = pytest.mark.realslurm
TIMEOUT = 30.0
ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}


def _folders(real_slurm: RealSlurm, name: str) -> tuple[Path, Path]:
    real = real_slurm.work_dir / f"{name}-real"
    ours = real_slurm.work_dir / f"{name}-ours"
    for folder in (real, ours):
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.iterdir():
            old.unlink()
    return real, ours


def _stepd_lines(text: str, real: Path, ours: Path) -> list[str]:
    """slurmstepd's lines of a stream, with our folder written as the real one."""
    return sorted(
        line.replace(str(ours), str(real))
        for line in text.splitlines()
        if line.startswith("slurmstepd")
    )


def _ours(
    folder: Path,
    argv: tuple[str, ...],
    ntasks: int = 1,
    stdio: StdioSpec | None = None,
    step_id: int | str = 0,
    cwd: str | None = None,
) -> tuple[tuple[TaskResult, ...], str, str]:
    """Run ``argv`` as ``ntasks`` tasks on n1; returns results, stdout and stderr texts."""
    out, err = folder / ".stdout", folder / ".stderr"
    out_fd = out.open("wb")
    err_fd = err.open("wb")
    try:
        tasks = [TaskSpec(t, "n1", 0, argv, ENV, cwd or str(folder)) for t in range(ntasks)]
        step = launch_step(
            StepIdentity(7, step_id, "job", "root"),
            tasks,
            stdio or StdioSpec(),
            stdout_fd=out_fd.fileno(),
            stderr_fd=err_fd.fileno(),
        )
        results = step.wait(TIMEOUT)
    finally:
        out_fd.close()
        err_fd.close()
    texts = out.read_text(), err.read_text()
    out.unlink()
    err.unlink()
    return results, *texts


def _script(folder: Path, name: str, text: str, mode: int) -> None:
    path = folder / name
    path.write_text(text)
    path.chmod(mode)


@pytest.mark.parametrize(
    "command, setup, code",
    [
        ("nosuch", None, 2),
        ("./noexec.sh", ("noexec.sh", "#!/bin/sh\necho hi\n", 0o644), 13),
        ("./bad.py", ("bad.py", "#!/nonexistent/python3 -u\nprint(1)\n", 0o755), 2),
    ],
)
def test_execve_failures(
    real_slurm: RealSlurm, command: str, setup: tuple[str, str, int] | None, code: int
) -> None:
    real, ours = _folders(real_slurm, "execve")
    if setup is not None:
        for folder in (real, ours):
            _script(folder, *setup)
    res = real_slurm.run(f"srun -n1 -w n1 {command}", cwd=real)
    assert res.rc == code
    (result,), _, err = _ours(ours, (command,))
    assert result.exit_code == code
    assert _stepd_lines(err, real, ours) == _stepd_lines(res.stderr, real, ours)
    assert len(_stepd_lines(err, real, ours)) == 1


def test_label_lines(real_slurm: RealSlurm) -> None:
    """``srun -l``: ``N: `` on every line, a newline after a last partial line."""
    real, ours = _folders(real_slurm, "label")
    argv = ("bash", "-c", "echo a; printf b")
    res = real_slurm.run(f"srun -l -n3 -w n1 {argv[0]} -c '{argv[2]}'", cwd=real)
    assert res.rc == 0
    _, out, _ = _ours(ours, argv, ntasks=3, stdio=StdioSpec(label=True))
    assert sorted(out.splitlines()) == sorted(res.stdout.splitlines())
    assert out.endswith("\n") and res.stdout.endswith("\n")


def test_missing_working_directory(real_slurm: RealSlurm) -> None:
    """slurmstepd says it goes to /tmp, then each task says it again before exec.

    Real Slurm may cut the tasks' two messages and interleave the pieces
    (``two_children_streams``: the children inherit slurmstepd's log ring; seen once
    in CI as ``slurmstepd-n1: error: coslurmstepd-n1: error: couldn't chdir ...``).
    minislurm prints three whole lines, the outcome where no cut interleaves."""
    real, ours = _folders(real_slurm, "chdir")
    res = real_slurm.run("srun -n2 -N1 -w n1 -D /nonexistent pwd", cwd=real)
    _, out, err = _ours(ours, ("pwd",), ntasks=2, cwd="/nonexistent")
    assert out == res.stdout == "/tmp\n/tmp\n"
    ours_lines = _stepd_lines(err, real, ours)
    assert len(ours_lines) == 3 and len(set(ours_lines)) == 1, ours_lines
    line = ours_lines[0] + "\n"
    outcomes = {tuple(sorted(s.splitlines())) for s in two_children_streams(line, line)}
    real_lines = tuple(sorted(x for x in res.stderr.splitlines() if not x.startswith("srun: ")))
    assert real_lines in outcomes, res.stderr


@pytest.mark.parametrize(
    "options, stdio, files",
    [
        ("-o nosuchdir/x.out", StdioSpec(output="nosuchdir/x.out"), []),
        (
            "-o p%t.out -e nodir/e%t.err",
            StdioSpec(output="p%t.out", error="nodir/e%t.err"),
            ["p0.out"],
        ),
    ],
)
def test_unopenable_output_of_an_srun_step(
    real_slurm: RealSlurm, options: str, stdio: StdioSpec, files: list[str]
) -> None:
    real, ours = _folders(real_slurm, "srun-io")
    res = real_slurm.run(f"srun -n1 -w n1 {options} echo hi", cwd=real)
    results, _, err = _ours(ours, ("echo", "hi"), stdio=stdio)
    assert results[0].pid is None
    assert err.splitlines() == res.stderr.splitlines()
    assert sorted(p.name for p in real.iterdir()) == files
    assert sorted(p.name for p in ours.iterdir()) == files


def test_batch_script_with_a_missing_interpreter(real_slurm: RealSlurm) -> None:
    """The batch step: the message lands in the job's output file, exit code 2."""
    real, ours = _folders(real_slurm, "batch-interp")
    text = "#!/nonexistent/python3\nprint(1)\n"
    _script(real, "job.py", text, 0o644)
    res = real_slurm.run("sbatch --parsable --wait -o bj.out job.py", cwd=real)
    assert res.rc == 2
    _script(ours, "job.py", text, 0o700)  # slurmd spools the script with mode 0700
    (result,), _, _ = _ours(
        ours, (str(ours / "job.py"),), stdio=StdioSpec(output="bj.out"), step_id="batch"
    )
    assert result.exit_code == 2
    assert (ours / "bj.out").read_text() == (real / "bj.out").read_text()


def test_batch_output_in_a_missing_directory(real_slurm: RealSlurm) -> None:
    """Capture f4 05 plus ``-e``: the launch fails (sbatch --wait rc 1; status 53, sacct
    ``FAILED 0:53``) and neither file appears."""
    real, ours = _folders(real_slurm, "batch-io")
    res = real_slurm.run("sbatch --wait -o nodir/y.out -e e.err --wrap 'echo x'", cwd=real)
    assert res.rc == 1
    (result,), _, _ = _ours(
        ours, ("echo", "x"), stdio=StdioSpec(output="nodir/y.out", error="e.err"), step_id="batch"
    )
    assert (result.exit_code, result.signal, result.pid) == (0, LAUNCH_FAILED_STATUS, None)
    assert sorted(p.name for p in real.iterdir()) == sorted(p.name for p in ours.iterdir()) == []


def test_cancel_message(real_slurm: RealSlurm) -> None:
    """scancel of a running batch job: one slurmstepd line in the job's output.

    The real job ``exec``s sleep, as ours runs it: with a shell between, the shell may
    reap its SIGTERMed child before its own SIGTERM arrives and add ``Terminated`` (a race
    in Slurm itself, seen in CI)."""
    real, ours = _folders(real_slurm, "cancel")
    res = real_slurm.run("sbatch --parsable -w n1 -o c.out --wrap 'exec sleep 30'", cwd=real)
    job_id = res.stdout.strip()
    # RUNNING is not enough: slurmctld queues the batch launch, and a terminate request
    # reaching slurmd first revokes the job's credential, so slurmd never starts its
    # slurmstepd (req.c _rpc_batch_job: "Job N already killed, do not launch batch
    # job") and there is no c.out. slurmstepd opens c.out before it runs the script;
    # once it exists, the job's end reaches a slurmstepd that prints the line.
    poll(lambda: (real / "c.out").exists(), bool, what="slurmstepd opened c.out",
         tries=int(TIMEOUT / 0.2), every=0.2)
    real_slurm.run(["scancel", job_id])
    real_slurm.wait_job(job_id)
    step = launch_step(
        StepIdentity(int(job_id), "batch", "wrap", "root"),
        [TaskSpec(0, "n1", 0, ("sleep", "30"), ENV, str(ours))],
        StdioSpec(output="c.out"),
    )
    step.terminate()
    (result,) = step.wait(TIMEOUT)
    assert result.signal == signal.SIGTERM
    stamp = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")
    real_text = poll(lambda: (real / "c.out").read_text(), bool,
                     what="slurmstepd's line in c.out", tries=int(TIMEOUT / 0.2), every=0.2)
    assert stamp.sub("<time>", (ours / "c.out").read_text()) == stamp.sub("<time>", real_text)
