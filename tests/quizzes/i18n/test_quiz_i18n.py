"""pt-BR infrastructure of the quiz engine: one language switch, gettext catalogues read
from the repository's ``.po`` files, every engine message translated, the widget and
the graders' feedback in the learner's language with Slurm's words left in English."""

from __future__ import annotations

import ast
import string
from pathlib import Path

import pytest
from babel.messages.pofile import read_po
from quiz_helpers import bank_of

from quizzes import i18n
from quizzes.i18n import M, resolve, tr
from quizzes.session import NoAnswer, QuizSession

QUIZZES = Path(i18n.__file__).resolve().parent


class Clock:
    def __call__(self) -> float:
        return 1767600000.0


# --- one switch -------------------------------------------------------------------------
@pytest.mark.parametrize(("lang", "env", "expected"), [
    (None, {}, "en"),
    (None, {"COURSE_LANG": "pt-BR"}, "pt-BR"),
    (None, {"COURSE_LANG": "pt_BR.UTF-8"}, "pt-BR"),
    ("", {"COURSE_LANG": " "}, "en"),
    ("en", {"COURSE_LANG": "pt-BR"}, "en"),          # the argument wins
    ("pt-br", {"COURSE_LANG": "en"}, "pt-BR"),
    ("pt", {}, "pt-BR"),
    ("en_US", {}, "en"),
])
def test_the_language_comes_from_lang_else_course_lang_else_english(lang, env, expected):
    assert resolve(lang, env) == expected


def test_an_editions_folder_names_its_language_when_nothing_else_does(tmp_path):
    """A kernel runs in its notebook's folder: notebooks/pt-BR/.course-lang says pt-BR."""
    edition = tmp_path / "pt-BR"
    edition.mkdir()
    (edition / i18n.MARKER).write_text("pt-BR\n", encoding="utf-8")
    assert resolve(None, {}, edition) == "pt-BR"
    assert resolve(None, {}, tmp_path) == "en"
    assert resolve(None, {"COURSE_LANG": "en"}, edition) == "en"     # the switch wins
    assert resolve("en", {}, edition) == "en"


def test_another_package_registers_its_own_catalogue(tmp_path):
    po = tmp_path / "pt_BR" / "LC_MESSAGES" / "demo.po"
    po.parent.mkdir(parents=True)
    po.write_text('msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=utf-8\\n"\n\n'
                  'msgid "Run"\nmsgstr "Executar"\n', encoding="utf-8")
    i18n.register("demo", tmp_path)  # not "course": the real one may be registered
    try:
        assert tr("pt-BR", "Run", "demo") == "Executar"
        assert tr("pt-BR", "Run") == "Run"                 # not a message of the quizzes
        assert tr("en", "Run", "demo") == "Run"
    finally:
        i18n.DOMAINS.pop("demo")
        i18n.catalogue.cache_clear()


def test_an_unknown_language_is_refused_naming_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown language 'fr'.*known: en, pt-BR"):
        resolve("fr", {})
    with pytest.raises(ValueError, match="unknown language 'de'"):
        resolve(None, {"COURSE_LANG": "de"})


def test_units_read_numbers_with_the_same_language_rule():
    from quizzes.items import units

    assert units.language is i18n.language and units.DEFAULT_LANG == i18n.DEFAULT_LANG


# --- catalogues -------------------------------------------------------------------------
def _po(lang: str) -> dict[str, tuple[str, bool]]:
    with i18n.po_path(lang).open("rb") as fh:
        return {m.id: (m.string, m.fuzzy) for m in read_po(fh) if m.id}


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def test_the_engine_has_messages_and_every_one_has_a_pt_br_translation():
    found = i18n.extract()
    assert len(found) >= 60                       # widget, session, items, certificates
    assert {"Check", "Correct.", "Incorrect.", "Finish and hand in",
            "Certificate of achievement", "Save my name"} <= set(found)
    po = _po("pt-BR")
    untranslated = [m for m in found if not po.get(m, ("", False))[0] or po[m][1]]
    assert not untranslated, f"no pt-BR translation (python -m quizzes.i18n update): {untranslated}"
    stale = sorted(set(po) - set(found))
    assert not stale, f"messages no longer in the code (python -m quizzes.i18n update): {stale}"


def test_translations_keep_every_placeholder_and_slurm_word():
    for msgid, (msgstr, _) in _po("pt-BR").items():
        assert _fields(msgstr) == _fields(msgid), msgid
        for word in ("#SBATCH", "sbatch", "Slurm", "quizzes verify"):
            if word in msgid:
                assert word in msgstr, (word, msgid)


def test_no_message_is_an_f_string_or_a_computed_value():
    """Babel cannot extract ``tr(lang, f"...")``: every marked message is a literal."""
    bad = []
    for path in QUIZZES.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
                continue
            position = {"M": 0, "N_": 0, "tr": 1}.get(node.func.id)
            if position is None or len(node.args) <= position:
                continue
            arg = node.args[position]
            literal = isinstance(arg, ast.Constant) and isinstance(arg.value, str)
            if node.func.id != "tr" and not literal:
                bad.append(f"{path.name}:{node.lineno}")
            if isinstance(arg, ast.JoinedStr):
                bad.append(f"{path.name}:{node.lineno}")
    assert not bad


