"""The harness reproduces the reference captures: each captured command, replayed
on the real cluster started by tests/realslurm, prints the captured stdout and
stderr and exits with the captured code, once run-specific values are mapped
back (job ids, paths, ports, pids, times; see tests/realslurm/normalize.py).

This is what makes the harness trustworthy as the "real side" of differential
tests: a second, independent start of Debian's Slurm 22.05.8 agrees with the
captures byte for byte.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from captures import Case, load_case
from realslurm import RealSlurm, Result
from realslurm.fixtures import running
from realslurm.normalize import (
    JOB_ID_BASE,
    drop_step_waits,
    job_id_offset,
    mask_volatile,
    squeeze_columns,
    to_reference,
)
from realslurm.replay import case_dir, replay, replay_case

pytestmark = pytest.mark.realslurm


@pytest.fixture(autouse=True)
def empty_queue(real_slurm: RealSlurm, captures: Path) -> Iterator[None]:
    """Every test starts and ends with an empty queue (scancel of leftovers)."""
    real_slurm.cancel_all()
    yield
    real_slurm.cancel_all()


def needs_accounting(cluster: RealSlurm) -> None:
    """Skip unless slurmdbd runs: without it jobs have no account or QOS, so the
    captured SLURM_JOB_ACCOUNT/SLURM_JOB_QOS and squeue's ACCOUNT (root) are absent."""
    if not cluster.accounting:
        pytest.skip(
            "started without slurmdbd (MINISLURM_REALSLURM_ACCOUNTING=0): "
            "jobs have no account/QOS, unlike the captures"
        )


def ours(cluster: RealSlurm, text: str, offset: int | None) -> str:
    """Our output in the reference's terms."""
    assert cluster.ports is not None
    return to_reference(text, root=cluster.root, ports=cluster.ports, offset=offset)


def theirs(text: str) -> str:
    """The capture with its run-specific values masked."""
    return mask_volatile(text)


def assert_like_capture(
    cluster: RealSlurm, case: Case, got: Result, *, offset: int | None = None, columns: bool = False
) -> int | None:
    """stdout, stderr and rc equal the capture's (after normalisation); returns the
    job id offset used (learned from this output when not given)."""
    if offset is None:
        offset = job_id_offset(got.stdout + got.stderr, case.out + case.err)
    squeeze = squeeze_columns if columns else (lambda s: s)
    assert (
        squeeze(ours(cluster, got.stdout, offset)),
        ours(cluster, got.stderr, offset),
        got.rc,
    ) == (squeeze(theirs(case.out)), theirs(case.err), case.rc), case.cmd
    return offset


# ---------------------------------------------------------------- b_sbatch_errors
B = "b_sbatch_errors"
#: Input scripts of b_sbatch_errors that the partial capture folder does not hold:
#: ok.sh is b2's; the other two are rebuilt from their case names / CAPTURES.md.
B_FILES = {
    "whitespace.sh": "  \n\t\n   \n",
    "noshebang2.sh": "#SBATCH -J x\necho hi\n",
}
B_REJECTED = [
    "01_too_many_gpus_per_node",
    "03_unknown_gpu_type",
    "05_gpus_per_node_too_many",
    "07_bad_time_format",
    "11_bad_gres_syntax_count",
    "13_bad_gres_syntax_colons",
    "19_cpus_per_task_too_many",
    "21_bad_mem_syntax",
    "23_unknown_option_short",
    "24b_option_missing_argument2",
    "26_whitespace_script",
    "28_no_shebang_directive_first",
    "30_missing_script_file",
    "34_bad_dependency_syntax",
    "38_bad_array",
    "40_nodes_range_inverted",
    "42_ntasks_zero",
    "44_exclude_all",
    "46_srun_unknown_partition",
    "48_srun_unknown_option",
    "50_srun_exit_code",
    "52_scancel_bad_jobid",
    "54_squeue_bad_job",
]
#: Accepted although they can never run (EnforcePartLimits=NO), and --time=0.
B_ACCEPTED = [
    "09_bad_time_negative",
    "15_nodes_more_than_cluster",
    "17_ntasks_more_than_cpus",
    "56_time_zero",
]


@pytest.fixture(scope="module")
def b_dir(real_slurm: RealSlurm, captures: Path) -> Path:
    return case_dir(
        real_slurm, B, [captures / "b2_sbatch_errors_EnforcePartLimits_ALL" / "ok.sh"], B_FILES
    )


@pytest.mark.parametrize("name", B_REJECTED)
def test_rejections_print_the_captured_error_and_exit_code(
    real_slurm: RealSlurm, b_dir: Path, name: str
) -> None:
    case = load_case(B, name)
    assert_like_capture(real_slurm, case, replay_case(real_slurm, case, b_dir))


