"""``scancel``: ids straight to slurmctld (quiet about unknown ids), or filters."""

from __future__ import annotations

import pytest
from captures import load_case
from cli_helpers import make_controller, run, submit

from minislurm.cli import scancel
from minislurm.states import JobState


def test_unknown_job_id_is_quiet_and_exit_0_like_the_capture() -> None:
    """b_sbatch_errors/52: ``scancel 999999`` prints nothing and exits 0."""
    case = load_case("b_sbatch_errors", "52_scancel_bad_jobid")
    assert run(scancel.run, ["999999"], make_controller()) == (case.rc, case.out, case.err)


def test_verbose_shows_what_slurmctld_answered() -> None:
    assert run(scancel.run, ["-v", "999999"], make_controller()) == (
        0, "", "scancel: Terminating job 999999\n"
               "scancel: error: Kill job error on job id 999999: Invalid job id specified\n")


def test_cancel_pending_and_running_jobs_by_id() -> None:
    ctl = make_controller()
    running = submit(ctl, "-N4", "--wrap", "sleep 100", run_time=100)
    pending = submit(ctl, "-N4", "--wrap", "sleep 100", run_time=100)
    ctl.run_for(1)
    assert run(scancel.run, [f"{running},{pending}"], ctl, uid=0) == (0, "", "")
    ctl.run_for(1)
    assert ctl.job(pending).state is JobState.CANCELLED
    assert ctl.job(running).state is JobState.CANCELLED
    assert ctl.job(running).cancelled_by == 0


def test_cancel_a_whole_array_or_one_task() -> None:
    ctl = make_controller(first_job_id=108)
    submit(ctl, "--array=0-7%2", "--wrap", "sleep 4", run_time=100)
    ctl.run_for(1)
    assert run(scancel.run, ["108_5"], ctl) == (0, "", "")
    states = {(j.array_task_id, j.array_task_str, j.state) for j in ctl.jobs()}
    assert (None, "2-4,6-7%2", JobState.PENDING) in states  # 5 left the array, no record
    assert not any(t == 5 for t, _s, _st in states)
    assert run(scancel.run, ["108"], ctl) == (0, "", "")
    ctl.run_for(1)
    assert all(j.state.is_terminal for j in ctl.jobs())


def test_filters_cancel_only_matching_active_jobs() -> None:
    """c2/23 ``scancel -n bigrun``: by name; ``-u``, ``-t``, ``-p`` likewise."""
    ctl = make_controller()
    big = submit(ctl, "-J", "bigrun", "--wrap", "sleep 100", run_time=100)
    other = submit(ctl, "-J", "other", "-p", "short", "--wrap", "sleep 100", run_time=100,
                   user="alice", uid=1001)
    ctl.run_for(1)
    assert run(scancel.run, ["-n", "bigrun"], ctl) == (0, "", "")
    ctl.run_for(1)
    assert ctl.job(big).state is JobState.CANCELLED
    assert ctl.job(other).state is JobState.RUNNING
    assert run(scancel.run, ["-u", "bob"], ctl) == (0, "", "")
    assert run(scancel.run, ["-v", "-u", "bob", "-t", "R"], ctl)[2] == (
        "scancel: error: No active jobs match ALL job filters, including: "
        "state=RUNNING user_name=bob \n")
    assert run(scancel.run, ["-u", "alice", "-p", "short", "-t", "running"], ctl)[0] == 0
    ctl.run_for(1)
    assert ctl.job(other).state is JobState.CANCELLED


def test_with_filters_unknown_ids_are_reported_and_exit_1() -> None:
    """``_verify_job_ids`` runs when filters are given."""
    assert run(scancel.run, ["-u", "root", "999999"], make_controller()) == (
        1, "", "scancel: error: Kill job error on job id 999999: Invalid job id specified\n")


def test_interactive_confirmation_reads_stdin() -> None:
    ctl = make_controller()
    keep = submit(ctl, "-J", "keep", "--wrap", "true", run_time=100)
    drop = submit(ctl, "-J", "drop", "--wrap", "true", run_time=100)
    ctl.run_for(1)
    rc, out, _ = run(scancel.run, ["-i", str(keep), str(drop)], ctl, stdin="n\ny\n")
    assert rc == 0
    assert out == (f"Cancel job_id={keep} name=keep partition=debug [y/n]? "
                   f"Cancel job_id={drop} name=drop partition=debug [y/n]? ")
    ctl.run_for(1)
    assert ctl.job(keep).state is JobState.RUNNING
    assert ctl.job(drop).state is JobState.CANCELLED


@pytest.mark.parametrize(("argv", "err"), [
    ([], "scancel: error: No job identification provided\n"),
    (["abc"], "scancel: error: Invalid job id abc\n"),
    (["5x"], "scancel: error: Invalid job id 5x\n"),
    (["-t", "bogus", "5"],
     "Invalid job state specified: bogus\nValid job states are PENDING, RUNNING, and SUSPENDED\n"),
    (["-s", "NOPE", "5"], "Unknown job signal: NOPE\n"),
    (["--bogus"], "scancel: unrecognized option '--bogus'\n"
                  'Try "scancel --help" for more information\n'),
])
def test_client_side_errors_exit_1(argv: list[str], err: str) -> None:
    assert run(scancel.run, argv) == (1, "", err)


def test_job_id_syntax() -> None:
    specs = scancel.parse_job_ids(["5", "6,7", "108_[1-3]", "108_*", "9_2", "5.0"])
    assert [(s.job_id, s.task, s.step) for s in specs] == [
        (5, None, None), (6, None, None), (7, None, None), (108, 1, None), (108, 2, None),
        (108, 3, None), (108, -1, None), (9, 2, None), (5, None, 0)]
    assert scancel.sig_name2num("USR1") == 10 and scancel.sig_name2num("SIGKILL") == 9


def test_controller_down() -> None:
    rc, out, err = run(scancel.run, ["5"])
    assert (rc, out) == (1, "")
    assert err.splitlines()[0] == ("scancel: error: Kill job error on job id 5: "
                                   "Unable to contact slurm controller (connect failure)")


def test_other_signals_need_the_controllers_signal_delivery() -> None:
    """``-s USR1`` is not a cancel: without ``Controller.signal_job`` it is refused."""
    ctl = make_controller()
    job = submit(ctl, "--wrap", "sleep 100", run_time=100)
    ctl.run_for(1)
    rc, _, err = run(scancel.run, ["-s", "USR1", str(job)], ctl)
    if hasattr(ctl, "signal_job"):
        assert (rc, err) == (0, "")
    else:
        assert (rc, err) == (1, "scancel: error: minislurm: this controller cannot deliver "
                                "signal 10 (only KILL, i.e. cancel)\n")
    assert ctl.job(job).state is JobState.RUNNING
    assert run(scancel.run, ["--signal=KILL", str(job)], ctl) == (0, "", "")
    ctl.run_for(1)
    assert ctl.job(job).state is JobState.CANCELLED
