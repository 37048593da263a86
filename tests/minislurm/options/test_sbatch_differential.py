"""Differential tests of sbatch itself: the same command lines on real Slurm 22.05 and
on minislurm's local cluster (both on the reference slurm.conf), outputs diffed.

What is compared: stdout, stderr and the exit code of ``sbatch`` for a table of bad
inputs (client-side option errors exit 255, script checks and slurmctld's
rejections exit 1, and the violations Slurm accepts with EnforcePartLimits=NO),
``--parsable``, ``--wait``'s exit code, and the ``-o``/``-e`` files a job leaves
(names and contents). Normalised (tests/minicluster.py ``normalizer``): the
cluster folder, job ids (relative to the case's first job), pids and times,
minislurm's ``bin/`` on PATH. The scripts (ok.sh, empty.sh, ...) are those of
the b_sbatch_errors capture.
"""

from __future__ import annotations

import pytest
from minicluster import CaseRun, Cluster, MiniCluster, run_case
from realslurm import RealSlurm

pytestmark = [pytest.mark.realslurm, pytest.mark.spread]  # independent cases: any worker

SCRIPTS = {
    "ok.sh": "#!/bin/bash\necho hi\n",
    "empty.sh": "",
    "whitespace.sh": "\n   \n\t\n",
    "noshebang.sh": "echo no shebang\n",
    "noshebang2.sh": "#SBATCH -N1\necho no shebang but directive first\n",
    "dos.sh": "#!/bin/bash\r\n#SBATCH -N1\r\necho dos\r\n",
    "trapterm.sh": "#!/bin/bash\n"
    "srun bash -c 'trap \"echo step TERM >> got.txt\" TERM; touch trapped; "
    "for i in $(seq 300); do sleep 0.2; done'\n",
}

#: name -> sbatch arguments (run in a folder holding SCRIPTS).
BAD_INPUTS = {
    # client side: getopt and option values (exit 255)
    "unknown-long-option": "--foo ok.sh",
    "unknown-short-option": "-Z ok.sh",
    "missing-argument": "-N",
    "bad-time": "--time=abc ok.sh",
    "bad-mem": "--mem=abc ok.sh",
    "bad-begin": "--begin=foo ok.sh",
    "nodes-range-inverted": "-N3-2 ok.sh",
    "ntasks-zero": "-n0 ok.sh",
    # the script (exit 1)
    "empty-script": "empty.sh",
    "whitespace-script": "whitespace.sh",
    "no-shebang": "noshebang.sh",
    "no-shebang-directive-first": "noshebang2.sh",
    "dos-line-breaks": "dos.sh",
    "missing-script": "nosuch.sh",
    # slurmctld's rejections (exit 1)
    "unknown-partition": "-p nosuch ok.sh",
    "too-many-gpus-per-node": "--gres=gpu:5 ok.sh",
    "unknown-gpu-type": "--gres=gpu:h100:1 ok.sh",
    "gpus-per-node-too-many": "--gpus-per-node=5 ok.sh",
    "gpus-too-many": "--gpus=17 ok.sh",
    "bad-gres-count": "--gres=gpu:a100:x ok.sh",
    "bad-gres-colons": "--gres=gpu::2 ok.sh",
    "cpus-per-task-too-many": "-c5 ok.sh",
    "ntasks-per-node-too-many": "--ntasks-per-node=5 ok.sh",
    "mem-too-much": "--mem=5000 ok.sh",
    "nodes-zero": "-N0 ok.sh",
    "unknown-node": "-w n9 ok.sh",
    "exclude-too-many": "-N4 -x n1 ok.sh",
    "bad-dependency": "--dependency=foo:1 ok.sh",
    "bad-array": "--array=abc ok.sh",
    "array-too-big": "--array=1000-1001 ok.sh",
    # accepted with EnforcePartLimits=NO: they pend forever (cancelled after the case)
    "nodes-more-than-cluster": "-N5 ok.sh",
    "nodes-more-than-partition": "-p short -N3 ok.sh",
    "ntasks-more-than-cpus": "-n17 ok.sh",
    "time-over-partition-max": "--time=2:00:00 ok.sh",
    "time-negative": "--time=-5 ok.sh",
    # accepted and run
    "time-zero": "--time=0 ok.sh",
    "script-on-stdin": "-J stdinjob < ok.sh",
}

