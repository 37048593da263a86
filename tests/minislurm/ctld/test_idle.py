"""Controller fixes checked against Slurm 22.05 behaviour (PriorityCalcPeriod, idling).

``PriorityCalcPeriod`` is kept in seconds (``SlurmConfig.priority.calc_period``), and a
controller whose pending jobs can never start without an outside change stops
ticking, so ``env.run()`` returns (Slurm's own clock would tick forever).
"""

from __future__ import annotations

import shlex

import pytest
from captures import capture_root, load_case
from ctld_helpers import ref_controller, sub

from minislurm.ctld import Controller
from minislurm.errors import SlurmError
from minislurm.job import StepRecord
from minislurm.options.sbatch import parse_sbatch
from minislurm.states import JobState, Reason

MULTIFACTOR = (
    "PriorityType=priority/multifactor\nPriorityWeightAge=1000\n"
    "AccountingStorageType=accounting_storage/slurmdbd\n"
)


def test_priority_calc_period_is_in_seconds() -> None:
    ctl = ref_controller(MULTIFACTOR + "PriorityCalcPeriod=2\n")  # 2 minutes
    assert ctl._prio_period == 120
    assert ref_controller(MULTIFACTOR)._prio_period == 300  # Slurm's default: 5 minutes


def test_priorities_are_recomputed_every_calc_period() -> None:
    ctl = ref_controller(
        MULTIFACTOR + "PriorityCalcPeriod=1\nPriorityMaxAge=1:00:00\nPriorityFlags=ACCRUE_ALWAYS\n")
    sub(ctl, 600, nodes_min=4, exclusive="exclusive")
    waiting = sub(ctl, 10)
    ctl.run_for(0)
    before = ctl.job(waiting).priority
    ctl.run_for(59)
    assert ctl.job(waiting).priority == before  # not yet recomputed
    ctl.run_for(2)
    assert ctl.job(waiting).priority > before  # recomputed at 60 s: it aged a minute


def test_a_job_that_can_never_start_lets_the_clock_stop() -> None:
    ctl = ref_controller(MULTIFACTOR)
    done = sub(ctl, 30)
    never = sub(ctl, 10, partition="short", time_limit=10)  # over MaxTime, EnforcePartLimits=NO
    ctl.run()  # returns: nothing can change without a user or an admin
    assert ctl.job(done).state is JobState.COMPLETED
    assert ctl.job(never).state is JobState.PENDING
    assert ctl.job(never).reason is Reason.PARTITION_TIME_LIMIT
    assert ctl.idle


def test_idle_is_false_while_a_job_runs_or_waits_for_its_begin_time() -> None:
    ctl = ref_controller(MULTIFACTOR)
    assert ctl.idle
    sub(ctl, 100)
    ctl.run_for(1)
    assert not ctl.idle  # a job runs
    ctl.run_for(200)
    assert ctl.idle
    later = sub(ctl, 10, begin=ctl.now + 3600)
    ctl.run_for(10)
    assert not ctl.idle  # its BeginTime will come
    ctl.run()
    assert ctl.job(later).state is JobState.COMPLETED
    assert ctl.idle


def test_an_outside_change_wakes_an_idle_controller() -> None:
    ctl = ref_controller(MULTIFACTOR)
    never = sub(ctl, 10, partition="short", time_limit=10)
    ctl.run()
    assert ctl.idle and ctl.job(never).state is JobState.PENDING
    ctl.update_partition("short", "DOWN")
    assert not ctl.idle  # a scheduler pass is due
    ctl.run()
    assert ctl.idle


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


def _step(step_id: int, end: int) -> StepRecord:
    return StepRecord(step_id=step_id, name="hostname", state=JobState.COMPLETED, nodelist="n1",
                      num_nodes=1, ntasks=1, num_cpus=1, start_time=end - 5, end_time=end)


def test_an_srun_step_shows_in_the_jobs_accounting() -> None:
    ctl = ref_controller()
    jid = sub(ctl, 60)
    ctl.run_for(10)
    ctl.add_step(jid, _step(0, ctl.now))
    assert [s.step_id for s in ctl.job(jid).steps] == [0]
    ctl.run()
    (record,) = [r for r in ctl.accounting() if r.job_id == jid]
    assert sorted(str(s.step_id) for s in record.steps) == ["0", "batch"]


def test_a_step_reported_after_its_job_ended_joins_the_recorded_attempt() -> None:
    ctl = ref_controller()
    jid = sub(ctl, 20)
    ctl.run()
    ctl.add_step(jid, _step(1, ctl.now))
    (record,) = [r for r in ctl.accounting() if r.job_id == jid]
    assert sorted(str(s.step_id) for s in record.steps) == ["1", "batch"]
    with pytest.raises(KeyError):
        ctl.add_step(999, _step(0, ctl.now))
