"""``sacct``: the accounting records the job condition selects, in Slurm's columns."""

from __future__ import annotations

import pytest
from captures import load_case
from cli_helpers import make_controller, run, submit

from minislurm.cli import sacct
from minislurm.errors import SubmitError
from minislurm.options.sbatch import parse_sbatch


def test_array_tasks_in_task_order_like_f3_array() -> None:
    """f3_array/07: ``108_0`` ... ``108_7``; the last task reuses the array job id."""
    case = load_case("f3_array", "07_sacct")
    ctl = make_controller(first_job_id=108)
    submit(ctl, "--array=0-7%2", "-J", "arr", "--wrap", "sleep 4", run_time=4)
    ctl.run_for(60)
    rc, out, err = run(sacct.run, ["-X", "-j", "108", "-o", "JobID,JobIDRaw,JobName,State"], ctl)
    width = 12 + 1 + 12 + 1 + 10 + 1 + 10 + 1  # the four columns of the capture
    assert (rc, err) == (0, "")
    assert out == "".join(line[:width] + "\n" for line in case.out.splitlines())


def test_default_fields_and_steps() -> None:
    """c2/25's layout: a job line then its ``.batch`` step."""
    header = load_case("c2_formats_and_reasons", "25_sacct_default").out.splitlines()[:2]
    ctl = make_controller()
    job = submit(ctl, "-J", "small", "--wrap", "true", run_time=10)
    ctl.run_for(20)
    rc, out, _ = run(sacct.run, [], ctl)
    assert rc == 0
    assert out.splitlines() == [
        *header,
        f"{job:<12}      small      debug       root          1  COMPLETED      0:0 ",
        f"{job}.batch{'':<{12 - len(str(job)) - 6}}      batch                  root          1"
        "  COMPLETED      0:0 ",
    ]


def test_parsable_cancelled_pending_job_like_c2() -> None:
    """c2/29: a pending job cancelled by root: ``CANCELLED by 0``, ``None``, ``None assigned``."""
    ctl = make_controller()
    job = submit(ctl, "-J", "toomany", "-N5", "--wrap", "true")
    ctl.run_for(1)
    ctl.cancel(job, uid=0)
    fields = "JobID,JobName,State,ExitCode,Start,NodeList"
    assert run(sacct.run, ["-a", "-P", "-o", fields], ctl)[1] == (
        "JobID|JobName|State|ExitCode|Start|NodeList\n"
        f"{job}|toomany|CANCELLED by 0|0:0|None|None assigned\n")


def test_rejected_submission_is_failed_1_0() -> None:
    """b_sbatch_errors/99: a rejected job keeps its id and shows as FAILED 1:0."""
    header = load_case("b_sbatch_errors", "99_final_queue").out.splitlines()[1:3]
    ctl = make_controller()
    inv = parse_sbatch(["-p", "nosuch", "--wrap", "true"], env={}, cwd="/tmp")
    with pytest.raises(SubmitError):
        ctl.submit_invocation(inv, user="root", uid=0, cwd="/tmp")
    rc, out, _ = run(sacct.run, ["-X", "-o", "JobID,JobName,State,ExitCode"], ctl)
    assert rc == 0
    assert out.splitlines() == [*header, "1                  wrap     FAILED      1:0 "]


def test_window_defaults_to_midnight_unless_jobs_are_named() -> None:
    ctl = make_controller()
    job = submit(ctl, "--wrap", "true", run_time=5)
    ctl.run_for(2 * 86400)
    assert run(sacct.run, ["-n", "-X", "-o", "JobID"], ctl) == (0, "", "")
    assert run(sacct.run, ["-n", "-X", "-o", "JobID", "-j", str(job)], ctl)[1] == f"{job:<12} \n"
    assert run(sacct.run, ["-n", "-X", "-P", "-o", "JobID", "-S", "2026-01-05"], ctl)[1] == (
        f"{job}\n")


def test_users_states_names() -> None:
    ctl = make_controller()
    mine = submit(ctl, "-J", "mine", "--wrap", "true", run_time=5, user="alice", uid=1001)
    theirs = submit(ctl, "-J", "theirs", "--wrap", "true", run_time=500, user="bob", uid=1002)
    ctl.run_for(10)
    fmt = ["-n", "-X", "-P", "-o", "JobID"]
    assert run(sacct.run, fmt, ctl, user="alice", uid=1001)[1] == f"{mine}\n"
    assert run(sacct.run, [*fmt, "-a"], ctl, user="alice", uid=1001)[1] == f"{mine}\n{theirs}\n"
    assert run(sacct.run, [*fmt, "-u", "bob"], ctl)[1] == f"{theirs}\n"
    assert run(sacct.run, [*fmt, "--name", "mine"], ctl)[1] == f"{mine}\n"
    assert run(sacct.run, [*fmt, "-s", "R"], ctl)[1] == f"{theirs}\n"  # running now
    assert run(sacct.run, [*fmt, "-s", "CD", "-S", "2026-01-05"], ctl)[1] == f"{mine}\n"


@pytest.mark.parametrize(("argv", "err"), [
    (["-o", "JobID,Bogus"], 'sacct: error: Invalid field requested: "Bogus"\n'),
    (["-s", "bogus"], "sacct: fatal: unrecognized job state value 'bogus'\n"),  # 22.05.8
    (["-j", "abc"], "sacct: fatal: Bad job/step specified: abc\n"),
    (["stray"], "sacct: error: Unknown arguments:\nsacct: error:  stray\n"),
    (["--bogus"], "sacct: unrecognized option '--bogus'\n"),  # getopt() has explained it
])
def test_errors(argv: list[str], err: str) -> None:
    assert run(sacct.run, argv, make_controller()) == (1, "", err)


def test_long_brief_helpformat_and_version() -> None:
    ctl = make_controller()
    long_header = load_case("c2_formats_and_reasons", "27_sacct_long").out.splitlines()[0]
    assert run(sacct.run, ["-l", "-P"], ctl)[1].splitlines()[0] == long_header
    assert run(sacct.run, ["-b", "-P"], ctl)[1] == "JobID|State|ExitCode\n"
    assert run(sacct.run, ["-e"])[1].startswith("Account             AdminComment")
    assert run(sacct.run, ["-V"]) == (0, "slurm 22.05.8\n", "")


def test_no_database() -> None:
    rc, out, err = run(sacct.run, [])
    assert (rc, out) == (1, "")
    assert err.splitlines()[0] == (
        "sacct: error: Problem talking to the database: Connection refused")
