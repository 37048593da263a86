"""Item types, graded the way a learner's answer is: choice, numeric, text, sbatch, scheduler.

Each test builds a tiny bank with `build_source`'s item builder, so the key is
hashed exactly as in the shipped banks, then grades responses against it.
"""

from __future__ import annotations

from typing import Any

import pytest
from quiz_helpers import SALT, bank_of

from quizzes.grade import grade_response, item_variant
from quizzes.items.text import normalise
from quizzes.items.units import parse_quantity


def grade(bank, item_id, response, learner="ada"):
    return grade_response(bank, learner, item_id, response)


# --- choice ---------------------------------------------------------------------------

CHOICE = {
    "id": "c",
    "type": "single",
    "options": [{"id": "a", "text": "slurmd", "correct": True}, {"id": "b", "text": "slurmctld"}],
}
MULTI = {
    "id": "m",
    "type": "multiple",
    "options": [
        {"id": "a", "text": "1", "correct": True},
        {"id": "b", "text": "2", "correct": True},
        {"id": "c", "text": "3", "correct": True},
        {"id": "d", "text": "4"},
        {"id": "e", "text": "5"},
    ],
}


def test_single_choice_is_right_or_wrong():
    bank = bank_of(CHOICE)
    assert grade(bank, "c", "a").score == 1.0
    assert grade(bank, "c", "b").score == 0.0
    assert grade(bank, "c", "z").feedback == "Choose one of: a, b."


@pytest.mark.parametrize(
    "chosen, score",
    [
        (["a", "b", "c"], 1.0),  # exactly the right set
        (["a", "b"], 2 / 3),  # R=2, W=0, C=3
        (["a", "b", "c", "d"], 2 / 3),  # R=3, W=1
        (["a", "d"], 0.0),  # R=1, W=1
        (["a", "b", "c", "d", "e"], 1 / 3),
        (["d", "e"], 0.0),  # never below zero
        ([], 0.0),
    ],
)
def test_multiple_choice_partial_credit_is_right_minus_wrong_over_correct(chosen, score):
    assert grade(bank_of(MULTI), "m", chosen).score == pytest.approx(score)


def test_shuffled_options_are_stable_per_learner_and_differ_between_learners():
    bank = bank_of({**MULTI, "shuffle": True})
    item = bank.item("m")
    orders = {}
    for learner in ("ada", "bob", "cy", "dee", "eve", "fay"):
        _, _, seed = item_variant(bank, learner, "m")
        orders[learner] = [oid for oid, _ in item.present({}, seed).options]
        _, _, again = item_variant(bank, learner, "m")
        assert [oid for oid, _ in item.present({}, again).options] == orders[learner]
    assert len({tuple(o) for o in orders.values()}) > 1


# --- numeric --------------------------------------------------------------------------


def test_numeric_absolute_tolerance():
    bank = bank_of(
        {"id": "n", "type": "numeric", "answer": 30, "tolerance": {"abs": 0.5}, "unit": "seconds"}
    )
    assert grade(bank, "n", "30").correct
    assert grade(bank, "n", 30.4).correct
    assert grade(bank, "n", "0.5 min").correct  # units are converted
    assert not grade(bank, "n", "31").correct
    assert not grade(bank, "n", "30 GB").correct  # wrong kind of unit
    assert grade(bank, "n", "thirty").feedback.startswith("Answer with a number")


def test_numeric_relative_tolerance_and_memory_units():
    bank = bank_of(
        {"id": "n", "type": "numeric", "answer": 65536, "tolerance": {"rel": 0.01}, "unit": "MB"}
    )
    for ok in ("65536", "64G", "64 GB", "65000 M", "0.0625T"):
        assert grade(bank, "n", ok).correct, ok
    for bad in ("60G", "64", "64 K"):
        assert not grade(bank, "n", bad).correct, bad


def test_units_follow_slurm_binary_suffixes():
    assert parse_quantity("16G", "MB") == 16384
    assert parse_quantity("2 h", "minutes") == 120
    assert parse_quantity("8 GPUs", "GPUs") == 8
    assert parse_quantity("8 tasks", "GPUs") is None