@pytest.mark.parametrize("name", B_ACCEPTED)
def test_impossible_jobs_are_accepted_as_captured(
    real_slurm: RealSlurm, b_dir: Path, name: str
) -> None:
    case = load_case(B, name)
    assert_like_capture(real_slurm, case, replay_case(real_slurm, case, b_dir))


# Not replayed: 32_script_on_stdin, 36_unknown_account and 99_final_queue print the
# queue / sacct of the whole capture run (jobs of earlier cases), not of the case.

# ------------------------------------------------- b2 (EnforcePartLimits=ALL)
B2 = "b2_sbatch_errors_EnforcePartLimits_ALL"


@pytest.fixture(scope="module")
def strict_slurm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealSlurm]:
    """A second cluster, the reference's plus ``EnforcePartLimits=ALL`` (as b2 was
    captured), without slurmdbd (b2's answers do not depend on it; starts in ~1 s)."""
    with running(RealSlurm(tmp_path_factory.mktemp("strict"), accounting=False,
                           first_job_id=JOB_ID_BASE,
                           extra_conf=("EnforcePartLimits=ALL",))) as cluster:
        yield cluster


@pytest.mark.parametrize(
    "name",
    [
        "00_config",
        "02_nodes_more_than_cluster",
        "04_ntasks_more_than_cpus",
        "06_srun_nodes_too_many",
    ],
)
def test_partition_limits_enforced_at_submission(
    strict_slurm: RealSlurm, captures: Path, name: str
) -> None:
    """With EnforcePartLimits=ALL, -N5 / -n17 / srun -N5 are refused at once (rc 1)."""
    case = load_case(B2, name)
    work = case_dir(strict_slurm, B2, [captures / B2 / "ok.sh"])
    assert_like_capture(strict_slurm, case, replay_case(strict_slurm, case, work))


# ---------------------------------------------------------------- c1_hostlist
@pytest.mark.parametrize(
    "name",
    [
        "01_hostnames",
        "03_hostlist_unsorted_dups",
        "05_hostnames_padded",
        "07_hostlist_mixed_width",
        "09_hostnames_env",
    ],
)
def test_scontrol_hostlist_commands_match(real_slurm: RealSlurm, name: str) -> None:
    case = load_case("c1_hostlist", name)
    got = replay_case(real_slurm, case, case_dir(real_slurm, "c1_hostlist"))
    assert_like_capture(real_slurm, case, got)


# ---------------------------------------------------------------- f1 directives
F1 = "f1_sbatch_directive_parsing"
F1_SHOWN = [
    "after_command",
    "crlf_none_ws_line",
    "equals_vs_space",
    "lowercase",
    "nospace",
    "quoted_single",
    "set_e_before",
    "space_after_hash",
    "trailing_comment",
]


@pytest.fixture(scope="module")
def f1_dir(real_slurm: RealSlurm, captures: Path) -> Path:
    return case_dir(real_slurm, F1, sorted((captures / F1).glob("*.sh")))


@pytest.mark.parametrize("script", F1_SHOWN)
def test_directive_parsing_gives_the_captured_job_fields(
    real_slurm: RealSlurm, f1_dir: Path, script: str
) -> None:
    """``sbatch -H <script>``, then squeue's JobName/TimeLimit/... and StdOut."""
    sub, show = load_case(F1, f"sub_{script}"), load_case(F1, f"show_{script}")
    offset = assert_like_capture(real_slurm, sub, replay_case(real_slurm, sub, f1_dir))
    assert_like_capture(real_slurm, show, replay_case(real_slurm, show, f1_dir), offset=offset)


def test_bad_directive_value_is_a_client_error(real_slurm: RealSlurm, f1_dir: Path) -> None:
    case = load_case(F1, "sub_bad_value")
    assert_like_capture(real_slurm, case, replay_case(real_slurm, case, f1_dir))


# ---------------------------------------------------------------- f2 precedence
F2 = "f2_option_precedence"
#: CAPTURES.md: command line > SBATCH_* env vars > #SBATCH; args after the script go to
#: the script; --wrap names the job "wrap", a script on stdin "sbatch". As squeue
#: prints them (``-o "%j|%l|%D"``: name, time limit, nodes); job.sh says -J inscript -t 5 -N 1.
F2_EXPECTED = {
    "01_script_only": "inscript|5:00|1",
    "02_cli_overrides": "cli|7:00|2",
    "03_env_vs_script": "fromenv|9:00|1",
    "04_cli_vs_env": "cli|7:00|1",
    "05_output_cli": "inscript|5:00|1",
    "06_args_after_script": "inscript|5:00|1",
    "07_wrap_name": "wrap|10:00|1",
    "08_stdin_name": "sbatch|10:00|1",
}