def test_a_message_is_english_without_a_catalogue_entry_and_portuguese_with_one():
    assert tr("en", "Check") == "Check"
    assert tr("pt-BR", "Check") == "Verificar"
    assert tr("pt-BR", "no such message here") == "no such message here"
    msg = M("{verdict}: the controller says {shown}.", verdict=M("Incorrect"),
            shown="Resources")
    assert msg.render("en") == "Incorrect: the controller says Resources."
    assert msg.render("pt-BR") == "Incorreto: o controlador (slurmctld) diz Resources."


def test_the_catalogue_file_is_what_runs(tmp_path, monkeypatch):
    """The .po is read directly: a changed translation shows without a build step."""
    po = tmp_path / "pt_BR" / "LC_MESSAGES" / "quizzes.po"
    po.parent.mkdir(parents=True)
    text = i18n.po_path("pt-BR").read_text(encoding="utf-8")
    po.write_text(text.replace('msgstr "Verificar"', 'msgstr "Conferir"'), encoding="utf-8")
    monkeypatch.setattr(i18n, "LOCALE_DIR", tmp_path)
    i18n.catalogue.cache_clear()
    try:
        assert tr("pt-BR", "Check") == "Conferir"
    finally:
        monkeypatch.undo()
        i18n.catalogue.cache_clear()
    assert tr("pt-BR", "Check") == "Verificar"


# --- the learner's side in pt-BR ----------------------------------------------------------
def _bank():
    return bank_of(
        {"id": "n", "type": "numeric", "answer": 9216, "tolerance": {"rel": 0.02},
         "unit": "GPU-hours"},
        {"id": "s", "type": "single", "options": [{"id": "a", "text": "x", "correct": True},
                                                  {"id": "b", "text": "y"}]},
        {"id": "j", "type": "sbatch", "answer": "#SBATCH --nodes=2", "check": ["nodes_min"]},
        {"id": "m", "type": "multiple",
         "options": [{"id": "a", "text": "x", "correct": True},
                     {"id": "b", "text": "y", "correct": True}, {"id": "c", "text": "z"}]},
    )


def test_feedback_is_in_the_sessions_language_with_slurms_words_in_english():
    pt = QuizSession(_bank(), "ada", lang="pt-BR", clock=Clock())
    wrong = pt.answer("n", "100")
    assert wrong.feedback == ("Incorreto. São aceitas respostas dentro de ±2% do valor esperado, "
                              "em GPU-hours (ou com uma unidade, como 12 GPU-hours).")
    assert pt.answer("s", "b").feedback == "Incorreto."
    slurm = pt.answer("j", "#SBATCH --nodez=2")
    assert slurm.feedback.startswith("Incorreto: o Slurm recusaria isto: sbatch: ")
    assert "unrecognized option" in slurm.feedback           # Slurm's own words
    part = pt.answer("m", ["a"])
    assert part.feedback == "Parcialmente certo: 1 de 2 opções corretas escolhidas, 0 erradas."
    en = QuizSession(_bank(), "bob", clock=Clock())
    assert en.answer("n", "100").feedback.startswith("Incorrect. Answers within ±2% of the")
    assert en.answer("s", "b").feedback == "Incorrect."


def test_a_hint_and_an_unreadable_number_are_said_in_the_learners_language():
    pt = QuizSession(_bank(), "ada", lang="pt-BR", clock=Clock())
    with pytest.raises(NoAnswer, match="'n' ainda não tem resposta"):
        pt.answer("n", " ")
    with pytest.raises(NoAnswer, match=r"^quizzes: error: Não foi possível ler este número: "
                                       r"número ambíguo: em português o ponto separa milhares"):
        pt.answer("n", "9.216")
    assert "n" not in pt.results
    en = QuizSession(_bank(), "bob", clock=Clock())
    with pytest.raises(NoAnswer, match="Cannot read this number: write decimals with a point"):
        en.answer("n", "9,21")


def test_the_graders_english_feedback_is_kept_for_the_gradebook():
    from quizzes.grade import grade_response

    outcome = grade_response(_bank(), "ada", "s", "b", 1, "pt-BR")
    assert outcome.feedback == "Incorrect."                  # what the gradebook stores
    assert outcome.in_language("pt-BR")[0] == "Incorreto."


def _labels(widget) -> list[str]:
    """Every description, placeholder and HTML value under a widget."""
    out = []
    stack = [widget]
    while stack:
        w = stack.pop()
        for attr in ("description", "placeholder", "value"):
            value = getattr(w, attr, None)
            if isinstance(value, str):
                out.append(value)
        stack.extend(getattr(w, "children", ()))
    return out


