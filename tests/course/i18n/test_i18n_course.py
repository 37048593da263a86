"""The course's own words in pt-BR: the ``course`` gettext domain (lesson widgets' labels,
buttons, messages, predict-step and busy texts; the site's pages), every message
translated with its placeholders and Slurm's words kept, the widgets speaking the
edition's language (the .course-lang marker) with the same code, and the static site's
pt-BR edition (``lang`` attribute, a language menu)."""

from __future__ import annotations

import ast
import re
import string
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

from course import i18n
from course.build_render import lang_menu, widget_note
from course.i18n_catalog import KEYWORDS, extract
from course.lessons.figure_words import PLOT_MESSAGES
from course.lessons.predict import (
    BusyIndicator,
    ChoiceQuestion,
    NumberQuestion,
    PredictStep,
    score_number,
)
from quizzes.i18n import MARKER, po_path

COURSE = Path(i18n.__file__).resolve().parent


def _po() -> dict[str, tuple[str, bool]]:
    with po_path("pt-BR", "course").open("rb") as fh:
        cat = read_po(fh, locale="pt_BR")
    return {m.id: (m.string, m.fuzzy) for m in cat if m.id}


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def test_the_course_has_messages_and_every_one_has_a_pt_br_translation():
    found = extract()
    assert len(found) >= 90
    assert {"Check", "Predict first:", "Submit (sbatch)", "computing the answer…",
            "Lesson notebook", "What Slurm is"} <= set(found)
    # the figures' words: minislurm.sim.plots' (marked in course/lessons/figure_words.py)
    # and the lesson widgets' figure and table helpers
    assert set(PLOT_MESSAGES) <= set(found)
    assert {"Pending jobs in scheduling order: weighted factors (sprio)", "GPUs in the job",
            "job {job} is PENDING ({reason}); free GPUs per node: {listing} (total {total})",
            "node (SLURM_NODEID left to right)"} <= set(found)
    po = _po()
    untranslated = [m for m in found if not po.get(m, ("", False))[0] or po[m][1]]
    assert not untranslated, ("no pt-BR translation (python -m course.i18n_catalog update): "
                              f"{untranslated}")
    stale = sorted(set(po) - set(found))
    assert not stale, ("messages no longer in the code (python -m course.i18n_catalog "
                       f"update): {stale}")


#: Slurm's words: a translation keeps each one the English message has.
SLURM_WORDS = ("sbatch", "srun", "slurmctld", "slurm.conf", "Slurm", "PENDING", "Resources",
               "bf_window", "bf_resolution", "PriorityWeightFairshare", "PriorityDecayHalfLife",
               "LOCAL_RANK", "--nodes", "--ntasks-per-node", "minislurm", "MTBF", "GPU",
               "Fair Tree", "sbatch: error:", "goodput",
               # the figures' and tables' words (course/lessons/figure_words.py and the
               # lessons' figure helpers): Slurm's names in their titles, axes and legends
               "sprio", "squeue", "RUNNING", "QOS", "partition", "backfill", "BeginTime",
               "CUDA_VISIBLE_DEVICES", "SLURM_NODEID", "gpu:", "pretrain")


def test_translations_keep_every_placeholder_code_span_and_slurm_word():
    for msgid, (msgstr, _) in _po().items():
        assert _fields(msgstr) == _fields(msgid), msgid
        assert re.findall(r"`[^`]+`|<[^>]+>", msgstr) == re.findall(r"`[^`]+`|<[^>]+>", msgid), \
            msgid
        for word in SLURM_WORDS:
            if word in msgid:
                assert word in msgstr, (word, msgid)


