"""A rotated secret signs beside the new one for its grace (ARCHITECTURE.md §9), and an endpoint
whose URL the policy now refuses is disabled with its reason and no longer attempted. Loopback
receivers only; the clock is injected."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta

import pytest

from adapters.webhooks.sender import WebhookSender
from application.principal import API_KEY, Principal
from application.webhooks import deliveries, endpoint_changes, endpoints
from callwright_client import verify_signature
from domain.webhooks import signing
from domain.webhooks.delivery import CANCELLED, WebhookDelivery
from domain.webhooks.endpoint import WebhookEndpoint, WebhookEndpointIndex
from entrypoints.bootstrap import bootstrap
from entrypoints.workers.webhook_dispatcher import WebhookDispatcher
from tests.fakes.receiver import Receiver
from tests.support.calls import queued_call
from tests.support.setup import FAST_HASHER

TENANT = "ten_" + "f" * 32
PRINCIPAL = Principal(kind=API_KEY, tenant_id=TENANT, user_id="usr_" + "f" * 32, verification_status="approved",
                      tier="standard", key_id="key_f")


@pytest.fixture
def quiet(db, settings, clock, mail):
    """No followers: this test's dispatcher is the only one."""
    built = bootstrap(settings, database=db, clock=clock, email=mail, hasher=FAST_HASHER, projections=False)
    yield built
    built.close()


@pytest.fixture
def hook():
    made = Receiver()
    yield made
    made.close()


def ended_call(container, clock, n: int):
    call = queued_call(tenant_id=TENANT, call_id="cll_" + str(n) * 32, direction="outbound", mode="simulated",
                       to="+442071838750", from_number="+15005550006", objective="Check",
                       outcome_schema={"ok": {"type": "boolean"}}, consent_type="prior_express",
                       consent_record_id=None, voice_id=None, voice_engine="alpha_25", language="en-US", metadata={},
                       variables={}, simulation=None, created_by="test", max_duration_seconds=600, at=clock())
    call.start(clock())
    call.fail("no_answer", "nobody answered", clock())
    container.calling.commit(call)
    return call


def deliver(container, clock, n: int, *, allow_private: bool = True) -> list[WebhookDelivery]:
    call = ended_call(container, clock, n)
    scheduled = deliveries.schedule(container.calling, TENANT, lambda: call)
    sender = lambda: WebhookSender(allow_private=allow_private, allow_http=True, timeout=2.0)  # noqa: E731
    dispatcher = WebhookDispatcher(container.calling, container.secret_box, sender, lambda now: [], owner="test")
    dispatcher.hint(scheduled)
    asyncio.run(dispatcher.run_due(wait=True))
    return scheduled


def test_during_the_grace_both_secrets_sign_and_after_it_only_the_new_one(quiet, clock, hook, service_log):
    endpoint, old = endpoints.create(quiet.calling, PRINCIPAL, quiet.secret_box, url=hook.url, description=None,
                                     events=["call.completed"])
    _, new = endpoint_changes.rotate_secret(quiet.calling, PRINCIPAL, quiet.secret_box, endpoint.endpoint_id)

    deliver(quiet, clock, 1)
    clock.advance(timedelta(hours=24))
    deliver(quiet, clock, 2)

    during, after = hook.received
    new_sig, old_sig = during.headers["X-Service-Signature"].split(",")
    assert new_sig.startswith("sha256=") and old_sig.startswith("sha256=")
    now = int(during.headers["X-Service-Timestamp"])
    assert verify_signature(during.body, during.headers, new, now=now) and verify_signature(
        during.body, during.headers, old, now=now)
    assert (new_sig, old_sig) == (signing.signature(new, now, during.body), signing.signature(old, now, during.body))
    assert "," not in after.headers["X-Service-Signature"]
    assert verify_signature(after.body, after.headers, new, now=int(after.headers["X-Service-Timestamp"]))
    lines = [json.loads(line) for line in service_log.getvalue().splitlines() if "webhooks.attempt" in line]
    assert [line["signatures"] for line in lines] == [2, 1]


def test_an_endpoint_whose_url_the_policy_refuses_is_disabled_and_no_longer_attempted(quiet, clock, hook,
                                                                                      service_log):
    endpoint, _ = endpoints.create(quiet.calling, PRINCIPAL, quiet.secret_box, url=hook.url, description=None,
                                   events=["call.completed"])
    call = ended_call(quiet, clock, 3)
    waiting = deliveries.schedule(quiet.calling, TENANT, lambda: call)  # pending, not yet attempted

    [blocked] = deliver(quiet, clock, 4, allow_private=False)  # today's policy refuses loopback
    later = deliver(quiet, clock, 5)
    sender = lambda: WebhookSender(allow_private=True, allow_http=True, timeout=2.0)  # noqa: E731
    dispatcher = WebhookDispatcher(quiet.calling, quiet.secret_box, sender, lambda now: [], owner="test")
    dispatcher.hint(waiting)
    asyncio.run(dispatcher.run_due(wait=True))

    saved = quiet.calling.find(WebhookEndpoint, endpoint.id)
    assert not saved.active and saved.disabled_code == "webhook_url_private_address" and saved.disabled_reason
    index = quiet.calling.find(WebhookEndpointIndex, WebhookEndpointIndex.create_id(TENANT))
    assert index.active_ids == [] and later == []
    assert hook.received == []
    for delivery in (blocked, *waiting):
        found = quiet.calling.find(WebhookDelivery, delivery.id)
        assert found.status == CANCELLED and found.cancel_reason == deliveries.ENDPOINT_DISABLED
    lines = [json.loads(line) for line in service_log.getvalue().splitlines()]
    attempt = next(line for line in lines if line["event"] == "webhooks.attempt")
    assert attempt["level"] == "warning" and attempt["blocked"] is True
    assert (attempt["delivery_id"], attempt["endpoint_id"], attempt["call_id"]) == (
        blocked.delivery_id, endpoint.endpoint_id, blocked.call_id)
    disabled = next(line for line in lines if line["event"] == "webhooks.endpoint_disabled")
    assert disabled["level"] == "warning" and disabled["reason_code"] == "webhook_url_private_address"

    endpoint_changes.change(quiet.calling, PRINCIPAL, endpoint.endpoint_id, {"active": True})
    assert len(deliver(quiet, clock, 6)) == 1 and len(hook.wait_for(1)) == 1
