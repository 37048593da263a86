"""``sinfo``: options -> nodes and partitions -> Slurm's lines (capture c2 idle views)."""

from __future__ import annotations

from captures import load_case
from cli_helpers import make_controller, run, submit

from minislurm.cli import sinfo


def _idle_sections() -> list[str]:
    """c2/00 printed ``sinfo; echo; sinfo -N -l | sed 1d; echo; squeue; ...``."""
    return load_case("c2_formats_and_reasons", "00_idle_views").out.split("\n\n")


def test_default_view_of_the_idle_reference_cluster() -> None:
    assert run(sinfo.run, [], make_controller()) == (0, _idle_sections()[0] + "\n", "")


def test_node_long_view_of_the_idle_cluster_after_its_date_line() -> None:
    """``sinfo -N -l``: a date line, then one line per node and partition."""
    rc, out, err = run(sinfo.run, ["-N", "-l"], make_controller())
    date, rest = out.split("\n", 1)
    expected = _idle_sections()[1] + "\n"
    assert (rc, err) == (0, "")
    assert date == "Mon Jan 05 08:00:00 2026"  # the simulated clock's epoch
    # real sinfo builds one node's lines in one thread per partition: compare as sets
    assert rest.splitlines()[0] == expected.splitlines()[0]
    assert sorted(rest.splitlines()) == sorted(expected.splitlines())


def test_custom_formats_follow_the_allocation() -> None:
    ctl = make_controller()
    submit(ctl, "-n2", "-w", "n1", "--wrap", "sleep 100", run_time=100)
    ctl.run_for(1)
    rc, out, _ = run(sinfo.run, ["-p", "short", "-o", "%P %t %N %C"], ctl)
    assert (rc, out) == (0, "PARTITION STATE NODELIST CPUS(A/I/O/T)\n"
                            "short mix n1 2/2/0/4\nshort idle n2 0/4/0/4\n")


def test_states_filter_and_summarize() -> None:
    ctl = make_controller()
    submit(ctl, "-n1", "-w", "n1", "--wrap", "sleep 100", run_time=100)
    ctl.run_for(1)
    assert run(sinfo.run, ["-h", "-t", "mix", "-o", "%R %N"], ctl)[1] == (
        "debug n1\ngpu n1\nshort n1\n")
    assert run(sinfo.run, ["-h", "-t", "idle", "-p", "debug", "-o", "%N"], ctl)[1] == (
        "n[2-4]\n")
    # one blank before NODELIST, measured on 22.05.8
    # (tests/minislurm/cli/sinfo/test_sinfo_formats.py)
    assert run(sinfo.run, ["-s", "-p", "debug"], ctl)[1] == (
        "PARTITION AVAIL  TIMELIMIT   NODES(A/I/O/T) NODELIST\n"
        "debug*       up    1:00:00          1/3/0/4 n[1-4]\n")


def test_drained_node_and_reasons() -> None:
    """``sinfo -R`` lists down/drained nodes with the reason given to scontrol."""
    ctl = make_controller()
    ctl.update_node("n4", "drain", "maintenance", user="root")
    rc, out, _ = run(sinfo.run, ["-R", "-h", "-o", "%E|%u|%N"], ctl)
    assert (rc, out) == (0, "maintenance|root|n4\n")
    assert run(sinfo.run, ["-h", "-t", "drain", "-N", "-o", "%N %t"], ctl)[1] == (
        "n4 drain\nn4 drain\n")


def test_bad_state_and_option_errors() -> None:
    rc, out, err = run(sinfo.run, ["-t", "nosuch"])
    assert (rc, out) == (1, "")
    assert err.startswith('sinfo: error: Bad state string: "nosuch"\n'
                          "sinfo: error: valid states: unknown,down,idle,")
    assert run(sinfo.run, ["--bogus"]) == (
        1, "", "sinfo: unrecognized option '--bogus'\n"
               'Try "sinfo --help" for more information\n')
    rc, _, err = run(sinfo.run, ["-a", "-p", "debug"])
    assert (rc, err) == (1, "sinfo: error: Conflicting options, -a and -p, specified. "
                            "Please choose one or the other.\n")


def test_controller_down() -> None:
    rc, out, err = run(sinfo.run, [])
    assert (rc, out) == (1, "")
    assert err.splitlines()[0] == (
        "slurm_load_partitions: Unable to contact slurm controller (connect failure)")
    assert run(sinfo.run, ["-V"]) == (0, "slurm 22.05.8\n", "")
