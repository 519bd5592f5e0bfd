"""Web Push for live inbound calls (SPEC.md Events 12) against a loopback push service: every
subscribed device of the dialled number gets one notification it can decrypt (RFC 8291) signed
with the server's VAPID key (RFC 8292), and no other device does; 404 or 410 tombstones a
subscription at once, other failures count to 5; a tombstoned subscription gets nothing; a
device's acknowledgement is recorded; and a push service that fails or hangs changes nothing
about the call."""

from __future__ import annotations

import time
from datetime import datetime, timezone

import pytest

from application.push import notifications, vapid
from domain.calls.call import Call
from domain.push.notification import LOST, PushNotification
from tests.fakes.push_service import PushService, vapid_claims
from tests.fakes.receiver import Answer
from tests.support.call_requests import error_code
from tests.support.push import DEV_FLAGS, answered, new_line, ring, settled, signed_post, subscribed, subscription_of
from tests.support.setup import scoped_key
from tests.support.shared_app import app, client, container, fake  # noqa: F401 - fixtures

APP_SETTINGS = DEV_FLAGS  # each send gives up after 0.5 s


@pytest.fixture(scope="module")
def service():
    started = PushService()
    yield started
    started.close()


@pytest.fixture
def line(client, container, fake):
    return new_line(client, container, fake)


def notified(found) -> bool:
    return found["last_notified_at"] is not None


def failed(count: int):
    return lambda found: found["failure_count"] >= count


def caught_up(container) -> None:
    """The notifier has seen every event saved so far."""
    assert container.reactors["push_notifier"].wait(container.calling.head(), timeout=10)


def event_types(container, call_id: str) -> list[str]:
    aggregate_id = Call.create_id(call_id)
    return [type(e).__name__ for e in container.calling.repository.event_store.get(aggregate_id)]


def test_a_live_inbound_call_notifies_every_device_of_its_number_and_no_other(client, container, fake, line, service,
                                                                             service_log):
    number, other_number = line.numbers
    first, second, elsewhere = service.device(), service.device(), service.device()
    subs = [subscribed(client, line.headers, d, [number["id"]])["id"] for d in (first, second)]
    subscribed(client, line.headers, elsewhere, [other_number["id"]])
    stranger = new_line(client, container, fake, count=1)
    strangers = service.device()
    subscribed(client, stranger.headers, strangers, [stranger.numbers[0]["id"]])
    key = client.get("/v1/push/vapid-key", headers=line.headers).json()["public_key"]

    call_id, answer = ring(client, container, line, number, caller="+442071838799")

    assert answer.status_code == 200, answer.text
    for sub in subs:
        settled(client, line.headers, sub, notified)
    payloads = []
    for device in (first, second):
        [pushed] = service.to(device)
        payloads.append(device.decrypt(pushed))
        claims = vapid_claims(pushed, key)
        assert claims["aud"] == service.origin and claims["sub"].startswith("mailto:")
        assert claims["exp"] > time.time()
        assert pushed.headers["Urgency"] == "high" and 0 < int(pushed.headers["TTL"]) <= 60
    assert service.to(elsewhere) == [] and service.to(strangers) == []
    started = datetime.fromisoformat(payloads[0]["started_at"].replace("Z", "+00:00"))
    assert started.tzinfo == timezone.utc and payloads[0]["started_at"].endswith("Z")
    for payload in payloads:
        assert set(payload) == {"notification_id", "call_id", "number_id", "from", "started_at"}
        assert (payload["call_id"], payload["number_id"], payload["from"]) == (call_id, number["id"], "+442071838799")
        assert payload["notification_id"].startswith("pntf_")
    assert payloads[0]["notification_id"] != payloads[1]["notification_id"]
    logged = service_log.getvalue()
    assert '"push.notified"' in logged
    private = vapid.key_pair(container.calling, container.push).private_key
    auths = [d.subscription()["keys"]["auth"] for d in (first, second)]
    assert all(secret not in logged for secret in (private, *auths))


