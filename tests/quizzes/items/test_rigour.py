"""Issue 19/24: every text filled, feedback said once, prose prompts, per-attempt variants,
shuffled items and options, drawn pools, and numbers read in the learner's language."""

from __future__ import annotations

import json

import pytest
from quiz_helpers import bank_of

from quizzes.author import load_sources, model_answer
from quizzes.bank import load_banks
from quizzes.grade import attempt_items, grade_response, grade_submission, item_variant
from quizzes.session import NoAnswer, QuizSession
from quizzes.submission import parse_submission

LEARNERS = ("ada", "bob", "chidi")
ATTEMPTS = (1, 2, 3)


class Clock:
    t = 1767600000.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture(scope="module")
def banks():
    return load_banks()


@pytest.fixture(scope="module")
def sources():
    return load_sources()


def wrong_answer(item, shown):
    if shown.options:
        return shown.options[-1][0] if item.common.type != "multiple" else [shown.options[0][0]]
    return {"numeric": "123456789", "sbatch": "#SBATCH --nodes=17"}.get(item.common.type,
                                                                          "no such thing")


def test_no_placeholder_reaches_a_learner_in_any_variant_or_attempt(banks, sources):
    """Prompt, options, exhibit, feedback (right and wrong), explanation and the grader's
    record: rendered for every item of every bank, several learners and attempts."""
    pytest.importorskip("ipywidgets")
    from quizzes.widget import feedback_html, prompt_html

    checked = 0
    for quiz_id, bank in banks.items():
        src = {i["id"]: i for i in sources[quiz_id]["items"]}
        for learner in LEARNERS:
            for attempt in ATTEMPTS[:bank.policy.attempts or len(ATTEMPTS)]:
                s = QuizSession(bank, learner, attempts_used=attempt - 1, clock=Clock())
                for shown in s.items():
                    item = bank.item(shown.item_id)
                    params = item_variant(bank, learner, shown.item_id, attempt)[0]
                    texts = [shown.prompt, shown.exhibit, *(t for _, t in shown.options),
                             prompt_html(shown)]
                    right = model_answer(src[shown.item_id], params)
                    for response in (wrong_answer(item, shown), right):
                        if response is None:
                            continue
                        out = grade_response(bank, learner, shown.item_id, response, attempt)
                        texts += [out.feedback, *out.details]
                    fb = s.answer(shown.item_id, wrong_answer(item, shown))
                    texts += [fb.feedback, fb.explanation, feedback_html(fb)]
                    for text in texts:
                        assert "{{" not in text and "}}" not in text, (quiz_id, shown.item_id,
                                                                       text)
                    checked += 1
                doc = json.dumps(s.submission())
                graded = grade_submission(bank, parse_submission(doc, banks), attempt)
                for g in graded.items:
                    assert "{{" not in g.feedback + g.explanation, (quiz_id, g.item_id)
    assert checked >= 8 * 3 * 2 * 5


def test_the_explanation_of_a_varied_item_is_filled_in():
    bank = bank_of({"id": "f", "type": "numeric", "params": {"n": [10, 1000]},
                    "answer_expr": "1000 / n", "tolerance": {"rel": 0.05},
                    "prompt": "{{n}} nodes?",
                    "explanation": "With {{n}} nodes the job fails {{n}} times as often."})
    s = QuizSession(bank, "ada", clock=Clock())
    n = item_variant(bank, "ada", "f")[0]["n"]
    fb = s.answer("f", "7")
    assert fb.explanation == f"With {n} nodes the job fails {n} times as often."


def test_feedback_says_incorrect_once_then_what_form_was_expected():
    pytest.importorskip("ipywidgets")
    from quizzes.widget import feedback_html

    bank = bank_of({"id": "n", "type": "numeric", "answer": 9216, "tolerance": {"rel": 0.02},
                    "unit": "GPU-hours"},
                   {"id": "c", "type": "single", "options": [
                       {"id": "a", "text": "x", "correct": True}, {"id": "b", "text": "y"}]})
    s = QuizSession(bank, "ada", clock=Clock())
    fb = s.answer("n", "5")
    assert fb.feedback == ("Incorrect. Answers within ±2% of the expected value are accepted, "
                           "in GPU-hours (or with a unit such as 12 GPU-hours).")
    page = feedback_html(fb)
    assert page.count("Incorrect") == 1 and "Incorrect: Incorrect" not in page
    choice = s.answer("c", "b")
    assert feedback_html(choice).count("Incorrect") == 1