def test_no_message_is_an_f_string_or_a_computed_value():
    """Babel cannot extract ``t(lang, f"...")``: every marked message is a literal (a
    variable is allowed only where the message was marked where it is defined)."""
    bad = []
    for path in [*COURSE.glob("lessons/*.py"), *COURSE.glob("build*.py"),
                 *COURSE.glob("i18n*.py")]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            name = node.func.id if isinstance(node.func, ast.Name) else \
                node.func.attr if isinstance(node.func, ast.Attribute) else None
            if name not in KEYWORDS or name == "_":
                continue
            position = 1 if name == "t" else 0
            if len(node.args) <= position:
                continue
            arg = node.args[position]
            if isinstance(arg, ast.JoinedStr):
                bad.append(f"{path.name}:{node.lineno}")
            if name in ("N_", "working") and not (isinstance(arg, ast.Constant)
                                                  and isinstance(arg.value, str)):
                bad.append(f"{path.name}:{node.lineno}")
    assert not bad


def _labels(widget) -> list[str]:
    out, stack = [], [widget]
    while stack:
        w = stack.pop()
        for attr in ("description", "placeholder", "value"):
            value = getattr(w, attr, None)
            if isinstance(value, str):
                out.append(value)
        options = getattr(w, "_options_labels", None)
        if options:
            out.extend(options)
        stack.extend(getattr(w, "children", ()))
    return out


def test_the_predict_step_speaks_the_editions_language(tmp_path, monkeypatch):
    """The same code, in a kernel whose folder holds the pt-BR marker: Portuguese."""
    monkeypatch.delenv("COURSE_LANG", raising=False)
    edition = tmp_path / "pt-BR"
    edition.mkdir()
    (edition / MARKER).write_text("pt-BR\n")
    monkeypatch.chdir(edition)
    import ipywidgets as widgets

    q = NumberQuestion("From which k on does a job wait?", lambda: 1234.5, unit="h",
                       low="early", high="late")
    step = PredictStep(q, widgets.VBox())
    assert step.lang == "pt-BR"
    labels = _labels(step.view)
    assert "Verificar" in labels and "sua resposta (h)" in labels
    assert any(v.startswith("<b>Preveja primeiro:</b>") for v in labels)
    score = step.check(1000.25)
    assert score is not None
    assert score.message == ("Você previu 1.000,25 h; a simulação diz 1.234,50 h: "
                             "234,25 h cedo demais (19% do valor verdadeiro).")
    assert "Agora explore: o widget abaixo é seu." in step.feedback.value
    monkeypatch.chdir(tmp_path)                   # the English edition's folder
    assert PredictStep(q, widgets.VBox()).button.description == "Check"


def test_choices_show_translated_labels_and_keep_their_values():
    import ipywidgets as widgets

    q = ChoiceQuestion("What happens?", ("falls", "stays the same", "rises"), lambda: "rises")
    step = PredictStep(q, widgets.VBox(), lang="pt-BR")
    assert step.answer.options == (("cai", "falls"), ("fica igual", "stays the same"),
                                   ("sobe", "rises"))
    score = step.check("falls")
    assert score is not None and score.message == \
        "Não desta vez: você escolheu cai; a simulação diz sobe."


def test_english_stays_english_byte_for_byte():
    score = score_number(1000.25, 1234.5, unit="h", low="early", high="late")
    assert score.message == ("You predicted 1,000.25 h; the simulation says 1,234.50 h: "
                             "234.25 h too early (19% of the true value).")


def test_busy_texts_are_messages_formatted_in_the_widgets_language():
    busy = BusyIndicator("pt-BR")
    with busy.working("simulating {size} jobs…", size=500):
        assert busy.text == "simulando 500 jobs…"
    with busy.working():
        assert busy.text == "trabalhando…"
    assert busy.text == ""
    with BusyIndicator("en").working("simulating {size} jobs…", size=500):
        pass


