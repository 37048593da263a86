"""``scontrol``: hostlists (no controller needed), show, update, hold, reservations."""

from __future__ import annotations

import re

import pytest
from captures import cases, load_case
from cli_helpers import make_controller, run, submit

from minislurm.cli import scontrol
from minislurm.states import JobState, Reason


# ------------------------------------------------------------------ hostlists (capture c1)
@pytest.mark.parametrize("name", [c.name for c in cases("c1_hostlist")])
def test_hostlist_commands_match_the_capture_without_a_controller(name: str) -> None:
    """c1_hostlist: ``show hostnames|hostlist`` print exactly what Slurm printed."""
    case = load_case("c1_hostlist", name)
    env: dict[str, str] = {}
    command = case.cmd
    match = re.match(r"(\w+)='([^']*)' (.*)", command)
    if match:  # "SLURM_JOB_NODELIST='n[1-2]' scontrol show hostnames"
        env[match.group(1)] = match.group(2)
        command = match.group(3)
    argv = [w.strip("'") for w in command.split()[1:]]
    assert run(scontrol.run, argv, env=env) == (case.rc, case.out, case.err)


def test_hostlistsorted_keeps_duplicates() -> None:
    """CAPTURES.md c1: ``hostlistsorted n3,n1,n2,n2,n10`` -> ``n[1-2,2-3,10]``."""
    assert run(scontrol.run, ["show", "hostlistsorted", "n3,n1,n2,n2,n10"]) == (
        0, "n[1-2,2-3,10]\n", "")


def test_hostnames_reads_slurm_nodelist_and_bad_lists() -> None:
    assert run(scontrol.run, ["show", "hostnames"], env={"SLURM_NODELIST": "n[1-2]"}) == (
        0, "n1\nn2\n", "")
    rc, out, err = run(scontrol.run, ["show", "hostlist", "n[3-1]"])
    assert (rc, out) == (1, "")
    assert err == ("scontrol: error: _parse_single_range: Invalid range: `3-1'\n"
                   "Invalid hostlist: n[3-1]\n")
    assert run(scontrol.run, ["show", "hostnames", "n[3-1]"])[0] == 0  # print_hosts is void


# ------------------------------------------------------------------ show (capture c2)
def test_show_partition_matches_the_idle_capture() -> None:
    out = load_case("c2_formats_and_reasons", "00_idle_views").out
    partitions = out[out.index("PartitionName=debug"):out.index("NodeName=n1")]
    assert run(scontrol.run, ["show", "partition"], make_controller()) == (0, partitions, "")


def test_show_node_lines_that_do_not_depend_on_the_host() -> None:
    out = load_case("c2_formats_and_reasons", "00_idle_views").out
    captured = out[out.index("NodeName=n1"):].splitlines()
    rc, mine, _ = run(scontrol.run, ["show", "node", "n1"], make_controller())
    host_facts = ("CPULoad", "OS=", "FreeMem", "BootTime", "LastBusyTime")
    keep = [ln for ln in captured if not any(f in ln for f in host_facts)]
    assert rc == 0
    assert [ln for ln in mine.splitlines() if not any(f in ln for f in host_facts)] == keep


def test_show_job_of_a_held_job_and_one_liner() -> None:
    ctl = make_controller()
    job = submit(ctl, "-H", "-J", "helduser", "--wrap", "sleep 10")
    ctl.run_for(1)
    rc, out, _ = run(scontrol.run, ["show", "job", str(job)], ctl)
    assert rc == 0
    assert f"JobId={job} JobName=helduser\n" in out
    assert "   Priority=0 Nice=0 Account=root QOS=normal\n" in out
    assert "   JobState=PENDING Reason=JobHeldUser Dependency=(null)\n" in out
    assert out.endswith("   Power=\n   \n\n")
    rc, one, _ = run(scontrol.run, ["-o", "show", "job", str(job)], ctl)
    assert one.count("\n") == 1 and one.startswith(f"JobId={job} JobName=helduser UserId=")


