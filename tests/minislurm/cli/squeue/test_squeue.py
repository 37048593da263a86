"""``squeue``: options -> the controller's jobs -> Slurm's columns.

Where a capture of real Slurm 22.05.8 can be rebuilt on the simulated clock
(the empty queue, ``squeue -j 999999``, the ``--array=0-7%2`` job of f3_array),
the output is compared with it byte for byte.
"""

from __future__ import annotations

import pytest
from captures import load_case
from cli_helpers import make_controller, run, submit

from minislurm.cli import squeue
from minislurm.common.timespec import format_timestamp


def test_empty_queue_is_the_header_of_the_capture() -> None:
    """c2/00: an idle cluster prints only squeue's default header."""
    ctl = make_controller()
    out = load_case("c2_formats_and_reasons", "00_idle_views").out
    header = out.split("\n\n")[2]
    assert run(squeue.run, [], ctl) == (0, header + "\n", "")


def test_single_unknown_job_id_fails_like_slurm() -> None:
    """b_sbatch_errors/54: ``squeue -j 999999`` -> slurm_load_job's error, exit 1."""
    case = load_case("b_sbatch_errors", "54_squeue_bad_job")
    rc, out, err = run(squeue.run, ["-j", "999999"], make_controller())
    assert (rc, out, err) == (case.rc, case.out, case.err)


def test_unknown_ids_in_a_list_are_just_filtered_out() -> None:
    """With several ids squeue loads all jobs and filters: no error."""
    ctl = make_controller()
    job = submit(ctl, "-J", "one", "--wrap", "true")
    rc, out, err = run(squeue.run, ["-h", "-o", "%i %j", "-j", f"{job},999999"], ctl)
    assert (rc, out, err) == (0, f"{job} one\n", "")


def test_array_tasks_one_per_line_like_f3_array() -> None:
    """f3_array/03: ``squeue -r`` lists each pending task; running tasks have own ids."""
    case = load_case("f3_array", "03_squeue_r")
    ctl = make_controller(first_job_id=108)
    submit(ctl, "--array=0-7%2", "-J", "arr", "-o", "slurm-%A_%a.out", "--wrap", "sleep 4",
           run_time=4)
    ctl.run_for(1)
    rc, out, err = run(squeue.run, ["-r", "-o", "%i %A %a %j %T %r"], ctl)
    assert (rc, out, err) == (case.rc, case.out, case.err)


def test_pending_array_folded_with_its_throttle() -> None:
    """Without ``-r`` the pending tasks share one line ``108_[2-7%2]``."""
    ctl = make_controller(first_job_id=108)
    submit(ctl, "--array=0-7%2", "-J", "arr", "--wrap", "sleep 4", run_time=4)
    ctl.run_for(1)
    rc, out, _ = run(squeue.run, ["-h", "-t", "PD", "-o", "%i %r"], ctl)
    assert (rc, out) == (0, "108_[2-7%2] JobArrayTaskLimit\n")


def test_array_task_selection() -> None:
    """``-j 108_3`` narrows the pending remainder to that one task."""
    ctl = make_controller(first_job_id=108)
    submit(ctl, "--array=0-7%2", "-J", "arr", "--wrap", "sleep 4", run_time=4)
    ctl.run_for(1)
    assert run(squeue.run, ["-h", "-o", "%i", "-j", "108_3"], ctl)[1] == "108_3\n"
    assert run(squeue.run, ["-h", "-o", "%i", "-j", "108_0"], ctl)[1] == "108_0\n"


def test_default_shows_pending_and_running_but_not_finished() -> None:
    ctl = make_controller()
    done = submit(ctl, "-J", "quick", "--wrap", "true", run_time=1)
    ctl.run_for(5)
    running = submit(ctl, "-J", "long", "--wrap", "sleep 100", run_time=100)
    ctl.run_for(1)
    assert run(squeue.run, ["-h", "-o", "%i %t"], ctl) == (0, f"{running} R\n", "")
    out = run(squeue.run, ["-h", "-o", "%i %t", "-t", "all"], ctl)[1]
    assert out == f"{done} CD\n{running} R\n"  # --sort P,t,-p: CD before R


def test_filters_by_user_name_partition_and_me() -> None:
    ctl = make_controller()
    a = submit(ctl, "-J", "alpha", "--wrap", "true", user="alice", uid=1001)
    b = submit(ctl, "-J", "beta", "-p", "short", "--wrap", "true", user="bob", uid=1002)
    ctl.run_for(1)
    fmt = ["-h", "-o", "%i"]
    assert run(squeue.run, [*fmt, "-u", "alice"], ctl)[1] == f"{a}\n"
    assert run(squeue.run, [*fmt, "--me"], ctl, user="bob")[1] == f"{b}\n"
    assert run(squeue.run, [*fmt, "-p", "short"], ctl)[1] == f"{b}\n"
    assert run(squeue.run, [*fmt, "-n", "ALPHA"], ctl)[1] == f"{a}\n"  # names: any case