def test_a_lesson_widget_is_portuguese_in_the_pt_br_edition():
    from course.lessons.gpu_layout import FragmentationLab
    from course.lessons.script_builder import ScriptBuilder
    from minislurm.sim import Cluster

    lab = FragmentationLab(lang="pt-BR")
    labels = _labels(lab.view)
    assert {"GPUs por nó", "Submeter", "avançar 30 min", "nenhum: ele fica pendente"} <= \
        set(labels)
    assert lab.sbatch_args().startswith("-N1 --gres=gpu:")        # Slurm's words stay
    cluster = Cluster()
    try:
        builder = ScriptBuilder(cluster, lang="pt-BR")
        assert builder.submit_button.description == "Submeter (sbatch)"
        assert builder.controls["nodes"].description == "--nodes"
        assert "o que o Slurm diz" in builder.verdict_view.value
        assert "OK: o sbatch o aceita; num cluster vazio ele começa na hora em 2 nó(s)" in \
            builder.verdict_view.value
        assert builder.verdict is not None
        assert builder.verdict.summary().startswith("OK: sbatch accepts it")   # print()ed
    finally:
        cluster.close()
    lab.cluster.close()


# --- the static site ---------------------------------------------------------------------
def test_the_language_menu_links_each_page_to_its_other_edition():
    en = lang_menu("en", "lessons/02-sbatch.html", ("en", "pt-BR"))
    assert 'href="../pt-BR/lessons/02-sbatch.html" hreflang="pt-BR"' in en
    assert 'aria-current="page">English' in en
    pt = lang_menu("pt-BR", "lessons/02-sbatch.html", ("en", "pt-BR"))
    assert 'href="../../lessons/02-sbatch.html" hreflang="en"' in pt
    assert 'aria-label="Idioma"' in pt
    assert 'href="pt-BR/index.html"' in lang_menu("en", "index.html", ("en", "pt-BR"))
    assert "scripts/course --lang pt-BR" in widget_note("pt-BR")


def test_the_site_builds_in_pt_br_with_its_lang_attribute(tmp_path):
    """The pt-BR lesson page (from the built pt-BR notebook, stored outputs), its reading
    (course/lessons/pt-BR/) and the index, in a checkout copy."""
    import shutil

    from course.build import BuildOptions, build
    from course.i18n import build_edition

    root, site = tmp_path / "checkout", tmp_path / "site"
    (root / "notebooks").mkdir(parents=True)
    (root / "course").mkdir()
    (root / "course" / "lessons").symlink_to(COURSE / "lessons")
    src = root / "notebooks" / "02-sbatch.ipynb"
    shutil.copyfile(COURSE.parent / "notebooks" / "02-sbatch.ipynb", src)
    shutil.copyfile(COURSE.parent / "notebooks" / "sanitize.cfg",
                    root / "notebooks" / "sanitize.cfg")
    build_edition("pt-BR", [src], root / "notebooks" / "pt-BR")
    report = build(BuildOptions(out=site, execute=False, progress=False, lang="pt-BR",
                                langs=("en", "pt-BR"), only=("02-sbatch",)), root=root)
    assert report.out == site / "pt-BR" and report.lessons == ["02-sbatch"]
    index = (site / "pt-BR" / "index.html").read_text()
    assert '<html lang="pt-BR">' in index
    assert "Slurm para clusters de treinamento de IA" in index
    assert "Lição 2: Jobs em lote com sbatch" in index
    assert "<strong>Objetivos:</strong> escrever um script" in index    # the pt-BR notebook's
    assert 'href="../index.html" hreflang="en"' in index
    lesson = (site / "pt-BR" / "lessons" / "02-sbatch.html").read_text()
    assert '<html lang="pt-BR">' in lesson
    assert 'href="../../lessons/02-sbatch.html" hreflang="en"' in lesson
    assert '<a download="" href="../notebooks/02-sbatch.ipynb">Notebook (.ipynb)</a>' in lesson
    assert (site / "pt-BR" / "notebooks" / "02-sbatch.ipynb").is_file()
    assert "scripts/course --lang pt-BR" in lesson                       # the widget note
    reading = (site / "pt-BR" / "readings" / "02-sbatch.html").read_text()
    assert '<html lang="pt-BR">' in reading and "Índice do curso" in reading
    assert not (site / "index.html").exists()    # the English edition is not touched


@pytest.mark.parametrize("lang", ["en", "pt-BR"])
def test_every_site_template_says_its_language(lang):
    for name in ("index.html.j2", "reading.html.j2"):
        assert '<html lang="{{ lang }}">' in (COURSE / "site" / name).read_text()
