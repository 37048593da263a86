"""The lab engine: the interpreted shell, the limits, the hint ladder, the CLI, lab items."""

from __future__ import annotations

from pathlib import Path

import pytest

from quizzes.items.base import Common
from quizzes.items.lab import LabItem
from quizzes.labs import check, lab
from quizzes.labs.feedback import LabSession, hint, ladder
from quizzes.labs.shell import Interpreter, Runner, ShellError, parse
from quizzes.policy import Policy
from quizzes.where import Where

FIRST = ("#!/bin/bash\n#SBATCH -p gpu -J train --gres=gpu:1 -t 30 -o train-%j.out\n"
         "srun python train.py\n")


def _echo_runner(calls: list[list[str]]) -> Runner:
    def run(argv: list[str], env: dict[str, str]) -> tuple[str, str, int]:
        calls.append(argv)
        if argv[0] == "sbatch":
            return "4242\n", "", 0
        return " ".join(argv[1:]) + "\n", "", 0
    return run


def test_shell_assignments_substitution_and_variables() -> None:
    calls: list[list[str]] = []
    sh = Interpreter(_echo_runner(calls))
    sh.run('jid=$(sbatch --parsable a.sh)\nsbatch -d "afterok:${jid}" b.sh; '
           "sbatch --dependency=afterok:$jid \\\n  c.sh && echo '$jid' done # comment\n")
    assert calls[1] == ["sbatch", "-d", "afterok:4242", "b.sh"]
    assert calls[2] == ["sbatch", "--dependency=afterok:4242", "c.sh"]
    assert calls[3] == ["echo", "$jid", "done"]
    assert sh.vars["jid"] == "4242"


def test_shell_field_splitting_and_backquotes() -> None:
    calls: list[list[str]] = []
    sh = Interpreter(_echo_runner(calls), {"OPTS": "-N2 --gres=gpu:4"})
    sh.run('A=`sbatch --parsable x.sh`\nsbatch $OPTS "$OPTS" x$A.sh\n')
    assert calls[1] == ["sbatch", "-N2", "--gres=gpu:4", "-N2 --gres=gpu:4", "x4242.sh"]


@pytest.mark.parametrize("text,message", [
    ("sbatch a.sh | cut -d';' -f1", "pipes"),
    ("sbatch a.sh > out", "redirections"),
    ("for i in 1 2; do sbatch a.sh; done", "control flow"),
    ("sbatch a.sh &", "background"),
    ("echo $((1+2))", "arithmetic"),
    ("echo 'open", "not closed"),
    ("echo ${x:-default}", "only plain ${NAME}"),
    ("x=" + "$(echo " * 5000 + ")" * 5000, "more than 4 nested $(...)"),
])
def test_shell_refuses_what_it_does_not_interpret(text: str, message: str) -> None:
    with pytest.raises(ShellError) as info:
        parse(text)
    assert message in info.value.message


def test_exported_variables_reach_slurm_commands() -> None:
    text = ("export SBATCH_PARTITION=gpu\nexport SBATCH_JOB_NAME=train\n"
            "sbatch --gres=gpu:1 -t 30 -o train-%j.out --wrap 'srun python train.py'\n")
    assert check("first-job", text).passed, check("first-job", text).text()
    unexported = text.replace("export ", "")  # shell variables only: sbatch does not see them
    assert "JobName=wrap" in check("first-job", unexported).feedback


