"""course/lessons/figure_words.py: minislurm.sim.plots' words in a widget's language.

Babel reads course/ only, so the messages of minislurm/sim/plots.py are marked in
figure_words.PLOT_MESSAGES: they must be exactly the literals plots.py translates
(a new word there fails here until it is marked, and so reaches the catalogue test).
"""

from __future__ import annotations

import ast
import inspect

from course.lessons.figure_words import PLOT_MESSAGES, decimal, translator
from course.lessons.priority_explorer import queue_cluster
from minislurm.sim import plots


def _translated_literals() -> set[str]:
    tree = ast.parse(inspect.getsource(plots))
    found = set()
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id == "_t"):
            assert len(node.args) == 2 and isinstance(node.args[1], ast.Constant), \
                f"plots.py:{node.lineno}: _t needs a literal message"
            found.add(node.args[1].value)
    return found


def test_plot_messages_are_exactly_the_words_plots_translates() -> None:
    assert set(PLOT_MESSAGES) == _translated_literals()
    assert len(PLOT_MESSAGES) == len(set(PLOT_MESSAGES))


def test_plots_speak_portuguese_through_the_translator_and_english_without() -> None:
    cluster = queue_cluster()
    try:
        jobs = cluster.jobs()
    finally:
        cluster.close()
    now = max((j.end_time or j.start_time or 0) for j in jobs) + 60
    pt = translator("pt-BR")
    g = plots.gantt(jobs, now=now, tr=pt)
    assert g.layout.title.text == "Escalonamento por nó"
    assert g.layout.xaxis.title.text == "hora (UTC)" and g.layout.yaxis.title.text == "nó"
    assert g.layout.legend.title.text == "usuário"
    assert plots.gantt(jobs, by="job", color="state", now=now, tr=pt).layout.legend.title.text \
        == "estado"
    hover = g.data[0].hovertext[0]
    assert "<br>usuário " in hover and "<br>nós " in hover and "<br>espera " in hover
    assert hover.split("<br>")[0] == plots.gantt(jobs, now=now).data[0].hovertext[0] \
        .split("<br>")[0]                                      # job id and name unchanged
    english = plots.gantt(jobs, now=now)
    assert english.layout.title.text == "Schedule by node"
    assert plots.gantt(jobs, now=now, tr=translator("en")).to_dict() == english.to_dict()
    u = plots.gpu_utilisation(jobs, 16, tr=pt)
    assert u.layout.title.text == "Uso das GPUs (16 GPUs, intervalos de 3600 s)"
    assert u.layout.yaxis.title.text == "alocadas / total"
    q = plots.queue_depth(jobs, tr=pt)
    assert (q.layout.title.text, q.data[0].name) == ("Tamanho da fila (intervalos de 3600 s)",
                                                     "jobs pendentes")
    w = plots.wait_times(jobs, tr=pt)
    assert (w.layout.title.text, w.layout.yaxis.title.text) == ("Tempos de espera",
                                                                "espera (min)")


def test_decimal_uses_the_comma_in_pt_br_only() -> None:
    assert decimal(1234.5, ",.2f", "pt-BR") == "1.234,50"
    assert decimal(2.5, ".2f", "pt-BR") == "2,50"
    assert decimal(0.456, ".0%", "pt-BR") == "46%"
    assert decimal(1234.5, ",.2f", "en") == "1,234.50"


def test_localise_sets_pt_br_separators_and_leaves_english_alone() -> None:
    import plotly.graph_objects as go

    from course.lessons.figure_words import localise

    assert localise(go.Figure(), "pt-BR").layout.separators == ",."
    english = go.Figure(go.Bar(y=[0.5]))
    assert localise(english, "en").to_dict() == go.Figure(go.Bar(y=[0.5])).to_dict()
