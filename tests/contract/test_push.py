"""``/v1/push`` (SPEC.md Other endpoints named, Events 12; docs/push.md): the VAPID key, a
device's opt-in per number behind the webhook SSRF guard, its opt-out, the listing, the
acknowledgement, and the refusals in the project's shapes."""

from __future__ import annotations

import re
import uuid

import psycopg
import pytest

from application.push import vapid
from tests.fakes.push_service import PushService, unb64url
from tests.support.call_requests import error_code, only_problem, problems
from tests.support.push import DEV_FLAGS, listed, new_line, subscribe, subscribed
from tests.support.setup import new_tenant, scoped_key
from tests.support.shared_app import app, client, container, fake  # noqa: F401 - fixtures

APP_SETTINGS = DEV_FLAGS
ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")


@pytest.fixture(scope="module")
def service():
    started = PushService()
    yield started
    started.close()


@pytest.fixture
def line(client, container, fake):
    return new_line(client, container, fake)


def stored_bytes(container) -> list[bytes]:
    with psycopg.connect(container.database.conninfo()) as conn:
        return [bytes(row[0]) for row in conn.execute("SELECT state FROM calling_events").fetchall()]


def test_the_vapid_key_is_made_once_readable_by_any_key_and_its_private_half_is_sealed(client, container, line):
    reader = scoped_key(client, line.tenant, ["calls:read"])
    first = client.get("/v1/push/vapid-key", headers=line.headers)
    again = client.get("/v1/push/vapid-key", headers=reader)
    other = client.get("/v1/push/vapid-key", headers=new_tenant(client, container).headers)

    assert first.status_code == again.status_code == other.status_code == 200, first.text
    assert set(first.json()) == {"public_key"}
    key = first.json()["public_key"]
    assert again.json()["public_key"] == other.json()["public_key"] == key
    raw = unb64url(key)
    assert len(raw) == 65 and raw[0] == 4  # an uncompressed P-256 point: a browser's applicationServerKey
    private = vapid.key_pair(container.calling, container.push).private_key
    assert not any(private.encode() in state for state in stored_bytes(container))
    assert client.get("/v1/push/vapid-key").status_code == 401


def test_a_device_subscribes_once_per_endpoint_and_is_listed_without_its_secret(client, container, line, service):
    device = service.device()
    number_id = line.numbers[0]["id"]

    created = subscribe(client, line.headers, device, [number_id], device_label="Front desk tablet")
    same = subscribe(client, line.headers, device, [number_id], device_label="Front desk tablet")
    changed = subscribe(client, line.headers, device, [n["id"] for n in line.numbers])
    page = listed(client, line.headers)

    assert (created.status_code, same.status_code, changed.status_code) == (201, 200, 200), created.text
    body = created.json()
    assert body["id"].startswith("psub_") and body["id"] == same.json()["id"] == changed.json()["id"]
    assert (body["endpoint"], body["number_ids"], body["device_label"], body["status"]) == (
        device.endpoint, [number_id], "Front desk tablet", "active")
    assert (body["failure_count"], body["tombstoned_at"], body["last_failure"]) == (0, None, None)
    assert ISO_UTC.match(body["created_at"]) and ISO_UTC.match(body["subscribed_at"])
    assert same.json() == body  # the same keys, numbers and label again record nothing
    assert changed.json()["number_ids"] == [n["id"] for n in line.numbers] and changed.json()["device_label"] is None
    assert set(page) == {"data", "next_cursor"} and page["next_cursor"] is None
    assert [s["id"] for s in page["data"]] == [body["id"]] and page["data"][0] == changed.json()
    auth = device.subscription()["keys"]["auth"]
    assert auth not in str(page) and "keys" not in page["data"][0]
    assert not any(auth.encode() in state or device.auth in state for state in stored_bytes(container))


def test_the_list_is_paged_by_cursor(client, line, service):
    made = [subscribed(client, line.headers, service.device(), [line.numbers[0]["id"]])["id"] for _ in range(3)]

    first = listed(client, line.headers, limit=2)
    second = listed(client, line.headers, limit=2, cursor=first["next_cursor"])

    assert [s["id"] for s in first["data"]] == made[:2] and first["next_cursor"]
    assert [s["id"] for s in second["data"]] == made[2:] and second["next_cursor"] is None
    problem = only_problem(client.get("/v1/push/subscriptions", params={"cursor": "nope"}, headers=line.headers))
    assert problem["loc"] == ["query", "cursor"]


def test_unsubscribing_takes_the_device_off_the_list(client, line, service):
    device = service.device()
    subscribed(client, line.headers, device, [line.numbers[0]["id"]])

    gone = client.post("/v1/push/unsubscribe", json={"endpoint": device.endpoint}, headers=line.headers)
    again = client.post("/v1/push/unsubscribe", json={"endpoint": device.endpoint}, headers=line.headers)
    unknown = client.post("/v1/push/unsubscribe", json={"endpoint": device.endpoint + "-other"}, headers=line.headers)

    assert gone.status_code == 200 and gone.json()["status"] == "unsubscribed", gone.text
    assert ISO_UTC.match(gone.json()["unsubscribed_at"]) and again.json() == gone.json()
    assert listed(client, line.headers)["data"] == []
    assert unknown.status_code == 404 and error_code(unknown) == "subscription_not_found"
    back = subscribe(client, line.headers, device, [line.numbers[0]["id"]])
    assert back.status_code == 200 and back.json()["status"] == "active" and back.json()["unsubscribed_at"] is None


