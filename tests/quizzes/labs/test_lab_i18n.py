"""The labs in pt-BR: every lab has a current translation keeping Slurm's words; a stale
one falls back to English; the widget and ``quizzes lab show`` speak the resolved language."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from quizzes.items.lab import LabItem
from quizzes.labs.catalog import LABS, lab
from quizzes.labs.i18n import FORMAT, current, fingerprint, load, localise, parse, path_for, report

CODE = re.compile(r"`[^`]+`")
#: Slurm's words and names a translation must keep byte for byte: options, #SBATCH-style
#: lines, file names and patterns, environment variables and Slurm's CamelCase keys
#: (MASTER_ADDR, Preempt=scavenger, PreemptMode=REQUEUE), squeue/sacct column names.
SLURM_TOKEN = re.compile(
    r"(?<![\w-])(?:--?[a-zA-Z][\w-]*(?:=\S+)?"          # -o, --parsable, --start
    r"|#[A-Z]+"                                         # #SBATCH, #MINISLURM
    r"|[\w<>%-]+\.(?:sh|py|out|err)"                    # train.sh, train-<jobid>.out
    r"|[A-Z][A-Z0-9]*_[A-Z_/]+"                         # CUDA_VISIBLE_DEVICES, RANK/...
    r"|[A-Z][a-z]+[A-Z]\w*(?:=\w+)?|[A-Z][a-z]+=\w+"    # PreemptMode=REQUEUE, Priority=50
    r"|Elapsed|Timelimit|State|HH:MM:SS|\$\(\.\.\.\))")
COMMANDS = ("sbatch", "srun", "squeue", "sacct", "sprio", "scontrol", "gloo", "minislurm")
#: Lab names and users the tasks mention (words of the cluster, not of the prose).
NAMES = re.compile(r"\b(?:train|prep|preprocess|finetune|ddp|big|wide|alice|gpu04|"
                   r"scavenger|normal|debug|high|gpu|cpu)\b")


def _fields(item):
    return [("title", item.title), ("task", item.task),
            *((f"hint {i}", h) for i, h in enumerate(item.hints))]


def test_every_lab_has_a_current_pt_br_translation():
    assert report("pt-BR") == []
    texts = load("pt-BR")
    assert set(texts) == {x.id for x in LABS}
    for item in LABS:
        shown = localise(item, "pt-BR")
        assert current(item, "pt-BR") is not None, item.id
        for (name, english), (_, portuguese) in zip(_fields(item), _fields(shown), strict=True):
            assert portuguese != english, f"{item.id} {name} is still English"


@pytest.mark.parametrize("item", LABS, ids=lambda x: x.id)
def test_translations_keep_code_spans_and_slurms_words(item):
    shown = localise(item, "pt-BR")
    for (name, english), (_, portuguese) in zip(_fields(item), _fields(shown), strict=True):
        where = f"{item.id} {name}"
        assert sorted(CODE.findall(portuguese)) == sorted(CODE.findall(english)), where
        prose = CODE.sub("", english)
        for token in SLURM_TOKEN.findall(prose):
            assert token in portuguese, f"{where}: lost {token!r}"
        for word in COMMANDS:
            assert (word in prose) <= (word in portuguese), f"{where}: lost {word!r}"
        for name_ in set(NAMES.findall(prose)):
            assert re.search(rf"\b{name_}\b", portuguese), f"{where}: lost {name_!r}"


def test_the_tokens_the_check_relies_on_are_found():
    """The Slurm-word check is not vacuous: it sees the words of a few statements."""
    tokens = set(SLURM_TOKEN.findall(lab("survive-preemption").task))
    assert {"scavenge.sh", "#MINISLURM", "Preempt=scavenger"} <= tokens
    tokens = set(SLURM_TOKEN.findall(lab("ddp-2x4").task))
    assert {"ddp.sh", "SLURM_PROCID", "MASTER_ADDR"} <= tokens
    tokens = set(SLURM_TOKEN.findall(lab("after-preprocess").hints[1]))
    assert {"--parsable", "$(...)"} <= tokens


def test_only_words_are_translated_never_the_checks():
    item = lab("first-job")
    shown = localise(item, "pt-BR")
    assert shown.title == "Seu primeiro job com GPU"
    assert (shown.id, shown.checker, shown.skeleton, shown.files, shown.docs, shown.kind,
            shown.answer_file) == (item.id, item.checker, item.skeleton, item.files,
                                   item.docs, item.kind, item.answer_file)
    assert localise(item, "en") is item
    data = yaml.safe_load(path_for("pt-BR").read_text(encoding="utf-8"))
    bad = {**data, "labs": {"first-job": {**data["labs"]["first-job"], "checker": "x"}}}
    with pytest.raises(ValueError, match="only words are translated, not checker"):
        parse(bad, "pt-BR.yaml")


def _write(folder: Path, labs: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "pt-BR.yaml"
    path.write_text(yaml.safe_dump({"format": FORMAT, "lang": "pt-BR", "labs": labs},
                                   allow_unicode=True), encoding="utf-8")
    return folder


def test_a_stale_translation_falls_back_to_english(tmp_path):
    item = lab("diagnose-queue")
    entry = {"source": fingerprint(item), "title": "Por que meu job espera?",
             "task": "Tarefa.", "hints": ["Dica."]}
    folder = _write(tmp_path / "a", {item.id: entry})
    assert localise(item, "pt-BR", folder).title == "Por que meu job espera?"
    changed = replace(item, task=item.task + " Two reasons are possible.")
    assert fingerprint(changed) != fingerprint(item)
    assert localise(changed, "pt-BR", folder) is changed      # the English, whole
    stale = _write(tmp_path / "b", {item.id: {**entry, "source": "0123456789abcdef"}})
    assert localise(item, "pt-BR", stale) is item
    lines = report("pt-BR", stale)
    assert (f"diagnose-queue: stale, the English changed (source: {fingerprint(item)})"
            in lines)
    assert f"first-job: missing (source: {fingerprint(lab('first-job'))})" in lines


def test_a_field_without_translation_stays_english(tmp_path):
    item = lab("first-job")
    folder = _write(tmp_path, {item.id: {"source": fingerprint(item), "title": "Só o título",
                                         "hints": ["uma dica a menos"]}})
    shown = localise(item, "pt-BR", folder)
    assert shown.title == "Só o título"
    assert shown.task == item.task and shown.hints == item.hints
    assert "first-job: 1 hint(s) for 2" in report("pt-BR", folder)


# ---- the widget and ``quizzes lab`` in the resolved language -------------------------------

FIRST = ("#!/bin/bash\n#SBATCH -p gpu -J train --gres=gpu:1 -t 30 -o train-%j.out\n"
         "srun python train.py\n")


def test_the_widget_speaks_pt_br_and_keeps_slurms_bytes(monkeypatch):
    from quizzes.labs.widget import LabWidget
    from quizzes.policy import Policy

    monkeypatch.delenv("COURSE_LANG", raising=False)
    english = LabWidget("first-job", policy=Policy(attempts=2), lang="en")
    wdg = LabWidget("first-job", policy=Policy(attempts=2, penalty_per_retry=0.1),
                    lang="pt-BR")
    assert "Seu primeiro job com GPU" in wdg.header.value
    assert "2 verificação(ões) restante(s)" in wdg.header.value
    assert "<p>Escreva um batch script (script de lote) train.sh" in wdg.task.value
    assert "<code>python train.py</code>" in wdg.task.value
    assert "(comece por este):" in wdg.task.value
    # the skeleton (and so the answer box) is the English bytes
    assert wdg.answer.value == english.answer.value == lab("first-job").skeleton
    assert wdg.task.value.split("<pre", 1)[1] == english.task.value.split("<pre", 1)[1]
    assert (wdg.check_button.description, wdg.hint_button.description,
            wdg.answer.placeholder) == ("Verificar", "Dica", "sua resposta")
    assert wdg.on_hint() == "Verifique uma resposta primeiro: as dicas vêm depois de um erro."
    wdg.answer.value = FIRST.replace("-J train", "-J demo")
    verdict = wdg.on_check()
    assert not verdict.passed and "JobName=demo" in wdg.feedback.value
    assert "AINDA NÃO: " in wdg.feedback.value and "NOT YET" not in wdg.feedback.value
    assert wdg.on_hint() == "Dica: " + localise(lab("first-job"), "pt-BR").hints[0]
    wdg.answer.value = FIRST
    assert wdg.on_check().passed
    assert "aprovado na verificação 2 (nota 0,9)" in wdg.header.value
    assert "APROVADO: " in wdg.feedback.value
    assert wdg.check_button.disabled


def test_the_ladder_quotes_slurms_documentation_in_english_under_a_pt_br_label():
    from quizzes.labs.feedback import ladder

    rungs = ladder(localise(lab("diagnose-queue"), "pt-BR"), "pt-BR")
    assert rungs[0].startswith("Dica: Para um job pendente")
    assert rungs[1] == "Da documentação: " + lab("diagnose-queue").docs[0]


def test_the_widget_language_follows_course_lang_then_the_edition_marker(tmp_path,
                                                                         monkeypatch):
    from quizzes.labs.widget import LabWidget, lab_widget

    monkeypatch.setenv("COURSE_LANG", "pt_BR")
    assert "Treino de DDP" in lab_widget("ddp-drill").children[0].value
    assert "prática, não conta para a nota" in lab_widget("ddp-drill").children[0].value
    monkeypatch.delenv("COURSE_LANG")
    monkeypatch.chdir(tmp_path)
    assert LabWidget("diagnose-queue").lang == "en"
    (tmp_path / ".course-lang").write_text("pt-BR\n", encoding="utf-8")
    wdg = LabWidget("diagnose-queue", file=tmp_path / "answer.txt")
    assert "Por que meu job espera?" in wdg.header.value and "$ squeue" in wdg.task.value
    assert "no editor do JupyterLab" in wdg.link.value
    (tmp_path / "answer.txt").unlink(missing_ok=True)
    assert wdg.on_check().feedback.startswith("não foi possível ler")


def test_a_stale_translation_shows_the_english_task_in_the_widget(tmp_path, monkeypatch):
    import quizzes.labs.i18n as labs_i18n
    from quizzes.labs.widget import LabWidget

    item = lab("diagnose-timeout")
    folder = _write(tmp_path, {item.id: {"source": "0" * 16, "title": "Antigo",
                                         "task": "Enunciado antigo.", "hints": ["x"]}})
    monkeypatch.setattr(labs_i18n, "LOCALE_DIR", folder)
    wdg = LabWidget(item.id, lang="pt-BR")
    assert item.title in wdg.header.value and "Antigo" not in wdg.header.value
    assert "sacct record" in wdg.task.value
    assert wdg.check_button.description == "Verificar"  # the widget's words stay pt-BR


def test_lab_show_and_list_in_pt_br(capsys, monkeypatch):
    from quizzes.cli import main, run

    monkeypatch.delenv("COURSE_LANG", raising=False)
    assert run(["lab", "show", "after-preprocess", "--lang", "pt-BR"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("after-preprocess: Treinar só depois do pré-processamento "
                          "(02-sbatch)\n")
    assert "Guarde o id do primeiro job" in out and "`sbatch --parsable`" in out
    assert "--- preprocess.sh (na pasta do lab) ---" in out
    assert "--- submit.sh (comece por este) ---\njid=$(sbatch --parsable preprocess.sh)" in out
    assert run(["--lang", "pt-BR", "lab", "show", "ddp-drill"]) == 0
    assert "PRÁTICA: precisa de execução real" in capsys.readouterr().out
    monkeypatch.setenv("COURSE_LANG", "pt-BR")
    assert run(["lab", "list"]) == 0
    listing = capsys.readouterr().out
    assert "Sobreviver a uma preempção" in listing
    assert "[prática, não conta para a nota]" in listing
    assert run(["lab", "show", "first-job", "--lang", "en"]) == 0
    assert capsys.readouterr().out.startswith("first-job: Your first GPU job (01-what-is-slurm)")
    assert main(["lab", "show", "first-job", "--lang", "fr"]) == 2
    assert "unknown language 'fr'" in capsys.readouterr().err


def test_the_verdict_frame_is_pt_br_and_slurms_words_are_its_bytes(tmp_path, capsys,
                                                                    monkeypatch):
    from quizzes.cli import run
    from quizzes.labs.model import Verdict

    said = "sbatch: error: Batch job submission failed: Invalid generic resource (gres) " \
           "specification\n"
    verdict = Verdict(False, "Slurm refused the script.", ("one detail",), said)
    assert verdict.text("pt-BR") == ("AINDA NÃO: Slurm refused the script.\n  - one detail\n"
                                     "O Slurm disse:\n  " + said.rstrip())
    assert verdict.text() == ("NOT YET: Slurm refused the script.\n  - one detail\n"
                              "Slurm said:\n  " + said.rstrip())
    monkeypatch.delenv("COURSE_LANG", raising=False)
    answer = tmp_path / "train.sh"
    answer.write_text(FIRST)
    assert run(["lab", "check", "first-job", str(answer), "--lang", "pt-BR"]) == 0
    assert capsys.readouterr().out.startswith("APROVADO: ")
    answer.write_text(FIRST.replace("-J train", "-J test"))
    assert run(["lab", "check", "first-job", str(answer), "--lang", "pt-BR"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("AINDA NÃO: ") and "JobName=test" in out


@pytest.mark.parametrize("lab_id", ["first-job", "after-preprocess", "diagnose-queue"])
def test_a_quiz_items_lab_statement_has_a_pt_br_twin(lab_id):
    """statement_markdown("en") is what a bank's lab item shows after its prompt, so a
    bank translation can put the pt-BR one in its place."""
    from quizzes.items.base import Common
    from quizzes.items.lab import LabItem
    from quizzes.labs.i18n import statement_markdown

    item = LabItem(Common(f"lab-{lab_id}", "lab", "Lab prompt.", "explained", ("L.1",)),
                   lab_id)
    shown = item.present({}).prompt
    assert shown == "Lab prompt.\n\n" + statement_markdown(lab(lab_id), "en")
    portuguese = statement_markdown(lab(lab_id), "pt-BR")
    assert localise(lab(lab_id), "pt-BR").task in portuguese
    fences = re.compile(r"^```\n(.*?)\n```$", re.S | re.M)
    assert fences.findall(portuguese) == fences.findall(statement_markdown(lab(lab_id)))
    assert ("```" in portuguese) == bool(lab(lab_id).skeleton or lab(lab_id).files)


# ---- a lab item inside a pt-BR quiz ------------------------------------------------------

def _quiz_lab(session, item_id):
    return next(i for i in session.items() if i.item_id == item_id)


def _session(lang, quiz="01-what-is-slurm"):
    from quizzes.bank import load_banks
    from quizzes.session import QuizSession

    bank = load_banks()[quiz]
    shown = {it.common.id for it in bank.items}
    assert {"lab-first-job", "lab-diagnose-queue"} <= shown
    return QuizSession(bank, "ada", lang=lang, clock=lambda: 0.0)


@pytest.mark.parametrize("item_id,lab_id", [("lab-first-job", "first-job"),
                                            ("lab-diagnose-queue", "diagnose-queue")])
def test_a_pt_br_quiz_shows_the_labs_pt_br_statement_after_its_prompt(item_id, lab_id):
    from quizzes.labs.i18n import statement_markdown

    pt, en = _quiz_lab(_session("pt-BR"), item_id), _quiz_lab(_session("en"), item_id)
    item = lab(lab_id)
    assert en.prompt.endswith("\n\n" + statement_markdown(item))
    assert pt.prompt.endswith("\n\n" + statement_markdown(item, "pt-BR"))
    assert pt.prompt.startswith("Lab: ") and not pt.prompt.startswith(en.prompt[:20])
    assert localise(item, "pt-BR").task in pt.prompt and item.task not in pt.prompt
    assert item.title not in pt.prompt
    fences = re.compile(r"^```\n(.*?)\n```$", re.S | re.M)
    assert fences.findall(pt.prompt) == fences.findall(en.prompt)  # files: the same bytes
    assert pt.exhibit == en.exhibit                                 # minislurm's output too


def test_the_exam_service_presents_a_lab_item_in_pt_br():
    from quizzes import translations
    from quizzes.bank import load_banks
    from quizzes.exam import present_items

    bank = load_banks()["02-sbatch"]
    labs = [it for it in bank.items if it.common.type == "lab"]
    shown = {p.item_id: p for p in present_items(bank, "ada", 1,
                                                 translations.load(bank, "pt-BR"))}
    drawn = [it for it in labs if it.common.id in shown]
    assert drawn
    for it in drawn:
        assert isinstance(it, LabItem)
        assert localise(lab(it.lab_id), "pt-BR").task in shown[it.common.id].prompt


def test_a_pt_br_quiz_shows_the_english_statement_when_the_labs_translation_is_stale(
        tmp_path, monkeypatch):
    """Never a translation of an older task the checker no longer grades."""
    import quizzes.labs.i18n as labs_i18n
    from quizzes.labs.i18n import statement_markdown

    item = lab("first-job")
    folder = _write(tmp_path, {item.id: {"source": "0" * 16, "title": "Antigo",
                                         "task": "Enunciado antigo.", "hints": ["x", "y"]}})
    monkeypatch.setattr(labs_i18n, "LOCALE_DIR", folder)
    pt = _quiz_lab(_session("pt-BR"), "lab-first-job")
    assert pt.prompt.startswith("Lab: seu primeiro job")      # the bank's pt-BR prompt
    # the lab's English title and task (the fixed labels stay pt-BR, as in the widget)
    assert pt.prompt.endswith("\n\n" + statement_markdown(item, "pt-BR"))
    assert f"{item.id}: {item.title} ({item.lesson})\n\n{item.task}\n" in pt.prompt
    assert "Antigo" not in pt.prompt and "`train.sh` (comece por este):" in pt.prompt
