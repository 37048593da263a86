"""The lab widget's callbacks, headless: check, feedback, hints, attempts, a file answer."""

from __future__ import annotations

from pathlib import Path

from quizzes.labs.widget import LabWidget, lab_widget
from quizzes.policy import Policy

FIRST = ("#!/bin/bash\n#SBATCH -p gpu -J train --gres=gpu:1 -t 30 -o train-%j.out\n"
         "srun python train.py\n")


def test_textarea_check_feedback_and_hints() -> None:
    wdg = LabWidget("first-job", policy=Policy(attempts=2))
    assert wdg.answer.value.startswith("#!/bin/bash")
    assert "first-job" in wdg.header.value and "2 check(s) left" in wdg.header.value
    assert "Check an answer first" in wdg.on_hint()
    wdg.answer.value = FIRST.replace("-J train", "-J demo")
    verdict = wdg.on_check()
    assert not verdict.passed and "JobName=demo" in wdg.feedback.value
    assert wdg.on_hint().startswith("Hint: ") and "Hint: " in wdg.hints.value
    wdg.answer.value = FIRST
    assert wdg.on_check().passed
    assert "PASS: " in wdg.feedback.value and "passed on check 2" in wdg.header.value
    assert wdg.check_button.disabled


def test_out_of_checks_closes_the_lab() -> None:
    wdg = LabWidget("diagnose-queue", policy=Policy(attempts=1))
    assert wdg.answer.value == ""
    assert "$ squeue" in wdg.task.value
    wdg.answer.value = "Priority"
    wdg.on_check()
    assert wdg.check_button.disabled and "0 check(s) left" in wdg.header.value


def test_file_answer_opened_in_the_editor(tmp_path: Path) -> None:
    path = tmp_path / "train.sh"
    wdg = LabWidget("first-job", file=path)
    assert path.read_text() == wdg.session.lab.skeleton  # the skeleton to start from
    assert "train.sh" in wdg.link.value and "JupyterLab" in wdg.link.value
    assert not wdg.on_check().passed
    path.write_text(FIRST)
    assert wdg.on_check().passed
    path.unlink()
    assert "cannot read" in wdg.on_check().feedback


def test_lab_widget_view_and_practice_mark() -> None:
    view = lab_widget("ddp-drill")
    header = view.children[0].value
    assert "practice, not counted" in header and "unlimited checks" in header


def test_the_task_is_prose_and_only_code_is_preformatted():
    from quizzes.labs.catalog import lab
    from quizzes.labs.widget import task_html

    item = lab("first-job")
    page = task_html(item)
    task_para = page.split("<pre", 1)[0]
    assert "<p>Write a batch script train.sh for partition gpu" in task_para
    assert "<code>python train.py</code>" in task_para      # inline code stays inline
    assert page.count("<pre") == 1 and "#SBATCH" in page.split("<pre", 1)[1]  # the skeleton
    diagnose = task_html(lab("diagnose-queue"))
    assert "<pre" in diagnose and "JOBID PARTITION" in diagnose  # minislurm's output


def test_feedback_keeps_its_lines_and_wraps_between_words():
    from quizzes.labs.widget import LabWidget

    wdg = LabWidget("first-job")
    wdg.answer.value = "#!/bin/bash\n#SBATCH -p gpu -J demo\nsrun python train.py\n"
    wdg.on_check()
    assert "<pre" not in wdg.feedback.value
    assert "lab-feedback" in wdg.feedback.value
    assert "white-space: pre-wrap; word-break: normal" in wdg.feedback.value
