"""A lab item as the learner sees it: minislurm's output is the item's exhibit (shown
preformatted, line for line), the task stays prose, the lab's files stay code."""

from __future__ import annotations

import html
import json

from quizzes.bank import load_banks
from quizzes.examclient import presented
from quizzes.items.base import Common
from quizzes.items.lab import LabItem
from quizzes.labs import lab
from quizzes.labs.diagnose import exhibit
from quizzes.widget import prompt_html


def _item(lab_id: str) -> LabItem:
    return LabItem(Common(f"lab-{lab_id}", "lab", "Lab: {{what}}", "explained", ("L.1",)),
                   lab_id)


def test_a_diagnose_labs_squeue_output_is_the_exhibit_not_the_prompt() -> None:
    shown = _item("diagnose-queue").present({"what": "why does it wait"})
    squeue = exhibit(lab("diagnose-queue").scenario).text.rstrip("\n")
    assert shown.exhibit == squeue
    lines = shown.exhibit.split("\n")
    assert lines[0] == "$ squeue" and len(lines) >= 3
    assert any(line.rstrip().endswith("(Resources)") for line in lines)
    assert "JOBID" not in shown.prompt and "(Resources)" not in shown.prompt
    assert shown.prompt.startswith("Lab: why does it wait\n")
    assert lab("diagnose-queue").task in shown.prompt
    # the widget: the exhibit is one preformatted block holding squeue's lines as they are
    page = prompt_html(shown)
    assert "<pre" in page and html.escape("\n".join(lines[1:3]), quote=False) in page


def test_a_script_labs_starting_file_is_code_and_there_is_no_exhibit() -> None:
    item = lab("first-job")
    shown = _item("first-job").present({"what": "first job"})
    assert shown.exhibit == ""
    page = prompt_html(shown)
    # the skeleton keeps its lines (a <pre> block), the task is a paragraph
    assert html.escape(item.skeleton.rstrip("\n"), quote=False) in page
    assert f"<p>{html.escape(item.task, quote=False)[:40]}" in page


def test_the_exam_service_hands_the_exhibit_to_the_widget() -> None:
    """What the exam desk sends (JSON) carries the exhibit, and the notebook's client
    reads it back into the card the widget renders."""
    from dataclasses import asdict

    bank = load_banks()["01-what-is-slurm"]
    item = bank.item("lab-diagnose-queue")
    wire = json.loads(json.dumps(asdict(item.present({}))))
    back = presented(wire)
    assert back.exhibit and back.exhibit == item.present({}).exhibit
    assert "(Resources)" in back.exhibit and "(Resources)" not in back.prompt
