"""The checkers' feedback in pt-BR: each sentence a message of the quizzes catalogue,
said in the learner's language by ``quizzes lab check``, the lab widget, a quiz and the
exam service; Slurm's words (commands, options, states, reasons, job ids, file names,
outputs) are the English bytes; the English text (and the gradebook's) is unchanged."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from babel.messages.pofile import read_po
from test_lab_checkers import RIGHT, WRONG

from quizzes.i18n import po_path
from quizzes.labs import LABS, check

H = "#!/bin/bash\n"
FIRST = H + "#SBATCH -p gpu -J train -N1 --gres=gpu:1 -t 30 -o train-%j.out\n" \
            "srun python train.py\n"
#: Slurm's words in a sentence: options, KEY=value, CamelCase fields, UPPER_CASE states
#: and variables, file names, %-patterns, numbers (job ids, counts, times), commands and
#: the names of the labs' jobs, nodes, partitions and QOS.
SLURM_WORD = re.compile(
    r"(?<![\w-])--?[a-zA-Z][\w-]*(?:[=:/][^\s,;)']*)?"        # -J/--job-name, --gres=gpu:1
    r"|[\w/%<>-]*[A-Za-z][\w/]*=[^\s,;)]*"                     # TimeLimit=00:30:00, CPUs/Task=8
    r"|\b[A-Z][a-z]+[A-Z]\w*"                                  # StdOut, ArrayTaskId
    r"|\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b|\b[A-Z]{3,}\b"        # MASTER_ADDR, PREEMPTED, QOS
    r"|[\w%-]+\.(?:sh|py|out|err|log)\b|%[AajN]"               # train.sh, sweep-%A_%a.out
    r"|\b\d[\d:.,-]*\d\b|\b\d\b"                               # 1234, 0-7, 01:00:00
    r"|\b(?:sbatch|srun|sacct|squeue|sprio|scontrol|scancel|minislurm|python|train|"
    r"preprocess|prep|big|gpu04|scavenger|high|debug|gpu|cpu|afterok|afterany)\b")
ENGLISH = re.compile(r"\b(?:the task asks|your job|Your job|the job|should|Right:|Not \w+:)")


def _words(text: str) -> list[str]:
    return [w.rstrip(".:") for w in SLURM_WORD.findall(text)]


def _same_slurm_words(english: str, portuguese: str) -> None:
    for word in _words(english):
        assert word in portuguese, f"lost {word!r}:\n{english}\n{portuguese}"


# ---- every sentence of the checkers is in the catalogue, Slurm's words kept ------------

def _lab_messages() -> dict[str, str]:
    with po_path("pt-BR").open("rb") as fh:
        cat = read_po(fh, locale="pt_BR")
    out = {}
    for m in cat:
        places = {Path(f).name for f, _ in m.locations}
        if m.id and places & {"checkers.py", "diagnose.py", "lab.py", "__init__.py",
                              "shell.py", "runner.py"}:
            out[m.id] = m.string
    return out


def test_every_checker_sentence_has_a_pt_br_translation_keeping_slurms_words():
    messages = _lab_messages()
    assert len(messages) >= 130
    for msgid, msgstr in messages.items():
        assert msgstr, msgid
        _same_slurm_words(re.sub(r"\{\w+\}", "", msgid), re.sub(r"\{\w+\}", "", msgstr))


@pytest.mark.parametrize("lab_id,text", [(k, t) for k, v in WRONG.items() for t, _ in v])
def test_a_failing_check_says_why_in_portuguese(lab_id, text):
    verdict = check(lab_id, text)
    english, portuguese = verdict.text("en"), verdict.text("pt-BR")
    assert english == verdict.text()
    assert portuguese.startswith("AINDA NÃO: ")
    assert verdict.message is not None, "a checker's sentence must be a message"
    feedback, details = verdict.in_language("pt-BR")
    assert feedback != verdict.feedback and not ENGLISH.search(feedback), feedback
    assert len(details) == len(verdict.details)
    _same_slurm_words("\n".join((verdict.feedback, *verdict.details)),
                      "\n".join((feedback, *details)))
    if verdict.slurm:  # what Slurm printed: the same bytes under the translated line
        said = english.split("\nSlurm said:\n", 1)[1]
        assert portuguese.endswith("\nO Slurm disse:\n" + said)


@pytest.mark.parametrize("lab_id", sorted({x.id for x in LABS} & set(RIGHT)))
def test_a_passing_check_says_what_slurm_did_in_portuguese(lab_id):
    verdict = check(lab_id, RIGHT[lab_id][0])
    assert verdict.passed
    portuguese = verdict.text("pt-BR")
    assert portuguese.startswith("APROVADO: ") and not ENGLISH.search(portuguese), portuguese
    _same_slurm_words(verdict.feedback, verdict.in_language("pt-BR")[0])


def test_the_first_job_in_both_languages_byte_for_byte():
    miss = check("first-job", FIRST.replace("-J train", "-J test"))
    assert miss.text() == ("NOT YET: JobName=test; the task asks for the job name train "
                           "(-J/--job-name).")
    assert miss.feedback == miss.text()[len("NOT YET: "):]      # the gradebook's English
    assert miss.text("pt-BR") == ("AINDA NÃO: JobName=test; o enunciado pede o nome de job "
                                  "train (-J/--job-name).")
    ok = check("first-job", FIRST)
    job = re.search(r"Job (\d+) ran", ok.feedback)
    assert job is not None
    n = job.group(1)
    assert ok.text() == (f"PASS: Job {n} ran train.py through srun on 1 node with 1 GPU in "
                         f"partition gpu for at most 30 minutes, writing train-{n}.out.")
    assert ok.text("pt-BR") == (f"APROVADO: O job {n} rodou train.py pelo srun em 1 nó com "
                                f"1 GPU na partition gpu por no máximo 30 minutos, gravando "
                                f"train-{n}.out.")


def test_counts_and_details_are_said_in_portuguese():
    one = check("ddp-2x4", H + "#SBATCH -N1 --gres=gpu:8\nsrun python train.py\n")
    assert one.text() == ("NOT YET: your job ran 1 task on 1 node with 8 GPUs; the task "
                          "asks for 2 nodes (-N/--nodes=2).")
    assert one.text("pt-BR") == ("AINDA NÃO: seu job rodou 1 task em 1 nó com 8 GPUs; o "
                                 "enunciado pede 2 nós (-N/--nodes=2).")
    bound = check("ddp-2x4", H + "#SBATCH -N2 --gres=gpu:4 --ntasks-per-node=4\n"
                                 "srun python train.py\n")
    lines = bound.text("pt-BR").split("\n")
    assert lines[0].startswith("AINDA NÃO: A task 0 (SLURM_PROCID=0, nó ")
    assert len(lines) == 9 and lines[1].startswith("  - task 0 em gpu")
    assert [x.split(": ", 1)[1] for x in lines[1:]] == \
        [x.split(": ", 1)[1] for x in bound.text().split("\n")[1:]]   # CUDA_VISIBLE_DEVICES=
    wait = check("diagnose-queue", "Priority")
    assert wait.text("pt-BR") == (
        "AINDA NÃO: Não é Priority: Priority significa que um job de prioridade maior está à "
        "frente dele na fila (o sprio mostra os fatores), e a saída acima não mostra isso. "
        "Leia as colunas de novo.")
    assert check("diagnose-queue", "Resources").text("pt-BR").startswith(
        "APROVADO: Certo: o minislurm informa Resources para este job. Resources significa ")


def test_lab_check_prints_portuguese_feedback(tmp_path, capsys, monkeypatch):
    from quizzes.cli import run

    monkeypatch.delenv("COURSE_LANG", raising=False)
    answer = tmp_path / "train.sh"
    answer.write_text(FIRST.replace("-t 30", "-t 2-0"))
    assert run(["lab", "check", "first-job", str(answer), "--lang", "pt-BR"]) == 1
    assert capsys.readouterr().out == ("AINDA NÃO: TimeLimit=2-00:00:00; o enunciado pede 30 "
                                       "minutos (-t/--time).\n")
    assert run(["lab", "check", "first-job", str(answer)]) == 1
    assert capsys.readouterr().out == ("NOT YET: TimeLimit=2-00:00:00; the task asks for 30 "
                                       "minutes (-t/--time).\n")


def test_the_widget_shows_the_checkers_sentence_in_portuguese(monkeypatch):
    from quizzes.labs.widget import LabWidget

    monkeypatch.delenv("COURSE_LANG", raising=False)
    wdg = LabWidget("first-job", lang="pt-BR")
    wdg.answer.value = FIRST.replace("-p gpu", "-p cpu").replace(" --gres=gpu:1", "")
    verdict = wdg.on_check()
    assert not verdict.passed
    assert ("AINDA NÃO: Seu job rodou em Partition=cpu; o enunciado pede a partition gpu "
            "(-p/--partition).") in wdg.feedback.value
    assert verdict.feedback.startswith("Your job ran in Partition=cpu;")  # English kept


def _lab_item_bank():
    from quizzes.bank import load_banks

    bank = load_banks()["01-what-is-slurm"]
    assert bank.item("lab-first-job").common.type == "lab"
    return bank


def test_a_lab_item_in_a_pt_br_quiz_gets_portuguese_feedback_and_english_in_the_gradebook():
    from quizzes.grade import grade_response
    from quizzes.session import QuizSession

    bank = _lab_item_bank()
    wrong = FIRST.replace("-J train", "-J test")
    pt = QuizSession(bank, "ada", lang="pt-BR", clock=lambda: 0.0)
    said = pt.answer("lab-first-job", wrong)
    assert not said.correct
    assert said.feedback == ("JobName=test; o enunciado pede o nome de job train "
                             "(-J/--job-name).")
    outcome = grade_response(bank, "ada", "lab-first-job", wrong, 1, "pt-BR")
    assert outcome.feedback == "JobName=test; the task asks for the job name train " \
                               "(-J/--job-name)."                      # what is stored
    refused = FIRST.replace("--gres=gpu:1", "--gres=tpu:1")
    en = grade_response(bank, "ada", "lab-first-job", refused, 1, "en")
    assert " Slurm said: sbatch: error: " in en.feedback
    slurm = en.feedback.split(" Slurm said: ", 1)[1]
    feedback, _ = en.in_language("pt-BR")
    assert feedback.startswith("O Slurm recusou o job (sbatch train.sh): corrija o que o "
                               "sbatch diz e verifique de novo.")
    assert feedback.endswith(" O Slurm disse: " + slurm)
    empty = grade_response(bank, "ada", "lab-first-job", ["not", "text"], 1, "pt-BR")
    assert empty.feedback == "Write the lab's answer (a script, command lines or a diagnosis)."
    assert empty.in_language("pt-BR")[0] == ("Escreva a resposta do lab (um script, linhas de "
                                             "comando ou um diagnóstico).")


def test_the_exam_service_says_a_lab_items_feedback_in_portuguese():
    from quizzes.exam import grade_one

    bank = _lab_item_bank()
    shown, stored = grade_one(bank, "ada", 1, "lab-first-job",
                              FIRST.replace("-J train", "-J test"), "pt-BR")
    assert shown.feedback == "JobName=test; o enunciado pede o nome de job train " \
                             "(-J/--job-name)."
    assert stored == "JobName=test; the task asks for the job name train (-J/--job-name)."


def test_an_answer_the_lab_does_not_play_is_refused_in_portuguese():
    from quizzes.labs.runner import MAX_ANSWER_BYTES

    piped = check("after-preprocess", "jid=$(sbatch --parsable preprocess.sh) | cat\n")
    assert piped.text() == ("NOT YET: The lab did not run this answer: line 1: pipes ('|', "
                            "'||') are not interpreted in a lab; write each command on its own "
                            "line")
    assert piped.text("pt-BR") == ("AINDA NÃO: O lab não rodou esta resposta: linha 1: pipes "
                                   "('|', '||') não são interpretados em um lab; escreva cada "
                                   "comando em sua própria linha")
    nested = check("after-preprocess", "echo ok\njid=$(sbatch $(echo a | cat))\n")
    assert nested.feedback == ("The lab did not run this answer: line 2: pipes ('|', '||') "
                               "are not interpreted in a lab; write each command on its own "
                               "line")                  # the outer line, as before
    assert nested.in_language("pt-BR")[0].startswith("O lab não rodou esta resposta: linha 2: "
                                                     "pipes")
    brace = check("after-preprocess", "echo ${A:-x}\n")
    assert brace.feedback == ("The lab did not run this answer: line 1: '${A:-x}': only plain "
                              "${NAME} is interpreted in a lab")
    assert brace.in_language("pt-BR")[0] == ("O lab não rodou esta resposta: linha 1: "
                                             "'${A:-x}': só ${NAME} simples é interpretado em "
                                             "um lab")
    big = check("first-job", "#" * (MAX_ANSWER_BYTES + 1))
    assert big.text() == (f"NOT YET: the answer is {MAX_ANSWER_BYTES + 1} bytes; a lab answer "
                          f"is at most {MAX_ANSWER_BYTES} bytes (64 KiB)")
    assert big.text("pt-BR") == (f"AINDA NÃO: a resposta tem {MAX_ANSWER_BYTES + 1} bytes; uma "
                                 f"resposta de lab tem no máximo {MAX_ANSWER_BYTES} bytes "
                                 "(64 KiB)")


#: A diagnosis in Portuguese (accents or not) names the same Slurm term.
PT_DIAGNOSES = {
    "diagnose-queue": ("Está esperando recursos: todas as GPUs estão ocupadas.", "prioridade"),
    "diagnose-timeout": ("estourou o tempo limite", "foi cancelado"),
    "diagnose-qos": ("o limite de GPUs da QOS por usuario", "falta de recursos"),
    "diagnose-node-fail": ("o nó falhou durante o job", "o tempo limite acabou"),
    "diagnose-priority": ("um job com prioridade maior está na frente", "dependencia"),
    "diagnose-preempted": ("preempção pelo job urgente", "o nó caiu"),
    "diagnose-array": ("o limite do array (%4) o segura", "recursos"),
}


@pytest.mark.parametrize("lab_id", sorted(PT_DIAGNOSES))
def test_a_diagnosis_in_portuguese_is_graded_like_one_in_english(lab_id):
    right, wrong = PT_DIAGNOSES[lab_id]
    passed = check(lab_id, right)
    assert passed.passed, passed.text("pt-BR")
    assert passed.text("pt-BR").startswith("APROVADO: Certo: o minislurm informa ")
    missed = check(lab_id, wrong)
    assert not missed.passed and missed.text("pt-BR").startswith("AINDA NÃO: Não é ")