def test_numeric_variants_use_the_learners_parameters():
    bank = bank_of(
        {
            "id": "n",
            "type": "numeric",
            "params": {"n": [2, 3, 4], "t": [4, 8]},
            "answer_expr": "n * t",
            "tolerance": {"abs": 0.1},
        }
    )
    seen = set()
    for learner in [f"l{i}" for i in range(12)]:
        params, _, _ = item_variant(bank, learner, "n")
        seen.add((params["n"], params["t"]))
        assert grade(bank, "n", params["n"] * params["t"], learner).correct
        assert item_variant(bank, learner, "n")[0] == params  # same learner, same numbers
    assert len(seen) > 1  # learners differ


# --- text -----------------------------------------------------------------------------


def test_text_normalisation():
    assert normalise('  "The   Node\tDaemon." ') == "the node daemon"
    assert normalise("Ｓｌｕｒｍｄ") == "slurmd"  # NFKC
    assert normalise("Resources", case_sensitive=True) == "Resources"


def test_text_item_accepts_every_listed_spelling():
    bank = bank_of({"id": "x", "type": "text", "accept": ["slurmctld", "the controller"]})
    for ok in ("slurmctld", " SlurmCtlD. ", "`slurmctld`", "The  controller"):
        assert grade(bank, "x", ok).correct, ok
    assert not grade(bank, "x", "slurmd").correct


def test_case_sensitive_text_item():
    bank = bank_of({"id": "x", "type": "text", "accept": ["SLURM_PROCID"], "case_sensitive": True})
    assert grade(bank, "x", "SLURM_PROCID").correct
    assert not grade(bank, "x", "slurm_procid").correct


# --- sbatch ---------------------------------------------------------------------------

SBATCH = {
    "id": "s",
    "type": "sbatch",
    "answer": "#SBATCH -N2 --ntasks-per-node=8",
    "check": ["nodes_min", "nodes_max", "ntasks_per_node"],
}


@pytest.mark.parametrize(
    "answer",
    [
        "#SBATCH -N2 --ntasks-per-node=8",
        "#SBATCH --nodes=2 --ntasks-per-node 8",
        "#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8",
        "sbatch -N 2 --ntasks-per-node=8 train.sh",
        "sbatch --nodes=2-2 --ntasks-per-node=8",
        "#!/bin/bash\n#SBATCH -N2\n#SBATCH --ntasks-per-node=8\nsrun python train.py",
    ],
)
def test_sbatch_items_compare_the_parsed_request_not_the_text(answer):
    assert grade(bank_of(SBATCH), "s", answer).correct


def test_sbatch_item_partial_credit_names_the_wrong_option():
    out = grade(bank_of(SBATCH), "s", "#SBATCH -N2 --ntasks-per-node=4")
    assert out.score == pytest.approx(2 / 3)
    assert out.details == ("not what was asked: --ntasks-per-node",)


def test_sbatch_directives_after_a_command_are_ignored_like_sbatch_does():
    out = grade(bank_of(SBATCH), "s", "#SBATCH -N2\necho hi\n#SBATCH --ntasks-per-node=8")
    assert not out.correct


def test_sbatch_typo_gets_slurms_own_message():
    out = grade(bank_of(SBATCH), "s", "sbatch --nodess=2 job.sh")
    assert out.score == 0
    assert out.feedback == (
        "Incorrect: Slurm would reject this: sbatch: unrecognized option "
        "'--nodess=2'\nTry \"sbatch --help\" for more information"
    )


def test_sbatch_signal_item_from_the_shipped_bank():
    from quizzes.bank import load_banks

    bank = load_banks()["07-failures-requeue"]
    params, _, _ = item_variant(bank, "ada", "signal-before-limit")
    s = params["s"]
    for ok in (f"#SBATCH --signal=B:USR1@{s}", f"sbatch --signal=B:10@{s} job.sh"):
        assert grade(bank, "signal-before-limit", ok).correct, ok
    assert not grade(bank, "signal-before-limit", f"#SBATCH --signal=USR1@{s}").correct


# --- scheduler (real minislurm controller) ---------------------------------------------

SCENARIO: dict[str, Any] = {  # an item's YAML source
    "id": "p",
    "type": "scheduler",
    "ask": "next_start",
    "at": 1,
    "params": {"r": [30, 120]},
    "scenario": {
        "jobs": [
            {"name": "wide", "args": "-p gpu -N3 --gres=gpu:8 -t 60", "submit": 0, "runtime": 60},
            {"name": "whole", "args": "-p gpu -N4 --gres=gpu:8 -t 60", "submit": 1, "runtime": 60},
            {
                "name": "small",
                "args": "-p gpu -N1 --gres=gpu:8 -t {{r}}",
                "submit": 1,
                "runtime": "{{r}}",
            },
        ]
    },
}


