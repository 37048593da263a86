"""Exam mode in pt-BR: the attempt policy and the quiz service's refusals in the learner's
language (the request's ``lang``, else the attempt's); English unchanged."""

from __future__ import annotations

import pytest

from quizzes.bank import load_banks
from quizzes.errors import ExamError
from quizzes.exam import ExamDesk
from quizzes.examclient import ExamClient
from quizzes.keys import generate, load_private
from quizzes.policy import Policy

QUIZ = "01-what-is-slurm"


def test_the_attempt_policy_in_both_languages():
    policy = Policy(attempts=3, penalty_per_retry=0.1, counts="best", time_limit_minutes=30,
                    draw=5)
    assert policy.describe() == ("3 attempt(s), -10% per retry, best attempt counts, 5 items "
                                 "drawn per attempt, 30 min time limit")
    assert policy.describe("pt-BR") == ("3 tentativa(s), -10% por nova tentativa, conta a "
                                        "melhor tentativa, 5 itens sorteados por tentativa, "
                                        "limite de tempo de 30 min")
    assert Policy(counts="last").describe() == "unlimited attempts, last attempt counts"
    assert Policy(counts="first").describe("pt-BR") == ("tentativas ilimitadas, conta a "
                                                        "primeira tentativa")


@pytest.fixture()
def desk(tmp_path):
    d = ExamDesk(load_banks(), str(tmp_path / "gb.sqlite"),
                 load_private(generate(tmp_path / "issuer")[0]))
    yield d
    d.close()


def _refused(call, *args) -> str:
    with pytest.raises(ExamError) as caught:
        call(*args)
    return caught.value.reason


def test_the_exam_shows_its_policy_in_the_attempts_language(desk):
    bank = desk.banks[QUIZ]
    pt = desk.start("ada", "Ada", QUIZ, "pt-BR")
    assert pt["policy"] == bank.policy.describe("pt-BR") != bank.policy.describe()
    assert "tentativa" in pt["policy"]
    assert desk.attempts("ada", QUIZ, "pt-BR")["policy"] == bank.policy.describe("pt-BR")
    en = desk.start("bob", "Bob", QUIZ)
    assert en["policy"] == bank.policy.describe()
    assert desk.attempts("bob", QUIZ)["policy"] == bank.policy.describe()


def test_the_services_refusals_are_in_the_learners_language(desk):
    known = ", ".join(sorted(desk.banks))
    assert _refused(desk.start, "ada", "Ada", "nope", "pt-BR") == \
        f"quiz desconhecido 'nope' (conhecidos: {known})"
    assert _refused(desk.start, "ada", "Ada", "nope") == f"unknown quiz 'nope' (known: {known})"
    assert _refused(desk.attempts, "ada", "nope", "pt-BR").startswith("quiz desconhecido")
    att = desk.start("ada", "Ada", QUIZ, "pt-BR")
    aid = att["attempt_id"]
    item = att["items"][0]["item_id"]
    assert _refused(desk.answer, "ada", aid, "no-such-item", "x", "pt-BR") == \
        f"o item 'no-such-item' não está na sua variante de {QUIZ}"
    assert _refused(desk.answer, "ada", aid, "no-such-item", "x") == \
        f"o item 'no-such-item' não está na sua variante de {QUIZ}"  # the attempt's language
    assert _refused(desk.answer, "ada", aid, "no-such-item", "x", "en") == \
        f"item 'no-such-item' is not in your variant of {QUIZ}"
    assert _refused(desk.answer, "ada", aid, item, {"not": "a response"}).startswith(
        f"'{item}': a resposta deve ser um texto não vazio")
    assert _refused(desk.answer, "ada", "nope", item, "x", "pt-BR") == \
        "não existe a tentativa nope"
    assert _refused(desk.answer, "eve", aid, item, "x", "pt-BR") == \
        f"a tentativa {aid} pertence a outro aluno; você é 'eve'"
    assert _refused(desk.answer, "eve", aid, item, "x") == \
        f"attempt {aid} belongs to another learner; you are 'eve'"
    desk.submit("ada", aid)
    assert _refused(desk.submit, "ada", aid) == f"a tentativa {aid} já foi entregue"
    assert _refused(desk.submit, "ada", aid, "en") == f"attempt {aid} is already submitted"
    assert _refused(desk.answer, "ada", aid, item, "x") == \
        f"a tentativa {aid} já foi entregue; inicie uma nova tentativa"


def test_an_english_attempt_is_refused_in_english(desk):
    att = desk.start("bob", "Bob", QUIZ)
    aid = att["attempt_id"]
    desk.submit("bob", aid)
    assert _refused(desk.submit, "bob", aid) == f"attempt {aid} is already submitted"
    assert _refused(desk.answer, "bob", aid, att["items"][0]["item_id"], "x") == \
        f"attempt {aid} is already submitted; start a new attempt"


