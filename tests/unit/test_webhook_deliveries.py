"""Webhook signing (known answers), the delivery schedule and leases (domain/webhooks), on the popo
event store: no database, no network."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from domain.webhooks import signing
from domain.webhooks.delivery import (
    CANCELLED,
    DELIVERED,
    FAILED,
    LOST,
    MAX_ATTEMPTS,
    PENDING,
    PERMANENTLY_FAILED,
    DeliveryStateError,
    WebhookDelivery,
    verdict,
)

START = datetime(2026, 11, 2, 12, 0, tzinfo=timezone.utc)


# --- signatures ------------------------------------------------------------------------------------


def test_signature_known_answers():
    # HMAC-SHA256 over "<timestamp>.<raw body>", keyed with the whole whsec_ string (bytes as sent).
    assert signing.signature("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", 1614265330, b'{"test": 2432232314}') == (
        "sha256=2e37df5d4a028c51a7f3133d64ae1e300d2c2c900f1b1d49d4369ad2530f8964")
    body = '{"id":"evt_1","data":{"note":"café"}}'.encode()
    assert signing.signature("whsec_plain", 1793620800, body) == (
        "sha256=dc870488e5781908e99ddd5d9412c1a21c9704b737ad72b44f04ad69f5e60ae8")


def test_attempt_headers_carry_a_fresh_timestamp_and_the_constant_delivery_id():
    first = signing.headers("whsec_x", 100, b"{}", event_type="call.completed", delivery_uuid="u-1")
    later = signing.headers("whsec_x", 160, b"{}", event_type="call.completed", delivery_uuid="u-1")

    assert first["X-Service-Delivery-Id"] == later["X-Service-Delivery-Id"] == "u-1"
    assert (first["X-Service-Timestamp"], later["X-Service-Timestamp"]) == ("100", "160")
    assert first["X-Service-Signature"] != later["X-Service-Signature"]
    assert first["X-Service-Event"] == "call.completed"


def test_new_secrets_are_prefixed_and_unguessable():
    secrets = {signing.new_secret() for _ in range(100)}
    assert len(secrets) == 100 and all(s.startswith("whsec_") and len(s) > 40 for s in secrets)


# --- what an answer means ---------------------------------------------------------------------------


@pytest.mark.parametrize("status", [200, 201, 204, 299])
def test_2xx_is_delivered(status):
    assert verdict(status) == "deliver"


@pytest.mark.parametrize("status", [400, 401, 403, 404, 410, 422])
def test_4xx_other_than_429_is_final(status):
    assert verdict(status) == "give_up"


@pytest.mark.parametrize("status", [None, 301, 302, 307, 429, 500, 502, 503])
def test_no_answer_redirects_429_and_5xx_are_retried(status):
    assert verdict(status) == "retry"


# --- the schedule -----------------------------------------------------------------------------------


def delivery() -> WebhookDelivery:
    return WebhookDelivery(tenant_id="ten_" + "a" * 32, endpoint_id="wh_" + "b" * 32, call_id="cll_" + "c" * 32,
                           event_id="evt_" + "d" * 32, event_type="call.completed", body='{"x":1}', at=START)


def fail(d: WebhookDelivery, now: datetime, status: int | None = 500) -> None:
    number = d.lease("w1", now)
    assert number is not None, f"nothing due at {now}"
    d.record_attempt(number, status=status, body="oops", latency_ms=3, error=None if status else "timeout",
                     address="203.0.113.9", now=now)


def test_a_failing_endpoint_gets_exactly_four_attempts_at_0_5_30_and_120_seconds_after_each_failure():
    d = delivery()
    times = []
    now = START
    for delay in (0, 5, 30, 120):
        now += timedelta(seconds=delay)
        assert d.lease("w1", now - timedelta(milliseconds=1)) is None or delay == 0  # not due a moment early
        fail(d, now)
        times.append(now)

    assert [t - START for t in times] == [timedelta(0), timedelta(seconds=5), timedelta(seconds=35),
                                          timedelta(seconds=155)]
    assert d.status == PERMANENTLY_FAILED and len(d.attempts) == MAX_ATTEMPTS == 4
    assert d.lease("w1", now + timedelta(days=1)) is None and d.due_at() is None


def test_a_4xx_is_final_at_once():
    d = delivery()
    fail(d, START, status=410)

    assert d.status == FAILED and len(d.attempts) == 1 and d.due_at() is None


def test_a_success_after_failures_is_delivered():
    d = delivery()
    fail(d, START, status=None)
    fail(d, START + timedelta(seconds=5), status=503)
    number = d.lease("w1", START + timedelta(seconds=35))
    d.record_attempt(number, status=204, body="", latency_ms=1, error=None, address=None, now=START)

    assert d.status == DELIVERED and [a["response_status"] for a in d.attempts] == [None, 503, 204]


def test_one_attempt_is_leased_to_one_worker():
    d = delivery()
    assert d.lease("w1", START) == 1
    assert d.lease("w2", START + timedelta(seconds=29)) is None


def test_a_lease_that_ran_out_counts_as_a_lost_attempt():
    d = delivery()
    assert d.lease("w1", START) == 1  # w1 stops here, maybe after sending

    assert d.lease("w2", START + timedelta(seconds=31)) is None  # the lost attempt is written down first
    assert d.attempts[-1]["error"] == LOST and d.status == PENDING
    assert d.lease("w2", START + timedelta(seconds=36)) == 2  # then the schedule goes on


def test_no_more_than_four_attempts_even_when_every_worker_stops():
    d = delivery()
    now = START
    for _ in range(10):
        d.lease("w", now)
        now += timedelta(minutes=10)
    assert d.status == PERMANENTLY_FAILED and len(d.attempts) == 4


def test_a_stale_worker_cannot_record_after_its_lease_was_taken_over():
    d = delivery()
    d.lease("w1", START)
    d.lease("w2", START + timedelta(seconds=31))
    with pytest.raises(DeliveryStateError):
        d.record_attempt(1, status=200, body="", latency_ms=1, error=None, address=None, now=START)


def test_a_manual_retry_reposts_once_and_keeps_a_failed_status_when_it_fails_again():
    d = delivery()
    fail(d, START, status=404)
    d.request_retry(START + timedelta(minutes=1))
    number = d.lease("w1", START + timedelta(minutes=1))
    d.record_attempt(number, status=500, body="", latency_ms=1, error=None, address=None, now=START)

    assert d.status == FAILED and d.attempts[-1]["manual"] is True and d.due_at() is None
    d.request_retry(START + timedelta(minutes=2))
    d.record_attempt(d.lease("w1", START + timedelta(minutes=2)), status=200, body="", latency_ms=1, error=None,
                     address=None, now=START)
    assert d.status == DELIVERED and len(d.attempts) == 3


def test_a_manual_retry_waits_for_the_schedule_to_finish():
    d = delivery()
    with pytest.raises(DeliveryStateError):
        d.request_retry(START)


def test_cancelling_stops_a_pending_delivery():
    d = delivery()
    fail(d, START)
    d.cancel("the endpoint was deleted", START)

    assert d.status == CANCELLED and d.due_at() is None


def test_delivery_ids_are_deterministic_per_event_and_endpoint():
    a = WebhookDelivery.create_id("evt_1", "wh_1")
    assert a == WebhookDelivery.create_id("evt_1", "wh_1") != WebhookDelivery.create_id("evt_1", "wh_2")
    assert delivery().delivery_id.startswith("dlv_") and len(delivery().delivery_uuid) == 36
