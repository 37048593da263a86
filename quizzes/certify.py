"""Certificates: an Ed25519-signed record, its short ID, offline verification, revocation.

A certificate file is ``{"format", "id", "record", "signature"}``:

* ``record``: learner name and id, course, quiz, score, pass mark, date, bank
  version, issuer name and issuer key id (see :func:`make_record`);
* ``signature``: base64 Ed25519 signature of the canonical JSON of ``record``;
* ``id``: :func:`quizzes.ids.encode` of sha256(canonical record + signature), so
  the ID commits to the signed bytes and resolves to exactly one record.

What is signed is the record's *content* (its canonical JSON), not the file's
bytes: re-indenting the file or writing ``0.9`` as ``0.90`` leaves the same
signed record and the same ID, so it verifies, by design (a file rewritten by an
editor or a JSON tool is still the same certificate).  Any change of content
fails.  The signature string itself has one spelling only (canonical base64,
:func:`strict_b64decode`).

:func:`verify` needs only the issuer's public key (and optionally the
revocation list): it answers ``valid``, ``invalid`` or ``revoked`` with a reason.
The revocation list is itself signed by the issuer, so nobody else can add or
remove entries.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from quizzes import ids
from quizzes.errors import CertificateError
from quizzes.hashing import canonical_json
from quizzes.i18n import DEFAULT_LANG, N_, M, Msg, language
from quizzes.keys import key_id

FORMAT = "quizzes-certificate/1"
REVOCATIONS_FORMAT = "quizzes-revocations/1"
RECORD_FIELDS = ("course", "quiz_id", "quiz_title", "learner_id", "learner_name", "score",
                 "pass_mark", "issued_at", "issued_on", "bank_version", "issuer", "issuer_key_id")


@dataclass(frozen=True, slots=True)
class Certificate:
    id: str
    record: Mapping[str, Any]
    signature: bytes

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "id": self.id, "record": dict(self.record),
                "signature": base64.b64encode(self.signature).decode("ascii")}


@dataclass(frozen=True, slots=True)
class Verification:
    status: str  # "valid" | "invalid" | "revoked"
    reason: str  # English (the service's JSON, logs)
    certificate: Certificate | None = None
    message: Msg | None = None  # the reason as a message, to say it in another language

    @property
    def ok(self) -> bool:
        return self.status == "valid"

    def in_language(self, lang: str) -> str:
        """The reason in ``lang`` (English where it has no message)."""
        return self.message.render(lang) if self.message is not None else self.reason


def make_record(*, course: str, quiz_id: str, quiz_title: str, learner_id: str,
                learner_name: str, score: float, pass_mark: float, bank_version: str,
                issuer: str, public: Ed25519PublicKey, issued_at: int | None = None,
                lang: str = DEFAULT_LANG) -> dict[str, Any]:
    """The record to sign.  ``lang`` is the language the quiz was taken in (the
    submission's ``lang``): signed with the rest, it picks the language of the
    certificate's renders and badge.  Records signed before it existed have no
    ``lang`` and read as English (:func:`record_lang`); they verify as before."""
    when = int(time.time()) if issued_at is None else issued_at
    return {"course": course, "quiz_id": quiz_id, "quiz_title": quiz_title,
            "learner_id": learner_id, "learner_name": learner_name,
            "score": round(score, 4), "pass_mark": pass_mark, "issued_at": when,
            "issued_on": time.strftime("%Y-%m-%d", time.gmtime(when)),
            "bank_version": bank_version, "issuer": issuer, "issuer_key_id": key_id(public),
            "lang": language(lang)}


#: How the quiz behind a certificate was taken: the record's signed ``assessment`` field.
EXAM = "exam"  # items served and graded by the quiz service; the learner held no key
SELF_STUDY = "self-study"  # answered in the learner's own notebook, graded from the file
ASSESSMENT_TEXT = {
    EXAM: N_("Exam mode: the quiz service served and graded every item."),
    SELF_STUDY: N_("Self-study: answered in the learner's own notebook with the quiz at "
                   "hand, then graded from the submitted file."),
}


def record_assessment(record: Mapping[str, Any]) -> str:
    """``exam`` or ``self-study`` (records signed before the field existed came from
    graded submission files: self-study)."""
    value = record.get("assessment")
    return value if value in ASSESSMENT_TEXT else SELF_STUDY


def record_lang(record: Mapping[str, Any]) -> str:
    """The language a certificate was earned in (``en`` for records without one, or
    with a language this version does not know)."""
    try:
        return language(str(record.get("lang") or DEFAULT_LANG))
    except ValueError:
        return DEFAULT_LANG


def certificate_id(record_bytes: bytes, signature: bytes) -> str:
    return ids.encode(hashlib.sha256(record_bytes + signature).digest())


def issue(record: Mapping[str, Any], private: Ed25519PrivateKey) -> Certificate:
    """Sign a record (only the grader holding the issuer key can do this)."""
    if record.get("issuer_key_id") != key_id(private.public_key()):
        raise CertificateError("the record names another issuer key than the signing key")
    body = canonical_json(dict(record)).encode("utf-8")
    signature = private.sign(body)
    return Certificate(certificate_id(body, signature), dict(record), signature)


def parse_certificate(data: bytes | str, source: str = "certificate") -> Certificate:
    """Read a certificate file; malformed input raises CertificateError."""
    try:
        obj = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CertificateError(f"{source}: not valid JSON: {exc}") from None
    if not isinstance(obj, dict) or obj.get("format") != FORMAT:
        raise CertificateError(f"{source}: not a certificate (format must be \"{FORMAT}\")")
    record, sig, cid = obj.get("record"), obj.get("signature"), obj.get("id")
    if not isinstance(record, dict) or not isinstance(sig, str) or not isinstance(cid, str):
        raise CertificateError(f"{source}: needs 'record' (object), 'signature' and 'id'")
    signature = strict_b64decode(sig)
    if signature is None:
        raise CertificateError(f"{source}: 'signature' is not canonical base64") from None
    return Certificate(cid, record, signature)


def strict_b64decode(text: str) -> bytes | None:
    """The bytes of ``text`` if it is their one canonical base64 spelling, else None.

    Plain decoding ignores the unused low bits of the last symbol, so several
    strings decode to one signature; accepting only ``b64encode(b64decode(s)) == s``
    gives every signature exactly one spelling (no malleable certificate files).
    """
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None
    return raw if base64.b64encode(raw).decode("ascii") == text else None


def verify(cert: Certificate, public: Ed25519PublicKey,
           revoked: Mapping[str, str] | None = None) -> Verification:
    """Check a certificate offline: signature, ID binding, fields, revocation."""
    try:
        printed = ids.normalise(cert.id)
    except ids.IdError as exc:
        return _said("invalid", M("malformed ID: {why}", why=str(exc)), cert)
    if printed != cert.id:
        return _said("invalid", M("the ID is not in its printed form ({printed})",
                                  printed=printed), cert)
    missing = [f for f in RECORD_FIELDS if f not in cert.record]
    if missing:
        return _said("invalid", M("the record lacks '{field}'", field=missing[0]), cert)
    if cert.record.get("issuer_key_id") != key_id(public):
        return _said("invalid", M("signed by another issuer key ({key}, expected {expected})",
                                  key=cert.record.get("issuer_key_id"),
                                  expected=key_id(public)), cert)
    body = canonical_json(dict(cert.record)).encode("utf-8")
    try:
        public.verify(cert.signature, body)
    except InvalidSignature:
        return _said("invalid", M("the signature does not match the record (altered, or "
                                  "signed by another key)"), cert)
    if certificate_id(body, cert.signature) != printed:
        return _said("invalid", M("the ID does not belong to this signed record"), cert)
    if revoked and printed in revoked:
        return _said("revoked", M("revoked by the issuer: {reason}", reason=revoked[printed]),
                     cert)
    rec = cert.record
    facts = {"name": rec["learner_name"], "date": rec["issued_on"], "quiz": rec["quiz_title"],
             "score": f"{float(rec['score']):.0%}", "pass_mark": f"{float(rec['pass_mark']):.0%}"}
    if (lang := record_lang(rec)) == DEFAULT_LANG:
        return _said("valid", M("issued to {name} on {date} for {quiz} (score {score}, pass "
                                "mark {pass_mark})", **facts), cert)
    return _said("valid", M("issued to {name} on {date} for {quiz} (score {score}, pass mark "
                            "{pass_mark}, earned in {lang})", lang=lang, **facts), cert)


def _said(status: str, message: Msg, cert: Certificate | None) -> Verification:
    return Verification(status, message.render(), cert, message)


def verify_bytes(data: bytes | str, public: Ed25519PublicKey,
                 revoked: Mapping[str, str] | None = None,
                 source: str = "certificate") -> Verification:
    """:func:`verify` on a file's bytes; unreadable files are ``invalid`` with the reason."""
    try:
        cert = parse_certificate(data, source)
    except CertificateError as exc:
        return Verification("invalid", exc.message.removeprefix("quizzes: error: "))
    return verify(cert, public, revoked)


# --- revocation list -------------------------------------------------------------------

def revocation_entries(path: str | Path, public: Ed25519PublicKey) -> dict[str, str]:
    """ID -> reason from a signed revocation list (missing file = nothing revoked)."""
    p = Path(path)
    if not p.exists():
        return {}
    try:
        obj = json.loads(p.read_text(encoding="utf-8"))
        entries = obj["entries"]
        signature = strict_b64decode(obj["signature"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CertificateError(f"{p}: not a revocation list ({exc})") from None
    if signature is None:
        raise CertificateError(f"{p}: not a revocation list (the signature is not canonical "
                               "base64)")
    if obj.get("format") != REVOCATIONS_FORMAT or not isinstance(entries, list):
        raise CertificateError(f"{p}: not a revocation list")
    try:
        public.verify(signature, canonical_json(entries).encode("utf-8"))
    except InvalidSignature:
        raise CertificateError(f"{p}: the revocation list is not signed by this issuer key") \
            from None
    return {str(e["id"]): f"{e.get('reason', 'no reason given')} ({e.get('revoked_on', '?')})"
            for e in entries if isinstance(e, dict) and "id" in e}


def revoke(path: str | Path, cert_id: str, reason: str, private: Ed25519PrivateKey,
           when: int | None = None) -> str:
    """Add an ID to the signed revocation list (idempotent); returns the printed ID."""
    try:
        printed = ids.normalise(cert_id)
    except ids.IdError as exc:
        raise CertificateError(f"cannot revoke '{cert_id}': {exc}") from None
    p = Path(path)
    entries: list[dict[str, Any]] = []
    if p.exists():
        revocation_entries(p, private.public_key())  # must be ours and intact
        entries = json.loads(p.read_text(encoding="utf-8"))["entries"]
    if all(e.get("id") != printed for e in entries):
        stamp = int(time.time()) if when is None else when
        entries.append({"id": printed, "reason": reason,
                        "revoked_on": time.strftime("%Y-%m-%d", time.gmtime(stamp))})
    signature = private.sign(canonical_json(entries).encode("utf-8"))
    doc = {"format": REVOCATIONS_FORMAT, "issuer_key_id": key_id(private.public_key()),
           "entries": entries, "signature": base64.b64encode(signature).decode("ascii")}
    tmp = p.with_suffix(p.suffix + ".tmp")
    tmp.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    tmp.replace(p)
    return printed