#: Known minislurm gaps in the table: case -> reason (strict xfail, flips when fixed).
KNOWN_GAPS: dict[str, str] = {
}


def on_both(
    real: RealSlurm,
    mini: MiniCluster,
    cmd: str,
    folder: str,
    *,
    wait_for_job: bool = False,
    timeout: float = 60.0,
) -> tuple[CaseRun, CaseRun]:
    """``cmd`` with bash in a fresh folder holding SCRIPTS, on each cluster; any job
    it left behind is cancelled afterwards."""
    runs: list[CaseRun] = []
    side: Cluster
    for side in (real, mini):
        run = run_case(
            side, cmd, folder=f"differential-{folder}", files=SCRIPTS,
            wait_for_job=wait_for_job, timeout=timeout,
        )
        if run.job_id is not None:
            side.run(["scancel", str(run.job_id)], timeout=15)
        runs.append(run)
    return runs[0], runs[1]


def view(run: CaseRun) -> dict[str, object]:
    """What a submission printed, as one dict (pytest shows a readable diff)."""
    return {"rc": run.result.rc, "stderr": run.result.stderr, "stdout": run.result.stdout}


def with_gaps(cases: dict[str, str], gaps: dict[str, str]) -> list[object]:
    """The case names, sorted; known minislurm gaps marked xfail(strict=True)."""
    return [
        pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=gaps[name]))
        if name in gaps
        else name
        for name in sorted(cases)
    ]


@pytest.mark.parametrize("case", with_gaps(BAD_INPUTS, KNOWN_GAPS))
def test_bad_input_same_message_and_exit_code(
    real_slurm: RealSlurm, mini_slurm: MiniCluster, case: str
) -> None:
    real, mini = on_both(real_slurm, mini_slurm, f"sbatch {BAD_INPUTS[case]}", f"bad-{case}")
    assert view(mini) == view(real)


def test_parsable_and_rejected_submissions_consume_ids(
    real_slurm: RealSlurm, mini_slurm: MiniCluster
) -> None:
    """``--parsable`` prints the bare id (``N;cluster`` only with federation); the
    second id shows whether the rejected submission in between used an id."""
    cmd = "sbatch --parsable ok.sh; sbatch --gres=gpu:5 ok.sh; sbatch --parsable ok.sh"
    real, mini = on_both(real_slurm, mini_slurm, cmd, "parsable")
    assert real.result.stdout.splitlines()[0] == "1"
    assert view(mini) == view(real)


WAIT_CASES = {
    "exit-0": "--wrap 'exit 0'",
    "exit-7": "--wrap 'exit 7'",
    "exit-255": "--wrap 'exit 255'",
    "killed-by-signal": "--wrap 'kill -9 $$'",
    "array-max-of-tasks": "--array=0-2 --wrap 'exit $SLURM_ARRAY_TASK_ID'",
    "output-dir-missing": "-o nosuchdir/out-%j.out --wrap 'echo x'",
}


#: sbatch.c _job_wait: WIFEXITED ? WEXITSTATUS : 1, the MAX over an array's tasks.
#: Known gaps (none left: "killed-by-signal" exited 137 until minislurm/cli/sbatch.py
#: was fixed during this work; its strict xfail flipped and was removed).
WAIT_GAPS: dict[str, str] = {}


@pytest.mark.parametrize("case", with_gaps(WAIT_CASES, WAIT_GAPS))
def test_wait_returns_the_jobs_exit_code(
    real_slurm: RealSlurm, mini_slurm: MiniCluster, case: str
) -> None:
    cmd = f"sbatch --wait {WAIT_CASES[case]}; echo rc=$?; ls"
    real, mini = on_both(real_slurm, mini_slurm, cmd, f"wait-{case}", timeout=60)
    assert "rc=" in real.result.stdout
    assert view(mini) == view(real)


