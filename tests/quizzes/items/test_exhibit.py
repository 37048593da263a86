"""Exhibit items: the prompt shows real minislurm output for the item's own scenario."""

from __future__ import annotations

import pytest
from quiz_helpers import bank_of

from quizzes.errors import BankError
from quizzes.exhibit import check, parse_exhibit, render
from quizzes.present import present
from quizzes.where import Where

BACKFILL = {
    "steps": [
        'sbatch -p gpu -N3 --gres=gpu:8 -t 60 -J wide --wrap="sleep 3600"',
        {"advance": 1},
        'sbatch -p gpu -N4 --gres=gpu:8 -t 60 -J whole --wrap="sleep 3600"',
        {"user": "alice",
         "run": 'sbatch -p gpu -N1 --gres=gpu:8 -t {{r}} -J small --wrap="sleep 600"'},
        {"advance": 2},
    ],
    "show": ["squeue", "squeue --start", "sprio"],
}
ITEM = {
    "id": "read-squeue", "type": "single", "params": {"r": [30, 120]},
    "prompt": "Read the `squeue` output below. Is job `small` ({{r}} min) running?",
    "options": [{"id": "y", "text": "Yes"}, {"id": "n", "text": "No", "correct": True}],
    "exhibit": BACKFILL,
}


def squeue_rows(text: str) -> dict[str, str]:
    """name -> ST column of the first squeue block."""
    block = text.split("\n\n")[0].splitlines()[2:]
    return {cols[2]: cols[4] for cols in (line.split() for line in block)}


def test_the_exhibit_is_what_minislurm_prints_for_each_variant():
    ex = parse_exhibit(Where("t.yaml", "i"), {"exhibit": BACKFILL})
    short, long = render(ex, {"r": 30}), render(ex, {"r": 120})
    assert short.startswith("$ squeue\n") and "$ squeue --start\n" in short and "$ sprio" in short
    # a 30-min job fits before the 4-node job's planned start: backfilled; 120 min does not
    assert squeue_rows(short)["small"] == "R" and squeue_rows(long)["small"] == "PD"
    assert "alice" in short and "{{" not in short + long
    assert render(ex, {"r": 120}) == long          # deterministic (and cached)
    assert "/tmp" not in long


def test_an_exhibit_item_presents_its_variants_output():
    bank = bank_of(ITEM)
    item = bank.item("read-squeue")
    shown = present(item, {"r": 120}, seed=1)
    assert "(120 min)" in shown.prompt and squeue_rows(shown.exhibit)["small"] == "PD"


def test_the_widget_shows_the_exhibit_as_preformatted_output():
    pytest.importorskip("ipywidgets")
    from quizzes.widget import prompt_html

    shown = present(bank_of(ITEM).item("read-squeue"), {"r": 30}, seed=1)
    page = prompt_html(shown)
    assert "<pre" in page and "JOBID PARTITION" in page
    assert "<p>Read the <code>squeue</code> output below." in page


@pytest.mark.parametrize(("spec", "problem"), [
    ({"steps": ["sbatch --gpu=1 --wrap=true"], "show": ["squeue"]}, "ambiguous"),
    ({"steps": ["rm -rf /"], "show": ["squeue"]}, "not a command an exhibit can run"),
    ({"steps": [], "show": []}, "non-empty list of commands"),
    ({"steps": [{"advance": "soon"}], "show": ["squeue"]}, "not a time"),
    ({"steps": [], "show": ["scontrol show job 99"]}, "Invalid job id"),
    ({"steps": [], "show": ["squeue"], "colour": 1}, "unknown field"),
])
def test_a_broken_exhibit_is_refused_with_the_item_and_slurms_words(spec, problem):
    where = Where("t.yaml", "bad")
    with pytest.raises(BankError, match="item 'bad': field 'exhibit") as err:
        check(parse_exhibit(where, {"exhibit": spec}), where, [{}])
    assert problem in err.value.message


def test_a_variant_that_fails_is_named():
    spec = {"steps": ["sbatch -p gpu --gres=gpu:{{n}} --wrap=true"], "show": ["squeue"]}
    where = Where("t.yaml", "n")
    ex = parse_exhibit(where, {"exhibit": spec})
    check(ex, where, [{"n": 2}])
    with pytest.raises(BankError, match=r"variant \{'n': 9\}"):
        check(ex, where, [{"n": 2}, {"n": 9}])


def test_every_exhibit_of_the_shipped_banks_plays_in_every_variant():
    """What `quizzes author build` should refuse (see quizzes.exhibit.check): run in CI."""
    from quizzes.bank import load_banks
    from quizzes.variants import combinations

    for quiz_id, bank in load_banks().items():
        for item in bank.items:
            where = Where(f"{quiz_id}.yaml", item.common.id)
            check(item.common.exhibit, where, combinations(item.common.params))


def test_author_build_refuses_an_item_whose_exhibit_does_not_play():
    from quizzes.author import build_item
    raw = dict(ITEM, exhibit={"steps": ["sbatch -p gpu --gres=gpu:{{r}} --wrap=true"],
                              "show": ["squeue"]})
    raw["options"] = [{"id": "y", "text": "Yes"}, {"id": "n", "text": "No", "correct": True}]
    with pytest.raises(BankError, match=r"item 'read-squeue'.*variant \{'r': 30\}"):
        build_item(raw, "salt", "t.yaml")
    assert build_item(ITEM, "salt", "t.yaml")["exhibit"] == BACKFILL