@pytest.mark.parametrize("body, loc, kind", [
    ({"keys": {"p256dh": "AAAA", "auth": "AMbMfW5H9kJf02yRaIOLTA"}}, ["body", "subscription", "keys", "p256dh"],
     "invalid_push_key"),
    ({"keys": {"p256dh": None, "auth": "short"}}, ["body", "subscription", "keys", "p256dh"], "string_type"),
    ({"endpoint": "ftp://127.0.0.1/push"}, ["body", "subscription", "endpoint"], "webhook_url_not_https"),
    ({"endpoint": "http://169.254.169.254/latest/meta-data"}, ["body", "subscription", "endpoint"],
     "webhook_url_metadata"),
    ({"extra": 1}, ["body", "subscription", "extra"], "extra_forbidden"),
])
def test_a_bad_subscription_is_a_422_in_the_spec_shape(client, line, service, body, loc, kind):
    subscription = service.device().subscription()
    subscription.update({k: v for k, v in body.items() if k != "keys"})
    if "keys" in body:
        subscription["keys"] = body["keys"]

    answer = client.post("/v1/push/subscribe", json={"subscription": subscription,
                                                     "number_ids": [line.numbers[0]["id"]]}, headers=line.headers)

    found = [(p["loc"], p["type"]) for p in problems(answer)]
    assert (loc, kind) in found, found


def test_numbers_must_be_the_accounts_own(client, container, line, service, fake):
    device = service.device()
    foreign = new_line(client, container, fake, count=1).numbers[0]["id"]

    empty = subscribe(client, line.headers, device, [])
    malformed = subscribe(client, line.headers, device, ["not-a-uuid"])
    unknown = subscribe(client, line.headers, device, [line.numbers[0]["id"], str(uuid.uuid4()), foreign])

    assert only_problem(empty)["loc"] == ["body", "number_ids"]
    assert only_problem(malformed)["loc"] == ["body", "number_ids", 0]
    assert [(p["loc"], p["type"]) for p in problems(unknown)] == [
        (["body", "number_ids", 1], "number_not_found"), (["body", "number_ids", 2], "number_not_found")]
    assert listed(client, line.headers)["data"] == []


def test_scopes_and_number_restrictions_guard_the_routes(client, line, service):
    number_a, number_b = (n["id"] for n in line.numbers)
    outsider = scoped_key(client, line.tenant, ["calls:read"])
    reader = scoped_key(client, line.tenant, ["push:read"])
    answer = client.post("/auth/api-keys", json={"scopes": ["push:read", "push:write"], "number_ids": [number_a]},
                         headers=line.headers)
    restricted = {"Authorization": f"Bearer {answer.json()['secret']}"}
    both = subscribed(client, line.headers, service.device(), [number_a, number_b])

    for method, path, body in (("POST", "/v1/push/subscribe", {}), ("POST", "/v1/push/unsubscribe", {}),
                               ("POST", "/v1/push/delivered", {}), ("GET", "/v1/push/subscriptions", None)):
        refused = client.request(method, path, json=body, headers=outsider)
        assert refused.status_code == 403 and error_code(refused) == "insufficient_scope", (path, refused.text)
    assert client.get("/v1/push/subscriptions", headers=reader).status_code == 200
    assert error_code(subscribe(client, reader, service.device(), [number_a])) == "insufficient_scope"

    mine = subscribe(client, restricted, service.device(), [number_a])
    not_mine = subscribe(client, restricted, service.device(), [number_b])
    assert mine.status_code == 201, mine.text
    assert not_mine.status_code == 403 and error_code(not_mine) == "number_not_allowed"
    assert [s["id"] for s in listed(client, restricted)["data"]] == [mine.json()["id"]]  # not the one with B
    reached = client.post("/v1/push/unsubscribe", json={"endpoint": both["endpoint"]}, headers=restricted)
    assert reached.status_code == 403 and error_code(reached) == "number_not_allowed"


def test_delivered_refuses_unknown_and_malformed_ids(client, line):
    unknown = client.post("/v1/push/delivered", json={"notification_id": "pntf_" + uuid.uuid4().hex},
                          headers=line.headers)
    malformed = client.post("/v1/push/delivered", json={"notification_id": "psub_123"}, headers=line.headers)
    missing = client.post("/v1/push/delivered", json={}, headers=line.headers)

    assert unknown.status_code == 404 and error_code(unknown) == "notification_not_found"
    assert only_problem(malformed)["loc"] == ["body", "notification_id"]
    assert only_problem(missing)["loc"] == ["body", "notification_id"]