def test_squeue_format_from_the_environment() -> None:
    """SQUEUE_FORMAT applies unless -o/-O/-l/--start is given."""
    ctl = make_controller()
    job = submit(ctl, "-J", "envfmt", "--wrap", "true")
    ctl.run_for(1)
    env = {"SQUEUE_FORMAT": "%i|%j"}
    assert run(squeue.run, ["-h"], ctl, env=env)[1] == f"{job}|envfmt\n"
    assert run(squeue.run, ["-h", "-o", "%j"], ctl, env=env)[1] == "envfmt\n"


def test_bad_state_lists_the_valid_ones() -> None:
    rc, out, err = run(squeue.run, ["-t", "bogus"])
    assert rc == 1 and out == ""
    assert err.startswith("squeue: error: Invalid job state specified: bogus\n"
                          "squeue: error: Valid job states include: PENDING,RUNNING,")


@pytest.mark.parametrize(("argv", "first_line"), [
    (["--bogus"], "squeue: unrecognized option '--bogus'"),
    (["-Z"], "squeue: invalid option -- 'Z'"),
    (["-o"], "squeue: option requires an argument -- 'o'"),
])
def test_glibc_option_errors_and_the_hint(argv: list[str], first_line: str) -> None:
    assert run(squeue.run, argv) == (
        1, "", f'{first_line}\nTry "squeue --help" for more information\n')


def test_invalid_job_id_and_conflicting_formats() -> None:
    assert run(squeue.run, ["-j", "abc"]) == (1, "", "squeue: error: Invalid job id: abc\n")
    rc, _, err = run(squeue.run, ["-l", "-o", "%i"])
    assert rc == 1 and "mutually exclusive" in err
    rc, _, err = run(squeue.run, ["-o", "%i", "-O", "JobID"])
    assert (rc, err) == (1, "squeue: error: -O (--Format) is incompatible with -o (--format)\n")


def test_version_help_usage_need_no_controller() -> None:
    assert run(squeue.run, ["-V"]) == (0, "slurm 22.05.8\n", "")
    assert run(squeue.run, ["--help"])[1].startswith("Usage: squeue [OPTIONS]\n")
    assert run(squeue.run, ["--usage"])[1].startswith("Usage: squeue [-A account]")


def test_controller_down_prints_slurms_error_and_the_hint() -> None:
    rc, out, err = run(squeue.run, [])
    assert (rc, out) == (1, "")
    assert err.startswith(
        "slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n")
    assert "python -m minislurm cluster up" in err


def test_finished_jobs_are_forgotten_after_min_job_age() -> None:
    """slurmctld purges an ended job MinJobAge seconds after it ended."""
    ctl = make_controller()
    job = submit(ctl, "-J", "quick", "--wrap", "true", run_time=1)
    ctl.run_for(5)
    assert run(squeue.run, ["-h", "-o", "%i", "-t", "all"], ctl)[1] == f"{job}\n"
    assert run(squeue.run, ["-j", str(job)], ctl)[0] == 0
    ctl.run_for(ctl.config.min_job_age)
    assert run(squeue.run, ["-h", "-t", "all"], ctl) == (0, "", "")
    assert run(squeue.run, ["-j", str(job)], ctl) == (
        1, "", "slurm_load_jobs error: Invalid job id specified\n")


def test_start_lists_pending_jobs_with_their_expected_start() -> None:
    """``--start``: pending jobs only, START_TIME from backfill's plan."""
    ctl = make_controller()
    submit(ctl, "-n16", "--wrap", "sleep 600", run_time=600)
    waiting = submit(ctl, "-n4", "--wrap", "sleep 10", run_time=10)
    ctl.run_for(30)
    rc, out, _ = run(squeue.run, ["--start", "-h", "-o", "%i %S %r"], ctl)
    start = ctl.job(waiting).start_time  # backfill's estimate (08:10:00 once it plans)
    shown = format_timestamp(start) if start else "N/A"
    assert (rc, out) == (0, f"{waiting} {shown} Resources\n")  # the running job is left out


def test_licenses_filter_matches_no_minislurm_job() -> None:
    """Jobs here hold no licenses, so ``-L`` keeps none of them (as in Slurm)."""
    ctl = make_controller()
    submit(ctl, "--wrap", "true")
    assert run(squeue.run, ["-h", "-L", "matlab"], ctl) == (0, "", "")