def test_a_devices_acknowledgement_is_recorded_on_the_notification_and_the_subscription(client, container, line,
                                                                                          service):
    device = service.device()
    sub = subscribed(client, line.headers, device, [line.numbers[0]["id"]])["id"]
    call_id, _ = ring(client, container, line, line.numbers[0])
    settled(client, line.headers, sub, notified)
    notification_id = device.decrypt(service.to(device)[0])["notification_id"]

    acknowledged = client.post("/v1/push/delivered", json={"notification_id": notification_id}, headers=line.headers)
    again = client.post("/v1/push/delivered", json={"notification_id": notification_id}, headers=line.headers)

    assert acknowledged.status_code == 200, acknowledged.text
    body = acknowledged.json()
    assert (body["notification_id"], body["subscription_id"], body["call_id"], body["status"]) == (
        notification_id, sub, call_id, "sent")
    assert body["delivered_at"] and body["sent_at"] and body["from"] == "+14155550142"
    assert again.json() == body  # the first acknowledgement counts
    assert subscription_of(client, line.headers, sub)["last_delivered_at"] == body["delivered_at"]
    restricted = client.post("/auth/api-keys", json={"number_ids": [line.numbers[1]["id"]]}, headers=line.headers)
    other_numbers_key = {"Authorization": f"Bearer {restricted.json()['secret']}"}
    refused = client.post("/v1/push/delivered", json={"notification_id": notification_id}, headers=other_numbers_key)
    assert refused.status_code == 403 and error_code(refused) == "number_not_allowed"
    writer = scoped_key(client, line.tenant, ["push:write"])
    assert client.post("/v1/push/delivered", json={"notification_id": notification_id}, headers=writer).json() == body


@pytest.mark.parametrize("gone", [404, 410])
def test_a_404_or_410_tombstones_the_subscription_at_once_and_it_gets_nothing_more(client, container, line, service,
                                                                                   gone):
    device, healthy = service.device(), service.device()
    service.script(device, Answer(status=gone, body=b""))
    sub = subscribed(client, line.headers, device, [line.numbers[0]["id"]])["id"]
    healthy_sub = subscribed(client, line.headers, healthy, [line.numbers[0]["id"]])["id"]

    ring(client, container, line, line.numbers[0])
    found = settled(client, line.headers, sub, lambda s: s["tombstoned_at"] is not None)
    settled(client, line.headers, healthy_sub, notified)
    call_id, _ = ring(client, container, line, line.numbers[0])
    answered(container, call_id, healthy_sub)

    assert (found["failure_count"], found["status"]) == (5, "tombstoned")
    assert container.calling.find(PushNotification, PushNotification.create_id(call_id, sub)) is None
    assert found["last_failure"]["response_status"] == gone and str(gone) in found["tombstone_reason"]
    assert len(service.to(device)) == 1  # the second call sent the tombstoned device nothing
    renewed = subscribed(client, line.headers, device, [line.numbers[0]["id"]])
    assert (renewed["status"], renewed["failure_count"], renewed["tombstoned_at"]) == ("active", 0, None)


def test_other_failures_count_to_five_and_a_sent_notification_clears_the_count(client, container, line, service):
    device = service.device()
    service.script(device, Answer(status=500), Answer(status=429), Answer(status=201, body=b""),
                   *[Answer(status=503) for _ in range(5)])
    sub = subscribed(client, line.headers, device, [line.numbers[0]["id"]])["id"]
    counts = []
    for _ in range(8):
        call_id, _ = ring(client, container, line, line.numbers[0])
        answered(container, call_id, sub)
        counts.append(subscription_of(client, line.headers, sub)["failure_count"])

    assert counts == [1, 2, 0, 1, 2, 3, 4, 5]
    found = subscription_of(client, line.headers, sub)
    assert found["status"] == "tombstoned" and found["tombstoned_at"] is not None
    assert found["last_failure"]["response_status"] == 503 and "in a row" in found["tombstone_reason"]
    call_id, _ = ring(client, container, line, line.numbers[0])
    caught_up(container)
    assert container.calling.find(PushNotification, PushNotification.create_id(call_id, sub)) is None
    assert len(service.to(device)) == 8  # tombstoned: nothing more


