"""Shareable renders of a certificate: an HTML page and a one-page PDF.

The PDF is written directly (PDF 1.4, A4 landscape, the standard Helvetica
fonts every PDF reader has built in, WinAnsi text), so rendering works offline
with no imaging library.  Both renders show the certificate ID and how to check
it (``quizzes verify <ID>`` or the service's ``/verify/<ID>`` page); they are
views of the signed record, not the proof itself.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from quizzes.certify import (
    ASSESSMENT_TEXT,
    Certificate,
    Verification,
    record_assessment,
    record_lang,
)
from quizzes.i18n import N_, tr

_STATUS_COLOUR = {"valid": "#1a7f37", "revoked": "#b35900", "invalid": "#cf222e"}


def certificate_html(cert: Certificate, verification: Verification | None = None,
                     verify_url: str | None = None) -> str:
    """A self-contained HTML page (no external resources)."""
    rec = cert.record
    lang = record_lang(rec)
    e = html.escape
    t = {key: e(tr(lang, key)) for key in (
        N_("Certificate of achievement"), N_("This certifies that"), N_("Certificate ID"))}
    name = e(str(rec.get("learner_name", "")))
    passed = e(tr(lang, "has passed {quiz}")).format(
        quiz=f"<strong>{e(str(rec.get('quiz_title', '')))}</strong>")
    of = e(tr(lang, "of {course}")).format(course=f"<em>{e(str(rec.get('course', '')))}</em>")
    score = e(tr(lang, "Score {score} (pass mark {pass_mark})").format(
        score=_percent(rec, "score"), pass_mark=_percent(rec, "pass_mark")))
    issued = e(tr(lang, "issued {date} by {issuer}").format(
        date=rec.get("issued_on", ""), issuer=rec.get("issuer", "")))
    check = e(tr(lang, "Check it offline with the issuer's public key: {command}")).format(
        command=f"<code>quizzes verify\n{e(cert.id)}</code>")
    key = e(tr(lang, "Issuer key id {key}, bank version {version}.").format(
        key=rec.get("issuer_key_id", ""), version=rec.get("bank_version", "")))
    how = e(tr(lang, ASSESSMENT_TEXT[record_assessment(rec)]))
    status = ""
    if verification is not None:
        colour = _STATUS_COLOUR.get(verification.status, "#333")
        status = (f'<p class="status" style="color:{colour}"><strong>'
                  f"{e(verification.status.upper())}</strong>: {e(verification.reason)}</p>")
    link = f' at <a href="{e(verify_url)}">{e(verify_url)}</a>' if verify_url else ""
    return f"""<!DOCTYPE html>
<html lang="{lang}"><head><meta charset="utf-8">
<title>{t["Certificate ID"]} {e(cert.id)}: {name}</title>
<style>
body {{ font-family: Helvetica, Arial, sans-serif; background: #f4f4f4; margin: 0; }}
.cert {{ max-width: 760px; margin: 40px auto; background: #fff; padding: 48px;
        border: 6px double #24292f; text-align: center; }}
h1 {{ font-size: 30px; margin: 0 0 24px; letter-spacing: 1px; }}
.name {{ font-size: 34px; font-weight: bold; margin: 16px 0; }}
.id {{ font-family: monospace; font-size: 22px; letter-spacing: 2px; }}
.small {{ color: #57606a; font-size: 13px; }}
</style></head>
<body><main class="cert">
<h1>{t["Certificate of achievement"]}</h1>
<p>{t["This certifies that"]}</p>
<p class="name">{name}</p>
<p>{passed}<br>
{of}</p>
<p>{score}
 &middot; {issued}</p>
<p>{t["Certificate ID"]}</p>
<p class="id">{e(cert.id)}</p>
{status}
<p class="small">{how}</p>
<p class="small">{check}{link}. {key}</p>
</main></body></html>
"""


def _percent(rec: Mapping[str, Any], key: str) -> str:
    return f"{float(rec.get(key, 0)):.0%}"


def _pdf_text(text: str) -> str:
    """A PDF literal string in WinAnsi (characters outside Latin-1 become '?')."""
    raw = text.encode("cp1252", errors="replace").decode("latin-1")
    return "(" + raw.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ")"


def certificate_pdf(cert: Certificate) -> bytes:
    """A one-page PDF of the certificate."""
    rec: Mapping[str, Any] = cert.record
    lang = record_lang(rec)
    score = tr(lang, "Score {score} (pass mark {pass_mark})").format(
        score=_percent(rec, "score"), pass_mark=_percent(rec, "pass_mark"))
    issued = tr(lang, "issued {date} by {issuer}").format(
        date=rec.get("issued_on", ""), issuer=rec.get("issuer", ""))
    lines = [
        ("F2", 30, 72, 490, tr(lang, "Certificate of achievement")),
        ("F1", 14, 72, 445, tr(lang, "This certifies that")),
        ("F2", 28, 72, 405, str(rec.get("learner_name", ""))),
        ("F1", 14, 72, 370, tr(lang, "has passed {quiz}").format(quiz=rec.get("quiz_title", ""))),
        ("F1", 14, 72, 350, tr(lang, "of {course}").format(course=rec.get("course", ""))),
        ("F1", 14, 72, 320, f"{score}, {issued}"),
        ("F1", 12, 72, 270, tr(lang, "Certificate ID")),
        ("F3", 24, 72, 240, cert.id),
        ("F1", 10, 72, 150, tr(lang, ASSESSMENT_TEXT[record_assessment(rec)])),
        ("F1", 10, 72, 120, tr(lang, "Check it offline with the issuer's public key: {command}")
                            .format(command=f"quizzes verify {cert.id}")),
        ("F1", 10, 72, 104, tr(lang, "Issuer key id {key}, bank version {version}.").format(
            key=rec.get("issuer_key_id", ""), version=rec.get("bank_version", ""))),
    ]
    ops = ["0.14 0.16 0.18 RG 4 w 36 36 770 523 re S", "1 w 46 46 750 503 re S"]
    for font, size, x, y, text in lines:
        ops.append(f"BT /{font} {size} Tf {x} {y} Td {_pdf_text(text)} Tj ET")
    content = "\n".join(ops).encode("latin-1")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 842 595] /Contents 7 0 R"
        b" /Resources << /Font << /F1 4 0 R /F2 5 0 R /F3 6 0 R >> >> >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold"
        b" /Encoding /WinAnsiEncoding >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Courier-Bold /Encoding /WinAnsiEncoding >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
    ]
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1, xref)
    return bytes(out)
