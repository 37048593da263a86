"""A simulated class of learners with partial knowledge, graded for real, then analysed."""

from __future__ import annotations

import sqlite3
import statistics

import yaml

from quizzes.author import build_item
from quizzes.bank import load_banks, parse_bank
from quizzes.classsim import make_class, negative_report, simulate_class
from quizzes.cli import main


def test_the_class_has_partial_knowledge_that_follows_ability():
    objectives = [f"o{i}" for i in range(10)]
    learners = make_class(300, objectives, seed=3)
    assert learners == make_class(300, objectives, seed=3)          # deterministic
    known = [len(x.mastered) for x in learners]
    assert 0 < statistics.mean(known) < 10 and min(known) < 3 and max(known) > 7
    strong = [len(x.mastered) for x in learners if x.ability > 1]
    weak = [len(x.mastered) for x in learners if x.ability < -1]
    assert statistics.mean(strong) > statistics.mean(weak) + 4
    assert any(0 < k < 10 for k in known)                            # partial, not all-or-none


def test_a_simulated_class_is_graded_into_a_real_gradebook_and_analysed(tmp_path):
    banks = {q: b for q, b in load_banks().items() if q in ("02-sbatch", "06-backfill")}
    db = tmp_path / "gb.sqlite"
    run = simulate_class(banks, 60, seed=1, db=db)
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT COUNT(*) FROM attempts").fetchone()[0] == 120
        assert con.execute("SELECT COUNT(DISTINCT learner_id) FROM learners").fetchone()[0] == 60
    for stats in run.stats:
        assert stats.learners == 60 and stats.alpha is not None and stats.alpha > 0.5
        ds = [it.discrimination for it in stats.items]
        assert all(d is not None for d in ds)
        assert statistics.mean(d for d in ds if d is not None) > 0.3
        assert all(0.1 < it.facility < 0.95 for it in stats.items), stats.table()


def test_an_item_whose_key_contradicts_what_masters_answer_discriminates_negatively(tmp_path):
    """The bank says b; learners who know the objective answer a (the source they learnt)."""
    salt = "0123456789abcdef"
    items = [{"id": f"q{k}", "type": "single", "objectives": ["o"], "prompt": "?",
              "explanation": "e", "options": [{"id": "a", "text": "x", "correct": True},
                                              {"id": "b", "text": "y"},
                                              {"id": "c", "text": "z"}]} for k in range(6)]
    taught = {"schema": 1, "quiz_id": "t", "title": "T", "course": "C", "pass_mark": 0.5,
              "salt": salt, "objectives": {"o": "objective"}, "items": items}
    src = tmp_path / "sources"
    src.mkdir()
    (src / "t.yaml").write_text(yaml.safe_dump(taught))
    wrong_key = [dict(it) for it in items]
    wrong_key[0]["options"] = [{"id": "a", "text": "x"}, {"id": "b", "text": "y", "correct": True},
                               {"id": "c", "text": "z"}]
    data = {**taught, "items": [build_item(it, salt, "t.yaml") for it in wrong_key]}
    run = simulate_class({"t": parse_bank(data, "t.yaml")}, 120, seed=2, sources=src)
    assert [(q, i) for q, i, _ in run.negative()] == [("t", "q0")]
    assert "t / q0: D = -" in negative_report(run)


def test_quizzes_analyse_simulate_class_reports_every_items_discrimination(tmp_path, capsys):
    report = tmp_path / "neg.md"
    assert main(["analyse", "06-backfill", "--simulate-class", "30", "--db",
                 str(tmp_path / "gb.sqlite"), "--report", str(report)]) == 0
    out = capsys.readouterr().out
    assert "simulated class: 30 learners" in out and "quiz 06-backfill: 30 learner(s)" in out
    assert "backfill-purpose" in out and "items with negative discrimination:" in out
    assert report.read_text().startswith("# Items with negative discrimination (30 simulated")
    assert main(["analyse", "--simulate-class", "0"]) == 2
    assert "must be 1 to 100000 learners" in capsys.readouterr().err


def test_a_drawn_pool_is_analysed_on_the_learners_each_item_was_shown_to(tmp_path):
    salt = "0123456789abcdef"
    items = [{"id": f"q{k}", "type": "single", "objectives": [f"o{k % 2}"], "prompt": "?",
              "explanation": "e", "options": [{"id": "a", "text": "x", "correct": True},
                                              {"id": "b", "text": "y"}]} for k in range(6)]
    source = {"schema": 1, "quiz_id": "p", "title": "P", "course": "C", "pass_mark": 0.5,
              "salt": salt, "objectives": {"o0": "zero", "o1": "one"},
              "policy": {"draw": 3}, "items": items}
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(source))
    bank = parse_bank({**source, "items": [build_item(it, salt, "p.yaml") for it in items]},
                      "p.yaml")
    run = simulate_class({"p": bank}, 80, seed=4, sources=tmp_path)
    stats = run.stats[0]
    assert sum(it.n for it in stats.items) == 80 * 3
    assert all(0 < it.n < 80 and it.discrimination is not None for it in stats.items)
    assert all(it.discrimination is not None and it.discrimination > 0
               for it in stats.items), stats.table()
