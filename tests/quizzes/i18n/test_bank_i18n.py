"""Per-locale bank text: the same item ids, params and keys with pt-BR words from a
sibling translation file; English per field where not translated; stale translations
never shown; Portuguese text answers accepted; one gradebook row per item whatever the
language it was answered in."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from quiz_helpers import bank_of

from quizzes import translations
from quizzes.analysis import analyse
from quizzes.bank import BANKS_DIR, load_bank, load_banks
from quizzes.batch import CertificateIssuer, grade_folder
from quizzes.certify import parse_certificate
from quizzes.errors import BankError
from quizzes.grade import grade_response, item_variant
from quizzes.gradebook import Gradebook
from quizzes.keys import generate, load_private
from quizzes.session import QuizSession
from quizzes.submission import parse_submission


class Clock:
    def __call__(self) -> float:
        return 1767600000.0


SOURCE = {
    "quiz_id": "02-sbatch",
    "title": "Módulo 2: jobs em lote com sbatch",
    "objectives": {"02.3": "Prever como o sbatch lê as diretivas e qual configuração vale."},
    "items": {
        "total-tasks": {
            "prompt": "Um script tem `#SBATCH --nodes={{n}}` e `#SBATCH --ntasks-per-node={{t}}`."
                      " Quantas tasks um `srun python train.py` simples inicia dentro dele?",
            "explanation": "Sem -n, o número de tasks é nodes × ntasks-per-node ({{n}} × {{t}}).",
        },
        "directive-after-command": {
            "options": {"c": "job.sh (o nome do arquivo)", "d": "o sbatch recusa o script"},
        },
    },
}


@pytest.fixture()
def banks_dir(tmp_path):
    """A copy of the shipped 02-sbatch bank with its pt-BR translation built beside it."""
    folder = tmp_path / "banks"
    folder.mkdir()
    shutil.copy(Path(BANKS_DIR) / "02-sbatch.yaml", folder)
    sources = tmp_path / "sources" / "pt-BR"
    sources.mkdir(parents=True)
    (sources / "02-sbatch.yaml").write_text(yaml.safe_dump(SOURCE, allow_unicode=True),
                                            encoding="utf-8")
    written = translations.build_all(load_banks(str(folder)), tmp_path / "sources")
    assert written == [folder / "pt-BR" / "02-sbatch.yaml"]
    return folder


def test_a_pt_br_session_shows_the_translation_with_the_same_items_and_keys(banks_dir):
    bank = load_bank(banks_dir / "02-sbatch.yaml")
    pt = QuizSession(bank, "ada", lang="pt-BR", clock=Clock())
    en = QuizSession(bank, "ada", lang="en", clock=Clock())
    assert pt.title == "Módulo 2: jobs em lote com sbatch" and en.title == bank.title
    shown_pt, shown_en = pt.items(), en.items()
    assert [i.item_id for i in shown_pt] == [i.item_id for i in shown_en]   # same order
    by_id = {i.item_id: (p, e) for p, e in zip(shown_pt, shown_en, strict=True)
             for i in (p,)}
    tasks_pt, tasks_en = by_id["total-tasks"]
    params, _, _ = item_variant(bank, "ada", "total-tasks")
    assert tasks_pt.prompt.startswith(f"Um script tem `#SBATCH --nodes={params['n']}`")
    assert tasks_en.prompt.startswith("A script has") and "{{" not in tasks_pt.prompt
    assert tasks_pt.unit == tasks_en.unit == "tasks"
    choice_pt, choice_en = by_id["directive-after-command"]
    assert [o for o, _ in choice_pt.options] == [o for o, _ in choice_en.options]
    words = dict(choice_pt.options)
    assert words["c"] == "job.sh (o nome do arquivo)" and words["a"] == "first"  # per field
    assert choice_pt.prompt == choice_en.prompt                # prompt not translated: English
    untranslated = by_id["time-limit-precedence"]
    assert untranslated[0] == untranslated[1]                  # no text: English throughout
    answer = str(params["n"] * params["t"]).replace(".", ",")
    fb_pt, fb_en = pt.answer("total-tasks", answer), en.answer("total-tasks", answer)
    assert fb_pt.correct and fb_en.correct
    assert fb_pt.explanation == (f"Sem -n, o número de tasks é nodes × ntasks-per-node "
                                 f"({params['n']} × {params['t']}).")
    assert fb_en.explanation.startswith("Without -n")
    assert pt.answer("directive-after-command", "c").feedback == "Incorreto."


def test_the_built_file_holds_no_answer_and_seals_explanations(banks_dir):
    text = (banks_dir / "pt-BR" / "02-sbatch.yaml").read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    assert data["format"] == translations.FORMAT
    assert "Sem -n" not in text                                 # sealed like the bank's
    assert set(data["items"]["total-tasks"]) == {"source", "prompt", "explanation"}
    assert "correct" not in text and "answer" not in text


def test_a_translation_of_older_english_text_is_not_shown_and_is_reported(banks_dir):
    path = banks_dir / "02-sbatch.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    for item in data["items"]:
        if item["id"] == "total-tasks":
            item["prompt"] = item["prompt"].replace("How many", "Exactly how many")
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    bank = load_bank(path)
    tr = translations.load(bank, "pt-BR")
    assert tr is not None and tr.stale == ("total-tasks",)
    shown = {i.item_id: i for i in QuizSession(bank, "ada", lang="pt-BR").items()}
    assert shown["total-tasks"].prompt.startswith("A script has")
    assert dict(shown["directive-after-command"].options)["c"] == "job.sh (o nome do arquivo)"
    missing = translations.report({bank.quiz_id: bank}, "pt-BR")["02-sbatch"]
    assert "total-tasks" in missing and "time-limit-precedence" in missing


@pytest.mark.parametrize(("change", "message"), [
    ({"quiz_id": "03-gres-gpus"}, "field 'quiz_id': must be '02-sbatch'"),
    ({"items": {"no-such-item": {"prompt": "x"}}}, "item 'no-such-item': no such item"),
    ({"items": {"directive-after-command": {"options": {"z": "x"}}}},
     "field 'options': option ids of the item only (a, b, c, d)"),
    ({"items": {"total-tasks": {"answer": 8}}}, "only prompt, options, explanation"),
    ({"items": {"total-tasks": {"prompt": ""}}}, "field 'prompt': must be a non-empty"),
    ({"objectives": {"09.9": "x"}}, "unknown objective(s) ['09.9']"),
])
def test_a_translation_source_that_does_not_fit_its_bank_is_refused(change, message):
    bank = load_banks()["02-sbatch"]
    with pytest.raises(BankError, match=message.replace("(", r"\(").replace(")", r"\)")
                       .replace("[", r"\[").replace("]", r"\]")):
        translations.build({**SOURCE, **change}, bank, "pt-BR/02-sbatch.yaml")


def test_portuguese_text_answers_listed_in_the_source_are_accepted_in_either_language():
    bank = bank_of({"id": "d", "type": "text",
                    "accept": ["node daemon", "slurmd", {"pt-BR": ["daemon do nó", "o daemon"]}]})
    for lang in ("en", "pt-BR"):
        for answer in ("slurmd", "Daemon do nó", "o daemon.", "node daemon"):
            assert grade_response(bank, "ada", "d", answer, 1, lang).correct, (lang, answer)
        assert not grade_response(bank, "ada", "d", "daemon do no", 1, lang).correct
    with pytest.raises(BankError, match="unknown language 'fr'"):
        bank_of({"id": "d", "type": "text", "accept": ["x", {"fr": ["démon"]}]})
    with pytest.raises(BankError, match="'pt-BR' must list its accepted answers"):
        bank_of({"id": "d", "type": "text", "accept": ["x", {"pt-BR": "y"}]})


def test_a_pt_br_and_an_en_submission_of_one_item_land_in_one_analysis_row(tmp_path):
    bank = load_banks()["02-sbatch"]
    subs = tmp_path / "subs"
    for learner, lang, choice in (("ada", "pt-BR", "a"), ("bob", "en", "b"),
                                  ("eve", "pt-BR", "b")):
        session = QuizSession(bank, learner, lang=lang, clock=Clock())
        session.answer("directive-after-command", choice)
        assert session.submission()["lang"] == lang
        session.save(subs)
    with Gradebook(tmp_path / "g.sqlite") as book:
        report = grade_folder(subs, {bank.quiz_id: bank}, book, None)
        assert report.graded == 3 and not report.rejected
        stats = analyse(book, bank)
    rows = [it for it in stats.items if it.item_id == "directive-after-command"]
    assert len(rows) == 1 and rows[0].n == 3
    assert abs(rows[0].facility - 1 / 3) < 1e-9
    assert dict(rows[0].distractors).get("b") == 2


def test_every_bank_item_has_a_current_pt_br_translation():
    assert translations.report(load_banks(), "pt-BR") == {}


def test_quizzes_grade_reads_a_pt_br_submission_in_pt_br_and_certifies_its_language(tmp_path):
    bank = load_banks()["02-sbatch"]
    session = QuizSession(bank, "ada", "Ada", lang="pt-BR", clock=Clock())
    params, _, _ = item_variant(bank, "ada", "total-tasks")
    assert session.answer("total-tasks", f"{params['n'] * params['t']},0").correct
    path = session.save(tmp_path / "subs")
    key, _ = generate(tmp_path / "issuer")
    with Gradebook(tmp_path / "g.sqlite") as book:
        grade_folder(tmp_path / "subs", {bank.quiz_id: bank}, book,
                     CertificateIssuer(load_private(key)))
        rows = book.db.execute("SELECT score FROM item_responses "
                               "WHERE item_id = 'total-tasks'").fetchall()
    assert rows == [(1.0,)]                                 # "16,0" is 16 in pt-BR
    sub = parse_submission(path.read_text(encoding="utf-8"), {bank.quiz_id: bank})
    doc = CertificateIssuer(load_private(key))(sub, bank, 1.0)
    assert parse_certificate(json.dumps(doc)).record["lang"] == "pt-BR"


def test_the_translations_command_builds_and_reports(tmp_path, capsys):
    folder = tmp_path / "banks"
    folder.mkdir()
    shutil.copy(Path(BANKS_DIR) / "02-sbatch.yaml", folder)
    src = tmp_path / "src" / "pt-BR"
    src.mkdir(parents=True)
    (src / "02-sbatch.yaml").write_text(yaml.safe_dump(SOURCE, allow_unicode=True),
                                        encoding="utf-8")
    assert translations.main(["build", "--sources", str(tmp_path / "src"),
                              "--banks", str(folder)]) == 0
    assert capsys.readouterr().out == f"wrote {folder / 'pt-BR' / '02-sbatch.yaml'}\n"
    assert translations.main(["report", "pt-BR", "--banks", str(folder)]) == 1
    out = capsys.readouterr().out
    total = len(load_bank(folder / "02-sbatch.yaml").items)
    assert out.startswith(f"02-sbatch: {total - 1} item(s) without a current pt-BR text: ")
    assert "nodes-and-tasks" in out
    assert "total-tasks" not in out
    (src / "02-sbatch.yaml").write_text(yaml.safe_dump({**SOURCE, "items": {"x": {}}}))
    assert translations.main(["build", "--sources", str(tmp_path / "src"),
                              "--banks", str(folder)]) == 1
    assert "item 'x': no such item" in capsys.readouterr().out
