"""``/v1/webhooks`` and the ``call.completed`` deliveries (SPEC.md Webhook endpoint, Webhook
delivery, Events; ARCHITECTURE.md §9), against loopback receivers with the development flags on
(private addresses and plain http) and an injected clock for the retry schedule."""

from __future__ import annotations

import hashlib
import hmac
import json
import socket
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from litestar.testing import TestClient

from adapters.postgres.database import DatabaseConfig
from entrypoints.bootstrap import Container
from tests.fakes.receiver import Answer, Receiver
from tests.support.call_requests import batch_body, call_body, only_problem
from tests.support.setup import Account, new_tenant, scoped_key
from tests.support.shared_app import shared_app

DEV_FLAGS = {"webhook_allow_private": True, "webhook_allow_http": True, "webhook_timeout_seconds": 0.5}


@pytest.fixture
def app(pg_server: DatabaseConfig, tmp_path: Path) -> Iterator[tuple[TestClient[Any], Container]]:
    with shared_app(pg_server, tmp_path / "var", **DEV_FLAGS) as built:
        yield built


@pytest.fixture
def client(app):
    return app[0]


@pytest.fixture
def container(app):
    return app[1]


@pytest.fixture
def settings_for_second():
    """Settings of a second process on the same database and data directory."""
    return lambda container: container.settings


@pytest.fixture
def tenant(client, container) -> Account:
    return new_tenant(client, container)


@pytest.fixture
def receivers() -> Iterator[list[Receiver]]:
    made: list[Receiver] = []
    yield made
    for receiver in made:
        receiver.close()


def receiver(receivers: list[Receiver], *answers: Answer, default: Answer | None = None) -> Receiver:
    made = Receiver(*answers, default=default)
    receivers.append(made)
    return made


def register(client: TestClient[Any], tenant: Account, url: str, **extra: Any) -> dict[str, Any]:
    response = client.post("/v1/webhooks", json={"url": url, **extra}, headers=tenant.headers)
    assert response.status_code == 201, response.text
    return response.json()


def complete_a_call(client: TestClient[Any], tenant: Account, **overrides: Any) -> str:
    response = client.post("/v1/calls", json=call_body(**overrides), headers=tenant.headers)
    assert response.status_code == 201, response.text
    return response.json()["call_id"]


def deliveries(client: TestClient[Any], tenant: Account, endpoint_id: str, **query: Any) -> dict[str, Any]:
    response = client.get(f"/v1/webhooks/{endpoint_id}/deliveries", params=query, headers=tenant.headers)
    assert response.status_code == 200, response.text
    return response.json()


def settle(client: TestClient[Any], tenant: Account, endpoint_id: str, attempts: int, timeout: float = 5.0) -> dict[str, Any]:
    """The endpoint's only delivery once it shows ``attempts`` attempts."""
    deadline = time.monotonic() + timeout
    while True:
        page = deliveries(client, tenant, endpoint_id)
        if page["data"] and len(page["data"][0]["attempts"]) >= attempts:
            return page["data"][0]
        assert time.monotonic() < deadline, page
        time.sleep(0.02)


def advance(container: Container, seconds: float) -> None:
    container.clock.advance(timedelta(seconds=seconds))
    container.webhook_dispatch.poke()


def verify(secret: str, received: Any) -> bool:
    timestamp = received.headers["X-Service-Timestamp"]
    expected = "sha256=" + hmac.new(secret.encode(), f"{timestamp}.".encode() + received.body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, received.headers["X-Service-Signature"])


# --- endpoints --------------------------------------------------------------------------------------


def test_an_endpoint_is_created_with_its_secret_shown_once(client, container, tenant, receivers):
    url = receiver(receivers).url
    created = register(client, tenant, url, description="orders")
    listed = client.get("/v1/webhooks", headers=tenant.headers)

    assert created["id"].startswith("wh_") and created["secret"].startswith("whsec_")
    assert (created["url"], created["description"], created["events"], created["active"]) == (
        url, "orders", ["call.completed"], True)
    assert listed.status_code == 200
    assert [e["id"] for e in listed.json()["data"]] == [created["id"]]
    assert "secret" not in listed.text and created["secret"] not in listed.text
    with psycopg.connect(container.database.conninfo()) as conn:  # sealed at rest, never in clear
        rows = conn.execute("SELECT state FROM calling_events").fetchall()
    assert not any(created["secret"].encode() in bytes(row[0]) for row in rows)