def _learner_with(bank, item_id, want):
    for i in range(100):
        if item_variant(bank, f"l{i}", item_id)[0] == want:
            return f"l{i}"
    raise AssertionError(want)


def test_scheduler_item_key_is_computed_by_the_controller_backfill_case():
    bank = bank_of(SCENARIO)
    short = _learner_with(bank, "p", {"r": 30})
    long = _learner_with(bank, "p", {"r": 120})
    # 30 min fits in the hour before "whole" can start: backfilled
    assert grade(bank, "p", "small", short).correct
    assert not grade(bank, "p", "whole", short).correct
    # 120 min would delay "whole": it waits
    assert grade(bank, "p", "whole", long).correct
    assert grade(bank, "p", "small", long).feedback == "Incorrect: the controller says whole."


def test_scheduler_start_time_and_pending_reason():
    jobs = SCENARIO["scenario"]["jobs"][:2]
    bank = bank_of(
        {
            "id": "t",
            "type": "scheduler",
            "ask": "start_time",
            "job": "whole",
            "scenario": {"jobs": jobs},
        },
        {
            "id": "r",
            "type": "scheduler",
            "ask": "pending_reason",
            "job": "whole",
            "at": 5,
            "scenario": {"jobs": jobs},
        },
    )
    assert grade(bank, "t", "60").correct
    assert grade(bank, "t", "1 h").correct
    assert not grade(bank, "t", "1").correct
    assert grade(bank, "r", "Resources").correct
    assert grade(bank, "r", "Priority").feedback == "Incorrect: the controller says Resources."


def test_the_shipped_backfill_items_agree_with_their_explanations():
    """The explanations promise what backfill does; the controller must agree."""
    from quizzes.bank import load_banks
    from quizzes.items.scheduler import SchedulerItem, default_runner
    from quizzes.variants import combinations

    bank = load_banks()["06-backfill"]
    runner = default_runner()
    who = bank.item("backfill-who-starts")
    assert isinstance(who, SchedulerItem)
    for params in combinations(who.common.params):
        result = runner.run(who.scenario(params))
        expected = ("small",) if params["r"] < 60 else ("whole",)
        assert result.next_starts(60) == expected, params
    reason = bank.item("backfill-pending-reason")
    assert isinstance(reason, SchedulerItem)
    assert runner.run(reason.scenario({})).reason_of("whole", 300) == "Resources"
    start = bank.item("backfill-start-time")
    assert isinstance(start, SchedulerItem)
    for params in combinations(start.common.params):
        assert runner.run(start.scenario(params)).start_of("whole") == params["w"] * 60


def test_numeric_tolerance_holds_for_any_answer_and_tolerance():
    """Property: inside 7/8 of the tolerance is accepted, beyond 6/5 of it is refused."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from quizzes.hashing import answer_hash
    from quizzes.items.numeric import Grid, author_cells

    def accepter(answer, tol):
        cells, grid = set(author_cells(answer, tol, SALT, "n", "")["cells"]), Grid.of(tol)
        return lambda y: answer_hash(SALT, "n", "", grid.cell(y)) in cells

    @settings(max_examples=200, deadline=None)
    @given(answer=st.floats(-1e6, 1e6, allow_nan=False), width=st.floats(1e-3, 1e3),
           frac=st.floats(-1, 1))
    def absolute(answer, width, frac):
        accepted = accepter(answer, {"abs": width})
        assert accepted(answer + frac * width * 7 / 8)
        assert not accepted(answer + (1 if frac >= 0 else -1) * width * (1.2 + abs(frac)))

    @settings(max_examples=200, deadline=None)
    @given(answer=st.floats(1e-6, 1e9) | st.floats(-1e9, -1e-6),
           rel=st.floats(1e-3, 0.9999), frac=st.floats(-1, 1))
    def relative(answer, rel, frac):
        accepted = accepter(answer, {"rel": rel})
        assert accepted(answer * (1 + frac * rel * 7 / 8))
        assert not accepted(answer * (1 + (1 if frac >= 0 else -1) * rel * (1.2 + abs(frac))))
        assert not accepted(-answer) and not accepted(0.0)

    absolute()
    relative()