def test_the_widget_speaks_portuguese_with_course_lang(tmp_path):
    pytest.importorskip("ipywidgets")
    from quizzes.widget import quiz

    env = {"XDG_CONFIG_HOME": str(tmp_path / "cfg"), "COURSE_LANG": "pt-BR"}
    box = quiz("02-sbatch", "ada", "Ada", folder=tmp_path, env=env)
    text = " | ".join(_labels(box))
    for label in ("Verificar", "Anterior", "Próximo", "Concluir e entregar",
                  "pontuação até agora", "tentativa 1"):
        assert label in text, label
    for english in ("Check", "Previous", "Finish and hand in", "score so far"):
        assert english not in _labels(box), english
    en = " | ".join(_labels(quiz("02-sbatch", "ada", "Ada", folder=tmp_path,
                                 env={**env, "COURSE_LANG": ""})))
    assert "Check" in en and "Verificar" not in en
    forced = " | ".join(_labels(quiz("02-sbatch", "ada", "Ada", folder=tmp_path, env=env,
                                     lang="en")))
    assert "Check" in forced and "Verificar" not in forced


def test_the_widgets_check_shows_portuguese_feedback(tmp_path):
    pytest.importorskip("ipywidgets")
    from quizzes.session import QuizSession as Session
    from quizzes.widget import QuizWidget

    widget = QuizWidget(Session(_bank(), "ada", lang="pt-BR", clock=Clock()), mode="all",
                        folder=tmp_path)
    card = next(c for c in widget.cards if "placeholder" in c.children[1].keys
                and c.children[1].placeholder == "sua resposta (GPU-hours)")
    card.children[1].value = "1.234,5 GPU-horas"
    card.children[2].click()
    assert "Incorreto. São aceitas respostas" in card.children[3].value
    widget.finish.click()
    assert widget.result.value.startswith("Salvo em ")


def test_the_name_prompt_asks_in_portuguese(tmp_path):
    pytest.importorskip("ipywidgets")
    from quizzes.widget import quiz

    env = {"XDG_CONFIG_HOME": str(tmp_path / "cfg"), "HOME": str(tmp_path)}
    prompt = quiz("02-sbatch", folder=tmp_path, lang="pt-BR", env=env).children[0]
    text = " | ".join(_labels(prompt))
    assert "Quem está fazendo este quiz?" in text and "Salvar meu nome" in text
    prompt.children[1].children[0].value = "   "
    prompt.children[1].children[1].click()
    assert "digite seu nome" in prompt.children[2].value


def test_an_unknown_language_shows_why_instead_of_the_quiz(tmp_path):
    pytest.importorskip("ipywidgets")
    from quizzes.widget import quiz

    box = quiz("02-sbatch", "ada", folder=tmp_path, lang="fr", env={})
    assert "unknown language &#x27;fr&#x27;" in box.children[0].value


def test_quizzes_output_follows_lang_else_course_lang(tmp_path, monkeypatch, capsys):
    from quizzes.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("COURSE_LANG", raising=False)
    assert main(["--lang", "pt-BR", "keygen", "--out", "a"]) == 0
    assert capsys.readouterr().out.startswith("gravei a.key (privada: fica com quem corrige)")
    monkeypatch.setenv("COURSE_LANG", "pt-BR")
    assert main(["keygen", "--out", "b"]) == 0
    assert capsys.readouterr().out.startswith("gravei b.key")
    assert main(["--lang", "en", "keygen", "--out", "c"]) == 0
    assert capsys.readouterr().out.startswith("wrote c.key (private: keep it with the grader)")
    assert main(["--lang", "fr", "keygen", "--out", "d"]) == 2
    assert "unknown language 'fr'" in capsys.readouterr().err


@pytest.mark.parametrize(("text", "unit", "value"), [
    ("3 nós", "nodes", 3.0), ("1 nó", "nodes", 1.0), ("16 tarefas", "tasks", 16.0),
    ("2 GPU-horas", "GPU-hours", 2.0), ("2 horas", "minutes", 120.0),
    ("3 nos", "nodes", None), ("3 nœuds", "nodes", None),
])
def test_portuguese_unit_words_with_accents_are_read(text, unit, value):
    from quizzes.items.units import parse_quantity

    assert parse_quantity(text, unit) == value


def test_update_keeps_translations_adds_new_messages_and_drops_gone_ones(tmp_path, monkeypatch):
    po = tmp_path / "pt_BR" / "LC_MESSAGES" / "quizzes.po"
    po.parent.mkdir(parents=True)
    text = i18n.po_path("pt-BR").read_text(encoding="utf-8")
    text = text.replace('msgid "Check"\nmsgstr "Verificar"\n', "")          # a new message
    text += '\nmsgid "a message the code no longer has"\nmsgstr "velha"\n'  # a gone one
    po.write_text(text, encoding="utf-8")
    monkeypatch.setattr(i18n, "LOCALE_DIR", tmp_path)
    i18n.catalogue.cache_clear()
    try:
        missing, path = i18n.update("pt-BR")
        assert path == po and missing == ["Check"]
        after = _po_at(po)
        assert after["Check"] == "" and "a message the code no longer has" not in after
        assert after["Correct."] == "Correto."
        assert set(after) == set(i18n.extract())
    finally:
        monkeypatch.undo()
        i18n.catalogue.cache_clear()


def _po_at(path: Path) -> dict[str, str]:
    with path.open("rb") as fh:
        return {m.id: m.string for m in read_po(fh) if m.id}
