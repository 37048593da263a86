"""slurmctld's refusals as each command words them (`minislurm.ctld.submit.reject`), and
the node counts and GRES texts a submission is refused for.

Measured on 22.05.8 (test_gres_frontend_differential.py runs the same lines on
real Slurm): salloc says ``Job submit/allocate failed``, srun ``Unable to allocate
resources``, sbatch ``Batch job submission failed``; ``--gpus=x``/``--gpus-per-node=-1``
reach slurmctld (a job id is used) and end ``Requested node configuration is not
available``.
"""

from __future__ import annotations

import shlex

import pytest
from captures import capture_root, load_case
from ctld_helpers import ref_controller

from minislurm.ctld import Controller
from minislurm.ctld.submit import NODE_CONFIG, reject
from minislurm.errors import SlurmError
from minislurm.options.sbatch import parse_sbatch
from minislurm.sim.cluster import Cluster
from minislurm.states import JobState


@pytest.mark.parametrize(("prog", "words"), [
    ("sbatch", "Batch job submission failed"),
    ("salloc", "Job submit/allocate failed"),
    ("srun", "Unable to allocate resources"),
])
def test_each_command_words_a_rejection_its_own_way(prog: str, words: str) -> None:
    err = reject(prog, NODE_CONFIG, "first line")
    assert err.message == f"{prog}: error: first line\n{prog}: error: {words}: {NODE_CONFIG}"
    assert err.exit_code == 1


@pytest.mark.parametrize("option", ["--gpus=x", "--gpus=-1", "--gpus-per-node=x",
                                    "--gpus-per-node=-1"])
def test_gpus_text_that_is_not_a_count_is_refused_by_slurmctld(option: str) -> None:
    cluster = Cluster()
    refused = cluster.run(f"sbatch {option} --wrap true")
    assert (refused.returncode, refused.stdout, refused.stderr) == (
        1, "", f"sbatch: error: Batch job submission failed: {NODE_CONFIG}\n")
    assert cluster.run("sbatch --parsable --wrap true").stdout == "2\n"  # id 1 was used


def _sbatch(ctl: Controller, *argv: str) -> tuple[str, int]:
    """(stderr, rc) of ``sbatch ARGV --wrap true`` through the front end and the controller."""
    try:
        inv = parse_sbatch([*argv, "--wrap", "true"], env={}, cwd="/tmp", now=ctl.now)
        ctl.submit_invocation(inv, cwd="/tmp")
    except SlurmError as exc:
        return exc.message, exc.exit_code
    return "", 0


def test_zero_nodes_is_an_invalid_node_count() -> None:
    # CAPTURES.md, b_sbatch_errors: -N0 -> "Node count specification invalid", rc 1
    ctl = ref_controller()
    assert _sbatch(ctl, "-N0") == (
        "sbatch: error: Batch job submission failed: Node count specification invalid", 1)
    assert _sbatch(ctl, "--nodes=0") == (
        "sbatch: error: Batch job submission failed: Node count specification invalid", 1)
    assert [r.state for r in ctl.accounting()] == [JobState.FAILED, JobState.FAILED]
    assert _sbatch(ctl, "-N1") == ("", 0)


@pytest.mark.parametrize("name", ["11_bad_gres_syntax_count", "13_bad_gres_syntax_colons"])
def test_bad_gres_syntax_is_rejected_by_sbatch_itself(name: str) -> None:
    if capture_root() is None:
        pytest.skip("the captures of real Slurm (../shared/slurm-reference) are absent")
    case = load_case("b_sbatch_errors", name)
    gres = next(a for a in shlex.split(case.cmd) if a.startswith("--gres="))
    err, rc = _sbatch(ref_controller(), gres)
    assert (err, rc) == (case.err.rstrip("\n"), case.rc)  # no "Batch job submission failed:"
