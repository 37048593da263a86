"""Certificates record the language they were earned in (a signed field); their HTML, PDF
and Open Badges text follow it; old certificates without the field still verify."""

from __future__ import annotations

import json

import pytest

from quizzes.badges import open_badge, verify_badge
from quizzes.certify import (
    Certificate,
    issue,
    make_record,
    parse_certificate,
    record_lang,
    verify,
)
from quizzes.cli import main
from quizzes.keys import generate, load_private, load_public
from quizzes.render import certificate_html, certificate_pdf

EPOCH = 1767600000


@pytest.fixture()
def keys(tmp_path):
    key, pub = generate(tmp_path / "issuer")
    return load_private(key), load_public(pub)


def _record(public, **extra):
    return make_record(course="Slurm para clusters de treinamento de IA", quiz_id="02-sbatch",
                       quiz_title="Módulo 2: sbatch", learner_id="ada",
                       learner_name="Ada Lovelace", score=0.875, pass_mark=0.7,
                       bank_version="0123456789abcdef", issuer="Equipe do curso",
                       public=public, issued_at=EPOCH, **extra)


def test_the_language_is_a_signed_field_of_the_record(keys):
    private, public = keys
    pt = issue(_record(public, lang="pt_BR"), private)
    assert pt.record["lang"] == "pt-BR" and record_lang(pt.record) == "pt-BR"
    result = verify(pt, public)
    assert result.status == "valid" and result.reason.endswith(", earned in pt-BR)")
    en = issue(_record(public), private)
    assert en.record["lang"] == "en" and verify(en, public).reason.endswith("pass mark 70%)")
    forged = Certificate(pt.id, {**pt.record, "lang": "en"}, pt.signature)
    assert verify(forged, public).status == "invalid"          # the language is signed
    with pytest.raises(ValueError, match="unknown language 'fr'"):
        _record(public, lang="fr")


def test_a_certificate_signed_before_the_language_field_still_verifies(keys):
    private, public = keys
    record = _record(public)
    del record["lang"]
    old = issue(record, private)
    assert verify(old, public).status == "valid"
    assert record_lang(old.record) == "en"
    page = certificate_html(old)
    assert '<html lang="en">' in page and "Certificate of achievement" in page


def test_html_pdf_and_badge_speak_the_language_earned_in(keys):
    private, public = keys
    pt = issue(_record(public, lang="pt-BR"), private)
    page = certificate_html(pt, verify(pt, public))
    assert '<html lang="pt-BR">' in page
    for text in ("Certificado de aprovação", "Certificamos que", "foi aprovado(a) em",
                 "Nota 88% (mínimo para aprovação 70%)", "emitido em 2026-01-05 por",
                 "ID do certificado", "Verifique offline com a chave pública do emissor"):
        assert text in page, text
    assert "Certificate of achievement" not in page
    assert f"quizzes verify\n{pt.id}" in page                  # the command stays a command
    pdf = certificate_pdf(pt)
    assert "(Certificado de aprovação)".encode("cp1252") in pdf
    assert f"quizzes verify {pt.id}".encode() in pdf
    badge = open_badge(pt, private)
    achievement = badge["credentialSubject"]["achievement"]
    assert achievement["inLanguage"] == "pt-BR"
    assert achievement["description"] == ("Aprovado(a) no quiz Módulo 2: sbatch de Slurm para "
                                          "clusters de treinamento de IA.")
    assert achievement["criteria"]["narrative"].startswith("Nota mínima 70% (este aluno obteve "
                                                           "88%)")
    assert verify_badge(badge, public)
    en = open_badge(issue(_record(public), private), private)
    assert en["credentialSubject"]["achievement"]["description"].startswith("Passed the ")


def test_quizzes_verify_accepts_pt_br_and_older_certificates(keys, tmp_path, monkeypatch,
                                                             capsys):
    private, public = keys
    monkeypatch.chdir(tmp_path)
    record = _record(public)
    del record["lang"]
    for name, cert in (("pt.json", issue(_record(public, lang="pt-BR"), private)),
                       ("old.json", issue(record, private))):
        (tmp_path / name).write_text(json.dumps(cert.to_json()))
        assert main(["verify", name, "--pub", str(tmp_path / "issuer.pub"),
                     "--db", "none.sqlite"]) == 0
        out = capsys.readouterr().out
        assert out.startswith(f"VALID {cert.id}: issued to Ada Lovelace")
        assert ("earned in pt-BR" in out) == (name == "pt.json")
        assert parse_certificate((tmp_path / name).read_text()).id == cert.id


def test_quizzes_verify_says_why_in_the_chosen_language(keys, tmp_path, monkeypatch, capsys):
    private, public = keys
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("COURSE_LANG", raising=False)
    cert = issue(_record(public, lang="pt-BR"), private)
    (tmp_path / "pt.json").write_text(json.dumps(cert.to_json()))
    forged = {**cert.to_json(), "record": {**cert.record, "score": 1.0}}
    (tmp_path / "forged.json").write_text(json.dumps(forged))
    pub = str(tmp_path / "issuer.pub")
    assert main(["--lang", "pt-BR", "verify", "pt.json", "--pub", pub, "--db", "x"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"VALID {cert.id}: emitido para Ada Lovelace em 2026-01-05 referente "
                          "a Módulo 2: sbatch (nota 88%, mínimo para aprovação 70%, obtido em "
                          "pt-BR) (nenhuma lista de revogação consultada)")
    assert main(["--lang", "pt-BR", "verify", "forged.json", "--pub", pub, "--db", "x"]) == 1
    assert "INVALID" in (out := capsys.readouterr().out) and "a assinatura não confere" in out
    assert main(["verify", "forged.json", "--pub", pub, "--db", "x"]) == 1
    assert "the signature does not match the record" in capsys.readouterr().out
    result = verify(cert, public)
    assert result.reason.startswith("issued to Ada Lovelace on 2026-01-05")  # the service's


def test_a_certificate_says_how_the_quiz_was_taken(keys):
    from quizzes.certify import EXAM, SELF_STUDY, record_assessment

    private, public = keys
    old = issue(_record(public), private)  # signed before the field existed
    assert record_assessment(old.record) == SELF_STUDY
    assert "Self-study: answered in the learner" in certificate_html(old)
    exam = issue({**_record(public, lang="pt-BR"), "assessment": EXAM}, private)
    assert "Modo prova: o serviço de quizzes" in certificate_html(exam)
    assert b"(Modo prova: o servi" in certificate_pdf(exam)