@pytest.mark.parametrize("name", sorted(F2_EXPECTED))
def test_option_precedence(real_slurm: RealSlurm, captures: Path, name: str) -> None:
    case = load_case(F2, name)
    work = case_dir(real_slurm, F2, [captures / F2 / "job.sh"])
    got = replay_case(real_slurm, case, work)
    assert_like_capture(real_slurm, case, got)
    job = got.stdout.split()[-1]
    fields = real_slurm.run(["squeue", "-h", "-j", job, "-o", "%j|%l|%D"]).stdout.strip()
    assert fields == F2_EXPECTED[name]


def test_output_option_on_the_command_line_wins(real_slurm: RealSlurm, captures: Path) -> None:
    work = case_dir(real_slurm, F2, [captures / F2 / "job.sh"])
    job = replay_case(real_slurm, load_case(F2, "05_output_cli"), work).stdout.split()[-1]
    (record,) = real_slurm.job_records(job)
    assert record["StdOut"] == f"{work}/cli-{job}.out"


# ---------------------------------------------------------------- f3 arrays
F3 = "f3_array"


def _wait_running(cluster: RealSlurm, count: int, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while len(cluster.run(["squeue", "-h", "-t", "R", "-o", "%i"]).stdout.split()) < count:
        assert time.monotonic() < deadline, "array tasks did not start"
        time.sleep(0.2)


def test_array_throttle_squeue_scontrol_sacct(real_slurm: RealSlurm, captures: Path) -> None:
    """``--array=0-7%2``: two tasks run, six wait for JobArrayTaskLimit; the last task
    keeps the array's job id; sacct shows ``A_i`` with JobIDRaw."""
    needs_accounting(real_slurm)
    work = case_dir(real_slurm, F3, [captures / F3 / "array.sh"])
    submit = load_case(F3, "01_submit")
    offset = assert_like_capture(real_slurm, submit, replay_case(real_slurm, submit, work))
    assert offset is not None
    array_id = int(submit.out.split()[-1]) + offset
    _wait_running(real_slurm, 2)
    squeue = load_case(F3, "03_squeue_r")
    assert_like_capture(real_slurm, squeue, replay_case(real_slurm, squeue, work), offset=offset)
    show = load_case(F3, "05_scontrol_show_job_task")
    got = replay(real_slurm, show.cmd.replace("108", str(array_id)), show.name, work)
    assert_like_capture(real_slurm, show, got, offset=offset)
    assert real_slurm.wait_job(array_id, timeout=60) == "COMPLETED"
    sacct = load_case(F3, "07_sacct")
    cmd = sacct.cmd.replace("108", str(array_id))
    deadline = time.monotonic() + 20
    while real_slurm.run(cmd + " -n -s CD").stdout.count("COMPLETED") < 8:
        assert time.monotonic() < deadline, "sacct never showed the 8 tasks"
        time.sleep(0.5)
    got = replay(real_slurm, cmd, sacct.name, work)
    assert_like_capture(real_slurm, sacct, got, offset=offset, columns=True)


def test_array_size_limit(real_slurm: RealSlurm, captures: Path) -> None:
    """MaxArraySize 1001: ``--array=1000-1001`` is rejected, ``--array=999`` accepted."""
    case = load_case(F3, "09_array_max")
    assert_like_capture(real_slurm, case, replay_case(real_slurm, case, case_dir(real_slurm, F3)))


# ---------------------------------------------------------------- f4 output patterns
F4 = "f4_output_patterns"
#: Files of capture cases the partial folder does not include (02_default_name,
#: 04_padding): left out of the captured `ls` before comparing.
F4_ABSENT = ("02_default_name.", "04_padding.", "slurm-123.out", "pad-0125-003-00125.out")


def consume_job_ids(cluster: RealSlurm, count: int) -> None:
    """Use up ``count`` job ids (held placeholder jobs, cancelled at once), standing in
    for the submissions of capture cases that the partial folder leaves out."""
    for _ in range(count):
        job = cluster.run(
            ["sbatch", "-H", "-J", "placeholder", "-o", "/dev/null", "--wrap", "true"]
        ).stdout.split()[-1]
        cluster.run(["scancel", job])


def test_output_file_patterns(real_slurm: RealSlurm) -> None:
    """Patterns %j %x %u %N %n %t %s %% %A %a, a missing output folder, -o = -e, and
    ``sbatch --wait`` returning the job's exit code; the folder listings include the
    files of earlier cases, so job ids follow the capture's (gaps filled)."""
    work = case_dir(real_slurm, F4)
    offset: int | None = None
    last_capture_id: int | None = None
    for name in (
        "01_patterns",
        "03_nonarray_A_a",
        "05_dir_nonexistent",
        "07_error_same_as_output",
        "09_exit_code_wait",
    ):
        case = load_case(F4, name)
        capture_id = int(case.out.split("\n")[0].split()[-1])
        if last_capture_id is not None:
            consume_job_ids(real_slurm, capture_id - last_capture_id - 1)
        last_capture_id = capture_id
        out = "".join(
            line for line in case.out.splitlines(keepends=True) if not line.startswith(F4_ABSENT)
        )
        trimmed = Case(case.cmd, out, case.err, case.rc, case.folder_path, case.name)
        offset = assert_like_capture(
            real_slurm, trimmed, replay_case(real_slurm, case, work), offset=offset
        )


# ---------------------------------------------------------------- a1/a2/a3 environments
A1 = "a1_srun_env"


#: The one place where the capture disagrees with itself: in a1 the full environments
#: of the tasks with SLURM_LOCALID=1 (fulltask1/3.env) lack ``TMPDIR=/tmp``, while every
#: step task of a2 (step.N.fullenv, same srun geometry inside sbatch) has it, and so do
#: all tasks of every replay here. We expect the capture plus exactly that line.
CAPTURE_LACKS = {"fulltask1.env": "TMPDIR=/tmp", "fulltask3.env": "TMPDIR=/tmp"}


def assert_files_like_capture(
    cluster: RealSlurm, work: Path, folder: Path, names: list[str], offset: int | None
) -> None:
    """Files the job wrote (env dumps) equal the capture's, normalised."""
    for name in names:
        got = ours(cluster, (work / name).read_text(), offset)
        expected = theirs((folder / name).read_text())
        if name in CAPTURE_LACKS:
            expected = "".join(
                f"{line}\n" for line in sorted([*expected.splitlines(), CAPTURE_LACKS[name]])
            )
        assert got == expected, name


@pytest.mark.parametrize("name", ["01_srun_env_merged", "02_srun_env_labelled"])
def test_srun_task_environment(real_slurm: RealSlurm, name: str) -> None:
    """``srun -N2 --ntasks-per-node=2 --gres=gpu:2``: every task's SLURM_*/CUDA/GPU vars."""
    needs_accounting(real_slurm)
    case = load_case(A1, name)
    assert_like_capture(real_slurm, case, replay_case(real_slurm, case, case_dir(real_slurm, A1)))


@pytest.mark.parametrize(
    ("name", "prefix"),
    [("03_srun_env_per_task_files", "task"), ("04_srun_full_env_task0", "fulltask")],
)
def test_srun_per_task_output_files(
    real_slurm: RealSlurm, captures: Path, name: str, prefix: str
) -> None:
    """``srun -o <prefix>%t.env``: one file per task, each equal to the capture's."""
    needs_accounting(real_slurm)
    case = load_case(A1, name)
    work = case_dir(real_slurm, A1)
    assert_like_capture(real_slurm, case, replay_case(real_slurm, case, work))
    files = [f"{prefix}{t}.env" for t in range(4)]
    offset = job_id_offset((work / files[0]).read_text(), (captures / A1 / files[0]).read_text())
    assert_files_like_capture(real_slurm, work, captures / A1, files, offset)


@pytest.mark.parametrize(
    ("folder", "full_envs"),
    [
        ("a2_sbatch_env", ["batch.fullenv"] + [f"step.{t}.fullenv" for t in range(4)]),
        ("a3_sbatch_env_cpus_per_task", []),
    ],
)
def test_batch_and_step_environments(
    real_slurm: RealSlurm, captures: Path, folder: str, full_envs: list[str]
) -> None:
    """``sbatch --wait job.sh`` whose script dumps its environment and srun's; then
    the captured ``ls; cat batch.env step*.env`` and the full environments."""
    needs_accounting(real_slurm)
    work = case_dir(real_slurm, folder, [captures / folder / "job.sh"])
    submit = load_case(folder, "01_sbatch_wait")
    offset = assert_like_capture(
        real_slurm, submit, replay_case(real_slurm, submit, work, timeout=60)
    )
    files = load_case(folder, "02_files")
    assert_like_capture(real_slurm, files, replay_case(real_slurm, files, work), offset=offset)
    assert_files_like_capture(real_slurm, work, captures / folder, full_envs, offset)
    assert offset is not None
    job = int(submit.out.split()[-1])
    # a3's second srun may have to wait until slurmctld has released the first step
    # (timing, not the job: see drop_step_waits); the rest of the output must be equal
    got = ours(real_slurm, (work / f"slurm-{job + offset}.out").read_text(), offset)
    expected = theirs((captures / folder / f"slurm-{job}.out").read_text())
    assert drop_step_waits(got) == drop_step_waits(expected)