def test_show_one_task_of_a_pending_array_like_f3_array() -> None:
    """f3_array/05: ``scontrol show job 108_7`` -> ``JobId=108 ArrayJobId=108 ArrayTaskId=7``."""
    case = load_case("f3_array", "05_scontrol_show_job_task")
    ctl = make_controller(first_job_id=108)
    submit(ctl, "--array=0-7%2", "-J", "arr", "--wrap", "sleep 4", run_time=4)
    ctl.run_for(1)
    rc, out, _ = run(scontrol.run, ["show", "job", "108_7"], ctl)
    assert rc == 0
    assert out.splitlines()[0] == case.out.splitlines()[0]
    assert out.splitlines()[1] == case.out.splitlines()[1]


def test_show_errors() -> None:
    ctl = make_controller()
    assert run(scontrol.run, ["show", "job", "999999"], ctl) == (
        1, "", "slurm_load_jobs error: Invalid job id specified\n")
    assert run(scontrol.run, ["show", "job"], ctl) == (0, "No jobs in the system\n", "")
    assert run(scontrol.run, ["show", "node", "n9"], ctl) == (1, "Node n9 not found\n", "")
    assert run(scontrol.run, ["show", "partition", "nosuch"], ctl) == (
        1, "Partition nosuch not found\n", "")
    assert run(scontrol.run, ["show", "reservation"], ctl) == (
        0, "No reservations in the system\n", "")
    assert run(scontrol.run, ["show", "bogus"], ctl) == (
        1, "", "invalid entity:bogus for keyword:show \n")
    assert run(scontrol.run, ["frobnicate"], ctl) == (1, "", "invalid keyword: frobnicate\n")


def test_controller_down_for_show_but_not_for_hostnames() -> None:
    rc, _, err = run(scontrol.run, ["show", "node"])
    assert rc == 1
    assert err.splitlines()[0] == (
        "slurm_load_node error: Unable to contact slurm controller (connect failure)")
    assert run(scontrol.run, ["show", "hostnames", "n[1-2]"]) == (0, "n1\nn2\n", "")


# ------------------------------------------------------------------ update, hold, requeue
def test_drain_needs_a_reason_then_shows_in_the_node() -> None:
    """c2/03 ``scontrol update nodename=n4 state=drain reason=maintenance``."""
    ctl = make_controller()
    rc, _, err = run(scontrol.run, ["update", "nodename=n4", "state=drain"], ctl)
    assert (rc, err) == (1, "You must specify a reason when DOWNING or DRAINING a node. "
                            "Request denied\n")
    assert run(scontrol.run, ["update", "nodename=n4", "state=drain", "reason=maintenance"],
               ctl) == (0, "", "")
    out = run(scontrol.run, ["show", "node", "n4"], ctl)[1]
    assert "   State=IDLE+DRAIN ThreadsPerCore=1" in out
    assert "   Reason=maintenance [root@2026-01-05T08:00:00]\n" in out
    assert run(scontrol.run, ["update", "NodeName=n4", "State=RESUME"], ctl) == (0, "", "")
    assert "Reason=" not in run(scontrol.run, ["show", "node", "n4"], ctl)[1]


def test_update_errors() -> None:
    ctl = make_controller()
    assert run(scontrol.run, ["update", "nodename=n4", "state=bogus"], ctl) == (
        1, "", "Invalid input: state=bogus\nRequest aborted\nValid states are: NoResp DRAIN "
               "FAIL FUTURE RESUME POWER_DOWN POWER_UP UNDRAIN\n"
               "Not all states are valid given a node's prior state\n")
    assert run(scontrol.run, ["update", "nodename=n4", "weight=5"], ctl) == (
        1, "", "Update of this parameter is not supported: weight=5\nRequest aborted\n")
    assert run(scontrol.run, ["update", "nodename=n4"], ctl) == (
        1, "", "No changes specified\n")
    assert run(scontrol.run, ["update", "nodename=n9", "state=resume"], ctl) == (
        1, "", "slurm_update error: Invalid node name specified\n")
    assert run(scontrol.run, ["update", "foo=bar"], ctl)[2].startswith(
        "No valid entity in update command\n")
    assert run(scontrol.run, ["update", "partitionname=short", "state=bogus"], ctl) == (
        1, "", "scontrol: error: Invalid input: state=bogus\n"
               "scontrol: error: Acceptable State values are UP, DOWN, DRAIN and INACTIVE\n")
    assert run(scontrol.run, ["update", "partitionname=nosuch", "state=down"], ctl) == (
        1, "", "slurm_update error: Invalid partition name specified\n")
    assert run(scontrol.run, ["update", "partitionname=short", "state=down"], ctl)[0] == 0
    assert [p.state for p in ctl.partitions() if p.name == "short"] == ["DOWN"]