def test_prompts_render_as_prose_and_code_only_where_marked(banks):
    pytest.importorskip("ipywidgets")
    from quizzes.widget import prompt_html

    s = QuizSession(banks["02-sbatch"], "ada", clock=Clock())
    shown = {i.item_id: i for i in s.items()}
    pages = {i.item_id: prompt_html(i) for i in s.items()}
    script = pages["directive-after-command"]
    assert "<pre" in script and "#SBATCH -J first\necho starting" in script
    assert "<p>What is the job's name when this script is submitted with plain " \
           "<code>sbatch job.sh</code>?</p>" in script
    for item_id, page in pages.items():
        item = banks["02-sbatch"].item(item_id)
        # code where the text marks it, or an exhibit (Slurm's output: a lab's too)
        marked = "\n    " in item.common.prompt or "```" in shown[item_id].prompt
        if not marked and item.common.exhibit is None and not shown[item_id].exhibit:
            assert "<pre" not in page and "white-space:pre-wrap" not in page, item_id
            assert page.count("<p>") >= 1, item_id


def test_a_new_attempt_draws_new_values_and_a_new_order():
    bank = bank_of({"id": "n", "type": "numeric", "params": {"n": [2, 4, 8]},
                    "answer_expr": "n * 8", "tolerance": {"abs": 0.1}},
                   *({"id": f"c{k}", "type": "single", "options": [
                       {"id": "a", "text": "right", "correct": True},
                       *({"id": x, "text": x} for x in "bcd")]} for k in range(5)))
    for learner in LEARNERS:
        values = [item_variant(bank, learner, "n", a)[0]["n"] for a in (1, 2, 3)]
        assert len(set(values)) == 3, values               # every retry has new numbers
        assert item_variant(bank, learner, "n", 2) == item_variant(bank, learner, "n", 2)
    orders = {(lr, a): [i.common.id for i in attempt_items(bank, lr, a)]
              for lr in LEARNERS for a in ATTEMPTS}
    assert len({tuple(o) for o in orders.values()}) > 1
    firsts = {QuizSession(bank, lr, attempts_used=a - 1).items()[1].options[0][0]
              for lr in LEARNERS for a in ATTEMPTS}
    assert firsts != {"a"}                                 # the key is not always first


def test_options_are_shuffled_but_graded_by_id_and_regraded_identically(banks, sources):
    bank = banks["06-backfill"]
    src = {i["id"]: i for i in sources["06-backfill"]["items"]}
    first_is_key = 0
    total = 0
    for learner in [f"l{i}" for i in range(12)]:
        for attempt in (1, 2):
            s = QuizSession(bank, learner, attempts_used=attempt - 1, clock=Clock())
            again = QuizSession(bank, learner, attempts_used=attempt - 1, clock=Clock())
            assert [(i.item_id, i.options) for i in s.items()] == \
                   [(i.item_id, i.options) for i in again.items()]  # deterministic
            for shown in s.items():
                if bank.item(shown.item_id).common.type != "single":
                    continue
                key = model_answer(src[shown.item_id], {})
                total += 1
                first_is_key += shown.options[0][0] == key
                assert s.answer(shown.item_id, key).correct
            sub = parse_submission(json.dumps(s.submission()), banks)
            regraded = grade_submission(bank, sub, attempt)
            assert {g.item_id: g.score for g in regraded.items if g.item_id in s.results} == \
                   {k: r.score for k, r in s.results.items()}
    assert first_is_key < total / 2


def test_the_grader_reads_the_attempt_from_the_submission():
    bank = bank_of({"id": "n", "type": "numeric", "params": {"n": [2, 4, 8]},
                    "answer_expr": "n * 8", "tolerance": {"abs": 0.1}})
    s = QuizSession(bank, "ada", attempts_used=1, clock=Clock())
    n = item_variant(bank, "ada", "n", 2)[0]["n"]
    assert s.answer("n", str(n * 8)).correct
    sub = parse_submission(json.dumps(s.submission()), {"t": bank})
    assert sub.attempt == 2 and grade_submission(bank, sub).fraction == 1.0
    first = parse_submission(json.dumps({**s.submission(), "attempt": 1}), {"t": bank})
    assert grade_submission(bank, first).fraction == 0.0    # attempt 1 had other numbers