@pytest.mark.parametrize("events", [["call.started"], ["sms.delivered"], ["call.completed", "nope"], []])
def test_unknown_or_not_yet_emitted_events_are_refused(client, tenant, receivers, events):
    response = client.post("/v1/webhooks", json={"url": receiver(receivers).url, "events": events},
                           headers=tenant.headers)

    problem = only_problem(response)
    assert (problem["loc"], problem["type"]) == (["body", "events"], "unknown_event")


@pytest.mark.parametrize("url", ["ftp://127.0.0.1/hook", "https://user:pw@127.0.0.1/hook", "not a url",
                                 "http://169.254.169.254/latest/meta-data"])
def test_a_refused_url_is_a_422_with_a_reason(client, tenant, url):
    problem = only_problem(client.post("/v1/webhooks", json={"url": url}, headers=tenant.headers))

    assert problem["loc"] == ["body", "url"] and problem["type"].startswith("webhook_url_") and problem["msg"]


def test_scopes_guard_the_routes(client, tenant, receivers):
    reader = scoped_key(client, tenant, ["webhooks:read"])
    writer = scoped_key(client, tenant, ["webhooks:write"])

    assert client.post("/v1/webhooks", json={"url": receiver(receivers).url}, headers=reader).status_code == 403
    assert client.get("/v1/webhooks", headers=writer).status_code == 403
    assert client.post("/v1/webhooks", json={"url": receiver(receivers).url}, headers=writer).status_code == 201


def test_other_tenants_endpoints_are_unknown(client, container, tenant, receivers):
    endpoint = register(client, tenant, receiver(receivers).url)
    other = new_tenant(client, container)

    assert client.delete(f"/v1/webhooks/{endpoint['id']}", headers=other.headers).status_code == 404
    assert client.get(f"/v1/webhooks/{endpoint['id']}/deliveries", headers=other.headers).status_code == 404


# --- deliveries -------------------------------------------------------------------------------------


def test_a_completed_call_is_delivered_signed_with_the_spec_payload(client, tenant, receivers):
    hook = receiver(receivers)
    endpoint = register(client, tenant, hook.url)
    call_id = complete_a_call(client, tenant, metadata={"order": 42})

    [received] = hook.wait_for(1)
    payload = json.loads(received.body)

    assert verify(endpoint["secret"], received)
    assert received.headers["X-Service-Event"] == "call.completed"
    assert payload["id"].startswith("evt_") and payload["type"] == "call.completed" and payload["created_at"]
    data = payload["data"]
    assert data["call_id"] == call_id and data["status"] == "completed" and data["metadata"] == {"order": 42}
    assert set(data) >= {"to", "from", "objective", "outcome", "transcript", "duration_seconds", "cost_total"}
    assert data["outcome"] == {"confirmed": True} and "error_code" not in data
    delivery = settle(client, tenant, endpoint["id"], 1)
    assert delivery["status"] == "delivered" and delivery["delivery_uuid"] == received.headers["X-Service-Delivery-Id"]
    assert delivery["delivery_id"].startswith("dlv_") and delivery["attempts"][0]["response_status"] == 200


def test_a_failed_call_is_delivered_with_a_null_outcome_and_its_error_code(client, tenant, receivers):
    hook = receiver(receivers)
    register(client, tenant, hook.url)
    complete_a_call(client, tenant, simulation={"answered_by": "machine_start"})

    data = json.loads(hook.wait_for(1)[0].body)["data"]

    assert (data["status"], data["outcome"], data["error_code"]) == ("failed", None, "machine_detected")


def test_one_call_and_three_endpoints_give_three_distinct_deliveries(client, tenant, receivers):
    hooks = [receiver(receivers) for _ in range(3)]
    for hook in hooks:
        register(client, tenant, hook.url)
    complete_a_call(client, tenant)

    received = [hook.wait_for(1)[0] for hook in hooks]
    time.sleep(0.3)

    assert [len(hook.received) for hook in hooks] == [1, 1, 1]
    assert len({r.headers["X-Service-Delivery-Id"] for r in received}) == 3
    assert len({json.loads(r.body)["id"] for r in received}) == 1  # one event, three deliveries


