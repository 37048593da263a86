"""``sprio`` and ``sshare``: the priority plugin's factors and fair-share rows."""

from __future__ import annotations

import simpy
from cli_helpers import SMALL_CONF, make_controller, run, submit

from minislurm.cli import sprio, sshare
from minislurm.common.accounts import load_associations
from minislurm.conf import parse_config
from minislurm.ctld.controller import Controller

MULTIFACTOR = SMALL_CONF + """\
AccountingStorageType=accounting_storage/slurmdbd
PriorityType=priority/multifactor
PriorityWeightAge=1000
PriorityWeightFairshare=10000
PriorityWeightJobSize=100
"""


def _cluster() -> tuple[Controller, int, int]:
    """alice fills the cluster; her second job and bob's wait."""
    ctl = Controller(parse_config(MULTIFACTOR, "slurm.conf"), simpy.Environment(),
                     associations=load_associations())
    submit(ctl, "-n16", "-A", "llm", "--wrap", "x", run_time=1000, user="alice", uid=1001)
    a = submit(ctl, "-n4", "-A", "llm", "--wrap", "x", run_time=10, user="alice", uid=1001)
    b = submit(ctl, "-n1", "-A", "vision", "--wrap", "x", run_time=10, user="carol", uid=1003)
    ctl.run_for(600)
    return ctl, a, b


def test_sprio_lists_pending_jobs_with_the_weighted_factors() -> None:
    ctl, a, b = _cluster()
    rc, out, err = run(sprio.run, [], ctl)
    assert (rc, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].split() == ["JOBID", "PARTITION", "PRIORITY", "SITE", "AGE", "FAIRSHARE",
                                "JOBSIZE"]
    assert [ln.split()[0] for ln in lines[1:]] == [str(a), str(b)]
    rc, out, _ = run(sprio.run, ["-h", "-u", "carol", "-o", "%i %u"], ctl)
    assert out == f"{b} carol\n"
    assert run(sprio.run, ["-h", "-j", str(a), "-o", "%i"], ctl)[1] == f"{a}\n"
    weights = run(sprio.run, ["-w"], ctl)[1].splitlines()[1].split()
    assert weights == ["Weights", "1", "1000", "10000", "100"]


def test_sprio_refuses_priority_basic_and_bad_options() -> None:
    assert run(sprio.run, [], make_controller()) == (
        1, "", "You are not running a supported priority plugin\n(priority/basic).\n"
               "Only 'priority/multifactor' is supported.\n")
    assert run(sprio.run, ["--bogus"]) == (
        1, "", "sprio: unrecognized option '--bogus'\nTry \"sprio --help\" for more information\n")
    rc, _, err = run(sprio.run, ["-l", "-o", "%i"])
    assert rc == 1 and "mutually exclusive" in err
    rc, _, err = run(sprio.run, [])
    assert (rc, err.splitlines()[0]) == (1, "Couldn't get priority factors from controller: "
                                            "Unable to contact slurm controller (connect failure)")


def test_sshare_shows_accounts_and_the_callers_own_user_rows() -> None:
    ctl, _, _ = _cluster()
    rc, out, _ = run(sshare.run, ["-n", "-P", "-o", "Account,User"], ctl, user="alice")
    rows = [tuple(c.strip() for c in ln.split("|")) for ln in out.splitlines()]
    assert rc == 0  # the account column keeps its tree indentation, even with -P
    assert ("llm", "alice") in rows and ("vision", "carol") not in rows
    assert ("research", "") in rows  # account rows are always there
    out = run(sshare.run, ["-n", "-P", "-o", "Account,User", "-a"], ctl, user="alice")[1]
    assert ("vision", "carol") in [tuple(c.strip() for c in ln.split("|"))
                                   for ln in out.splitlines()]
    out = run(sshare.run, ["-n", "-P", "-o", "User", "-U", "-u", "carol"], ctl)[1]
    assert out == "carol\n"
    out = run(sshare.run, ["-n", "-P", "-o", "Account,User", "-a", "-A", "vision"], ctl)[1]
    assert [ln.strip() for ln in out.splitlines()] == ["vision|", "vision|carol"]


def test_sshare_errors_and_help() -> None:
    assert run(sshare.run, ["-o", "Bogus"]) == (
        1, "", 'sshare: error: Invalid field requested: "Bogus"\n')
    assert run(sshare.run, ["-e"])[1].startswith("Account           Cluster")
    assert run(sshare.run, ["--help"])[1].startswith("Usage:  sshare [OPTION]")
    assert run(sshare.run, ["-x"]) == (
        1, "", "sshare: invalid option -- 'x'\nTry \"sshare --help\" for more information\n")
