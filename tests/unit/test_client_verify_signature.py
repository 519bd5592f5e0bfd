"""``callwright_client.verify_signature``: what receivers run on each delivery."""

from __future__ import annotations

import pytest

from callwright_client import InvalidSignature, verify_signature
from domain.webhooks import signing

SECRET = "whsec_receiver-test"
BODY = b'{"id":"evt_1","type":"call.completed","data":{"call_id":"cll_1"}}'
NOW = 1_793_620_800


def headers(timestamp: int = NOW, body: bytes = BODY, secret: str = SECRET) -> dict[str, str]:
    return signing.headers(secret, timestamp, body, event_type="call.completed", delivery_uuid="d-1")


def test_a_genuine_delivery_is_accepted_whatever_the_header_case():
    lowered = {k.lower(): v for k, v in headers().items()}
    assert verify_signature(BODY, lowered, SECRET, now=NOW + 299)["id"] == "evt_1"
    assert verify_signature(BODY.decode(), headers(), SECRET, now=NOW)["type"] == "call.completed"


@pytest.mark.parametrize("case", ["body", "secret", "old", "future", "missing", "garbled"])
def test_anything_else_is_refused(case):
    sent, body, now = headers(), BODY, NOW
    if case == "body":
        body = BODY.replace(b"cll_1", b"cll_2")
    elif case == "secret":
        sent = headers(secret="whsec_other")
    elif case == "old":
        now = NOW + 301
    elif case == "future":
        now = NOW - 301
    elif case == "missing":
        del sent["X-Service-Signature"]
    else:
        sent["X-Service-Timestamp"] = "yesterday"
    with pytest.raises(InvalidSignature):
        verify_signature(body, sent, SECRET, now=now)


def test_during_a_rotation_any_listed_signature_is_accepted():
    both = signing.headers([SECRET, "whsec_old"], NOW, BODY, event_type="call.completed", delivery_uuid="d-1")
    spaced = {**both, "X-Service-Signature": both["X-Service-Signature"].replace(",", ", ")}

    assert both["X-Service-Signature"].count("sha256=") == 2
    assert verify_signature(BODY, both, SECRET, now=NOW)["id"] == "evt_1"
    assert verify_signature(BODY, spaced, "whsec_old", now=NOW)["id"] == "evt_1"
    with pytest.raises(InvalidSignature):
        verify_signature(BODY, both, "whsec_neither", now=NOW)
