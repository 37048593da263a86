"""Lesson 5's experiments (course/lessons/priority_explorer.py), headless.

The explorer re-ranks a real minislurm queue; at the cluster's own settings it must
agree with what ``sprio`` prints, and each slider must change the order the way
priority/multifactor's documented formula says.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from busy_probe import assert_busy_while

from course.lessons.priority_explorer import (
    CHANGES,
    ClassicExplorer,
    Knobs,
    PriorityExplorer,
    QueueSnapshot,
    classic_example,
    classic_table,
    factor_change,
    first_in_line,
    format_ranking,
    queue_cluster,
    rank_queue,
    snapshot_queue,
)
from minislurm.sim import Cluster


@pytest.fixture(scope="module")
def cluster() -> Cluster:
    return queue_cluster()


@pytest.fixture(scope="module")
def snap(cluster: Cluster) -> QueueSnapshot:
    return snapshot_queue(cluster)


def _rank_of(snap: QueueSnapshot, knobs: Knobs, job_id: int) -> int:
    return next(r.rank for r in rank_queue(snap, knobs) if r.job.job_id == job_id)


def test_default_knobs_reproduce_sprio(cluster: Cluster, snap: QueueSnapshot) -> None:
    out = cluster.run("sprio -h -o '%i %Y'")
    assert out.returncode == 0, out
    sprio = {int(a): int(b) for a, b in (line.split() for line in out.stdout.splitlines())}
    ranked = rank_queue(snap)
    assert {r.job.job_id: r.factors.priority for r in ranked} == sprio
    assert len(sprio) == 7  # every pending job, none running (bob's run holds the nodes)
    prios = [r.factors.priority for r in ranked]
    assert prios == sorted(prios, reverse=True)


def test_usage_history_matches_sshare(cluster: Cluster, snap: QueueSnapshot) -> None:
    """The replayed history gives the RawUsage sshare prints (same decay, same charges)."""
    out = cluster.run("sshare -a -P -o Account,User,RawUsage")
    rows = {(a.strip(), u or None): int(v) for a, u, v in
            (line.split("|")[:3] for line in out.stdout.splitlines()[1:])}
    from minislurm.priority.usage import UsageTracker

    t = UsageTracker(snap.associations, half_life=snap.params.decay_half_life,
                     start=snap.history[0].time)
    for h in snap.history:
        t.record(h.key, h.amount, h.time)
    raw = t.raw_usage(snap.now)
    assert rows[("llm", "alice")] == int(raw[("llm", "alice")]) > 0
    assert rows[("vision", "carol")] == int(raw[("vision", "carol")]) > 0
    assert rows[("llm", "bob")] == 0  # bob has not finished a job yet


def test_raising_the_age_weight_moves_the_oldest_job_up(snap: QueueSnapshot) -> None:
    oldest = min(snap.jobs, key=lambda j: j.submit_time).job_id
    before = _rank_of(snap, Knobs(), oldest)
    after = _rank_of(snap, Knobs(age=20000), oldest)
    assert after < before
    # with only age weighted, the queue is in submission order
    only_age = rank_queue(snap, Knobs(age=1000, fairshare=0, job_size=0, partition=0, qos=0))
    assert [r.job.job_id for r in only_age] == sorted(j.job_id for j in snap.jobs)


def test_fair_share_dominates_by_default(snap: QueueSnapshot) -> None:
    ranked = rank_queue(snap)
    assert ranked[0].job.user == "student"  # no usage at all: FairShare 1.0
    assert {r.job.user for r in ranked[-2:]} == {"alice"}  # the heavy user goes last


def test_qos_and_partition_weights(snap: QueueSnapshot) -> None:
    hotfix = next(j.job_id for j in snap.jobs if j.name == "hotfix")
    debug = next(j.job_id for j in snap.jobs if j.partition == "debug")
    assert _rank_of(snap, Knobs(qos=20000), hotfix) == 1
    assert _rank_of(snap, Knobs(partition=20000), debug) == 1
    assert _rank_of(snap, Knobs(qos=0), hotfix) >= _rank_of(snap, Knobs(), hotfix)


def test_job_size_weight_favours_large_jobs(snap: QueueSnapshot) -> None:
    ranked = rank_queue(snap, Knobs(job_size=20000, fairshare=0))
    assert ranked[0].job.num_nodes == max(j.num_nodes for j in snap.jobs)


def test_forgiving_llm_usage_lifts_alice(snap: QueueSnapshot) -> None:
    sft = next(j.job_id for j in snap.jobs if j.name == "sft")
    assert _rank_of(snap, Knobs(usage_scale={"llm": 0.0}), sft) < _rank_of(snap, Knobs(), sft)
    fs = {r.job.user: r.factors.fairshare for r in rank_queue(snap, Knobs(usage_scale={"llm": 4}))}
    assert fs["alice"] < fs["carol"]


def test_short_half_life_forgives_old_usage(snap: QueueSnapshot) -> None:
    """Classic fair share: alice's usage is older than carol's; a short half-life
    shrinks it relative to carol's, so alice's factor rises and carol's falls."""
    def fs(days: float) -> dict[str, float]:
        k = Knobs(half_life_days=days, fair_tree=False)
        return {r.job.user: r.factors.fairshare for r in rank_queue(snap, k)}

    long, short = fs(28), fs(0.25)
    assert short["alice"] > long["alice"]
    assert short["carol"] < long["carol"]


