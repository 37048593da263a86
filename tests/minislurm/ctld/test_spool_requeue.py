"""A requeued job's attempts share one spool directory: a late-ending earlier attempt
must not write its status over the relaunched one's (the submitit requeue race that
made a completed second attempt show FAILED 0:9 in sacct)."""

from __future__ import annotations

from pathlib import Path

from minislurm.slurmd.spool import JobSpool, read_json, write_json
from minislurm.slurmd.stepd_handle import StepdHandle


def _launched(root: Path, restart: int) -> JobSpool:
    spool = JobSpool(root, 100000, "n1", restart)
    spool.dir.mkdir(parents=True, exist_ok=True)
    write_json(spool.launch, {"job_id": 100000, "restart_count": restart})
    return spool


def test_superseded_only_by_a_later_attempt(tmp_path: Path) -> None:
    first = _launched(tmp_path, 0)
    assert not first.superseded()
    _launched(tmp_path, 1)
    assert first.superseded()
    assert not JobSpool(tmp_path, 100000, "n1", 1).superseded()


def test_late_outcome_of_the_first_attempt_keeps_the_second_status(tmp_path: Path) -> None:
    first = JobSpool(tmp_path, 100000, "n1", 0)
    second = _launched(tmp_path, 1)
    status = {"restart_count": 1, "job_id": 100000, "exit_code": 0, "signal": 0,
              "end_time": 1.0, "error": ""}
    write_json(second.status, status)
    outcome = StepdHandle(first, 0).outcome()  # the first stepd left no status of its own
    assert outcome.signal == 9
    assert read_json(second.status) == status
    assert StepdHandle(second, 0).outcome().exit_code == 0


def test_a_lone_attempt_without_status_is_recorded_killed(tmp_path: Path) -> None:
    only = _launched(tmp_path, 0)
    outcome = StepdHandle(only, 0).outcome()
    assert (outcome.exit_code, outcome.signal) == (0, 9)
    rec = read_json(only.status)
    assert rec is not None and rec["error"] == "slurmstepd ended without a status"