def test_hold_uhold_release() -> None:
    """``hold`` -> JobHeldAdmin, ``uhold`` -> JobHeldUser, ``release`` -> runs."""
    ctl = make_controller()
    a = submit(ctl, "-n16", "--wrap", "sleep 100", run_time=100)
    b = submit(ctl, "-J", "later", "-n16", "--wrap", "sleep 1", run_time=1)
    c = submit(ctl, "-J", "later2", "-n16", "--wrap", "sleep 1", run_time=1)
    ctl.run_for(1)
    assert run(scontrol.run, ["hold", str(b)], ctl) == (0, "", "")
    assert run(scontrol.run, ["uhold", "Name=later2"], ctl) == (0, "", "")
    assert ctl.job(b).reason is Reason.JOB_HELD_ADMIN
    assert ctl.job(c).reason is Reason.JOB_HELD_USER
    rc, _, err = run(scontrol.run, ["hold", str(a)], ctl)
    assert (rc, err) == (1, f"Job is no longer pending execution for job {a}\n")
    assert run(scontrol.run, ["release", str(b), str(c)], ctl) == (0, "", "")
    assert run(scontrol.run, ["hold"], ctl) == (1, "", "too few arguments for keyword:hold\n")
    assert run(scontrol.run, ["hold", "later"], ctl) == (
        1, "", "Invalid job id specified for job later\n")  # names need Name=


def test_requeue_a_running_job() -> None:
    ctl = make_controller()
    job = submit(ctl, "--wrap", "sleep 100", run_time=100)
    ctl.run_for(1)
    assert run(scontrol.run, ["requeue", str(job)], ctl) == (0, "", "")
    ctl.run_for(1)
    assert ctl.job(job).state is JobState.PENDING
    assert ctl.job(job).restart_count == 1


# ------------------------------------------------------------------ reservations (c2/19)
def test_create_and_show_a_reservation_like_the_capture() -> None:
    """c2/03 + c2/19 with the capture's times moved to the simulated clock."""
    ctl = make_controller()
    argv = ["create", "reservation", "reservationname=resv1", "starttime=now+2hours",
            "duration=60", "nodes=n1", "users=root"]
    assert run(scontrol.run, argv, ctl) == (0, "Reservation created: resv1\n", "")
    captured = load_case("c2_formats_and_reasons", "19_scontrol_show_reservation").out
    expected = (captured.replace("2026-12-02T15:27:43", "2026-01-05T10:00:00")
                .replace("2026-12-02T16:27:43", "2026-01-05T11:00:00"))
    assert run(scontrol.run, ["show", "reservation"], ctl) == (0, expected, "")


def test_create_reservation_errors() -> None:
    ctl = make_controller()
    base = ["create", "reservation", "starttime=now", "duration=60", "nodes=n1"]
    assert run(scontrol.run, base, ctl) == (
        1, "", "scontrol: error: Either Users/Groups and/or Accounts must be specified.  "
               "No reservation created.\n")
    assert run(scontrol.run, [*base, "users=root"], ctl) == (
        0, "Reservation created: root_1\n", "")
    rc, _, err = run(scontrol.run, [*base, "users=root", "reservationname=again"], ctl)
    # 22.05.8 (tests/minislurm/ctld/reservations/test_resv_admin.py): "busy" is for nodes running
    # jobs
    assert (rc, err) == (1, "Error creating the reservation: Requested reservation "
                            "overlaps with another reservation\n")


