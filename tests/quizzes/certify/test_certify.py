"""Certificates: signed records, short IDs with a check symbol, offline verification, revocation."""

from __future__ import annotations

import base64
import json

import pytest

from quizzes import ids
from quizzes.badges import base58btc, did_key, open_badge, unbase58btc, verify_badge
from quizzes.certify import (
    Certificate,
    issue,
    make_record,
    parse_certificate,
    revocation_entries,
    revoke,
    verify,
    verify_bytes,
)
from quizzes.errors import CertificateError
from quizzes.hashing import canonical_json
from quizzes.keys import generate, key_id, load_private, load_public
from quizzes.registry import Lookup
from quizzes.render import certificate_html, certificate_pdf

EPOCH = 1767600000


@pytest.fixture()
def keys(tmp_path):
    key, pub = generate(tmp_path / "issuer")
    return load_private(key), load_public(pub)


@pytest.fixture()
def cert(keys):
    private, public = keys
    record = make_record(
        course="Slurm for AI Training Clusters",
        quiz_id="02-sbatch",
        quiz_title="Module 2: Batch jobs with sbatch",
        learner_id="ada",
        learner_name="Ada Lovelace",
        score=0.875,
        pass_mark=0.7,
        bank_version="0123456789abcdef",
        issuer="Course team",
        public=public,
        issued_at=EPOCH,
    )
    return issue(record, private)


def test_a_fresh_certificate_verifies(cert, keys):
    result = verify(cert, keys[1])
    assert result.status == "valid"
    assert result.reason == (
        "issued to Ada Lovelace on 2026-01-05 for Module 2: Batch jobs "
        "with sbatch (score 88%, pass mark 70%)"
    )
    assert set(cert.record) >= {
        "learner_name",
        "course",
        "score",
        "pass_mark",
        "issued_on",
        "bank_version",
        "issuer_key_id",
    }
    assert cert.record["issuer_key_id"] == key_id(keys[1])


def test_the_id_is_short_grouped_crockford_base32_with_a_check_symbol(cert):
    assert len(cert.id) == 16 and cert.id.count("-") == 3
    assert ids.normalise(cert.id) == cert.id
    typed = cert.id.lower().replace("-", " ").replace("0", "o").replace("1", "l")
    assert ids.normalise(typed) == cert.id  # case, spaces and look-alikes forgiven


def test_changing_any_character_of_an_id_is_rejected(cert):
    for pos, char in enumerate(cert.id):
        if char == "-":
            continue
        alphabet = ids.CHECK_ALPHABET if pos == len(cert.id) - 1 else ids.ALPHABET
        for other in alphabet:
            if other == char:
                continue
            changed = cert.id[:pos] + other + cert.id[pos + 1 :]
            with pytest.raises(ids.IdError, match="check symbol does not match"):
                ids.normalise(changed)


def test_swapping_two_adjacent_symbols_is_rejected(cert):
    raw = cert.id.replace("-", "")
    for i in range(len(raw) - 2):
        if raw[i] != raw[i + 1]:
            swapped = raw[:i] + raw[i + 1] + raw[i] + raw[i + 2 :]
            with pytest.raises(ids.IdError):
                ids.normalise(swapped)


def _file_with(record_bytes: bytes, cert) -> bytes:
    sig = json.dumps(cert.to_json()["signature"]).encode()
    return (b'{"format": "quizzes-certificate/1", "id": ' + json.dumps(cert.id).encode()
            + b', "record": ' + record_bytes + b', "signature": ' + sig + b"}")


def test_flipping_any_bits_of_the_signed_record_or_signature_is_rejected(cert, keys):
    """Every byte of the signed record and of the signature, with all 255 XOR masks.

    A flip that breaks the JSON or UTF-8 is refused before any signature check,
    so the ~100k cases stay fast; the others need the Ed25519 check to fail.
    """
    public = keys[1]
    body = canonical_json(dict(cert.record)).encode()
    assert verify_bytes(_file_with(body, cert), public).ok
    for i in range(len(body)):
        for mask in range(1, 256):
            flipped = body[:i] + bytes([body[i] ^ mask]) + body[i + 1:]
            result = verify_bytes(_file_with(flipped, cert), public)
            assert result.status == "invalid", (i, mask, chr(body[i]), result.reason)
    for i in range(len(cert.signature)):
        for mask in range(1, 256):
            sig = cert.signature[:i] + bytes([cert.signature[i] ^ mask]) \
                + cert.signature[i + 1:]
            result = verify(Certificate(cert.id, cert.record, sig), public)
            assert result.status == "invalid", (i, mask, result.reason)


def test_the_signature_string_has_exactly_one_spelling(cert, keys):
    doc = cert.to_json()
    text = doc["signature"]  # 64 bytes: 86 symbols + "==", the last symbol has 4 spare bits
    assert text.endswith("==")
    spares = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
              if c != text[-3] and base64.b64decode(text[:-3] + c + "==") == cert.signature]
    assert len(spares) == 15  # all decode to the same signature ...
    for c in spares:          # ... and none of them is accepted
        altered = json.dumps({**doc, "signature": text[:-3] + c + "=="})
        result = verify_bytes(altered, keys[1])
        assert result.status == "invalid" and "not canonical base64" in result.reason
    for other in (text[:-2], text + "\n", " " + text):  # missing padding, whitespace
        assert not verify_bytes(json.dumps({**doc, "signature": other}), keys[1]).ok


def test_a_reformatted_file_is_the_same_signed_certificate(cert, keys):
    """The signature covers the record's content, not the file's layout (by design)."""
    compact = json.dumps(cert.to_json(), separators=(",", ":"))
    spread = json.dumps(cert.to_json(), indent=4).replace('"score": 0.875', '"score": 8.75e-1')
    for text in (compact, spread):
        result = verify_bytes(text, keys[1])
        assert result.ok and result.certificate is not None
        assert result.certificate.id == cert.id