PATTERN_CASES = {
    # capture f4 01 without %N (see node-name-N)
    "patterns": "-J pat -o 'o-%j-%x-%u-%n-%t-%s-%%.out' -e 'e-%j.err' "
    "--wrap 'echo out; echo err >&2'",
    "node-name-N": "-o 'h-%N.out' --wrap 'echo x'",
    "non-array-A-a": "-o 'na-%A-%a.out' --wrap 'echo x'",
    "zero-padding": "-o 'pad-%4A-%3a-%5j.out' --wrap 'echo x'",
    # fname.c: width at most 10, the batch step's %J is the job id, no %b in 22.05
    "pattern-quirks": "-o 'q-%12345j-%J-%b.out' --wrap 'echo x'",
    "default-name": "--wrap 'echo out; echo err >&2'",
    "error-to-output": "-o both-%j.txt --wrap 'echo out; echo err >&2'",
    "array": "--array=0-3 -o 'arr-%A_%a.out' --wrap 'echo task $SLURM_ARRAY_TASK_ID'",
    "workdir": "-D sub -o 'w-%j.out' --wrap 'pwd; echo $SLURM_SUBMIT_DIR'",
    "open-mode-append": "-o app.out --open-mode=append --wrap 'echo two'",
    "open-mode-truncate": "-o app.out --wrap 'echo two'",
}
#: Files some pattern cases need before sbatch runs.
PATTERN_SETUP = {
    "workdir": "mkdir sub; ",
    "open-mode-append": "echo one > app.out; ",
    "open-mode-truncate": "echo one > app.out; ",
}


PATTERN_GAPS: dict[str, str] = {}


@pytest.mark.parametrize("case", with_gaps(PATTERN_CASES, PATTERN_GAPS))
def test_output_files(real_slurm: RealSlurm, mini_slurm: MiniCluster, case: str) -> None:
    """The -o/-e files a job leaves: same names, same contents."""
    cmd = f"{PATTERN_SETUP.get(case, '')}sbatch {PATTERN_CASES[case]}"
    real, mini = on_both(real_slurm, mini_slurm, cmd, f"out-{case}", wait_for_job=True)
    assert real.result.rc == 0, real.result
    assert real.files, "real Slurm left no file"
    assert (mini.result, mini.files) == (real.result, real.files)


def test_missing_output_directory_fails_the_launch(
    real_slurm: RealSlurm, mini_slurm: MiniCluster
) -> None:
    """``-o`` into a directory that does not exist: slurmstepd cannot set up the batch
    script's IO, so the job ends ``FAILED 0:53`` with ``Reason=JobLaunchFailure`` and
    its batch step ``CANCELLED 0:53`` (sbatch --wait exits 1). submitit's array jobs
    meet this when a task starts before submitit has made the task's folder."""
    cmd = (
        "sbatch --wait --parsable -o nodir/x.out --wrap 'echo x' > id; rc=$?; "
        "echo \"Submitted batch job $(cat id)\"; echo rc=$rc; "
        # slurmdbd gets the job's end through slurmctld's agent queue: wait for both rows
        "for i in $(seq 60); do [ $(sacct -n -P -j $(cat id) -o State | grep -c -e FAILED "
        "-e CANCELLED) = 2 ] && break; sleep 0.5; done; "
        "sacct -n -P -j $(cat id) -o JobID,State,ExitCode; "
        "scontrol show job $(cat id) | grep -o 'JobState=[A-Z]* Reason=[A-Za-z]*'; "
        "scontrol show job $(cat id) | grep -o 'ExitCode=[0-9:]*'"
    )
    real, mini = on_both(real_slurm, mini_slurm, cmd, "launch-failure", timeout=60)
    assert "FAILED|0:53" in real.result.stdout, real.result
    assert mini.result.stdout == real.result.stdout
    assert mini.result.rc == real.result.rc


def test_scancel_signal_term_is_not_a_cancel(
    real_slurm: RealSlurm, mini_slurm: MiniCluster
) -> None:
    """``scancel --signal=TERM``: the job's steps get SIGTERM and the job stays RUNNING
    (only KILL, scancel's default, cancels); submitit's preemption drill sends exactly
    this before its USR2."""
    cmd = (
        "id=$(sbatch --parsable -o out.txt trapterm.sh); "
        "while [ ! -e trapped ]; do sleep 0.1; done; "  # the step's trap is set
        "scancel --signal=TERM $id; echo rc=$?; "
        "for i in $(seq 100); do [ -s got.txt ] && break; sleep 0.1; done; sleep 0.5; "
        "squeue -h -j $id -o %T; cat got.txt; scancel $id"  # the job ends with the test
    )
    real, mini = on_both(real_slurm, mini_slurm, cmd, "signal-term", timeout=60)
    assert real.result.stdout == "rc=0\nRUNNING\nstep TERM\n", real.result
    assert mini.result.stdout == real.result.stdout
