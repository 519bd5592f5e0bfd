"""Web Push rules (domain/push; SPEC.md Events 12): the failure rule, a subscription's life, the
per-tenant index, a notification's attempts; replay gives the same aggregate. No database."""

from __future__ import annotations

import copy
import json
from datetime import datetime, timedelta, timezone

import pytest
from eventsourcing.domain import Aggregate
from hypothesis import given
from hypothesis import strategies as st

from domain.push.index import PushSubscriptionIndex
from domain.push.notification import (
    CANCELLED,
    EXPIRED,
    FAILED,
    LOST,
    NOTIFY_WITHIN,
    PENDING,
    SENT,
    NotificationStateError,
    PushNotification,
)
from domain.push.subscription import FAILURE_LIMIT, PushSubscription, failures_after, key_problem

AT = datetime(2026, 11, 2, 12, 0, tzinfo=timezone.utc)
NUMBER = "7c099ecf-fa26-449b-afb7-0c8248dfc735"


def subscription(**overrides) -> PushSubscription:
    fields = {"tenant_id": "ten_1", "endpoint": "https://push.example.com/d/1", "p256dh": "B" * 87,
              "sealed_auth": "v1.sealed", "number_ids": [NUMBER], "device_label": None, "by": "key_1", "at": AT}
    return PushSubscription(**{**fields, **overrides})


def replayed(aggregate: Aggregate) -> Aggregate:
    events = aggregate.collect_events()
    rebuilt = None
    for event in events:
        rebuilt = event.mutate(rebuilt)
    return rebuilt


@pytest.mark.parametrize("status", [404, 410])
def test_gone_sets_the_limit_at_once(status):
    assert failures_after(0, status) == FAILURE_LIMIT == 5


@given(st.integers(min_value=0, max_value=5), st.one_of(st.none(), st.integers(min_value=300, max_value=599)))
def test_any_other_failure_adds_one_up_to_the_limit(count, status):
    if status in (404, 410):
        return
    assert failures_after(count, status) == min(5, count + 1)


def test_the_fifth_failure_tombstones_and_a_sent_notification_clears_the_count():
    sub = subscription()
    assert [sub.fail(f"n{i}", 500, None, AT) for i in range(2)] == [False, False]
    sub.notified("n2", AT)
    assert sub.failure_count == 0
    tombstoned = [sub.fail(f"n{i}", None, "timeout", AT) for i in range(5)]
    assert tombstoned == [False, False, False, False, True]
    assert (sub.status, sub.failure_count, sub.active) == ("tombstoned", 5, False)
    assert sub.fail("n9", 500, None, AT) is False  # tombstoned once
    assert replayed(sub).__dict__ == sub.__dict__


def test_a_410_tombstones_at_once_and_subscribing_again_revives():
    sub = subscription()
    assert sub.fail("n1", 410, "gone", AT) is True
    assert (sub.failure_count, sub.tombstoned_at, "410" in sub.tombstone_reason) == (5, AT, True)
    sub.resubscribe(p256dh="C" * 87, sealed_auth="v1.other", number_ids=[NUMBER], device_label="desk", by="key_2",
                    now=AT + timedelta(minutes=1))
    assert (sub.status, sub.failure_count, sub.tombstoned_at, sub.device_label) == ("active", 0, None, "desk")
    assert sub.unsubscribe("key_2", AT) is True and sub.unsubscribe("key_2", AT) is False
    assert sub.status == "unsubscribed"
    assert replayed(sub).__dict__ == sub.__dict__


def test_keys_are_checked_for_their_length_and_form():
    assert key_problem("A" * 87, 65, point=True) is not None  # a first byte 0x00: no uncompressed point
    assert key_problem("B" + "A" * 86, 65, point=True) is None  # 0x04 is "BA…" in base64url
    assert key_problem("AAAA", 16) == "must decode to 16 bytes, not 3"
    assert key_problem("not base64!", 16) == "must be base64url"


def test_the_index_lists_in_subscription_order_and_finds_a_numbers_active_devices():
    index = PushSubscriptionIndex(tenant_id="ten_1")
    for name, numbers in (("a", [NUMBER]), ("b", ["other"]), ("c", [NUMBER, "other"])):
        index.subscribe(name, numbers)
    index.deactivate("c")
    assert index.subscribed_to(NUMBER) == ["a"] and index.subscribed_to("other") == ["b"]
    assert index.page(None, 2) == (["a", "b"], 2) and index.page(2, 2) == (["c"], None)
    index.unlist("a")
    index.subscribe("a", [NUMBER])  # subscribed again: last in the list
    assert index.page(None, 10) == (["b", "c", "a"], None)
    version = index.version
    index.subscribe("a", [NUMBER])  # nothing new: no event
    assert index.version == version
    assert replayed(index).__dict__ == index.__dict__


def notification(**overrides) -> PushNotification:
    fields = {"tenant_id": "ten_1", "subscription_id": "psub_1", "call_id": "cll_1", "number_id": NUMBER,
              "caller": "+14155550142", "started_at": AT, "at": AT, "expires_at": AT + NOTIFY_WITHIN}
    return PushNotification(**{**fields, **overrides})


def test_a_notifications_payload_is_the_calls_news():
    made = notification()
    assert json.loads(made.payload()) == {"notification_id": made.notification_id, "call_id": "cll_1",
                                          "number_id": NUMBER, "from": "+14155550142",
                                          "started_at": "2026-11-02T12:00:00Z"}
    assert made.notification_id.startswith("pntf_") and made.seconds_left(AT) == 60


def test_an_attempt_is_written_down_before_and_answered_after():
    made = notification()
    assert made.start_attempt(AT) == 1
    with pytest.raises(NotificationStateError):
        made.record_attempt(2, response_status=201, error=None, latency_ms=3, now=AT)
    assert made.record_attempt(1, response_status=201, error=None, latency_ms=3, now=AT) == SENT
    assert made.start_attempt(AT) is None and made.sent_at == AT
    failed = notification()
    failed.start_attempt(AT)
    assert failed.record_attempt(1, response_status=500, error=None, latency_ms=3, now=AT) == FAILED
    assert failed.attempts[-1]["error"] == "the push service answered 500"


def test_an_unanswered_attempt_is_lost_when_tried_again_and_nothing_goes_out_once_too_late():
    made = notification()
    made.start_attempt(AT)
    assert made.start_attempt(AT + timedelta(seconds=1)) == 2
    assert [a["error"] for a in made.attempts] == [LOST] and made.status == PENDING
    late = copy.deepcopy(made)
    assert late.start_attempt(AT + NOTIFY_WITHIN) is None
    assert late.status == EXPIRED and [a["error"] for a in late.attempts] == [LOST, LOST]
    closed = notification()
    closed.close("the subscription is tombstoned", AT)
    assert (closed.status, closed.start_attempt(AT)) == (CANCELLED, None)
    assert closed.acknowledge(AT) is True and closed.acknowledge(AT) is False
    assert replayed(made).__dict__ == made.__dict__


def test_the_push_settings_come_from_the_environment():
    from entrypoints.settings import Settings

    default = Settings.from_env({})
    chosen = Settings.from_env({"CALLWRIGHT_PUSH_CONTACT": " mailto:ops@example.com ",
                                "CALLWRIGHT_PUSH_TIMEOUT_SECONDS": "30"})
    assert (default.push_contact, default.push_timeout_seconds) == ("mailto:push@localhost", 5.0)
    assert (chosen.push_contact, chosen.push_timeout_seconds) == ("mailto:ops@example.com", 10.0)  # at most 10