def test_a_pool_draws_some_items_per_attempt_covering_every_objective():
    items = [{"id": f"q{k}", "type": "single", "objectives": [f"o{k % 2}"], "options": [
        {"id": "a", "text": "x", "correct": True}, {"id": "b", "text": "y"}]} for k in range(6)]
    bank = bank_of(*items, policy={"draw": 2, "attempts": 9},
                   objectives={"o0": "zero", "o1": "one"})
    subsets = set()
    for learner in LEARNERS:
        for attempt in ATTEMPTS:
            shown = attempt_items(bank, learner, attempt)
            assert len(shown) == 2
            assert {o for it in shown for o in it.common.objectives} == {"o0", "o1"}
            subsets.add(frozenset(it.common.id for it in shown))
            s = QuizSession(bank, learner, attempts_used=attempt - 1, clock=Clock())
            assert s.max_points == 2 and len(s.items()) == 2
            for it in s.items():
                s.answer(it.item_id, "a")
            assert s.complete
            graded = grade_submission(bank, parse_submission(json.dumps(s.submission()),
                                                             {"t": bank}), attempt)
            assert graded.max_points == 2 and graded.fraction == 1.0
    assert len(subsets) > 1
    full = bank_of(*items, objectives={"o0": "zero", "o1": "one"})  # no draw: all items
    assert len(attempt_items(full, "ada", 1)) == 6


@pytest.mark.parametrize(("lang", "text", "ok"), [
    ("en", "9,216", True), ("en", "9216", True), ("pt-BR", "9216", True),
    ("pt-BR", "9216,0", True), ("pt-BR", "9.216,0", True),
])
def test_numbers_are_read_in_the_learners_language(lang, text, ok):
    bank = bank_of({"id": "n", "type": "numeric", "answer": 9216, "tolerance": {"abs": 0.5},
                    "unit": "GPU-hours"})
    assert grade_response(bank, "ada", "n", text, 1, lang).correct is ok


def test_decimal_commas_by_language_and_ambiguity_refused_without_locking():
    bank = bank_of({"id": "n", "type": "numeric", "answer": 0.125, "tolerance": {"abs": 0.001}},
                   {"id": "m", "type": "numeric", "answer": 1234.5, "tolerance": {"abs": 0.01}},
                   {"id": "h", "type": "numeric", "answer": 120, "tolerance": {"abs": 0.5},
                    "unit": "minutes"})
    pt = QuizSession(bank, "ada", lang="pt_BR", clock=Clock())
    assert pt.answer("n", "0,125").correct
    assert pt.answer("m", "1.234,5").correct
    assert pt.answer("h", "2 horas").correct
    en = QuizSession(bank, "bob", lang="en", clock=Clock())
    with pytest.raises(NoAnswer, match=r"write decimals with a point \(0.5, not 0,5\)"):
        en.answer("n", "0,125")
    assert "n" not in en.results                          # the item stays open
    assert en.answer("n", "0.125").correct
    assert en.answer("m", "1,234.5").correct
    pt2 = QuizSession(bank, "chidi", lang="pt-BR", clock=Clock())
    with pytest.raises(NoAnswer, match="ponto separa milhares"):
        pt2.answer("m", "9.216")
    assert "m" not in pt2.results
    doc = pt.submission()
    assert doc["lang"] == "pt-BR"
    with pytest.raises(Exception, match="cannot be read in language 'xx'"):
        QuizSession(bank, "ada", lang="xx")


def test_option_labels_are_plain_text_without_markdown_backticks(banks):
    pytest.importorskip("ipywidgets")
    from quizzes.widget import QuizWidget

    w = QuizWidget(QuizSession(banks["07-failures-requeue"], "ada", clock=Clock()), mode="all")
    labels = [cb.description for card in w.cards for cb in getattr(card.children[1],
                                                                   "children", ())]
    labels += [label for card in w.cards for label, _ in getattr(card.children[1],
                                                                  "options", ())]
    assert labels and not any("`" in label for label in labels)
    shown = [t for i in w.items for _, t in i.options]
    assert any("`" in t for t in shown)        # the bank does mark code in options


def test_a_scheduler_start_time_is_read_in_the_learners_language():
    bank = bank_of({"id": "s", "type": "scheduler", "ask": "start_time", "job": "b",
                    "scenario": {"jobs": [
                        {"name": "a", "args": "-p gpu -N4 --gres=gpu:8 -t 90", "submit": 0,
                         "runtime": 90},
                        {"name": "b", "args": "-p gpu -N4 --gres=gpu:8 -t 60", "submit": 0,
                         "runtime": 60}]}})
    assert grade_response(bank, "ada", "s", "1,5 horas", 1, "pt-BR").correct
    assert grade_response(bank, "ada", "s", "1.5 h", 1, "en").correct
    unread = grade_response(bank, "ada", "s", "1,5 h", 1, "en")
    assert not unread.readable and "write decimals with a point" in unread.feedback