def test_nothing_the_learner_wrote_runs(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    text = (f"touch {marker}\nx=$(touch {marker})\n"
            f"sbatch --wrap 'touch {marker}' -p gpu -J train --gres=gpu:1 -t 30\n")
    verdict = check("first-job", text)
    assert not verdict.passed
    assert "touch: command not interpreted in a lab" in verdict.text()
    assert not marker.exists()


@pytest.mark.parametrize("text,message", [
    ("#!/bin/bash\n#SBATCH --array=0-999999\nsleep 1\n", "Invalid job array specification"),
    ("#!/bin/bash\n#SBATCH --array=0-999\nsleep 1\n", "a lab plays at most 128"),
    ("#!/bin/bash\n#SBATCH -N1\n" + "srun hostname\n" * 1000, "1000 srun lines"),
    ("scontrol update nodename=gpu01 state=down reason=x\nsbatch --wrap 'sleep 1'",
     "slurm_update error: Invalid user id"),
    ("scontrol create reservation starttime=now duration=10 users=student nodes=ALL",
     "Error creating the reservation: Invalid user id"),
    ("scontrol delete reservation=big", "delete_reservation reservation=big: Invalid user id"),
    ("scontrol reconfigure", "slurm_reconfigure error: Invalid user id"),
    ("\n".join(["sbatch --wrap 'sleep 1'"] * 40), "more than 32 commands"),
    ("squeue --format=%999999999i", "field width of 10000 characters or more"),
    ("a=xxxxxxxx\n" + "a=$a$a\n" * 80 + "echo $a", "a lab's shell keeps at most 65536"),
    ("sacct --format=JobID%99999999", "field width of 10000 characters or more"),
    ("\n".join(["sbatch --array=0-100 --wrap 'sleep 1'"] * 3), "tasks in all"),
])
def test_hostile_answers_get_a_clear_message(text: str, message: str) -> None:
    verdict = check("first-job", text)
    assert not verdict.passed
    assert message in verdict.text(), verdict.text()


def test_a_year_of_sleep_is_bounded_by_slurm_limits() -> None:
    text = ("#!/bin/bash\n#SBATCH -p gpu -J train --gres=gpu:1 -t 2-00:00:00 "
            "-o train-%j.out\nsrun sleep 365d\n")
    verdict = check("first-job", text)
    assert "TimeLimit=2-00:00:00" in verdict.feedback  # the partition's MaxTime
    unlimited = check("first-job", text.replace("2-00:00:00", "UNLIMITED"))
    assert "PENDING (Reason=PartitionTimeLimit)" in unlimited.feedback


def test_oversize_and_non_utf8_answers() -> None:
    assert "64 KiB" in check("first-job", b"#" * (64 * 1024 + 1)).feedback
    assert "not UTF-8" in check("first-job", b"#!/bin/bash\n\xff\xfe\n").feedback
    assert "empty" in check("first-job", "   \n").feedback


def test_a_check_does_not_depend_on_the_current_directory(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "preprocess.sh").write_text("#!/bin/bash\n#SBATCH -J evil\nexit 1\n")
    text = "j=$(sbatch --parsable preprocess.sh)\nsbatch -d afterok:$j train.sh\n"
    assert check("after-preprocess", text).passed


def test_job_ids_differ_between_answers() -> None:
    a = check("first-job", FIRST).feedback
    b = check("first-job", FIRST + "# another answer\n").feedback
    assert a != b  # the job id in the message differs: ids cannot be hard-coded


def test_hint_ladder_hints_then_docs_never_the_answer() -> None:
    for item_id in ("first-job", "ddp-2x4", "sweep-array", "survive-node-failure",
                    "after-preprocess", "diagnose-queue"):
        item = lab(item_id)
        rungs = ladder(item)
        assert rungs and rungs[0].startswith("Hint: ")
        assert rungs[-1].startswith("From the documentation: ")
        for rung in rungs:  # a rung submitted as an answer never passes
            assert not check(item_id, rung).passed
    assert hint(lab("first-job"), 99) is None


def test_lab_session_applies_the_attempts_policy() -> None:
    s = LabSession(lab("first-job"), Policy(attempts=3, penalty_per_retry=0.1))
    assert s.next_hint().startswith("Check an answer first")
    assert not s.check(FIRST.replace(" -t 30", "")).passed
    assert s.next_hint().startswith("Hint: ")
    assert s.next_hint().startswith("One hint per miss")
    assert s.check("").feedback.endswith("(not counted).")
    assert s.checks_left == 2
    assert s.check(FIRST).passed
    assert s.closed and s.score == pytest.approx(0.9)
    assert "passed on check 2" in s.status()
    t = LabSession(lab("first-job"), Policy(attempts=1))
    t.check("sbatch --wrap hostname")
    assert t.closed and t.score == 0.0
    assert t.check(FIRST).feedback.startswith("No checks left")
    practice = LabSession(lab("ddp-drill"))
    practice.check("#!/bin/bash\n#SBATCH -N1 -n2 --gpus-per-task=1\nsrun python train.py\n")
    assert practice.passed and practice.score == 0.0
    assert "practice, not counted" in practice.status()


def _item(lab_id: str) -> LabItem:
    common = Common("lab-x", "lab", "Lab", "", ("01.1",))
    return LabItem.from_bank(common, {"lab": lab_id}, Where("b.yaml", "lab-x"), [""])


def test_lab_item_grades_by_replay_and_refuses_practice_labs() -> None:
    item = _item("first-job")
    assert item.grade(FIRST, {}, "salt", "").score == 1.0
    miss = item.grade(FIRST.replace("-o train-%j.out", ""), {}, "salt", "")
    assert miss.score == 0.0 and "StdOut=slurm-" in miss.feedback
    assert "train.sh" in item.present({}).prompt
    assert "$ squeue" in _item("diagnose-queue").present({}).exhibit  # shown preformatted
    from quizzes.errors import BankError
    with pytest.raises(BankError, match="practice lab"):
        _item("ddp-drill")
    with pytest.raises(BankError, match="not a lab of the catalogue"):
        _item("no-such-lab")


def test_cli_list_show_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from quizzes.cli import main

    assert main(["lab", "list"]) == 0
    out = capsys.readouterr().out
    assert "first-job" in out and "[practice, not counted]" in out
    assert main(["lab", "show", "after-preprocess"]) == 0
    assert "--- preprocess.sh (in the lab's folder) ---" in capsys.readouterr().out
    good, bad = tmp_path / "good.sh", tmp_path / "bad.sh"
    good.write_text(FIRST)
    bad.write_text(FIRST.replace("-J train", "-J test"))
    assert main(["lab", "check", "first-job", str(good)]) == 0
    assert capsys.readouterr().out.startswith("PASS: ")
    assert main(["lab", "check", "first-job", str(bad)]) == 1
    assert "JobName=test" in capsys.readouterr().out
    assert main(["lab", "check", "nope", str(good)]) == 2
    assert "no lab 'nope'" in capsys.readouterr().err
    assert main(["lab", "check", "first-job", str(tmp_path / "missing")]) == 2
    assert main(["lab", "frobnicate"]) == 2


def test_sbatch_wait_is_bounded_and_observed() -> None:
    forever = check("first-job", "sbatch --wait -p gpu -t UNLIMITED --wrap 'srun sleep 9'")
    assert "had not ended after 72 simulated hours" in forever.feedback
    ok = check("first-job", "sbatch --wait -p gpu -J train --gres=gpu:1 -t 30 "
                            "-o train-%j.out --wrap 'srun python train.py'")
    assert ok.passed, ok.text()  # the job ran inside the wait: still observed
    timed_out = check("first-job", "sbatch --wait -p gpu -J train --gres=gpu:1 -t 30 "
                                   "-o train-%j.out --wrap 'srun python train.py\nsleep 7200'")
    assert "ended TIMEOUT" in timed_out.feedback, timed_out.text()  # not "refused"


def test_preemption_event_requeues_a_scavenger_job_through_preempt_qos() -> None:
    """The injected preemption is alice's QOS-high job pinned to the learner's node:
    preempt/qos (PreemptMode=REQUEUE) logs a PREEMPTED attempt, BeginTime 121 s on."""
    from quizzes.labs import lab
    from quizzes.labs.runner import play

    item = lab("survive-preemption")
    trial = play(item, "sbatch -q scavenger --gres=gpu:8 -t 2:00:00 --wrap 'sleep 3600'")
    facts = trial.jobs[0]
    assert trial.event == "preemption"
    assert facts.first is not None and facts.after_event is not None
    assert facts.after_event.state.value == "PENDING"
    assert facts.after_event.restart_count == 1
    runs = sorted((a for a in facts.attempts if a.job_id == facts.job_id),
                  key=lambda a: a.start_time or 0)
    assert [a.state.value for a in runs] == ["PREEMPTED", "COMPLETED"]
    first_end = runs[0].end_time
    assert first_end is not None and first_end - (facts.first.start_time or 0) == 600
    assert (runs[1].start_time or 0) - (runs[0].end_time or 0) >= 121


def test_lab_qos_grant_is_the_labs_own() -> None:
    """Only the preemption lab's cluster lets student use QOS scavenger (``sacctmgr modify
    user student set qos+=scavenger``); the course's associations stay as they are."""
    from quizzes.labs.runner import _associations

    def student_qos(grants: tuple[tuple[str, str], ...]) -> set[str]:
        return {q for a in _associations(grants).associations if a.user == "student"
                for q in a.qos}

    assert "scavenger" not in student_qos(())
    assert student_qos(lab("survive-preemption").grant_qos) == {"normal", "debug", "scavenger"}
    assert "scavenger" not in student_qos(())