def test_the_client_says_the_service_cannot_be_reached_in_the_learners_language():
    client = ExamClient("http://127.0.0.1:9/services/quizzes/", "token", timeout=5)
    pt = _refused(client.quizzes, "pt-BR")
    assert pt.startswith("não foi possível acessar o serviço de quizzes em "
                         "http://127.0.0.1:9/services/quizzes/: ")
    assert _refused(client.quizzes).startswith("cannot reach the quiz service at "
                                               "http://127.0.0.1:9/services/quizzes/: ")
    assert _refused(client.start, QUIZ, "pt-BR").startswith("não foi possível acessar")


def test_a_request_names_the_language_of_a_refusal():
    pytest.importorskip("jupyterhub")
    from quizzes.hubservice import _said_language
    from quizzes.i18n import tr

    assert _said_language({"lang": "pt_BR"}) == "pt-BR"
    assert _said_language({}) == _said_language({"lang": "fr"}) == "en"
    assert tr("pt-BR", "the body needs 'item_id' and 'response'") == \
        "o corpo precisa de 'item_id' e 'response'"


def _page_script(page: str) -> str:
    """The page's constants and its ``say`` function, runnable alone."""
    script = page.split("<script>", 1)[1]
    head = script.split("async function call", 1)[0]
    return head.replace("document.documentElement.lang = L;", "")


@pytest.mark.parametrize("lang,words", [
    ("en", ["<title>Quiz</title>", '<h1 id="title">Quiz</h1>',
            '<button id="submit">Submit the attempt</button>', '<html lang="en">']),
    ("pt-BR", ["<title>Quiz</title>", '<button id="submit">Entregar a tentativa</button>',
               '"check": "Verificar"', '"not_passed": "não aprovado"']),
])
def test_the_exam_page_speaks_the_learners_language(lang, words):
    pytest.importorskip("jupyterhub")
    from quizzes.hubservice import exam_page

    page = exam_page("/services/quizzes/", QUIZ, "xsrf", lang)
    for word in words:
        assert word in page
    assert "__" not in page.replace("__proto__", "")         # every placeholder filled


def test_the_exam_pages_words_are_filled_like_the_old_english_text():
    """The page's own substitution (run in node) gives the English status, score and
    certificate lines it always showed, and the Portuguese ones in pt-BR."""
    import json
    import shutil
    import subprocess

    pytest.importorskip("jupyterhub")
    from quizzes.hubservice import exam_page

    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    policy = "3 attempt(s), -10% per retry, best attempt counts"
    out = {}
    for lang in ("en", "pt-BR"):
        probe = _page_script(exam_page("/p/", QUIZ, "x", lang)) + (
            "console.log(JSON.stringify([say('attempt', {n: 2, policy: " + json.dumps(policy)
            + "}), say('score', {score: 80, quiz: 90, verdict: W.passed}), "
            "say('certificate', {id: 'ab12'}), W.check]));")
        run = subprocess.run([node, "-e", probe], capture_output=True, text=True, timeout=60,
                             check=True)
        out[lang] = json.loads(run.stdout)
    assert out["en"] == [f"Attempt 2 ({policy})", "Score 80% (quiz 90%): passed",
                         "Certificate ab12", "Check"]
    assert out["pt-BR"] == [f"Tentativa 2 ({policy})", "Nota 80% (quiz 90%): aprovado",
                            "Certificado ab12", "Verificar"]


def test_the_services_index_lists_the_quizzes_in_the_learners_language(desk):
    pytest.importorskip("jupyterhub")
    from quizzes.hubservice import index_page

    bank = desk.banks[QUIZ]
    en = index_page("/services/quizzes/", desk.banks, desk.title, "ada", False, "en")
    assert en.startswith('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
                         "<title>Quizzes</title></head><body><h1>Quizzes</h1><p id=\"whoami\">"
                         "Signed in as <b>ada</b> (exam mode: the service grades)</p><ul>")
    assert (f'<li><a id="quiz-{QUIZ}" href="/services/quizzes/exam/{QUIZ}">{bank.title}</a> '
            f"({bank.policy.describe()})</li>") in en
    assert "Instructor" not in en
    pt = index_page("/services/quizzes/", desk.banks, desk.title, "ada", True, "pt-BR")
    assert '<html lang="pt-BR">' in pt and "Conectado como <b>ada</b> (modo prova" in pt
    title = desk.title(bank, "pt-BR")
    assert title != bank.title
    assert (f'href="/services/quizzes/exam/{QUIZ}?lang=pt-BR">{title}</a> '
            f"({bank.policy.describe('pt-BR')})") in pt
    assert "Export gradebook (canvas CSV)" in pt      # the instructor's part
