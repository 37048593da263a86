"""Issue 19: the key is not systematically the longest option (a learner cannot game it)."""

from __future__ import annotations

import pytest

from quizzes.analysis import LENGTH_ALPHA, LENGTH_MARGIN, at_least, length_bias
from quizzes.author import load_sources


def single(item_id, key, *others):
    return {"id": item_id, "type": "single",
            "options": [{"id": "k", "text": key, "correct": True},
                        *({"id": f"o{i}", "text": t} for i, t in enumerate(others))]}


def test_the_poisson_binomial_tail_is_exact():
    assert at_least([0.5, 0.5], 2) == pytest.approx(0.25)
    assert at_least([0.25] * 4, 0) == pytest.approx(1.0)
    assert at_least([0.25] * 3, 3) == pytest.approx(1 / 64)
    assert at_least([0.5, 0.25], 1) == pytest.approx(1 - 0.5 * 0.75)


def test_the_statistic_flags_longest_keys_and_not_ties():
    biased = [single(f"b{i}", "the long and careful right answer", "no", "nope", "never")
              for i in range(8)]
    fair = [single("f0", "yes", "a much longer wrong answer", "no", "nah"),
            single("f1", "same", "size", "four", "char")]          # a tie is not "longest"
    stats = length_bias("t", biased + fair)
    assert (stats.items, stats.longest) == (10, 8) and stats.offenders[0] == "b0"
    assert stats.chance == pytest.approx(0.25) and stats.p_value < LENGTH_ALPHA
    assert stats.excess > LENGTH_MARGIN
    assert length_bias("t", fair).longest == 0


def test_no_bank_makes_the_longest_option_a_good_guess():
    sources = load_sources()
    every = []
    for quiz_id, src in sorted(sources.items()):
        stats = length_bias(quiz_id, src["items"])
        every += src["items"]
        assert stats.excess <= LENGTH_MARGIN, (
            f"{quiz_id}: the key is the longest option in {stats.longest} of {stats.items} "
            f"single-choice items (chance {stats.chance:.0%}): {', '.join(stats.offenders)}")
    overall = length_bias("all", every)
    assert overall.p_value >= LENGTH_ALPHA, (
        f"over all banks the key is the longest option in {overall.longest} of "
        f"{overall.items} items (chance {overall.chance:.0%}, p = {overall.p_value:.2g})")
