"""course/lessons/ddp_drill.py: the report's parts (the real drill itself runs in lesson
7's notebook, checked by nbval, and as tests/course/ddp/test_ddp_minislurm.py's drill)."""

from __future__ import annotations

from course.ddp.logfmt import format_record
from course.lessons.ddp_drill import DrillReport, _final_digest

SACCT = "".join(line + " \n" for line in (  # sacct -X -o JobID,State,ExitCode,NodeList
    "JobID             State ExitCode        NodeList",
    "------------ ---------- -------- ---------------",
    "4002          NODE_FAIL      0:0      gpu[01-02]",
    "4002          COMPLETED      0:0      gpu[01-02]"))


def _report(digest: str, reference: str, sacct: str = "") -> DrillReport:
    return DrillReport(
        job_id=4002, nodelist="gpu[01-02]", down_node="gpu02",
        after_failure={"JobState": "PENDING", "Reason": "BeginTime", "Restarts": "1",
                       "Requeue": "1"},
        sacct=sacct, resumed_at=5, steps=20, digest=digest, reference=reference, log="",
        seconds=1.0)


def test_final_digest_is_the_last_attempts() -> None:
    log = "\n".join([format_record("final", step=20, sha256="aaa"),
                     "job 1 on gpu[01-02] restart_count=1",
                     format_record("final", step=20, sha256="bbb")])
    assert _final_digest(log) == "bbb"
    assert _final_digest("job 1 on gpu01 restart_count=0\n") == ""


def test_bit_identical_needs_equal_nonempty_digests() -> None:
    assert _report("abc", "abc").bit_identical
    assert not _report("abc", "abd").bit_identical
    assert not _report("", "").bit_identical


def test_summary_names_what_the_learner_checks() -> None:
    text = _report("a" * 64, "a" * 64).summary()
    assert "gpu02 set DOWN" in text
    assert "JobState=PENDING Reason=BeginTime Restarts=1" in text
    assert "resumed from step 5 of 20" in text
    assert text.endswith("bit-identical: True")


def test_attempt_states_are_sacct_state_column() -> None:
    assert _report("a", "a", SACCT).attempt_states == ["NODE_FAIL", "COMPLETED"]
    assert _report("a", "a", SACCT + "\n").attempt_states == ["NODE_FAIL", "COMPLETED"]
    assert _report("a", "a").attempt_states == []
