"""Submissions and grading: validation with clear errors, time limits, variants."""

from __future__ import annotations

import json

import pytest

from quizzes.author import load_sources
from quizzes.bank import load_banks
from quizzes.demo import EPOCH, model_submission
from quizzes.errors import SubmissionError
from quizzes.grade import grade_submission
from quizzes.policy import Policy
from quizzes.submission import MAX_BYTES, parse_submission


@pytest.fixture(scope="module")
def banks():
    return load_banks()


@pytest.fixture(scope="module")
def sources():
    return load_sources()


def test_a_model_submission_scores_full_marks_on_every_bank(banks, sources):
    for quiz_id, bank in banks.items():
        doc = model_submission(bank, sources[quiz_id], "ada", "Ada Lovelace")
        grade = grade_submission(bank, parse_submission(json.dumps(doc), banks))
        assert grade.points == grade.max_points, [
            (g.item_id, g.feedback) for g in grade.items if not g.correct
        ]


def test_wrong_answers_score_zero_and_get_the_explanation(banks, sources):
    bank = banks["02-sbatch"]
    doc = model_submission(bank, sources["02-sbatch"], "bob", correct=False)
    grade = grade_submission(bank, parse_submission(json.dumps(doc), banks))
    assert grade.points == 0
    assert all(g.explanation for g in grade.items)


def test_two_learners_get_different_variants_but_each_always_the_same(banks, sources):
    bank = banks["02-sbatch"]
    prompts = {}
    from quizzes.session import QuizSession

    for learner in ("ada", "bob", "cy", "dee", "eve"):
        first = [p.prompt for p in QuizSession(bank, learner).items()]
        assert first == [p.prompt for p in QuizSession(bank, learner).items()]
        prompts[learner] = tuple(first)
    assert len(set(prompts.values())) > 1


def test_answers_after_the_time_limit_score_zero(banks, sources):
    bank = banks["02-sbatch"]  # 30-minute limit
    doc = model_submission(bank, sources["02-sbatch"], "ada")
    late = "nodes-and-tasks"
    doc["answers"][late]["answered_at"] = EPOCH + 31 * 60
    grade = grade_submission(bank, parse_submission(json.dumps(doc), banks))
    by_id = {g.item_id: g for g in grade.items}
    assert by_id[late].score == 0
    assert by_id[late].feedback == "Answered after the 30-minute time limit."
    assert grade.points == grade.max_points - 1


def test_the_retry_penalty_and_which_attempt_counts():
    policy = Policy(attempts=3, penalty_per_retry=0.1, counts="best")
    assert [policy.factor(n) for n in (1, 2, 3)] == pytest.approx([1.0, 0.9, 0.8])
    assert not policy.counted(4)
    assert policy.final([0.5, 0.9 * 0.8]) == pytest.approx(0.72)
    assert Policy(counts="last").final([0.9, 0.4]) == 0.4
    assert Policy(counts="first").final([0.9, 0.4]) == 0.9


def _good(banks, sources):
    return model_submission(banks["01-what-is-slurm"], sources["01-what-is-slurm"], "ada")


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda d: b"{not json", "x.json: not valid JSON"),
        (lambda d: b"[1, 2]", "x.json: must be a JSON object"),
        (lambda d: {**d, "quiz_id": "99-nope"}, "x.json: unknown quiz '99-nope'"),
        (
            lambda d: {**d, "bank_version": "0123456789abcdef"},
            "x.json: bank version 0123456789abcdef of quiz '01-what-is-slurm' is outdated",
        ),
        (lambda d: {**d, "format": "v0"}, "x.json: field 'format' must be"),
        (lambda d: {**d, "learner_id": ""}, "x.json: field 'learner_id' must be a non-empty"),
        (
            lambda d: {**d, "answers": {"no-such-item": {"response": "a"}}},
            "x.json: answer for unknown item 'no-such-item'",
        ),
        (
            lambda d: {**d, "answers": {"slurm-purpose": {"response": {"a": 1}}}},
            "x.json: answer 'slurm-purpose': response must be text",
        ),
        (
            lambda d: {**d, "started_at": "yesterday"},
            "x.json: field 'started_at' must be epoch seconds or an ISO 8601 time",
        ),
        (lambda d: {**d, "submitted_at": d["started_at"] - 5}, "x.json: 'submitted_at' is before"),
        (lambda d: {**d, "pad": "x" * MAX_BYTES}, "x.json: too large"),
        (lambda d: b"\xff\xfe", "x.json: not valid JSON"),
    ],
)
def test_malformed_submissions_get_clear_errors(banks, sources, make, message):
    data = make(_good(banks, sources))
    raw = data if isinstance(data, bytes) else json.dumps(data).encode()
    with pytest.raises(SubmissionError) as err:
        parse_submission(raw, banks, source="x.json")
    assert err.value.message.startswith(f"quizzes: error: {message}")


def test_iso_timestamps_are_accepted(banks, sources):
    doc = _good(banks, sources)
    doc["started_at"], doc["submitted_at"] = "2026-01-05T08:00:00Z", "2026-01-05T08:10:00Z"
    assert parse_submission(json.dumps(doc), banks).started_at == EPOCH
