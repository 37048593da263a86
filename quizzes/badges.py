"""Open Badges 3.0 export: the certificate as a W3C Verifiable Credential (VC 2.0).

The credential is an ``OpenBadgeCredential`` whose issuer is the ``did:key`` of
the issuer's Ed25519 key, secured with a Data Integrity proof using the
``eddsa-jcs-2022`` cryptosuite (W3C vc-di-eddsa): the proof configuration and
the document without ``proof`` are canonicalised with JCS (RFC 8785), hashed
with SHA-256, the two hashes (configuration first) concatenated and signed; the
signature is ``proofValue`` in multibase base58btc (``z...``).  The document
holds only strings and integers, for which sorted-key compact JSON is exactly
JCS.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from quizzes.certify import Certificate, record_lang
from quizzes.hashing import canonical_json
from quizzes.i18n import tr
from quizzes.keys import raw_public

CONTEXT = ["https://www.w3.org/ns/credentials/v2",
           "https://purl.imsglobal.org/spec/ob/v3p0/context-3.0.3.json"]
_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def base58btc(data: bytes) -> str:
    """Bitcoin base58 (leading zero bytes become '1')."""
    value = int.from_bytes(data, "big")
    out = ""
    while value:
        value, rem = divmod(value, 58)
        out = _B58[rem] + out
    return "1" * (len(data) - len(data.lstrip(b"\0"))) + out


def unbase58btc(text: str) -> bytes:
    value = 0
    for c in text:
        value = value * 58 + _B58.index(c)
    body = value.to_bytes((value.bit_length() + 7) // 8, "big") if value else b""
    return b"\0" * (len(text) - len(text.lstrip("1"))) + body


def did_key(public: Ed25519PublicKey) -> str:
    """``did:key:z6Mk...`` (multicodec ed25519-pub 0xed01 + raw key, base58btc)."""
    return "did:key:z" + base58btc(b"\xed\x01" + raw_public(public))


def _iso(ts: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


def _hash_data(document: Mapping[str, Any], proof_config: Mapping[str, Any]) -> bytes:
    unsecured = {k: v for k, v in document.items() if k != "proof"}
    return (hashlib.sha256(canonical_json(dict(proof_config)).encode()).digest()
            + hashlib.sha256(canonical_json(unsecured).encode()).digest())


def open_badge(cert: Certificate, private: Ed25519PrivateKey, *,
               verify_url: str | None = None) -> dict[str, Any]:
    """The signed OpenBadgeCredential of a certificate."""
    rec = cert.record
    lang = record_lang(rec)
    issuer_did = did_key(private.public_key())
    percent = round(float(rec["score"]) * 100)
    document: dict[str, Any] = {
        "@context": CONTEXT,
        "id": f"urn:minislurm-course:certificate:{cert.id}",
        "type": ["VerifiableCredential", "OpenBadgeCredential"],
        "name": f"{rec['course']}: {rec['quiz_title']}",
        "issuer": {"id": issuer_did, "type": ["Profile"], "name": str(rec["issuer"])},
        "validFrom": _iso(int(rec["issued_at"])),
        "credentialSubject": {
            "type": ["AchievementSubject"],
            "identifier": [{"type": "IdentityObject", "identityHash": str(rec["learner_name"]),
                            "identityType": "name", "hashed": False}],
            "achievement": {
                "id": f"urn:minislurm-course:achievement:{rec['quiz_id']}",
                "type": ["Achievement"],
                "name": str(rec["quiz_title"]),
                "description": tr(lang, "Passed the {quiz} quiz of {course}.").format(
                    quiz=rec["quiz_title"], course=rec["course"]),
                "criteria": {"narrative": tr(lang, "Score at least {pass_mark}% (this learner "
                                                   "scored {score}%); certificate ID {id}.")
                             .format(pass_mark=round(rec["pass_mark"] * 100), score=percent,
                                     id=cert.id)},
                "inLanguage": lang,
            },
        },
    }
    if verify_url:
        document["credentialSubject"]["achievement"]["criteria"]["id"] = verify_url
    config = {"@context": CONTEXT, "type": "DataIntegrityProof", "cryptosuite": "eddsa-jcs-2022",
              "created": _iso(int(rec["issued_at"])),
              "verificationMethod": f"{issuer_did}#{issuer_did.removeprefix('did:key:')}",
              "proofPurpose": "assertionMethod"}
    signature = private.sign(_hash_data(document, config))
    proof = {k: v for k, v in config.items() if k != "@context"}
    proof["proofValue"] = "z" + base58btc(signature)
    document["proof"] = proof
    return document


def verify_badge(document: Mapping[str, Any], public: Ed25519PublicKey) -> bool:
    """Check an ``eddsa-jcs-2022`` proof made by :func:`open_badge` with ``public``."""
    proof = document.get("proof")
    if not isinstance(proof, dict) or proof.get("cryptosuite") != "eddsa-jcs-2022":
        return False
    value = proof.get("proofValue", "")
    if not isinstance(value, str) or not value.startswith("z"):
        return False
    if not str(proof.get("verificationMethod", "")).startswith(did_key(public)):
        return False
    config = {k: v for k, v in proof.items() if k != "proofValue"}
    config["@context"] = document.get("@context")
    try:
        public.verify(unbase58btc(value[1:]), _hash_data(document, config))
    except (InvalidSignature, ValueError):
        return False
    return True
