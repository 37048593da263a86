"""Synthetic learners: model and random submissions for demos, tests and benchmarks.

:func:`model_submission` answers every item correctly (answers from the private
authoring source; scheduler items from the controller itself) or deliberately
wrongly; :func:`simulated_class` draws a class of learners of varying ability,
whose first attempts give the item analysis something to measure.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from quizzes.author import model_answer
from quizzes.bank import Bank
from quizzes.grade import item_variant
from quizzes.submission import FORMAT

EPOCH = 1767600000


def _scheduler_answer(bank: Bank, learner_id: str, item_id: str) -> Any:
    from quizzes.items.scheduler import SchedulerItem, default_runner

    item = bank.item(item_id)
    assert isinstance(item, SchedulerItem)
    params, _, _ = item_variant(bank, learner_id, item_id)
    result = default_runner().run(item.scenario(params))
    if item.ask == "next_start":
        names = result.next_starts(item.at * 60)
        return names[0] if names else "none"
    if item.ask == "start_time":
        start = result.start_of(item.job)
        return "never" if start is None else f"{start / 60:g}"
    return result.reason_of(item.job, item.at * 60) or "not pending"


def model_submission(bank: Bank, source: Mapping[str, Any], learner_id: str,
                     learner_name: str = "", *, correct: bool | Mapping[str, bool] = True,
                     started_at: int = EPOCH, skip_scheduler: bool = False) -> dict[str, Any]:
    """A submission answering each item right (``correct`` True, or per item id)."""
    by_id = {it["id"]: it for it in source["items"]}
    answers = {}
    for n, item in enumerate(bank.items):
        cid = item.common.id
        right = correct if isinstance(correct, bool) else correct.get(cid, False)
        if item.common.type == "scheduler":
            if skip_scheduler:
                continue
            response = _scheduler_answer(bank, learner_id, cid) if right else "no-such-job"
        elif right:
            params, _, _ = item_variant(bank, learner_id, cid)
            response = model_answer(by_id[cid], params)
        else:
            response = _wrong(item.common.type, by_id[cid])
        answers[cid] = {"response": response, "answered_at": started_at + 30 * (n + 1)}
    return {"format": FORMAT, "learner_id": learner_id,
            "learner_name": learner_name or learner_id.title(), "quiz_id": bank.quiz_id,
            "bank_version": bank.version, "started_at": started_at,
            "submitted_at": started_at + 30 * (len(bank.items) + 1), "answers": answers}


def _wrong(kind: str, source_item: Mapping[str, Any]) -> Any:
    options = source_item.get("options") or []
    wrong = [o["id"] for o in options if not o.get("correct")]
    if kind == "single":
        return wrong[0]
    if kind == "multiple":
        return wrong[:1]
    if kind == "numeric":
        return -12345.5
    if kind == "sbatch":
        return "#SBATCH --nodes=17 --job-name=wrong"
    return "wrong answer"


def simulated_class(bank: Bank, source: Mapping[str, Any], size: int, *, seed: int = 0,
                    skip_scheduler: bool = True) -> list[dict[str, Any]]:
    """``size`` learners; learner ability ~ U(0.2, 1) decides each item's success."""
    rng = random.Random(seed)
    subs = []
    for k in range(size):
        ability = rng.uniform(0.2, 1.0)
        right = {it.common.id: rng.random() < ability for it in bank.items}
        subs.append(model_submission(bank, source, f"learner{k:05d}", f"Learner {k:05d}",
                                     correct=right, started_at=EPOCH + k,
                                     skip_scheduler=skip_scheduler))
    return subs