def test_a_certificate_signed_by_another_key_is_rejected(tmp_path, cert, keys):
    other_private = load_private(generate(tmp_path / "other")[0])
    assert verify(cert, other_private.public_key()).reason.startswith("signed by another issuer")
    # a forger who copies the real key id into a record signed with their own key:
    forged = issue(
        {**cert.record, "issuer_key_id": key_id(other_private.public_key())}, other_private
    )
    tampered = parse_certificate(
        json.dumps(
            {**forged.to_json(), "record": {**forged.record, "issuer_key_id": key_id(keys[1])}}
        )
    )
    assert verify(tampered, keys[1]).status == "invalid"


def test_a_revoked_certificate_says_revoked_and_why(tmp_path, cert, keys):
    private, public = keys
    path = tmp_path / "revocations.json"
    assert revoke(path, cert.id.lower(), "issued in error", private, when=EPOCH) == cert.id
    revoke(path, cert.id, "twice is harmless", private)
    entries = revocation_entries(path, public)
    assert entries == {cert.id: "issued in error (2026-01-05)"}
    result = verify(cert, public, entries)
    assert (result.status, result.reason) == (
        "revoked",
        "revoked by the issuer: issued in error (2026-01-05)",
    )


def test_a_tampered_revocation_list_is_refused(tmp_path, cert, keys):
    private, public = keys
    path = tmp_path / "revocations.json"
    revoke(path, cert.id, "cheating", private)
    doc = json.loads(path.read_text())
    doc["entries"] = []  # someone un-revokes their certificate
    path.write_text(json.dumps(doc))
    with pytest.raises(CertificateError, match="not signed by this issuer key"):
        revocation_entries(path, public)


def test_lookup_resolves_ids_from_a_folder_and_reports_unknown_ones(tmp_path, cert, keys):
    folder = tmp_path / "certs"
    folder.mkdir()
    (folder / f"{cert.id}.json").write_text(json.dumps(cert.to_json()))
    lookup = Lookup(keys[1], certs_dir=str(folder))
    assert lookup.check_id(cert.id.lower()).status == "valid"
    other = ids.encode(b"\x00" * 32)
    assert lookup.check_id(other).reason == (
        f"no certificate with ID {other} is known to this issuer"
    )
    assert lookup.check_id("hello").reason.startswith("malformed ID:")


def test_open_badge_3_credential_is_signed_with_eddsa_jcs_2022(cert, keys):
    private, public = keys
    badge = open_badge(cert, private, verify_url="http://127.0.0.1:8765/verify/" + cert.id)
    assert badge["type"] == ["VerifiableCredential", "OpenBadgeCredential"]
    assert badge["@context"][0] == "https://www.w3.org/ns/credentials/v2"
    assert badge["issuer"]["id"] == did_key(public) and did_key(public).startswith("did:key:z6Mk")
    assert badge["proof"]["cryptosuite"] == "eddsa-jcs-2022"
    assert badge["validFrom"] == "2026-01-05T08:00:00Z"
    assert verify_badge(badge, public)
    badge["credentialSubject"]["achievement"]["name"] = "Something else"
    assert not verify_badge(badge, public)


def test_base58btc_round_trip():
    for data in (b"", b"\x00\x00\x01", bytes(range(64))):
        assert unbase58btc(base58btc(data)) == data
    assert base58btc(b"hello world") == "StV1DL6CwTryKyV"


def test_html_and_pdf_renders(cert, keys):
    page = certificate_html(cert, verify(cert, keys[1]))
    assert "Ada Lovelace" in page and cert.id in page and "VALID" in page
    assert "<script" not in page and "http" not in page.split("<body>")[1]
    pdf = certificate_pdf(cert)
    assert pdf.startswith(b"%PDF-1.4") and pdf.rstrip().endswith(b"%%EOF")
    assert f"({cert.id})".encode() in pdf
    start = int(pdf.rsplit(b"startxref\n", 1)[1].split()[0])
    assert pdf[start : start + 4] == b"xref"  # the cross-reference offset is right


def test_every_check_symbol_can_be_typed_bare_in_a_shell_a_url_and_a_file_name():
    import shlex
    import string

    pchar = set(string.ascii_letters + string.digits + "-._~!$&'()*+,;=:@")  # RFC 3986 path
    assert len(ids.CHECK_ALPHABET) == 37 and ids.CHECK_ALPHABET[:32] == ids.ALPHABET
    for symbol in ids.CHECK_ALPHABET:
        printed = f"7K2Q-M9XA-4TRB-{symbol}"
        assert shlex.quote(printed) == printed, symbol
        assert set(printed) <= pchar, symbol
        assert not set(symbol) & set('<>:"/\\|?*'), symbol  # Windows-forbidden characters
    digests = [bytes([i]) * 32 for i in range(256)]
    assert {ids.encode(d)[-1] for d in digests} <= set(ids.CHECK_ALPHABET)


def test_every_digest_gives_an_id_that_round_trips_and_rejects_substitutions():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=300, deadline=None)
    @given(digest=st.binary(min_size=32, max_size=32), pos=st.integers(0, 11),
           delta=st.integers(1, 31))
    def check(digest, pos, delta):
        printed = ids.encode(digest)
        assert ids.normalise(printed) == printed
        raw = printed.replace("-", "")
        changed = raw[:pos] + ids.ALPHABET[(ids.ALPHABET.index(raw[pos]) + delta) % 32] \
            + raw[pos + 1:]
        with pytest.raises(ids.IdError):
            ids.normalise(changed)

    check()