def test_explorer_slider_changes_order_and_figure(snap: QueueSnapshot) -> None:
    e = PriorityExplorer(snap)
    first_order = e.order
    first = e.figure.to_dict()["data"]
    assert [t["name"] for t in first[:5]] == ["age", "fair share", "job size", "partition", "QOS"]
    e.controls["age"].value = 20000  # what a learner's drag does: observe -> refresh
    assert e.order != first_order
    oldest = min(snap.jobs, key=lambda j: j.submit_time).job_id
    assert e.order.index(oldest) < first_order.index(oldest)
    after = e.figure.to_dict()["data"]
    assert after[0]["y"] != first[0]["y"]  # the age bars grew
    assert "was #" in "".join(after[0]["x"])
    assert e.figure_view.outputs[0]["data"]["application/vnd.plotly.v1+json"]["data"] == after
    assert "PRIORITY" in e.table.value
    e.reset()
    assert e.order == first_order


def test_explorer_usage_and_algorithm_controls(snap: QueueSnapshot) -> None:
    e = PriorityExplorer(snap)
    before = e.figure.to_dict()["data"][1]["y"]
    e.controls["fair_tree"].value = False
    assert e.figure.to_dict()["data"][1]["y"] != before
    def alice_fs() -> float:
        return next(r.factors.fairshare for r in e.ranked if r.job.user == "alice")

    heavy = alice_fs()
    e.controls["usage"].value = 0.0  # forget llm's usage
    assert e.knobs.usage_scale == {"llm": 0.0} and e.knobs.fair_tree is False
    assert alice_fs() > heavy


def test_format_ranking_lists_every_job(snap: QueueSnapshot) -> None:
    text = format_ranking(rank_queue(snap))
    assert len(text.splitlines()) == 1 + len(snap.jobs)


@pytest.mark.parametrize(("user", "documented"), [
    ("user1", 0.408479), ("user2", 0.022097), ("user3", 0.125), ("user4", 0.5),
    ("user5", 0.749154)])
def test_classic_worked_example(user: str, documented: float) -> None:
    rows = {r.name: r for r in classic_example()}
    assert rows[user].fairshare == pytest.approx(documented, abs=1e-6)
    assert "0.408479" in classic_table(classic_example())


def test_classic_explorer_usage_of_a_sibling_lowers_a_users_factor() -> None:
    e = ClassicExplorer()
    before = {r.name: r.fairshare for r in e.rows}
    fig_before = e.figure.to_dict()["data"][2]["y"]
    e.sliders["user3"].value = 0.3  # user 3 now runs jobs too: account C is more over-served
    after = {r.name: r.fairshare for r in e.rows}
    assert (after["user2"] or 0) < (before["user2"] or 0)
    assert (after["user3"] or 0) < (before["user3"] or 0)
    assert e.figure.to_dict()["data"][2]["y"] != fig_before


def test_first_in_line_is_rank_queues_first_job(snap: QueueSnapshot) -> None:
    k = Knobs.from_params(snap.params)
    assert first_in_line(snap, k) == rank_queue(snap, k)[0].label == "8 student homework"
    # without fair share, QOS high and the debug partition decide
    assert first_in_line(snap, replace(k, fairshare=0)) == "9 alice hotfix"


def test_the_explorer_asks_who_goes_first_without_fair_share(snap: QueueSnapshot) -> None:
    e = PriorityExplorer(snap)
    body = e.box.children[1]
    assert body.layout.display == "none"
    assert e.predict.question.options[0].startswith("5 alice")  # by job id, not by rank
    score = e.predict.check("10 dave eval-quick")
    assert score is not None and not score.correct
    assert score.message.endswith("the simulation says 9 alice hotfix.")
    assert body.layout.display is None and e.controls["fairshare"].value == 0
    assert e.order[0] == 9