def test_a_push_service_that_hangs_or_fails_never_delays_or_fails_the_call(client, container, line, service):
    pushed_line, quiet_line = line.numbers
    hanging, failing = service.device(), service.device()
    service.script(hanging, Answer(status=201, delay=3.0))
    service.script(failing, Answer(status=500))
    subs = [subscribed(client, line.headers, d, [pushed_line["id"]])["id"] for d in (hanging, failing)]

    started = time.monotonic()
    call_id, answer = ring(client, container, line, pushed_line)
    answered_in = time.monotonic() - started
    quiet_id, quiet_answer = ring(client, container, line, quiet_line)
    for sub in subs:
        settled(client, line.headers, sub, failed(1))

    assert answer.status_code == quiet_answer.status_code == 200, answer.text
    assert answered_in < 2.0
    assert event_types(container, call_id) == event_types(container, quiet_id)
    hung = subscription_of(client, line.headers, subs[0])["last_failure"]
    assert hung["response_status"] is None and "timeout" in hung["error"]
    for call in (call_id, quiet_id):  # the carrier ends both calls: they settle alike
        form = {"CallSid": container.calling.find(Call, Call.create_id(call)).carrier_sid,
                "AccountSid": line.account.sid, "CallStatus": "completed", "CallDuration": "4"}
        assert signed_post(client, container, line, f"/webhooks/carrier/status/{call}", form).status_code in (200, 204)
    records = [_terminal(client, line.headers, c) for c in (call_id, quiet_id)]
    assert records[0]["status"] in ("completed", "failed")
    assert (records[0]["status"], records[0]["error_code"]) == (records[1]["status"], records[1]["error_code"])
    assert event_types(container, call_id) == event_types(container, quiet_id)


def _terminal(client, headers, call_id: str, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while True:
        record = client.get(f"/v1/calls/{call_id}", headers=headers).json()
        if record["status"] in ("completed", "failed") or time.monotonic() > deadline:
            return record
        time.sleep(0.05)


def test_an_attempt_cut_off_by_a_stop_is_recorded_as_lost_and_sent_again(client, container, line, service,
                                                                          monkeypatch):
    """The notifier writes an attempt down before sending it. Here it stops right after that (no
    answer recorded, no tracking written); the follower then meets the call's event again, records
    the cut-off attempt as lost and sends the notification."""
    device = service.device()
    sub = subscribed(client, line.headers, device, [line.numbers[0]["id"]])["id"]
    worker = container.reactors["push_notifier"]
    stopped: list[str] = []

    def stops_after_the_attempt_is_written_down(event, tracking):
        if isinstance(event, Call.InboundAnswered) and not stopped:
            [notification] = notifications.schedule(
                container.calling, event.tenant_id, lambda: container.calling.find(Call, event.originator_id), event.at)
            assert notifications.start(container.calling, container.push.box, notification.id) is not None
            stopped.append(notification.call_id)
        raise RuntimeError("the notifier stopped")

    monkeypatch.setattr(worker, "process_event", stops_after_the_attempt_is_written_down)
    call_id, _ = ring(client, container, line, line.numbers[0])
    deadline = time.monotonic() + 10
    while not stopped:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    monkeypatch.undo()  # the notifier is back

    found = answered(container, call_id, sub)
    assert [a["error"] for a in found.attempts] == [LOST, None] and found.status == "sent"
    assert len(service.to(device)) == 1 and device.decrypt(service.to(device)[0])["call_id"] == call_id
    assert subscription_of(client, line.headers, sub)["failure_count"] == 0