def test_a_soft_deleted_endpoint_gets_nothing_and_keeps_its_history(client, tenant, receivers):
    kept, dropped = receiver(receivers), receiver(receivers)
    register(client, tenant, kept.url)
    gone = register(client, tenant, dropped.url)
    complete_a_call(client, tenant)
    dropped.wait_for(1)

    deleted = client.delete(f"/v1/webhooks/{gone['id']}", headers=tenant.headers)
    complete_a_call(client, tenant)
    kept.wait_for(2)
    time.sleep(0.3)

    assert deleted.status_code == 200 and deleted.json()["active"] is False
    assert len(dropped.received) == 1
    assert deliveries(client, tenant, gone["id"])["total"] == 1
    assert client.delete(f"/v1/webhooks/{gone['id']}", headers=tenant.headers).status_code == 404


def test_a_receiver_answering_500_gets_four_attempts_on_the_schedule(client, container, tenant, receivers):
    hook = receiver(receivers, default=Answer(status=500, body=b"boom"))
    endpoint = register(client, tenant, hook.url)
    complete_a_call(client, tenant)
    hook.wait_for(1)

    settle(client, tenant, endpoint["id"], 1)  # recorded: the next delay counts from its failure
    for delay, expected in ((4.9, 1), (0.1, 2), (29.9, 2), (0.1, 3), (119.9, 3), (0.1, 4), (3600, 4)):
        advance(container, delay)
        if expected > len(hook.received):
            hook.wait_for(expected)
            settle(client, tenant, endpoint["id"], expected)
        else:
            time.sleep(0.25)  # nothing more may come
        assert len(hook.received) == expected, (delay, expected)

    delivery = settle(client, tenant, endpoint["id"], 4)
    assert delivery["status"] == "permanently_failed"
    assert [a["attempt"] for a in delivery["attempts"]] == [1, 2, 3, 4]
    assert all(a["response_status"] == 500 and a["response_body"] == "boom" for a in delivery["attempts"])
    assert len({r.headers["X-Service-Delivery-Id"] for r in hook.received}) == 1
    assert len({r.headers["X-Service-Timestamp"] for r in hook.received}) == 4  # fresh per attempt
    assert all(verify(endpoint["secret"], r) for r in hook.received)
    assert deliveries(client, tenant, endpoint["id"], status="permanently_failed")["total"] == 1
    assert deliveries(client, tenant, endpoint["id"], status="delivered")["total"] == 0


def test_a_receiver_that_is_down_is_retried_and_the_error_recorded(client, container, tenant):
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    endpoint = register(client, tenant, f"http://127.0.0.1:{port}/hook")
    complete_a_call(client, tenant)

    first = settle(client, tenant, endpoint["id"], 1)
    advance(container, 5)
    second = settle(client, tenant, endpoint["id"], 2)

    assert first["status"] == "pending" and first["attempts"][0]["response_status"] is None
    assert first["attempts"][0]["error"]
    assert len(second["attempts"]) == 2


@pytest.mark.parametrize("status", [400, 401, 403, 404, 410, 422])
def test_a_4xx_other_than_429_gets_a_single_attempt(client, container, tenant, receivers, status):
    hook = receiver(receivers, default=Answer(status=status))
    endpoint = register(client, tenant, hook.url)
    complete_a_call(client, tenant)
    hook.wait_for(1)

    advance(container, 3600)
    time.sleep(0.3)

    assert len(hook.received) == 1
    assert settle(client, tenant, endpoint["id"], 1)["status"] == "failed"


@pytest.mark.parametrize("answer", [Answer(status=429), Answer(status=503), Answer(status=200, delay=1.0)],
                         ids=["429", "503", "timeout"])
def test_429_5xx_and_timeouts_are_retried(client, container, tenant, receivers, answer):
    hook = receiver(receivers, answer)
    endpoint = register(client, tenant, hook.url)
    complete_a_call(client, tenant)
    settle(client, tenant, endpoint["id"], 1, timeout=5)

    advance(container, 5)
    delivery = settle(client, tenant, endpoint["id"], 2)

    assert delivery["status"] == "delivered" and len(hook.received) == 2


def test_a_redirect_is_a_failed_attempt_and_its_target_is_never_contacted(client, container, tenant, receivers):
    canary = receiver(receivers)
    hook = receiver(receivers, Answer(status=302, headers={"Location": canary.url}))
    endpoint = register(client, tenant, hook.url)
    complete_a_call(client, tenant)

    first = settle(client, tenant, endpoint["id"], 1)
    advance(container, 5)
    second = settle(client, tenant, endpoint["id"], 2)

    assert first["attempts"][0]["response_status"] == 302 and first["status"] == "pending"
    assert second["status"] == "delivered"
    assert canary.received == []