def test_the_priority_explorer_is_busy_while_it_reranks(snap: QueueSnapshot,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from course.lessons import priority_explorer

    e = PriorityExplorer(snap)
    assert_busy_while(monkeypatch, priority_explorer, "rank_queue", e.busy,
                      lambda: setattr(e.controls["qos"], "value",
                                      e.controls["qos"].value + 500))


def test_factor_change_compares_the_example_before_and_after() -> None:
    # user 3's usage raises account C's, so A's: user 1 (in B, under A) falls too
    assert factor_change("user1", {"user3": 0.2}) == "falls"
    assert factor_change("user4", {"user3": 0.2}) == "stays the same"
    assert factor_change("user2", {"user2": 0.0}) == "rises"
    with pytest.raises(ValueError, match="no user 'B'"):
        factor_change("B", {})


def test_the_classic_explorer_asks_first_then_moves_the_slider() -> None:
    e = ClassicExplorer()
    body = e.box.children[1]
    assert body.layout.display == "none" and e.predict.question.options == CHANGES
    score = e.predict.check("stays the same")
    assert score is not None and not score.correct and "says falls" in score.message
    assert e.sliders["user3"].value == 0.2 and body.layout.display is None
    user1 = next(r.fairshare for r in e.rows if r.name == "user1")
    assert user1 is not None and user1 < 0.408479


def test_the_classic_explorer_is_busy_while_it_recomputes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from course.lessons import priority_explorer

    e = ClassicExplorer()
    assert_busy_while(monkeypatch, priority_explorer, "classic_example", e.busy,
                      lambda: setattr(e.sliders["user4"], "value",
                                      round(e.sliders["user4"].value + 0.05, 2)))


def test_the_pt_br_explorers_figures_and_tables_are_portuguese(snap: QueueSnapshot) -> None:
    """pt-BR: title, axis, legend and table headers through the course catalogue; job ids,
    users, sprio's PRIORITY, QOS and the parameter names stay; English is unchanged."""
    e = PriorityExplorer(snap, lang="pt-BR")
    e.controls["age"].value = 20000
    fig = e.figure.to_dict()
    layout = fig["layout"]
    assert layout["title"]["text"] == ("Jobs pendentes na ordem de escalonamento: fatores "
                                       "ponderados (sprio)")
    assert layout["yaxis"]["title"]["text"] == "prioridade"
    assert layout["separators"] == ",."                  # plotly's numbers: 1.234,5
    assert [t["name"] for t in fig["data"][:5]] == ["idade", "fair share", "tamanho do job",
                                                    "partition", "QOS"]
    assert fig["data"][0]["hovertemplate"].startswith("idade: ")
    labels = "".join(fig["data"][0]["x"])
    assert "(era #" in labels and "job 8<br>student homework" in labels
    head, *rows = e.table.value.removeprefix("<pre>").splitlines()
    assert head.split()[:6] == ["posição", "job", "usuário", "conta", "nome", "PRIORITY"]
    assert "IDADE" in head and "FAIR SHARE" in head and "TAMANHO DO JOB" in head
    assert rows[0].split()[:3] == ["1", str(e.order[0]), e.ranked[0].job.user]
    assert e.controls["fairshare"].description == "PriorityWeightFairshare"
    # every row lines up under the wider Portuguese headers
    assert {len(r) for r in rows[:-1]} == {len(head)}
    en = PriorityExplorer(snap, lang="en")
    en.controls["age"].value = 20000
    assert en.figure.to_dict()["layout"]["title"]["text"] == \
        "Pending jobs in scheduling order: weighted factors (sprio)"
    assert "separators" not in en.figure.to_dict()["layout"]
    assert en.table.value.splitlines()[0].removeprefix("<pre>").split()[:6] == \
        ["rank", "job", "user", "account", "name", "PRIORITY"]
    assert format_ranking(rank_queue(snap)) == format_ranking(rank_queue(snap), lang="en")


def test_the_pt_br_classic_explorer_is_portuguese() -> None:
    e = ClassicExplorer(lang="pt-BR")
    fig = e.figure.to_dict()
    assert fig["layout"]["title"]["text"] == "Fair share clássico: F = 2^(-U_E / S)"
    assert fig["layout"]["separators"] == ",."
    assert [t["name"] for t in fig["data"]] == ["S: shares normalizados", "U_E: uso efetivo",
                                                "F: fator de fair share"]
    assert fig["data"][0]["x"][0] == "user1 (B)"
    head = e.table.value.removeprefix("<pre>").splitlines()[0]
    assert head.split() == ["associação", "S", "U", "U_E", "F", "=", "2^(-U_E/S)"]
    assert "0.408479" in e.table.value                 # the numbers as Slurm's page prints them
    en = ClassicExplorer(lang="en")
    assert en.figure.to_dict()["layout"]["title"]["text"] == \
        "Classic fair share: F = 2^(-U_E / S)"
    assert en.table.value.removeprefix("<pre>").startswith("association   ")