def test_interactive_mode_reads_commands_from_stdin() -> None:
    rc, out, err = run(scontrol.run, [], stdin="show hostlist n1,n2\nquit\nshow hostlist n3\n")
    assert (rc, out, err) == (0, "scontrol: n[1-2]\nscontrol: ", "")
    assert run(scontrol.run, [], stdin="show hostnames n[1-2]\n") == (
        0, "scontrol: n1\nn2\nscontrol: \n", "")  # end of input: a newline, as scontrol


def test_options_help_and_version() -> None:
    assert run(scontrol.run, ["-V"]) == (0, "slurm 22.05.8\n", "")
    assert run(scontrol.run, ["version"]) == (0, "slurm 22.05.8\n", "")
    assert run(scontrol.run, ["--bogus"]) == (
        1, "", "scontrol: unrecognized option '--bogus'\n"
               'Try "scontrol --help" for more information\n')
    assert run(scontrol.run, ["-h"])[1].startswith("scontrol [<OPTION>] [<COMMAND>]\n")


def test_only_an_operator_may_update_nodes_partitions_and_reservations() -> None:
    """slurmctld's validate_super_user, measured on 22.05.8 as ``nobody``: every
    refusal is ``Invalid user id`` (exit 1) and changes nothing; root may."""
    ctl = make_controller()
    plain = {"user": "alice", "uid": 1234}
    down = ["update", "nodename=n1", "state=down", "reason=x"]
    assert run(scontrol.run, down, ctl, **plain) == (
        1, "", "slurm_update error: Invalid user id\n")
    assert run(scontrol.run, ["update", "nodename=n1", "reason=x"], ctl, **plain)[0] == 1
    assert run(scontrol.run, ["update", "partitionname=short", "state=down"], ctl, **plain) == (
        1, "", "slurm_update error: Invalid user id\n")
    resv = ["create", "reservation", "reservationname=r1", "starttime=now", "duration=10",
            "nodes=n1", "users=root"]
    assert run(scontrol.run, resv, ctl, **plain) == (
        1, "", "Error creating the reservation: Invalid user id\n")
    _, out, _ = run(scontrol.run, ["show", "node", "n1"], ctl)
    assert "State=IDLE" in out and "Reason=" not in out
    assert "State=UP" in run(scontrol.run, ["show", "partition", "short"], ctl)[1]
    assert run(scontrol.run, resv, ctl) == (0, "Reservation created: r1\n", "")
    assert run(scontrol.run, ["update", "reservation=r1", "duration=20"], ctl, **plain) == (
        1, "", "Error updating the reservation: Invalid user id\n"
               "slurm_update error: Invalid user id\n")
    assert run(scontrol.run, ["delete", "reservation=r1"], ctl, **plain) == (
        1, "", "delete_reservation reservation=r1: Invalid user id\n")
    assert run(scontrol.run, down, ctl)[0] == 0  # root
    assert run(scontrol.run, ["delete", "reservation=r1"], ctl)[0] == 0


def test_slurm_user_and_the_embedded_clusters_own_user_are_operators() -> None:
    """SlurmUser (by name or number) may; the embedded Cluster's learner runs it as its
    SlurmUser would (the lessons drain nodes), another user named in run() may not."""
    from ctld_helpers import REF_CONF

    from minislurm.conf import parse_config
    from minislurm.ctld.auth import operator_uids, slurm_user_uid
    from minislurm.sim import Cluster

    config = parse_config(REF_CONF + "SlurmUser=4321\n", "slurm.conf")
    assert operator_uids(config) == {0, 4321}
    assert slurm_user_uid(None) == 0 and slurm_user_uid("no-such-user-here") is None
    cluster = Cluster()
    assert cluster.run("scontrol update nodename=gpu01 state=drain reason=x").returncode == 0
    refused = cluster.run("scontrol update nodename=gpu02 state=drain reason=x", user="bob")
    assert (refused.returncode, refused.stderr) == (1, "slurm_update error: Invalid user id\n")