def test_a_manual_retry_reposts_with_the_same_delivery_id_and_a_fresh_signature(client, container, tenant, receivers):
    hook = receiver(receivers, Answer(status=404))
    endpoint = register(client, tenant, hook.url)
    complete_a_call(client, tenant)
    failed = settle(client, tenant, endpoint["id"], 1)
    advance(container, 60)

    retried = client.post(f"/v1/webhooks/{endpoint['id']}/deliveries/{failed['delivery_id']}/retry",
                          headers=tenant.headers)
    first, again = hook.wait_for(2)
    after = settle(client, tenant, endpoint["id"], 2)

    assert retried.status_code == 202, retried.text
    assert first.body == again.body
    assert first.headers["X-Service-Delivery-Id"] == again.headers["X-Service-Delivery-Id"]
    assert first.headers["X-Service-Timestamp"] != again.headers["X-Service-Timestamp"]
    assert first.headers["X-Service-Signature"] != again.headers["X-Service-Signature"]
    assert verify(endpoint["secret"], again)
    assert after["status"] == "delivered" and after["attempts"][1]["manual"] is True


def test_a_pending_delivery_cannot_be_retried_by_hand(client, tenant, receivers):
    hook = receiver(receivers, default=Answer(status=500))
    endpoint = register(client, tenant, hook.url)
    complete_a_call(client, tenant)
    pending = settle(client, tenant, endpoint["id"], 1)

    response = client.post(f"/v1/webhooks/{endpoint['id']}/deliveries/{pending['delivery_id']}/retry",
                           headers=tenant.headers)

    assert response.status_code == 409 and response.json()["error"]["code"] == "delivery_in_progress"


# --- the dispatcher ---------------------------------------------------------------------------------


def test_two_dispatchers_never_send_one_attempt_twice(client, container, tenant, receivers, settings_for_second):
    from entrypoints.bootstrap import bootstrap
    from tests.support.setup import FAST_HASHER

    hook = receiver(receivers)
    register(client, tenant, hook.url)
    second = bootstrap(settings_for_second(container), database=container.database, clock=container.clock,
                       email=container.accounts.ports.email, hasher=FAST_HASHER)
    second.start_projections()  # its dispatcher competes; its followers stand by
    try:
        for _ in range(20):
            complete_a_call(client, tenant)
        hook.wait_for(20, timeout=45)  # past one attempt lease (31 s): a slow machine may wait one out
        time.sleep(0.5)
    finally:
        second.close()

    ids = [r.headers["X-Service-Delivery-Id"] for r in hook.received]
    assert len(ids) == len(set(ids)) == 20


def test_a_slow_endpoint_does_not_hold_up_a_healthy_one(client, tenant, receivers):
    slow = receiver(receivers, default=Answer(status=200, delay=0.4))
    fast = receiver(receivers)
    register(client, tenant, slow.url)
    register(client, tenant, fast.url)
    # One batch, so the 20 calls end close together: more deliveries at once than the slow
    # endpoint's share can take (its backlog is what must not hold the fast one up).
    response = client.post("/v1/calls/batch", headers=tenant.headers,
                           json=batch_body([{"to": f"+44207946{n:04d}"} for n in range(100, 120)]))
    assert response.status_code == 207 and response.json()["accepted"] == 20, response.text

    fast.wait_for(20, timeout=15)
    slow.wait_for(20, timeout=30)

    assert max(r.at for r in fast.received) < max(r.at for r in slow.received) - 0.3


def test_the_development_flags_are_announced_loudly_at_start(db, tmp_path, clock, mail, service_log):
    from entrypoints.bootstrap import bootstrap
    from entrypoints.settings import Settings
    from tests.support.setup import FAST_HASHER

    quiet = bootstrap(Settings(data_dir=tmp_path / "a", secret_key="k" * 32), database=db, clock=clock, email=mail,
                      hasher=FAST_HASHER, projections=False)
    quiet.close()
    assert "webhook_allow" not in service_log.getvalue()

    loud = bootstrap(Settings(data_dir=tmp_path / "b", secret_key="k" * 32, webhook_allow_private=True,
                              webhook_allow_http=True), database=db, clock=clock, email=mail, hasher=FAST_HASHER,
                     projections=False)
    loud.close()
    lines = [json.loads(line) for line in service_log.getvalue().splitlines() if "webhook_allow" in line]
    assert {line["event"] for line in lines} == {"webhook_allow_private.enabled", "webhook_allow_http.enabled"}
    assert all(line["level"] == "warning" for line in lines)
