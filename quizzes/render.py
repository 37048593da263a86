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

from quizzes.certify import Certificate, Verification

_STATUS_COLOUR = {"valid": "#1a7f37", "revoked": "#b35900", "invalid": "#cf222e"}


def certificate_html(cert: Certificate, verification: Verification | None = None,
                     verify_url: str | None = None) -> str:
    """A self-contained HTML page (no external resources)."""
    rec = cert.record
    e = html.escape
    status = ""
    if verification is not None:
        colour = _STATUS_COLOUR.get(verification.status, "#333")
        status = (f'<p class="status" style="color:{colour}"><strong>'
                  f"{e(verification.status.upper())}</strong>: {e(verification.reason)}</p>")
    link = f' at <a href="{e(verify_url)}">{e(verify_url)}</a>' if verify_url else ""
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>Certificate {e(cert.id)}: {e(str(rec.get('learner_name', '')))}</title>
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
<h1>Certificate of achievement</h1>
<p>This certifies that</p>
<p class="name">{e(str(rec.get('learner_name', '')))}</p>
<p>has passed <strong>{e(str(rec.get('quiz_title', '')))}</strong><br>
of <em>{e(str(rec.get('course', '')))}</em></p>
<p>Score {float(rec.get('score', 0)):.0%} (pass mark {float(rec.get('pass_mark', 0)):.0%})
 &middot; issued {e(str(rec.get('issued_on', '')))} by {e(str(rec.get('issuer', '')))}</p>
<p>Certificate ID</p>
<p class="id">{e(cert.id)}</p>
{status}
<p class="small">Check it offline with the issuer's public key: <code>quizzes verify
{e(cert.id)}</code>{link}. Issuer key id {e(str(rec.get('issuer_key_id', '')))},
bank version {e(str(rec.get('bank_version', '')))}.</p>
</main></body></html>
"""


def _pdf_text(text: str) -> str:
    """A PDF literal string in WinAnsi (characters outside Latin-1 become '?')."""
    raw = text.encode("cp1252", errors="replace").decode("latin-1")
    return "(" + raw.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ")"


def certificate_pdf(cert: Certificate) -> bytes:
    """A one-page PDF of the certificate."""
    rec: Mapping[str, Any] = cert.record
    lines = [
        ("F2", 30, 72, 490, "Certificate of achievement"),
        ("F1", 14, 72, 445, "This certifies that"),
        ("F2", 28, 72, 405, str(rec.get("learner_name", ""))),
        ("F1", 14, 72, 370, f"has passed {rec.get('quiz_title', '')}"),
        ("F1", 14, 72, 350, f"of {rec.get('course', '')}"),
        ("F1", 14, 72, 320, f"Score {float(rec.get('score', 0)):.0%} (pass mark "
                            f"{float(rec.get('pass_mark', 0)):.0%}), issued "
                            f"{rec.get('issued_on', '')} by {rec.get('issuer', '')}"),
        ("F1", 12, 72, 270, "Certificate ID"),
        ("F3", 24, 72, 240, cert.id),
        ("F1", 10, 72, 120, f"Verify offline with the issuer's public key: quizzes verify "
                            f"{cert.id}"),
        ("F1", 10, 72, 104, f"Issuer key id {rec.get('issuer_key_id', '')}, bank version "
                            f"{rec.get('bank_version', '')}"),
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
