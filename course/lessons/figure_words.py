"""The words of the course's figures and tables in a widget's language.

* `translator`: the ``tr`` function minislurm.sim.plots' helpers take (``gantt``,
  ``gpu_utilisation``, ``queue_depth``, ``wait_times``): their English messages through
  the ``course`` gettext domain; English is the messages themselves, byte for byte.
* `PLOT_MESSAGES`: those helpers' messages, marked here for the course catalogue (Babel
  reads course/ only); tests/course/lessons/test_figure_words.py checks that they are
  exactly the literals minislurm/sim/plots.py passes to its ``_t``.
* `decimal`: a number in a sentence of a figure or table, with the decimal comma in
  pt-BR (docs/glossary.md) and as Python formats it in English.
* `localise`: a figure's own numbers (ticks, hover values) with the decimal comma and
  the thousands dot in pt-BR (plotly's ``layout.separators``); an English figure is left
  as it is, byte for byte.
"""

from __future__ import annotations

from functools import partial

import plotly.graph_objects as go

from course.i18n import N_, t
from minislurm.sim.plots import Translate
from quizzes.i18n import DEFAULT_LANG, language

#: Every message minislurm/sim/plots.py shows (its ``_t(tr, "...")`` literals).
PLOT_MESSAGES = (
    N_("job {job} {name}<br>user {user}<br>nodes {nodes}<br>GPUs {gpus}<br>wait {wait} s"
       "<br>{state}"),
    N_("Schedule by {by}"), N_("node"), N_("job"), N_("time (UTC)"), N_("user"), N_("state"),
    N_("GPU utilisation"), N_("GPU utilisation ({gpus} GPUs, {bin} s bins)"),
    N_("allocated / total"), N_("pending jobs"), N_("Queue depth ({bin} s bins)"),
    N_("jobs"), N_("Wait times"), N_("wait ({unit})"),
)


def translator(lang: str) -> Translate:
    """The ``tr`` of minislurm.sim.plots' helpers for a widget speaking ``lang``."""
    return partial(t, lang)


#: pt-BR's decimal and thousands separators, as plotly's ``layout.separators`` spells them.
SEPARATORS = {"pt-BR": ",."}


def localise(fig: go.Figure, lang: str = "en") -> go.Figure:
    """``fig`` (a plotly figure) with ``lang``'s number separators; English untouched."""
    separators = SEPARATORS.get(language(lang))
    if separators is not None:
        fig.update_layout(separators=separators)
    return fig


def decimal(value: float, spec: str, lang: str = "en") -> str:
    """``format(value, spec)``; in pt-BR with the decimal comma and the thousands dot
    (``2.50`` -> ``2,50``, ``1,234.5`` -> ``1.234,5``)."""
    text = format(value, spec)
    if language(lang) == DEFAULT_LANG:
        return text
    return text.replace(",", "\0").replace(".", ",").replace("\0", ".")


__all__ = ["PLOT_MESSAGES", "SEPARATORS", "decimal", "localise", "translator"]
